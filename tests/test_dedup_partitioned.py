"""dedup.mode partitioned (corpusbuilder.dedup.partitioned): against Algorithm 3.1 where the two
definitions of "already seen" agree, the one documented difference where they do not, and the
same corpus for any number of hash ranges."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_dedup import N, para, random_corpus, run, write_corpus

from corpusbuilder.contracts.tables import DEDUP_SCHEMA
from corpusbuilder.contracts.tokenfile import read_tokens
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.dedup.partitioned import dedup_partitioned
from corpusbuilder.extraction.justext import PRESETS, reclassifier

BLOCKS = [
    "doc_id",
    "block_index",
    "cf_class",
    "final_class",
    "n_chars",
    "heading",
    "n_words",
]

# jusText's pass of the default preset, as the dedup rules hand it over
JUSTEXT = reclassifier(PRESETS["default"])


def run_partitioned(tmp_path, shards, partitions: int = 4, **params) -> pd.DataFrame:
    results = dedup_partitioned(
        shards,
        np.load(tmp_path / "dup.npy"),
        DedupParams(n=N, **params),
        partitions,
        JUSTEXT,
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


def test_against_an_earlier_corpus_and_its_state_as_the_sequential_job(tmp_path):
    """dedup.against: the earlier corpus's n-grams are seen everywhere, owned by its documents;
    the state merged from the shards' runs (rules dedup_shard, dedup_state) is the sequential
    job's, so it can be merged forward again; written a part per hash range, it holds the same
    rows, and read in the ranges of another P it gives the same n-grams and owners."""
    import dataclasses

    from test_dedup import g2_with_state

    from corpusbuilder.config import ConfigError
    from corpusbuilder.contracts.ngramfiles import (
        dedup_state_metadata,
        dedup_state_parts,
        partition_hash_range,
    )
    from corpusbuilder.dedup.corpus import dedup_corpus
    from corpusbuilder.dedup.partitioned import earlier_in_range, shard_state_run
    from corpusbuilder.dedup.state import merge_state_runs, state_settings, write_state_rows

    p1, p2, p3 = para(), para(), para()
    shards = write_corpus(
        tmp_path,
        {
            "a0": [("a0:1", [p1, p2]), ("a0:2", [p3])],
            "b0": [("b0:1", [p1, para()]), ("b0:2", [para(), p2]), ("b0:3", [p3])],
        },
    )
    params = DedupParams(n=N)
    a = [dataclasses.replace(shards[0], output=tmp_path / "a" / "a0.parquet")]
    dedup_corpus(
        a,
        g2_with_state(tmp_path, a, "dupA"),
        None,
        params,
        JUSTEXT,
        state_path=tmp_path / "a.state.parquet",
    )
    b = [dataclasses.replace(shards[1], output=tmp_path / "b" / "b0.parquet")]
    duplicates = g2_with_state(tmp_path, b, "dupB", tmp_path / "a.state.parquet")
    dedup_corpus(
        b,
        duplicates,
        None,
        params,
        JUSTEXT,
        against=tmp_path / "a.state.parquet",
        state_path=tmp_path / "b.state.parquet",
    )
    tokens = read_tokens(b[0].tokens)
    [(table, _)] = dedup_partitioned(
        b,
        np.load(duplicates),
        params,
        4,
        JUSTEXT,
        lambda shard: read_tokens(shard.tokens),
        lambda shard: pd.read_parquet(shard.blocks, columns=BLOCKS),
        earlier_in_range(tmp_path / "a.state.parquet", (0, 2**64), len(tokens.doc_ids)),
    )
    expected = pd.read_parquet(b[0].output)
    pd.testing.assert_frame_equal(table[DEDUP_SCHEMA.names], expected)
    assert table.set_index("doc_id").duplicate_of.dropna().to_dict() == {
        "b0:1": "a0:1",
        "b0:2": "a0:1",
        "b0:3": "a0:2",
    }
    first_rank = dedup_state_metadata(tmp_path / "a.state.parquet")["next_rank"]
    shard_state_run(tokens, table, params, first_rank, tmp_path / "run.parquet")
    write_state_rows(
        tmp_path / "p.state.parquet",
        merge_state_runs([tmp_path / "a.state.parquet", tmp_path / "run.parquet"]),
        {**state_settings(params), "next_rank": first_rank + len(tokens.doc_ids)},
    )
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "p.state.parquet"), pd.read_parquet(tmp_path / "b.state.parquet")
    )
    assert dedup_state_metadata(tmp_path / "p.state.parquet") == dedup_state_metadata(
        tmp_path / "b.state.parquet"
    )
    # the same state a part per range of P = 4 (rule dedup_state), read in the ranges of P = 3
    parts = tmp_path / "parts"
    parts.mkdir()
    for p in range(4):
        write_state_rows(
            parts / f"{p}-of-4.parquet",
            merge_state_runs(
                [tmp_path / "a.state.parquet", tmp_path / "run.parquet"],
                partition_hash_range(p, 4),
            ),
            {**state_settings(params), "next_rank": first_rank + len(tokens.doc_ids)},
        )
    assert dedup_state_parts(parts) == [str(parts / f"{p}-of-4.parquet") for p in range(4)]
    one = pd.read_parquet(tmp_path / "p.state.parquet")
    assert len(one) > 100
    pd.testing.assert_frame_equal(pd.read_parquet(parts).reset_index(drop=True), one)
    for p in range(3):
        bounds = partition_hash_range(p, 3)
        got, want = (
            earlier_in_range(parts, bounds, 7),
            earlier_in_range(tmp_path / "p.state.parquet", bounds, 7),
        )
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
        assert got[2] == want[2] and len(got[0]) > 0
    # a part missing, or parts of two P, is no state: refused naming the key
    (parts / "1-of-4.parquet").rename(parts / "1-of-5.parquet")
    with pytest.raises(ConfigError, match="dedup.against.*3 of 4 parts, 1 of 5"):
        dedup_state_parts(parts)


def test_a_state_part_job_holds_a_row_group_a_run_at_most():
    """dedup_state merges its range of every run a row group at a time, so what it asks for
    grows with the runs, not with the state: the 2 GB build's 32 runs asked for 19.5 GB at three
    ranges when the request was ten times the range's share of the runs' bytes."""
    from corpusbuilder.contracts.ngramfiles import STATE_ROW_GROUP
    from corpusbuilder.dedup.memory import (
        PARTITIONED_MODULES_MB,
        STATE_FILE_BYTES_PER_ROW,
        state_part_memory_mb,
    )

    run = 187 * 2**20  # one of the 2 GB build's runs
    one = state_part_memory_mb([run], 3) - PARTITIONED_MODULES_MB
    assert one == state_part_memory_mb([run], 30) - PARTITIONED_MODULES_MB  # a row group
    assert state_part_memory_mb([run] * 32, 3) - PARTITIONED_MODULES_MB <= 32 * one
    assert state_part_memory_mb([run] * 32, 3) < 1000
    small = round(STATE_ROW_GROUP * STATE_FILE_BYTES_PER_ROW)  # a row group's rows in all
    assert state_part_memory_mb([small], 4) - PARTITIONED_MODULES_MB < one
