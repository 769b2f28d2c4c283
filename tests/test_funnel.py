"""Funnel: counts per step, percentages of the previous step, reasons that add up."""

from __future__ import annotations

import math

import pandas as pd
import pyarrow as pa

from corpusbuilder.contracts.survivors import Survivors
from corpusbuilder.funnel import (
    STAGES,
    FunnelCounts,
    funnel_counts,
    funnel_tables,
    read_counts,
    write_counts,
)


def shard(prefix: str):
    docs = pd.DataFrame(
        [
            (f"{prefix}:0", "skipped", "warc-type-request", 0, 0),
            (f"{prefix}:1", "ok", "ok", 2, 30),  # kept
            (f"{prefix}:2", "skipped", "truncated: EOFError at offset 99", 0, 0),
            (f"{prefix}:3", "ok", "ok", 0, 0),  # no good block
            (f"{prefix}:4", "ok", "ok", 1, 10),  # dropped by language
            (f"{prefix}:5", "ok", "ok", 1, 30),  # exact duplicate of :1
            (f"{prefix}:6", "skipped", "status-404", 0, 0),
        ],
        columns=["doc_id", "outcome", "reason", "n_good_blocks", "n_good_words"],
    )
    blocks = pd.DataFrame(
        {
            "doc_id": [f"{prefix}:{i}" for i in (1, 1, 1, 3, 4, 4, 5, 5)],
            "n_words": [20, 10, 5, 7, 10, 3, 30, 2],
        }
    )
    language = pd.DataFrame(
        {
            "doc_id": [f"{prefix}:{i}" for i in (1, 3, 4, 5)],
            "kept": [True, False, False, True],
            "reason": ["ok", "no-text", "language-de", "ok"],
            "n_words": [25, 0, 10, 30],  # :1 lost a 5-word block to block-level filtering
        }
    )
    exact = pd.DataFrame(
        {"doc_id": [f"{prefix}:1", f"{prefix}:5"], "kept": [True, False], "n_words": [25, 30]}
    )
    return docs, blocks, language, exact, left(prefix, {1: [20, 5]})


def left(prefix: str, blocks: dict[int, list[int]]) -> Survivors:
    """What block de-duplication leaves: documents by number, each with its blocks' words."""
    return Survivors(
        pa.table({"doc_id": [f"{prefix}:{i}" for i in blocks]}),
        pa.table(
            {
                "doc_id": [f"{prefix}:{i}" for i, words in blocks.items() for _ in words],
                "n_words": [n for words in blocks.values() for n in words],
            }
        ),
    )


def test_one_shard():
    funnel, skipped = funnel_tables(funnel_counts(*shard("a")))
    assert funnel["stage"].tolist() == list(STAGES)
    assert funnel["documents"].tolist() == [7, 4, 3, 2, 1, 1, 1]
    assert funnel["words"].tolist() == [87, 87, 70, 55, 25, 25, 25]
    assert math.isnan(funnel.loc[0, "pct_of_previous_documents"])
    assert funnel["pct_of_previous_documents"].tolist()[1:] == [57.14, 75.0, 66.67, 50.0, 100, 100]
    assert funnel["pct_of_previous_words"].tolist()[1:] == [100.0, 80.46, 78.57, 45.45, 100, 100]
    assert skipped.values.tolist() == [
        ["html_documents", "status-404", 1],
        ["html_documents", "truncated", 1],
        ["html_documents", "warc-type-request", 1],
        ["good_text", "no-text", 1],
        ["language_kept", "language-de", 1],
        ["exact_dedup_kept", "duplicate", 1],
    ]


def test_shards_add_up_and_reasons_account_for_every_lost_document():
    total = sum((funnel_counts(*shard(p)) for p in "abc"), FunnelCounts())
    funnel, skipped = funnel_tables(total)
    assert funnel["documents"].tolist() == [21, 12, 9, 6, 3, 3, 3]
    lost = skipped.groupby("stage")["count"].sum()
    documents = funnel.set_index("stage")["documents"]
    for previous, stage in zip(STAGES, STAGES[1:]):
        assert documents[previous] - documents[stage] == lost.get(stage, 0), stage


def test_the_shards_counts_through_their_files_give_the_same_tables(tmp_path):
    """Rule export's funnel counts, added up as rule funnel adds them: the tables of the counts in
    memory, byte for byte, an empty shard's among them."""
    docs, blocks, language, exact, _ = shard("e")
    empty = funnel_counts(*(t.iloc[0:0] for t in (docs, blocks, language, exact)), left("e", {}))
    counts = [funnel_counts(*shard(p)) for p in "abc"] + [empty]
    for i, shard_counts in enumerate(counts):
        write_counts(shard_counts, tmp_path / f"{i}.json")
    read = [read_counts(tmp_path / f"{i}.json") for i in range(len(counts))]
    assert read == counts
    for memory, files in zip(
        funnel_tables(sum(counts, FunnelCounts())),
        funnel_tables(sum(read, FunnelCounts())),
        strict=True,
    ):
        assert memory.to_csv(sep="\t", index=False) == files.to_csv(sep="\t", index=False)


def test_an_empty_shard():
    docs, blocks, language, exact, _ = shard("a")
    empty = (t.iloc[0:0] for t in (docs, blocks, language, exact))
    funnel, skipped = funnel_tables(funnel_counts(*empty, left("a", {})))
    assert funnel["documents"].tolist() == [0] * 7
    assert funnel["pct_of_previous_documents"].isna().all()
    assert skipped.empty


def test_the_quality_filter_drops_count_under_the_rule_that_dropped_them():
    docs, blocks, language, exact, _ = shard("a")
    exact = pd.concat(
        [exact, pd.DataFrame({"doc_id": ["a:6"], "kept": [True], "n_words": [40]})],
        ignore_index=True,
    )
    # a:1 passes; a:6 fails Gopher's stop word rule; a:5, an exact copy, is not scored
    quality = pd.DataFrame(
        {"doc_id": ["a:1", "a:6"], "dropped_by": [None, "gopher.min_stop_words"]}
    )
    deduplicated = left("a", {1: [20, 5], 6: [40]})
    funnel, skipped = funnel_tables(
        funnel_counts(docs, blocks, language, exact, deduplicated, quality)
    )
    for stage in ("exact_dedup_kept", "block_dedup_kept"):
        assert funnel.set_index("stage").loc[stage, ["documents", "words"]].tolist() == [2, 65]
    assert funnel.set_index("stage").loc["quality_kept", ["documents", "words"]].tolist() == [1, 25]
    assert skipped.values.tolist()[-1] == ["quality_kept", "gopher.min_stop_words", 1]


def test_a_document_block_dedup_empties_is_lost_there_and_the_last_row_is_the_corpus():
    docs, blocks, language, exact, _ = shard("a")
    funnel, skipped = funnel_tables(funnel_counts(docs, blocks, language, exact, left("a", {})))
    counts = funnel.set_index("stage")
    assert counts.loc["exact_dedup_kept", "documents"] == 1
    assert counts.loc["block_dedup_kept", ["documents", "words"]].tolist() == [0, 0]
    assert counts.loc["quality_kept", ["documents", "words"]].tolist() == [0, 0]
    assert skipped.values.tolist()[-1] == ["block_dedup_kept", "duplicate", 1]
