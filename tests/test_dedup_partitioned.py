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
    from corpusbuilder.dedup.state import state_settings, write_state_part

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
    metadata = {**state_settings(params), "next_rank": first_rank + len(tokens.doc_ids)}
    shard_state_run(tokens, table, params, first_rank, 1, tmp_path / "run.arrow")
    write_state_part(
        tmp_path / "p.state.parquet",
        [tmp_path / "run.arrow"],
        [tmp_path / "a.state.parquet"],
        0,
        1,
        metadata,
    )
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "p.state.parquet"), pd.read_parquet(tmp_path / "b.state.parquet")
    )
    assert dedup_state_metadata(tmp_path / "p.state.parquet") == dedup_state_metadata(
        tmp_path / "b.state.parquet"
    )
    # the same state a part per range of P = 4 (rule dedup_state: the run a part per range, the
    # earlier state one file), read in the ranges of P = 3
    shard_state_run(tokens, table, params, first_rank, 4, tmp_path / "run4.arrow")
    parts = tmp_path / "parts"
    parts.mkdir()
    for p in range(4):
        write_state_part(
            parts / f"{p}-of-4.parquet",
            [tmp_path / "run4.arrow"],
            [tmp_path / "a.state.parquet"],
            p,
            4,
            metadata,
        )
    assert dedup_state_parts(parts) == [str(parts / f"{p}-of-4.parquet") for p in range(4)]
    # a run of other ranges than the state's is refused, naming the key
    with pytest.raises(ConfigError, match="dedup.state_partitions.*4 ranges.*state 3"):
        write_state_part(tmp_path / "x.parquet", [tmp_path / "run4.arrow"], [], 0, 3, metadata)
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


def test_a_state_job_holds_its_share_of_the_runs_and_auto_ranges_fit_max_mem_mb():
    """dedup_state holds its range of every run, so its memory is the runs' over the ranges (and
    a bounded round); auto plans the fewest ranges whose jobs fit resources.max_mem_mb at the
    corpus's projected size, at least the dedup ranges: issue 59's 10¹¹ and 10¹² words (2,934
    and 29,333 shards' runs), whose merge of a row group a run asked for 21 GB."""
    from corpusbuilder.dedup.memory import (
        PARTITIONED_MODULES_MB,
        SPARE,
        STATE_ROWS_PER_TOKEN,
        STATE_RUN_BYTES_PER_ROW,
        TOKENS_PER_INPUT_BYTE,
        auto_state_partitions,
        planned_state_job_mb,
        state_part_memory_mb,
        state_run_rows,
    )

    rows = 1e10
    ten, hundred = (state_part_memory_mb(rows, p) - PARTITIONED_MODULES_MB for p in (10, 100))
    assert ten > 8 * hundred  # the range's rows, a round's copies the same at both
    assert state_run_rows(round(145e6 * STATE_RUN_BYTES_PER_ROW)) == pytest.approx(145e6)
    for tokens in (93_824_026_564, 938_240_265_641):
        input_bytes = round(tokens / TOKENS_PER_INPUT_BYTE)
        ranges = auto_state_partitions(input_bytes, 8000, 468)
        assert planned_state_job_mb(input_bytes, ranges) <= 8000
        assert planned_state_job_mb(input_bytes, ranges - 1) > 8000
        # most of a job's 8 GB is its range's rows (90 M, at 70 B), not the round or modules
        assert 5.5 * 2**30 < tokens * STATE_ROWS_PER_TOKEN / ranges * 70 < 6.5 * 2**30
    # a small crawl (64 MiB of WARCs, where dedup.mode auto turns partitioned): the dedup ranges,
    # though one would hold it
    assert SPARE * state_part_memory_mb(2**26 * TOKENS_PER_INPUT_BYTE * 0.806, 1) < 8000
    assert auto_state_partitions(2**26, 8000, 5) == 5
