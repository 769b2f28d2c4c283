"""Issue 59's planning: where every job of one family reads every file of a kind that the other
writes (N shards, P hash ranges), the files are collected into one folder (rules/collect.smk), so
that the plan is N + P edges, not N·P; the folder holds them while its readers need them."""

from __future__ import annotations

import gzip
import re
import sys
from pathlib import Path

import pytest
from conftest import ok, snakemake

from corpusbuilder.contracts.tables import collect_files, collected_files

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from bench_planning import CC_BASE_URL, cc_path  # noqa: E402


def test_a_folder_keeps_its_files_in_order_when_their_names_are_deleted(tmp_path):
    paths = []
    for name in ("b", "a", "c"):
        paths.append(tmp_path / f"{name}.parquet")
        paths[-1].write_text(name)
    (tmp_path / "t.npz").write_text("tokens")
    folder = tmp_path / "collected"
    collect_files({"runs": paths, "tokens": [tmp_path / "t.npz"]}, folder)
    for path in paths:
        path.unlink()  # as Snakemake deletes a temp() file that no job left names
    runs = collected_files(str(folder), "runs")
    assert [Path(path).read_text() for path in runs] == ["b", "a", "c"]
    assert [Path(path).read_text() for path in collected_files([str(folder)], "tokens")] == [
        "tokens"
    ]
    # named one by one (under a default storage provider): the files as given
    assert collected_files(["x.parquet", "y.parquet"], "runs") == ["x.parquet", "y.parquet"]


# every family set to more hash ranges than the listing has shards: an N·P plan has many more
# edges than jobs
RANGES = 40
PARTITIONED = {
    "dedup": {"mode": "partitioned", "partitions": RANGES},
    "exact_dedup": {"partitions": RANGES},
    "ngrams": {"partitions": RANGES},
    "report": {"count_ranges": RANGES},
}


@pytest.mark.workflow
def test_the_plan_grows_with_shards_plus_ranges_not_their_product(tmp_path):
    """Four Common Crawl WARCs, 8 shards each (input.shard_mb auto), every family in 40 ranges,
    the corpus and the report planned: the DAG's edges are a few a job (4.0 here; 27 a job at
    e99ccb8, whose range jobs named every shard's file and shard jobs every range's)."""
    listing = tmp_path / "warc.paths.gz"
    listing.write_bytes(gzip.compress("".join(cc_path(i) + "\n" for i in range(4)).encode()))
    config = {
        "input": {"cc_paths": {"listing": str(listing), "base_url": CC_BASE_URL, "limit": 4}},
        "evaluate": {"gold_dir": str(tmp_path / "no-gold")},
        **PARTITIONED,
    }
    dot = ok(snakemake(tmp_path, "--dag", "dot", "all", "results/report.html", config=config))
    jobs = len(re.findall(r"^\s*\d+\[label", dot, re.MULTILINE))
    edges = len(re.findall(r"^\s*\d+ -> \d+", dot, re.MULTILINE))
    assert jobs > 32 * 8 + 5 * RANGES, jobs  # the shards' and the ranges' jobs are all there
    assert "report_summary_group" not in dot  # 32 shards: one merge of their page summaries
    assert edges < 6 * jobs, (edges, jobs)


def dry_run_jobs(output: str) -> list[dict]:
    """The jobs a dry run lists: each its rule and its fields (input, output, wildcards...)."""
    jobs: list[dict] = []
    for line in output.splitlines():
        if found := re.match(r"^(?:local)?rule (\w+):$", line):
            jobs.append({"rule": found[1]})
        elif jobs and (found := re.match(r"^    (\w+): (.*)$", line)):
            jobs[-1][found[1]] = found[2]
    return jobs


@pytest.mark.workflow
def test_past_64_shards_the_page_summaries_merge_in_groups_in_shard_order(tmp_path):
    """Nine WARCs, 72 shards: two merge jobs of the page summaries (the first 64 shards', the
    last 8, in shard order) and the last merge of their two files (report.summary.merge_tree)."""
    listing = tmp_path / "warc.paths.gz"
    listing.write_bytes(gzip.compress("".join(cc_path(i) + "\n" for i in range(9)).encode()))
    config = {
        "input": {"cc_paths": {"listing": str(listing), "base_url": CC_BASE_URL, "limit": 9}},
        "evaluate": {"gold_dir": str(tmp_path / "no-gold")},
    }
    jobs = dry_run_jobs(ok(snakemake(tmp_path, "-n", "results/report.html", config=config)))
    # the listing's shards are named in crawl order (zero-padded WARC numbers, then parts)
    shards = sorted(job["output"] for job in jobs if job["rule"] == "report_shard")
    assert len(shards) == 72
    merges = sorted(
        (job["wildcards"], job["input"].split(", "), job["output"])
        for job in jobs
        if job["rule"] == "report_summary_group"
    )
    assert merges == [
        ("level=1, group=0", shards[:64], "work/report/summary_tree/1/0.json"),
        ("level=1, group=1", shards[64:], "work/report/summary_tree/1/1.json"),
    ]
    (last,) = [job for job in jobs if job["rule"] == "report_summary"]
    assert last["input"] == "work/report/summary_tree/1/0.json, work/report/summary_tree/1/1.json"
