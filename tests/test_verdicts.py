"""The contracts layer's rules and joins: a cleaned page, a kept block, and what each stage
decided about extract's rows (corpusbuilder.contracts.verdicts), on hand-made tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from corpusbuilder.contracts.tables import (
    ShardTables,
    cleaned_page_mask,
    is_cleaned_page,
    is_kept_block,
    kept_block_mask,
)
from corpusbuilder.contracts.verdicts import (
    block_verdicts,
    document_verdicts,
    read_block_verdicts,
    read_document_verdicts,
)

DOCS = pd.DataFrame(
    {
        "doc_id": ["w:0", "w:1", "w:2", "w:3"],
        "record_index": [0, 1, 2, 3],
        "outcome": ["ok", "skipped", "ok", "ok"],
        "reason": ["ok", "not-html", "ok", "ok"],
    }
)
LANGUAGE = pd.DataFrame(
    {
        "doc_id": ["w:0", "w:2"],  # w:3 was not judged
        "language": ["en", None],
        "kept": [True, False],
        "reason": ["ok", "too-short"],
        "dropped_blocks": [[1], []],
    }
)
EXACT = pd.DataFrame({"doc_id": ["w:0"], "kept": [False], "duplicate_of": ["v:9"]})
# w:0: kept, boilerplate, kept but dropped by the language filter, a duplicate, left among copies;
# w:3: a block block de-duplication did not see
BLOCKS = pd.DataFrame(
    {
        "doc_id": ["w:0"] * 5 + ["w:3"],
        "block_index": [0, 1, 2, 3, 4, 0],
        "final_class": ["good", "good", "bad", "good", "good", "good"],
    }
)
DEDUP = pd.DataFrame(
    {
        "doc_id": ["w:0"] * 5,
        "block_index": [0, 1, 2, 3, 4],
        "final_class": ["good", "good", "bad", "duplicate", "bad"],
        "duplicate_of": [None, None, None, "v:9", None],
        "dup_share": [0.0, 0.0, np.nan, 0.9, 0.0],
        "removed_starts": [[2], None, None, None, None],
        "removed_ends": [[5], None, None, None, None],
        "removed_duplicate_of": [["v:8"], None, None, None, None],
    }
)


def test_a_cleaned_page_and_a_kept_block_one_at_a_time_and_by_table():
    assert cleaned_page_mask(DOCS).tolist() == [is_cleaned_page(o) for o in DOCS["outcome"]]
    assert cleaned_page_mask(DOCS).tolist() == [True, False, True, True]
    assert kept_block_mask(DEDUP).tolist() == [is_kept_block(c) for c in DEDUP["final_class"]]
    assert kept_block_mask(DEDUP).tolist() == [True, True, False, False, False]


def test_document_verdicts_join_the_document_stages_onto_the_cleaned_pages():
    judged = document_verdicts(DOCS, LANGUAGE, EXACT).set_index("doc_id")
    assert judged.index.tolist() == ["w:0", "w:2", "w:3"]  # the skipped page is no document
    assert judged.loc[
        "w:0", ["language", "language_kept", "exact_kept", "duplicate_of"]
    ].tolist() == [
        "en",
        True,
        False,
        "v:9",
    ]
    assert judged.loc["w:2", "language_kept"] == False  # noqa: E712 - null is not False
    assert judged.loc["w:2", "language_reason"] == "too-short"
    assert pd.isna(judged.loc["w:3", "language_kept"]) and pd.isna(judged.loc["w:2", "exact_kept"])
    alone = document_verdicts(DOCS)
    assert "language_kept" not in alone and "exact_kept" not in alone and len(alone) == 3


def test_block_verdicts_say_what_removed_each_block():
    verdicts = block_verdicts(BLOCKS, DEDUP, LANGUAGE)
    assert verdicts[["doc_id", "block_index", "final_class"]].equals(BLOCKS)  # rows as given
    assert verdicts["kept_by_extract"].tolist() == [True, True, False, True, True, True]
    assert verdicts["duplicate"].tolist() == [False, False, False, True, False, False]
    # block 2 extract already removed: de-duplication's "bad" is not a context removal of it
    assert verdicts["context_removed"].tolist() == [False, False, False, False, True, False]
    assert verdicts["language_dropped"].tolist() == [False, True, False, False, False, False]
    assert verdicts.loc[3, "duplicate_of"] == "v:9" and verdicts.loc[3, "dup_share"] == 0.9
    assert list(verdicts.loc[0, "removed_starts"]) == [2]
    unseen = verdicts.loc[5]  # a block of a page block de-duplication did not see: no verdict
    assert pd.isna(unseen["duplicate_of"]) and math.isnan(unseen["dup_share"])
    assert not unseen["duplicate"] and not unseen["context_removed"]


def test_block_verdicts_without_the_later_stages_keep_extracts_classes():
    verdicts = block_verdicts(BLOCKS)
    assert verdicts["kept_by_extract"].tolist() == kept_block_mask(BLOCKS).tolist()
    assert not verdicts[["duplicate", "context_removed", "language_dropped"]].any().any()
    assert verdicts["dup_share"].isna().all() and verdicts["removed_starts"].isna().all()


def test_the_readers_take_a_shards_files_and_leave_out_the_stages_that_did_not_run(tmp_path):
    for name, table in (
        ("docs", DOCS),
        ("blocks", BLOCKS),
        ("language", LANGUAGE),
        ("exact", EXACT),
        ("dedup", DEDUP),
    ):
        table.to_parquet(tmp_path / f"{name}.parquet")
    shard = ShardTables(*(tmp_path / f"{n}.parquet" for n in ("docs", "blocks")), name="w")
    assert read_document_verdicts(shard, ["record_index"]).columns.tolist() == [
        "doc_id",
        "record_index",
        "outcome",
    ]
    full = ShardTables(
        *(tmp_path / f"{n}.parquet" for n in ("docs", "blocks", "language", "exact", "dedup")),
        name="w",
    )
    assert read_document_verdicts(full).equals(
        document_verdicts(
            DOCS[["doc_id", "outcome"]], LANGUAGE.drop(columns="dropped_blocks"), EXACT
        )
    )
    some = read_block_verdicts(full, doc_ids=["w:3"])
    assert some["doc_id"].tolist() == ["w:3"] and not some["duplicate"].any()
    whole = read_block_verdicts(full)
    assert (
        whole["duplicate"].tolist() == block_verdicts(BLOCKS, DEDUP, LANGUAGE)["duplicate"].tolist()
    )
