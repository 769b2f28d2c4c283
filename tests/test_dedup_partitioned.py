"""dedup.mode partitioned (corpusbuilder.dedup.partitioned): against Algorithm 3.1 where the two
definitions of "already seen" agree, the one documented difference where they do not, and the
same corpus for any number of hash ranges."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_dedup import N, para, random_corpus, run, write_corpus

from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.dedup.partitioned import dedup_partitioned
from corpusbuilder.extraction.justext import PRESETS
from corpusbuilder.tables import DEDUP_SCHEMA
from corpusbuilder.tokenfile import read_tokens

BLOCKS = [
    "doc_id",
    "block_index",
    "cf_class",
    "final_class",
    "n_chars",
    "heading",
    "n_words",
]


def run_partitioned(tmp_path, shards, partitions: int = 4, **params) -> pd.DataFrame:
    results = dedup_partitioned(
        shards,
        np.load(tmp_path / "dup.npy"),
        DedupParams(n=N, **params),
        partitions,
        PRESETS["default"],
        lambda shard: read_tokens(shard.tokens),
        lambda shard: pd.read_parquet(shard.blocks, columns=BLOCKS),
    )
    table = pd.concat([table for table, _ in results], ignore_index=True)
    return table[DEDUP_SCHEMA.names]


def sequential(tmp_path, shards, **params) -> pd.DataFrame:
    return run(tmp_path, shards, **params)[DEDUP_SCHEMA.names]


def test_copies_of_kept_text_are_judged_as_algorithm_3_1_judges_them(tmp_path):
    """Where no removed unit holds an n-gram a later unit repeats, the definitions agree."""
    a, b, c = para(), para(), para()
    shards = write_corpus(
        tmp_path,
        {
            "s0": [("s0:1", [a, b]), ("s0:2", [para(), c])],
            "s1": [("s1:1", [a, b]), ("s1:2", [c, para()]), ("s1:3", [para(), a + " " + b])],
        },
    )
    for level in ("block", "document", "sentence", "span"):
        for order in ("dup-share", "input"):
            pd.testing.assert_frame_equal(
                run_partitioned(tmp_path, shards, level=level, order=order),
                sequential(tmp_path, shards, level=level, order=order),
                obj=f"{level} {order}",
            )


def test_text_first_seen_in_a_removed_block_counts_as_seen(tmp_path):
    """The one difference (module doc): block B copies A's P and adds Z; B goes, so Algorithm
    3.1 never outputs Z and keeps C, which repeats Z; the partitioned mode counts Z as seen in B
    and removes C as a duplicate of B's page."""
    p, z = para(20), para(12)
    shards = write_corpus(
        tmp_path,
        {
            "s0": [("A", [p])],
            "s1": [("B", [p + " " + z]), ("C", [z + " " + para(5)])],
        },
    )
    one = sequential(tmp_path, shards, order="input")
    many = run_partitioned(tmp_path, shards, order="input")
    assert one.set_index("doc_id").final_class.to_dict() == {
        "A": "good",
        "B": "duplicate",
        "C": "good",
    }
    assert many.set_index("doc_id").final_class.to_dict() == {
        "A": "good",
        "B": "duplicate",
        "C": "duplicate",
    }
    assert many.set_index("doc_id").duplicate_of.fillna("").to_dict() == {
        "A": "",
        "B": "A",
        "C": "B",
    }
    # every other row is the same
    same = one.doc_id != "C"
    pd.testing.assert_frame_equal(
        many[same].reset_index(drop=True), one[same].reset_index(drop=True)
    )


@pytest.mark.parametrize("level", ["block", "sentence", "span"])
def test_one_range_and_eight_give_the_same_corpus(tmp_path, level):
    shards = random_corpus(tmp_path, seed=5)
    one = run_partitioned(tmp_path, shards, partitions=1, level=level)
    assert (one.final_class == "duplicate").sum() > 20
    pd.testing.assert_frame_equal(run_partitioned(tmp_path, shards, partitions=8, level=level), one)


@pytest.mark.parametrize("level", ["block", "sentence", "span"])
def test_partitioned_removes_at_least_what_algorithm_3_1_removes(tmp_path, level):
    """Seen, kept or not, is a superset of seen and kept: the partitioned mode only ever removes
    more (a unit kept here is kept by Algorithm 3.1 too), in the same order."""
    shards = random_corpus(tmp_path, seed=7)
    one = sequential(tmp_path, shards, level=level, order="input")
    many = run_partitioned(tmp_path, shards, level=level, order="input")
    gone_one = one.final_class == "duplicate"
    gone_many = many.final_class == "duplicate"
    assert (gone_one & ~gone_many).sum() <= (gone_many & ~gone_one).sum()
    assert gone_many.sum() >= gone_one.sum() > 0
