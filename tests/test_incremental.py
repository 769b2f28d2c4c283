"""Incremental rebuilds of the real Snakefile, judged by Snakemake's own plan of jobs.

- adding a WARC re-runs the per-shard stages of the new shard only, plus the global ones;
- a changed parameter (jusText threshold, dedup threshold) re-runs its rule and what follows;
- a changed setting of how pages are read re-reads the gold pages;
- single stages by hand: `--until language`, `-R dedup`;
- the build records what decided the corpus (results/stats/provenance.json);
- a run killed while extract writes resumes to the same corpus as an uninterrupted run.

The session's build of sample-00 + sample-01 (conftest's `first_two_build`) is copied with its
mtimes and its .snakemake metadata, once for the module's dry-runs and again for each test that
changes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from conftest import (
    BOILERPLATE,
    CRAWL,
    FEW_PARTITIONS,
    REPO,
    copy_workdir,
    corpus_bytes,
    ok,
    require_shared,
    snakemake,
    snakemake_command,
    write_config,
)

import corpusbuilder
from corpusbuilder.common.package_data import SHIPPED_MODEL
from corpusbuilder.common.versions import OUTPUT_LIBRARIES, this_process

SAMPLE = REPO / "resources" / "sample"
SAMPLES = [str(SAMPLE / f"sample-0{i}.warc.gz") for i in range(3)]
EXACT_PARTITIONS = 1  # exact_dedup.partitions auto, for a crawl of a few KB
NGRAM_PARTITIONS = 1  # ngrams.partitions auto, likewise

pytestmark = pytest.mark.workflow

# Every rule that runs after extract on the way to the default target (`all`).
DOWNSTREAM_OF_EXTRACT = {
    "extract",
    "language",
    "exact_hashes",
    "exact_manifest",
    "exact_partition",
    "exact_collect_partitions",  # the partitions, one folder (rules/collect.smk)
    "exact_dedup",
    "tokenise",
    "ngram_runs",
    "ngram_collect_runs",  # the runs, one folder
    "dup_ngram_part",
    "dedup",
    "quality",
    "export",  # with the shard's part of the funnel
    "funnel",  # with the record of what decided the corpus, written again with the corpus
    "all",
}


# --- reading Snakemake's plan (conftest.snakemake runs it) --------------------------------------


def job_stats(output: str) -> Counter:
    """The first "Job stats" table of a Snakemake run or dry-run: rule → job count."""
    if "Nothing to be done" in output:
        return Counter()
    match = re.search(
        r"Job stats:\n\s*job\s+count\n\s*-+\s+-+\n(.*?)\n\s*total\s+(\d+)", output, re.DOTALL
    )
    assert match, f"no job stats table in:\n{output[-3000:]}"
    stats = Counter()
    for line in match.group(1).splitlines():
        rule, count = line.split()
        stats[rule] = int(count)
    assert sum(stats.values()) == int(match.group(2))
    return stats


def planned_jobs(output: str) -> Counter:
    """(rule, shard) of every job block a plain run or --dry-run prints;
    shard None for global jobs."""
    jobs = Counter()
    for block in re.split(r"\n(?=(?:local)?rule \w+:\n)", output):
        head = re.match(r"(?:local)?rule (\w+):\n", block)
        if not head:
            continue
        body = block.split("\n\n", 1)[0]
        shard = re.search(r"^\s+wildcards: shard=([\w.-]+)", body, re.MULTILINE)
        jobs[(head.group(1), shard.group(1) if shard else None)] += 1
    return jobs


def mtimes(workdir: Path, pattern: str) -> dict[str, int]:
    return {
        str(p.relative_to(workdir)): p.stat().st_mtime_ns for p in sorted(workdir.glob(pattern))
    }


def half_written(workdir: Path) -> list[str]:
    """Temporary files of corpusbuilder.common.io.atomic_path (`.{name}.XXXX.tmp`)
    under work/, results/, data/."""
    return sorted(
        str(p.relative_to(workdir))
        for top in ("work", "results", "data")
        for p in (workdir / top).rglob(".*.tmp")
    )


# --- one built workdir per module -----------------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory, first_two_build):
    """sample-00 and sample-01 built to the default target: a copy of the session's build, so
    that nothing these tests run touches the build other files read; tests must not change it
    (copy it)."""
    root = tmp_path_factory.mktemp("incremental")
    workdir = copy_workdir(first_two_build, root / "built")
    two = workdir / "test-config.yaml"
    assert sorted(p.name for p in (workdir / "results" / "corpus").iterdir()) == [
        "sample-00.jsonl.gz",
        "sample-00.prevert.gz",
        "sample-00.vert.gz",
        "sample-01.jsonl.gz",
        "sample-01.prevert.gz",
        "sample-01.vert.gz",
    ]
    # Built means up to date: a dry-run plans nothing, so every count below is caused by the change.
    assert job_stats(ok(snakemake(workdir, "--dry-run", configfiles=[two]))) == Counter()
    return workdir, root, two


def test_the_build_records_what_decided_the_corpus(built):
    workdir, _, _ = built
    record = json.loads((workdir / "results" / "stats" / "provenance.json").read_text())
    assert record["corpusbuilder"] == corpusbuilder.__version__
    assert set(OUTPUT_LIBRARIES) == set(record["libraries"])
    # every stage's files name the versions that wrote them: here one environment, one writer
    assert set(record["stages"]) == {
        *("extract", "language", "exact_dedup", "quality"),
        *("tokenise", "ngram_runs", "dup_ngram_part", "dedup"),
    }
    ranges = [str(p) for p in range(record["config"]["ngrams"]["partitions"])]
    for stage, entries in record["stages"].items():
        shards = ranges if stage == "dup_ngram_part" else ["sample-00", "sample-01"]
        assert entries == [{"written_by": this_process(), "shards": shards}], stage
    assert record["mixed_versions"] == {}
    assert record["model"]["sha256"] == hashlib.sha256(SHIPPED_MODEL.read_bytes()).hexdigest()
    # the effective config: the two WARCs given, every default filled in
    assert record["config"]["input"]["warcs"] == SAMPLES[:2]
    assert record["config"]["dedup"]["ngram"] == 10


# --- adding a WARC --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def plan_with_a_third_warc(built) -> str:
    """The dry-run of the built workdir with the third sample WARC added to its config."""
    workdir, root, _ = built
    three = write_config(root / "three.yaml", {"input": {"warcs": SAMPLES}})
    return ok(snakemake(workdir, "--dry-run", configfiles=[three]))


def test_adding_a_warc_plans_the_new_shards_stages_once_and_the_global_stages(
    plan_with_a_third_warc,
):
    output = plan_with_a_third_warc
    stats = job_stats(output)
    jobs = planned_jobs(output)
    # Old shards are neither fetched nor re-extracted,
    # language-filtered, re-hashed or decided again.
    for rule in ("download", "extract", "language", "exact_hashes", "exact_dedup"):
        assert stats[rule] == 1, (rule, stats)
        assert jobs[(rule, "sample-02")] == 1, (rule, jobs)
    assert not any(
        shard in {"sample-00", "sample-01"}
        for rule, shard in jobs
        if rule in {"download", "extract"}
    )
    # The global stages run once over all three shards, exact dedup's once per hash partition;
    # every shard is exported again, since block dedup (one job) rewrites every shard's verdicts.
    for rule in ("exact_manifest", "dedup", "funnel", "all"):
        assert stats[rule] == 1, (rule, stats)
    assert stats["exact_partition"] == EXACT_PARTITIONS
    assert stats["dup_ngram_part"] == NGRAM_PARTITIONS
    assert stats["export"] == 3
    assert {shard for rule, shard in jobs if rule == "export"} == {
        "sample-00",
        "sample-01",
        "sample-02",
    }
    assert set(stats) <= DOWNSTREAM_OF_EXTRACT | {"download"}


def test_adding_a_warc_tokenises_and_sorts_only_the_new_shard(plan_with_a_third_warc):
    jobs = planned_jobs(plan_with_a_third_warc)
    for rule in ("tokenise", "ngram_runs"):
        assert {shard for r, shard in jobs if r == rule} == {"sample-02"}, (rule, jobs)


# Carried out, the plan leaves the old shards' files as they were: a WARC added to a shard of
# its own in test_dedup_workflow.py (test_adding_a_warc_reruns_the_new_shards_stages_and_dedup_only,
# the corpus then equal to one build of the three), and to the last shard of two WARCs each in
# test_shards.py (test_a_warc_added_at_the_end_changes_only_the_last_shard: the old shard's files'
# times and its corpus bytes).


# --- parameters are rerun triggers ----------------------------------------------------------------


def test_a_justext_threshold_reruns_extract_for_every_shard_and_everything_after(built):
    workdir, root, two = built
    change = write_config(root / "justext.yaml", {"extract": {"justext": {"length_low": 60}}})
    output = ok(snakemake(workdir, "--dry-run", configfiles=[two, change]))
    stats = job_stats(output)
    assert {shard for rule, shard in planned_jobs(output) if rule == "extract"} == {
        "sample-00",
        "sample-01",
    }
    # no download: the WARCs stay where they are
    assert set(stats) == DOWNSTREAM_OF_EXTRACT, stats
    per_shard = {
        rule: stats[rule]
        for rule in ("extract", "language", "exact_hashes", "tokenise", "ngram_runs", "export")
    }
    assert per_shard == dict.fromkeys(per_shard, 2), stats
    assert {rule: stats[rule] for rule in ("dedup", "funnel", "all")} == dict.fromkeys(
        ("dedup", "funnel", "all"), 1
    ), stats
    assert stats["exact_dedup"] == 2, stats  # one job per shard
    assert (stats["exact_manifest"], stats["exact_partition"]) == (1, EXACT_PARTITIONS), stats
    assert stats["dup_ngram_part"] == NGRAM_PARTITIONS, stats


def test_a_justext_threshold_given_with_dash_dash_config_reruns_extract(built):
    workdir, _, two = built
    result = snakemake(
        workdir,
        "--dry-run",
        "--config",
        "extract={justext: {length_low: 60}}",
        "--quiet",
        "rules",
        configfiles=[two],
    )
    assert job_stats(ok(result))["extract"] == 2


def test_the_dedup_threshold_reruns_only_dedup_and_the_stages_that_read_it(built):
    workdir, root, two = built
    change = write_config(root / "dedup.yaml", {"dedup": {"threshold": 0.4}})
    output = ok(snakemake(workdir, "--dry-run", configfiles=[two, change]))
    # quality scores what dedup kept, and the funnel counts what quality kept
    assert job_stats(output) == Counter(dedup=1, quality=2, export=2, funnel=1, all=1)
    assert "rule extract:" not in output and "rule ngram_runs:" not in output
    # docs/running.md names each rule that reruns (it once said "only dedup and export")
    running = (REPO / "docs" / "running.md").read_text()
    said = re.search(r"\*\*changing `dedup.threshold`\*\*(.*?)\n- ", running, re.S)
    assert said and set(job_stats(output)) - {"all"} <= set(re.findall(r"`(\w+)`", said[1]))


def test_the_extract_stages_reading_settings_reread_the_gold_pages(tmp_path):
    # The gold pages are read as the extract stage reads pages: a change to how a page is read
    # plans every rule that reads them again, another extract setting none of them.
    require_shared(BOILERPLATE)
    gold = write_config(
        tmp_path / "gold.yaml",
        {
            "input": {"warcs": SAMPLES[:1]},
            "evaluate": {
                "gold_dir": str(BOILERPLATE),
                "datasets": ["cleaneval-dev"],
                "sweep_dataset": "cleaneval-dev",
                "extractors": ["justext-default"],
                "max_pages": 3,
            },
            "train": {"datasets": ["cleaneval-dev"], "max_pages": 3},
        },
    )
    targets = (
        "results/stats/boilerplate.tsv",
        "results/stats/site_boilerplate.tsv",
        "results/stats/sweep.tsv",
        "results/train/blocks/cleaneval-dev.npz",
    )
    workdir = tmp_path / "gold"
    workdir.mkdir()
    ok(snakemake(workdir, *targets, configfiles=[gold]))
    reading = write_config(tmp_path / "reading.yaml", {"extract": {"language_sample_chars": 500}})
    planned = job_stats(ok(snakemake(workdir, "--dry-run", *targets, configfiles=[gold, reading])))
    readers = {"evaluate_boilerplate", "evaluate_site_boilerplate", "sweep", "training_blocks"}
    assert readers <= set(planned), planned
    # the site evaluation also reads every other extract key (its jusText and site settings)
    other = write_config(tmp_path / "other.yaml", {"extract": {"max_blocks": 4000}})
    assert job_stats(ok(snakemake(workdir, "--dry-run", *targets, configfiles=[gold, other]))) == (
        Counter(evaluate_site_boilerplate=1)
    )


# --- single stages by hand ------------------------------------------------------------------------


def test_until_language_on_a_fresh_dir_runs_download_extract_language_only(tmp_path):
    two = write_config(tmp_path / "two.yaml", {"input": {"warcs": SAMPLES[:2]}})
    workdir = tmp_path / "fresh"
    workdir.mkdir()
    output = ok(snakemake(workdir, "--until", "language", configfiles=[two]))
    assert job_stats(output) == Counter(download=2, extract=2, language=2)
    assert {rule for rule, _ in planned_jobs(output)} == {"download", "extract", "language"}
    assert sorted(p.name for p in (workdir / "work" / "language").iterdir()) == [
        "sample-00.parquet",
        "sample-01.parquet",
    ]
    assert not (workdir / "results").exists()
    assert not (workdir / "work" / "exact").exists() and not (workdir / "work" / "tokens").exists()
    # The rest is still to do, and none of what ran is planned again.
    rest = job_stats(ok(snakemake(workdir, "--dry-run", configfiles=[two])))
    assert rest["export"] == 2 and not {"download", "extract", "language"} & set(rest)


def test_forcing_dedup_reruns_dedup_and_what_depends_on_it(built):
    workdir, root, two = built
    plan = ok(snakemake(workdir, "--dry-run", "-R", "dedup", configfiles=[two]))
    # the quality stage scores what block dedup left, and the funnel counts its drops; the record
    # of what decided the corpus follows the corpus files
    assert job_stats(plan) == Counter(dedup=1, quality=2, export=2, funnel=1, all=1)
    copy = copy_workdir(workdir, root / "forced")
    upstream = mtimes(copy, "work/[elt]*/*") | mtimes(copy, "work/ngrams/**/*")
    dedup_before = mtimes(copy, "work/dedup/shards/*")
    corpus_before = corpus_bytes(copy)
    ran = job_stats(ok(snakemake(copy, "-R", "dedup", configfiles=[two])))
    assert ran == Counter(dedup=1, quality=2, export=2, funnel=1, all=1)
    assert mtimes(copy, "work/[elt]*/*") | mtimes(copy, "work/ngrams/**/*") == upstream
    after = mtimes(copy, "work/dedup/shards/*")
    assert after.keys() == dedup_before.keys() and all(after[k] > dedup_before[k] for k in after)
    assert corpus_bytes(copy) == corpus_before  # same inputs, same corpus


# --- an interrupted run ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory):
    """sample-00 and the first 700 records of the shared crawl-00 (a few seconds of extract),
    built once uninterrupted and once killed (SIGKILL to the process group) while the crawl's
    extract is writing, then rerun."""
    require_shared(CRAWL / "crawl-00.warc.gz")
    from warcio.archiveiterator import ArchiveIterator

    root = tmp_path_factory.mktemp("interrupted")
    cut = root / "crawl-cut.warc.gz"
    with open(CRAWL / "crawl-00.warc.gz", "rb") as stream:
        records = ArchiveIterator(stream)
        for index, _ in enumerate(records):
            if index == 700:
                end = records.get_record_offset()  # each record is its own gzip member
                break
        else:
            pytest.fail("crawl-00 has fewer than 700 records")
        stream.seek(0)
        cut.write_bytes(stream.read(end))
    config = write_config(
        root / "config.yaml", {"input": {"warcs": [SAMPLES[0], str(cut)]}, **FEW_PARTITIONS}
    )

    reference = root / "reference"
    reference.mkdir()
    ok(snakemake(reference, configfiles=[config]))

    workdir = root / "killed"
    workdir.mkdir()
    command = snakemake_command(workdir, configfiles=[config])
    extract_dir = workdir / "work" / "extract"
    with open(root / "killed.out", "w") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            # Wait until sample-00 is through extract (its language job has begun) while the crawl's
            # extract is still writing its temporary files.
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and process.poll() is None:
                writing = list(extract_dir.glob(".crawl-cut.*.tmp")) if extract_dir.is_dir() else []
                if writing and (workdir / "logs" / "language" / "sample-00.log").exists():
                    break
                time.sleep(0.02)
            state = {
                "writing": sorted(p.name for p in extract_dir.glob(".crawl-cut.*.tmp")),
                "crawl_docs": (extract_dir / "crawl-cut.docs.parquet").exists(),
                "running": process.poll() is None,
            }
            os.killpg(process.pid, signal.SIGKILL)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=60)
    assert state["running"] and state["writing"] and not state["crawl_docs"], (
        f"not killed mid-extract: {state}\n{(root / 'killed.out').read_text()[-3000:]}"
    )
    after_kill = {
        "final_outputs": sorted(p.name for p in extract_dir.glob("crawl-cut.*")),
        "sample_extracted": (extract_dir / "sample-00.docs.parquet").is_file(),
    }
    # SIGKILL leaves Snakemake's lock: a plain rerun refuses, --unlock lifts it, and then a plain
    # rerun goes on. No --rerun-incomplete: atomic writes left no output under its final name.
    refused = snakemake(workdir, configfiles=[config])
    unlocked = snakemake(workdir, "--unlock", configfiles=[config])
    rerun = snakemake(workdir, configfiles=[config])
    return {
        "reference": reference,
        "workdir": workdir,
        "after_kill": after_kill,
        "refused": refused,
        "unlocked": unlocked,
        "rerun": rerun,
    }


def test_interrupted_run_reruns_after_unlock_without_rerun_incomplete(interrupted):
    assert interrupted["after_kill"] == {"final_outputs": [], "sample_extracted": True}
    refused = interrupted["refused"]
    assert refused.returncode != 0 and "LockException" in refused.stdout + refused.stderr
    ok(interrupted["unlocked"])
    output = ok(interrupted["rerun"])
    assert "rerun-incomplete" not in output and "IncompleteFilesException" not in output
    # Only the killed shard's extract runs again; sample-00's finished extract is kept.
    assert {shard for rule, shard in planned_jobs(output) if rule == "extract"} == {"crawl-cut"}
    assert job_stats(output)["extract"] == 1


def test_interrupted_run_ends_with_the_outputs_of_an_uninterrupted_one(interrupted):
    ok(interrupted["rerun"])
    reference, workdir = interrupted["reference"], interrupted["workdir"]
    expected = corpus_bytes(reference)
    assert sorted(expected) == [
        "crawl-cut.jsonl.gz",
        "crawl-cut.prevert.gz",
        "crawl-cut.vert.gz",
        "sample-00.jsonl.gz",
        "sample-00.prevert.gz",
        "sample-00.vert.gz",
    ]
    assert len(expected["crawl-cut.jsonl.gz"]) > 10_000
    assert corpus_bytes(workdir) == expected
    for pattern in (
        "work/extract/*.parquet",
        "work/language/*.parquet",
        "work/dedup/shards/*.parquet",
    ):
        names = sorted(p.name for p in reference.glob(pattern))
        assert names == sorted(p.name for p in workdir.glob(pattern)) and names, pattern
        for name in names:
            pd.testing.assert_frame_equal(
                pd.read_parquet(workdir / Path(pattern).parent / name),
                pd.read_parquet(reference / Path(pattern).parent / name),
            )


def test_interrupted_run_leaves_no_half_written_file_after_the_rerun(interrupted):
    ok(interrupted["rerun"])
    assert half_written(interrupted["workdir"]) == []
