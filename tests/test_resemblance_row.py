"""The thesis' "rsmbl. de-dupl" row (Table 3.4): one document per cluster of resemblance > 0.9,
measured in duplicate 10-grams next to block de-duplication."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from corpusbuilder.config import validate_config
from corpusbuilder.report.corpus_stats import (
    Resemblance,
    ShardFiles,
    measure_corpus,
    write_corpus_stats,
)

# Three documents of one block or two, tokens numbered; each token's text is "w<number>":
#   s:0  block A (tokens 1..40)
#   s:1  block A again                      → resemblance 1 with s:0: the cluster keeps s:0
#   s:2  block A and block B (500..539)     → resemblance ~0.45: kept
# 10-grams: A has 31; before: A three times (93 duplicate instances) + B's 31 unique
BLOCK_A, BLOCK_B = np.arange(1, 41), np.arange(500, 540)
DOCS = {"s:0": [BLOCK_A], "s:1": [BLOCK_A], "s:2": [BLOCK_A, BLOCK_B]}


def write_shard(root, name: str = "s") -> ShardFiles:
    blocks = [
        (doc, i, tokens) for doc, doc_blocks in DOCS.items() for i, tokens in enumerate(doc_blocks)
    ]
    ids = list(DOCS)
    token_hash = np.concatenate([tokens for _, _, tokens in blocks]).astype(np.uint64)
    np.savez(
        root / f"{name}.npz",
        token_hash=token_hash,
        is_punct=np.zeros(len(token_hash), bool),
        is_stop=np.zeros(len(token_hash), bool),
        block_offsets=np.concatenate([[0], np.cumsum([len(t) for _, _, t in blocks])]).astype(
            np.int64
        ),
        block_doc=np.array([ids.index(d) for d, _, _ in blocks], np.int32),
        block_index=np.array([i for _, i, _ in blocks], np.int32),
        doc_ids=np.array(ids),
    )
    pd.DataFrame(
        {
            "doc_id": [d for d, _, _ in blocks],
            "block_index": [i for _, i, _ in blocks],
            "text": [" ".join(f"w{t}" for t in tokens) for _, _, tokens in blocks],
            "final_class": "good",
            "n_words": [len(t) for _, _, t in blocks],
        }
    ).to_parquet(root / f"{name}.blocks.parquet")
    return ShardFiles(root / f"{name}.npz", root / f"{name}.blocks.parquet", None)


FUNNEL = pd.DataFrame(
    {"stage": ["records", "exact_dedup_kept"], "documents": [3, 3], "words": [160, 160]}
)


def test_resemblance_dedup_drops_only_the_near_identical_document(tmp_path):
    measures = measure_corpus(FUNNEL, [write_shard(tmp_path)], resemblance=Resemblance(0.9))
    rows = measures.duplicates.set_index("corpus")
    before, after = rows.loc["before_block_dedup"], rows.loc["after_resemblance_dedup"]
    assert (before["documents"], before["duplicate_instances"], before["ngram_instances"]) == (
        3,
        93,
        124,
    )
    # s:1 goes; s:2 shares half its text with s:0 but is far below 0.9, so A stays duplicated
    assert (after["documents"], after["blocks"], after["tokens"]) == (2, 3, 120)
    assert (after["ngram_instances"], after["duplicate_instances"]) == (93, 62)
    assert after["pct_of_before"] == pytest.approx(100 * 62 / 93, abs=0.01)


def test_a_lower_threshold_clusters_the_partial_copy_too(tmp_path):
    rows = measure_corpus(
        FUNNEL, [write_shard(tmp_path)], resemblance=Resemblance(0.3)
    ).duplicates.set_index("corpus")
    assert rows.loc["after_resemblance_dedup", "documents"] == 1
    assert rows.loc["after_resemblance_dedup", "duplicate_instances"] == 0


def test_without_resemblance_there_is_no_row_and_the_summary_says_so(tmp_path):
    shard = write_shard(tmp_path)
    assert "after_resemblance_dedup" not in set(
        measure_corpus(FUNNEL, [shard]).duplicates["corpus"]
    )
    FUNNEL.to_csv(tmp_path / "funnel.tsv", sep="\t", index=False)
    outputs = {k: tmp_path / f"{k}.tsv" for k in ("funnel_full", "duplicates", "stage_times")}
    outputs["summary"] = tmp_path / "summary.json"
    summary = write_corpus_stats(
        tmp_path / "funnel.tsv", [shard], outputs, {}, resemblance=Resemblance()
    )
    assert summary["pct_duplicate_ngrams_left_resemblance_dedup"] == pytest.approx(66.67)
    assert summary["pct_duplicate_ngrams_left"] == 100.0  # no block dedup ran here


def test_config_default_is_the_thesis_threshold():
    assert validate_config({})["similarity"]["dedup_threshold"] == 0.9
