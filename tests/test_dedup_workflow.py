"""dedup.mode partitioned in the real Snakefile, on the bundled sample: the corpus it builds with
three hash ranges (the sequential corpus, byte for byte), a run killed mid-stage and rerun, and
what adding a WARC reruns."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

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


@pytest.fixture(scope="module")
def builds(tmp_path_factory, sample_build):
    """The three sample WARCs built sequentially (the session's sample build: its hash
    partitions are the defaults, which change no decision); and partitioned (P = 3), first the
    first two, then with the third added (the run whose plan shows what adding a WARC reruns)."""
    root = tmp_path_factory.mktemp("dedup-modes")
    partitioned = root / "partitioned"
    partitioned.mkdir()
    two = write_config(
        root / "two.yaml", {"input": {"warcs": SAMPLES[:2]}, **FEW_PARTITIONS, **PARTITIONED}
    )
    ok(snakemake(partitioned, configfiles=[two]))
    three = write_config(
        root / "three.yaml", {"input": {"warcs": SAMPLES}, **FEW_PARTITIONS, **PARTITIONED}
    )
    added = ok(snakemake(partitioned, configfiles=[three]))
    return {"sequential": sample_build, "partitioned": (partitioned, three, added)}


def test_three_hash_ranges_build_the_sequential_corpus_on_the_sample(builds):
    """On the sample no removed block holds text a later one repeats, so the two definitions of
    "already seen" agree and the corpora are the same bytes."""
    sequential, (partitioned, _, _) = builds["sequential"], builds["partitioned"]
    assert corpus_bytes(partitioned) == corpus_bytes(sequential)
    benchmarks = partitioned / "benchmarks"
    assert len(list((benchmarks / "dedup_shard").glob("*.tsv"))) == 3
    assert len(list((benchmarks / "dedup_seen").glob("*.tsv"))) == 3
    assert not (benchmarks / "dedup.tsv").exists()
    assert (partitioned / "results" / "dedup_state.parquet").is_file()
    assert (partitioned / "work" / "dedup" / "stats.json").is_file()
    # each shard's job wrote its table: the provenance record reads every one's writer, under
    # the rule that reruns it
    record = json.loads((partitioned / "results" / "stats" / "provenance.json").read_text())
    shards = ["sample-00", "sample-01", "sample-02"]
    for stage in ("dedup_shard", "tokenise", "ngram_runs"):
        assert [entry["shards"] for entry in record["stages"][stage]] == [shards], stage
    # G2+'s two hash ranges (FEW_PARTITIONS), each by the stats its job wrote beside it
    assert [entry["shards"] for entry in record["stages"]["dup_ngram_part"]] == [["0", "1"]]


def test_a_run_killed_in_the_seen_stage_reruns_to_the_same_corpus(builds, tmp_path):
    reference, config, _ = builds["partitioned"]
    workdir = copy_workdir(reference, tmp_path / "killed")
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


def test_adding_a_warc_reruns_the_new_shards_stages_and_dedup_only(builds):
    """A new shard's n-grams may hold the first copy of any shard's, so every range and every
    shard's verdicts are redone; the other shards' extraction, tokens and n-gram runs are not.
    Their occurrences are temporary (removed once the ranges are decided), so they are hashed
    again from the token files (`--notemp` keeps them, at 12.4 B a token)."""
    _, _, added = builds["partitioned"]
    plan = planned_jobs(added)
    for rule in ("extract", "tokenise", "ngram_runs"):
        assert {shard for name, shard in plan if name == rule} == {"sample-02"}, rule
    jobs = job_stats(added)
    assert jobs["dedup_occurrences"] == jobs["dedup_shard"] == 3
    assert jobs["dedup_counts"] == jobs["dedup_seen"] == 3
