"""dedup.mode partitioned in the real Snakefile, on the bundled sample: the corpus it builds with
three hash ranges (the sequential corpus, byte for byte), a run killed mid-stage and rerun, and
what adding a WARC reruns."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import (
    FEW_PARTITIONS,
    copy_workdir,
    corpus_bytes,
    ok,
    snakemake,
    snakemake_command,
    write_config,
)
from test_incremental import SAMPLES, job_stats, planned_jobs

pytestmark = pytest.mark.workflow

PARTITIONED = {"dedup": {"mode": "partitioned", "partitions": 3}}
TWO_NGRAM_RANGES = {"ngrams": FEW_PARTITIONS["ngrams"]}


@pytest.fixture(scope="module")
def builds(tmp_path_factory, sample_build, first_two_build):
    """The three sample WARCs built sequentially (the session's sample build: its hash
    partitions are the defaults, which change no decision); the first two partitioned in eight
    hash ranges (a copy of the session's build of them, so only dedup and what follows run
    again); and a copy of that with the third added, partitioned in three (P = 3: the run whose
    plan shows what adding a WARC reruns). G2+ in two hash ranges there, where `auto` plans one:
    its parts' provenance is read below."""
    root = tmp_path_factory.mktemp("dedup-modes")
    a8 = copy_workdir(first_two_build, root / "a8")
    # the sequential job's benchmark: below, that no partitioned run writes one
    (a8 / "benchmarks" / "dedup.tsv").unlink()
    eight = {"dedup": {"mode": "partitioned", "partitions": 8}}
    ok(snakemake(a8, config={"input": {"warcs": SAMPLES[:2]}, **eight}))
    partitioned = copy_workdir(a8, root / "partitioned")
    # what adding the third WARC, and nothing else, plans: the run below changes the partitions
    # too, which reruns every range and shard job whatever was added
    same = write_config(root / "eight.yaml", {"input": {"warcs": SAMPLES}, **eight})
    plan = ok(snakemake(partitioned, "--dry-run", configfiles=[same]))
    # the eight ranges' benchmarks, so that those of the three ranges can be counted (the state
    # writer removes the state parts of another partitioning itself)
    for rule in ("dedup_seen", "dedup_state"):
        shutil.rmtree(partitioned / "benchmarks" / rule)
    three = write_config(
        root / "three.yaml", {"input": {"warcs": SAMPLES}, **TWO_NGRAM_RANGES, **PARTITIONED}
    )
    added = ok(snakemake(partitioned, configfiles=[three]))
    return {
        "sequential": sample_build,
        "a8": a8,
        "partitioned": (partitioned, three, added),
        "adding_a_warc": plan,
    }


def test_three_hash_ranges_build_the_sequential_corpus_on_the_sample(builds):
    """On the sample no removed block holds text a later one repeats, so the two definitions of
    "already seen" agree and the corpora are the same bytes."""
    sequential, (partitioned, _, _) = builds["sequential"], builds["partitioned"]
    assert corpus_bytes(partitioned) == corpus_bytes(sequential)
    benchmarks = partitioned / "benchmarks"
    assert len(list((benchmarks / "dedup_shard").glob("*.tsv"))) == 3
    assert len(list((benchmarks / "dedup_seen").glob("*.tsv"))) == 3
    assert not (benchmarks / "dedup.tsv").exists()
    # the state, a part per hash range, each written by its range job
    assert sorted(path.name for path in (partitioned / "results" / "dedup_state").iterdir()) == [
        f"{p}-of-3.parquet" for p in range(3)
    ]
    assert len(list((benchmarks / "dedup_state").glob("*.tsv"))) == 3
    assert (partitioned / "work" / "dedup" / "stats.json").is_file()
    # each shard's job wrote its table: the provenance record reads every one's writer, under
    # the rule that reruns it
    record = json.loads((partitioned / "results" / "stats" / "provenance.json").read_text())
    shards = ["sample-00", "sample-01", "sample-02"]
    for stage in ("dedup_shard", "tokenise", "ngram_runs"):
        assert [entry["shards"] for entry in record["stages"][stage]] == [shards], stage
    # G2+'s two hash ranges (TWO_NGRAM_RANGES), each by the stats its job wrote beside it
    assert [entry["shards"] for entry in record["stages"]["dup_ngram_part"]] == [["0", "1"]]


def test_a_run_killed_in_the_seen_stage_reruns_to_the_same_corpus(builds, tmp_path):
    reference, config, _ = builds["partitioned"]
    workdir = copy_workdir(reference, tmp_path / "killed")
    # the earlier runs' logs of the stage, which would end the wait below at once
    shutil.rmtree(workdir / "logs" / "dedup_seen")
    # everything from the dedup jobs on is built again, and killed once the range jobs run
    forced = subprocess.Popen(
        snakemake_command(
            workdir, "--forcerun", "dedup_occurrences", configfiles=[config], cores=1
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 300
        logs = workdir / "logs" / "dedup_seen"
        while time.monotonic() < deadline and forced.poll() is None:
            if logs.is_dir() and any(logs.iterdir()):
                break
            time.sleep(0.02)
        running = forced.poll() is None
        os.killpg(forced.pid, signal.SIGKILL)
    finally:
        if forced.poll() is None:
            os.killpg(forced.pid, signal.SIGKILL)
        forced.wait(timeout=60)
    assert running, "the run ended before the seen stage"
    ok(snakemake(workdir, "--unlock", configfiles=[config]))
    ok(snakemake(workdir, "--rerun-incomplete", configfiles=[config]))
    assert corpus_bytes(workdir) == corpus_bytes(reference)


SCRATCH = ("occurrences", "counts", "order", "seen", "state_runs", "collected")


def scratch_files(workdir: Path) -> list[str]:
    """What is left of the partitioned mode's temporary files (and their collected folders)."""
    dedup = workdir / "work" / "dedup"
    return sorted(
        str(path.relative_to(dedup))
        for kind in SCRATCH
        if (dedup / kind).is_dir()
        for path in (dedup / kind).rglob("*")
        if not path.is_dir()
    )


def test_one_shards_table_alone_plans_the_folders_its_ranges_read_and_leaves_no_scratch(
    builds, tmp_path
):
    """Issue 59: the range jobs read the shards' files (and the shard jobs the ranges') from
    folders that one local job collects, their only input (rules/collect.smk). One shard's table
    asked for alone, every temporary file gone, plans those jobs too, and the same table comes
    out; the folders, and the files in them, are gone once their readers are done."""
    reference, config, _ = builds["partitioned"]
    assert scratch_files(reference) == []
    workdir = copy_workdir(reference, tmp_path / "one-table")
    table = workdir / "work" / "dedup" / "shards" / "sample-01.parquet"
    table.unlink()
    output = ok(snakemake(workdir, str(table.relative_to(workdir)), configfiles=[config]))
    jobs = job_stats(output)
    assert jobs["dedup_shard"] == 1 and jobs["dedup_seen"] == 3
    assert jobs["dedup_collect_seen"] == jobs["dedup_collect_occurrences"] == 1
    original = reference / "work" / "dedup" / "shards" / "sample-01.parquet"
    pd.testing.assert_frame_equal(pd.read_parquet(table), pd.read_parquet(original))
    # but the shard's own state run, which Snakemake keeps as a target job's temp() output
    assert scratch_files(workdir) == ["state_runs/sample-01.arrow"]


def test_adding_a_warc_reruns_the_new_shards_stages_and_dedup_only(builds):
    """A new shard's n-grams may hold the first copy of any shard's, so every range and every
    shard's verdicts are redone; the other shards' extraction, tokens and n-gram runs are not.
    Their occurrences are temporary (removed once the ranges are decided), so they are hashed
    again from the token files (`--notemp` keeps them, at 12.4 B a token)."""
    plan = builds["adding_a_warc"]
    for output in (plan, builds["partitioned"][2]):  # the plan, and the run in three ranges
        jobs = planned_jobs(output)
        for rule in ("extract", "tokenise", "ngram_runs"):
            assert {shard for name, shard in jobs if name == rule} == {"sample-02"}, rule
    jobs = job_stats(plan)
    assert jobs["dedup_occurrences"] == jobs["dedup_shard"] == 3
    assert jobs["dedup_counts"] == jobs["dedup_seen"] == 8


def state_rows(folder) -> pd.DataFrame:
    """A state's rows in hash order, whatever parts it was written in."""
    from corpusbuilder.contracts.ngramfiles import read_state_rows

    parts = list(read_state_rows(folder))
    return pd.DataFrame(
        {
            "hash": np.concatenate([h for h, _, _ in parts]),
            "doc_rank": np.concatenate([r for _, r, _ in parts]),
            "doc_id": [i for _, _, ids in parts for i in ids.to_pylist()],
        }
    )


def test_a_state_in_eight_ranges_is_the_one_file_and_a_later_crawl_against_either_is_the_same(
    builds, first_two_build, tmp_path
):
    """Issue 59: the first two WARCs built with P = 8 write the state as eight parts, one by each
    range job; built sequentially (the session's build of them), as one file. The parts hold that
    file's rows, and the third WARC de-duplicated against either — in 3 ranges (its state in 5:
    dedup.state_partitions), or sequentially against the eight parts, or against the one file
    renamed as a state written before parts — is the same corpus."""
    a1 = first_two_build
    # the same extraction and tokens; dedup and what follows ran again, in eight ranges (the
    # sequential job's one output folder holds no range's table: the ranges all ran)
    a8 = builds["a8"]
    parts = sorted(path.name for path in (a8 / "results" / "dedup_state").glob("*.parquet"))
    assert parts == [f"{p}-of-8.parquet" for p in range(8)]
    assert len(list((a8 / "benchmarks" / "dedup_state").glob("*.tsv"))) == 8
    assert len(list((a8 / "benchmarks" / "dedup_shard").glob("*.tsv"))) == 2  # decided again
    one_file = a1 / "results" / "dedup_state" / "0-of-1.parquet"
    assert sorted((a1 / "results" / "dedup_state").glob("*.parquet")) == [one_file]
    assert corpus_bytes(a8) == corpus_bytes(a1)  # the sample's modes agree (see above)
    expected = state_rows(one_file)
    assert len(expected) > 1000 and expected.hash.is_monotonic_increasing
    pd.testing.assert_frame_equal(state_rows(a8 / "results" / "dedup_state"), expected)
    legacy = Path(shutil.copy(one_file, tmp_path / "dedup_state.parquet"))

    third = {"input": {"warcs": SAMPLES[2:]}}
    runs = {
        "3 ranges against 8 parts": (
            {"mode": "partitioned", "partitions": 3, "state_partitions": 5},
            a8,
        ),
        "3 ranges against one file": ({"mode": "partitioned", "partitions": 3}, legacy),
        "sequential against 8 parts": ({"mode": "sequential"}, a8),
    }
    built = {}
    for name, (mode, earlier) in runs.items():
        workdir = tmp_path / name.replace(" ", "-")
        if built:  # the extraction of the first, its dedup and what follows it again
            copy_workdir(next(iter(built.values())), workdir)
        else:
            workdir.mkdir()
        against = str(earlier / "results" / "dedup_state" if earlier.is_dir() else earlier)
        ok(snakemake(workdir, config={**third, "dedup": {**mode, "against": against}}))
        built[name] = workdir
    corpora = {name: corpus_bytes(workdir) for name, workdir in built.items()}
    reference = corpora.pop("3 ranges against 8 parts")
    assert corpora == {name: reference for name in corpora}
    # the earlier corpus took some of the third WARC's blocks, naming its pages
    tables = pd.read_parquet(built["3 ranges against 8 parts"] / "work" / "dedup" / "shards")
    assert tables.duplicate_of.dropna().str.startswith(("sample-00", "sample-01")).sum() > 0
    # and each state holds the earlier one merged forward, the same rows in any parts
    states = {
        name: state_rows(workdir / "results" / "dedup_state") for name, workdir in built.items()
    }
    assert set(expected.hash) < set(states["3 ranges against 8 parts"].hash)
    five = built["3 ranges against 8 parts"] / "results" / "dedup_state"
    assert sorted(path.name for path in five.iterdir()) == [f"{p}-of-5.parquet" for p in range(5)]
    for state in states.values():
        pd.testing.assert_frame_equal(state, states["3 ranges against 8 parts"])
