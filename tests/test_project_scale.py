"""bench/project_scale.py: every rule of the workflow has a model, and the table follows the
measured files it reads (nothing in it is typed in)."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys

import pytest
from conftest import REPO

from corpusbuilder.report.summary import SUMMARIES_PER_MERGE, merge_tree

SCRIPT = REPO / "bench" / "project_scale.py"
spec = importlib.util.spec_from_file_location("project_scale", SCRIPT)
assert spec is not None and spec.loader is not None
project_scale = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = project_scale  # its dataclass looks its module up there
spec.loader.exec_module(project_scale)


def rule_names(workflow) -> set[str]:
    """Every `rule NAME:` of the Snakefile and rules/*.smk, as Snakemake would define them."""
    files = [workflow / "Snakefile", *(workflow / "rules").glob("*.smk")]
    return {
        name
        for path in files
        for name in re.findall(r"^\s*rule\s+(\w+)\s*:", path.read_text(), re.M)
    }


def run(tmp_path, *args) -> dict:
    out = tmp_path / "projection.json"
    assert project_scale.main(["--out", str(out), *args]) == 0
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def projection(tmp_path_factory) -> dict:
    return run(tmp_path_factory.mktemp("projection"))


def test_every_rule_of_the_workflow_is_in_both_projections(projection):
    names = rule_names(REPO)
    assert {"extract", "dedup_seen", "corpus_stats", "report", "all"} <= names
    assert [round(row["words"]) for row in projection["rows"]] == [10**11, 10**12]
    for row in projection["rows"]:
        assert names <= set(row["rules"]), names - set(row["rules"])
        jobs = {name: rule["jobs"] for name, rule in row["rules"].items()}
        # the corpus build and the report run; a shard's rules run once a shard
        assert jobs["report"] == jobs["corpus_stats"] == 1
        assert jobs["extract"] == jobs["export"] == row["size"]["shards"] > 1
        assert row["size"]["mode"] == "partitioned" and jobs["dedup"] == 0
        assert jobs["dedup_seen"] == row["size"]["dedup"] > 1
        # the state in hash ranges of its own, as many as keep each job's share of it in 8 GB
        assert jobs["dedup_state"] == row["size"]["state"] > row["size"]["dedup"]
        assert row["rules"]["dedup_state"]["memory"]["mb"] <= 8000


def test_a_rule_without_a_model_is_an_error(tmp_path, capsys):
    workflow = tmp_path / "workflow"
    shutil.copytree(REPO / "rules", workflow / "rules")
    shutil.copy(REPO / "Snakefile", workflow / "Snakefile")
    with (workflow / "rules" / "export.smk").open("a") as smk:
        smk.write("\n\nrule reshard:\n    output:\n        'x'\n")
    with pytest.raises(SystemExit):
        project_scale.main(["--out", str(tmp_path / "p.json"), "--workflow", str(workflow)])
    assert "reshard" in capsys.readouterr().err


def test_the_table_follows_the_measured_rates(tmp_path, projection):
    scale = json.loads(project_scale.SCALE.read_text())
    scale["rules"]["extract"]["cpu_time"] *= 2
    scale["rules"]["tokenise"]["max_rss_mb"] += 1000
    changed = tmp_path / "scale.json"
    changed.write_text(json.dumps(scale))
    again = run(tmp_path, "--scale", str(changed))
    for before, after in zip(projection["rows"], again["rows"], strict=True):
        extract = before["rules"]["extract"]["hours"], after["rules"]["extract"]["hours"]
        assert extract[1] == pytest.approx(2 * extract[0])
        tokenise = before["rules"]["tokenise"]["memory"]["mb"]
        assert after["rules"]["tokenise"]["memory"]["mb"] > tokenise + 1000  # x the shard
        # the dedup jobs' memory is the library's, not the scale run's
        seen = before["rules"]["dedup_seen"]["memory"]
        assert seen["source"] == "memory.partitioned_memory_mb"
        assert after["rules"]["dedup_seen"]["memory"] == seen
        assert after["wall_hours"] > before["wall_hours"]


def test_a_rule_retimed_in_the_build_replaces_its_row(tmp_path, projection, capsys):
    """A rule run again in the scale run's build after a change: its re-timed CPU seconds are
    the rate; re-timed in another build, the projection refuses it."""
    scale = json.loads(project_scale.SCALE.read_text())
    rule = "extract"
    retimed = {
        "build": scale["dir"],
        "rules": {rule: {**scale["rules"][rule], "cpu_time": 3 * scale["rules"][rule]["cpu_time"]}},
    }
    changed = tmp_path / "retimed.json"
    changed.write_text(json.dumps(retimed))
    again = run(tmp_path, "--retimed", str(changed))
    for before, after in zip(projection["rows"], again["rows"], strict=True):
        hours = before["rules"][rule]["hours"], after["rules"][rule]["hours"]
        assert hours[1] == pytest.approx(3 * hours[0])
    changed.write_text(json.dumps({**retimed, "build": "/elsewhere"}))
    with pytest.raises(SystemExit):
        project_scale.main(["--retimed", str(changed), "--out", str(tmp_path / "x.json")])
    assert "/elsewhere" in capsys.readouterr().err


def test_the_targets_are_evaluated_not_stated(tmp_path, projection):
    small = run(tmp_path, "--shard-words", "1e8", "--max-mem-mb", "256000", "--job-overhead-s", "0")
    slow = run(tmp_path, "--job-overhead-s", "3600")
    for row, fast, late in zip(projection["rows"], small["rows"], slow["rows"], strict=True):
        memory = row["targets"]["memory"]
        assert memory["pass"] == (not memory["over"])
        assert all(mb > memory["target_mb"] for mb in memory["over"].values())
        assert fast["targets"]["memory"]["pass"] and not fast["targets"]["memory"]["over"]
        assert not late["targets"]["time"]["pass"]
        assert late["targets"]["time"]["wall_hours"] > row["targets"]["time"]["wall_hours"]
    assert projection["commit"] and projection["date"]


def test_shards_are_the_parts_of_a_warc_that_input_shard_mb_makes(projection):
    """The defaults split a Common Crawl WARC into 8 shards (input.shard_mb auto): a job a WARC
    for its download, its warc_parts reading and its n-gram run, a job a part for the rest, and
    no job that holds a shard over resources.max_mem_mb."""
    assert projection["rates"]["parts_per_warc"] == 8
    for row in projection["rows"]:
        jobs = {name: rule["jobs"] for name, rule in row["rules"].items()}
        warcs, shards = row["size"]["warc"], row["size"]["shards"]
        assert jobs["download"] == jobs["warc_parts"] == jobs["ngram_runs"] == warcs
        assert shards <= 8 * warcs < shards + 8
        for name, rule in row["rules"].items():
            if rule["jobs"] == shards and rule["memory"]["mb"] is not None:
                assert rule["memory"]["mb"] <= row["targets"]["memory"]["target_mb"], name


def test_every_job_of_the_build_is_timed_and_sized(projection):
    """Report and funnel included (issue 59 item 4): no rule that runs goes without its hours
    or its memory."""
    for row in projection["rows"]:
        assert row["time_not_measured"] == [] and row["memory_not_measured"] == []
        for name in (
            "report",
            "report_summary_group",
            "report_summary",
            "funnel",
            "corpus_stats",
            "dedup_documents",
        ):
            assert row["rules"][name]["hours"] is not None, name
        # Snakemake's plan of every job comes first, on the host that submits
        assert row["plan"]["jobs"] == sum(rule["jobs"] for rule in row["rules"].values())
        assert row["plan"]["hours"] > 0 and row["plan"]["peak_mb"] > 0


def test_what_a_shard_more_costs_follows_the_measurement(tmp_path, projection):
    """A corpus-wide job that reads a small file a shard: its memory and its time are the run's
    plus the measured cost of each shard more."""
    jobs = json.loads(project_scale.REPORT_JOBS.read_text())
    jobs["merges"]["steps"]["funnel"]["per_shard_mb"] += 0.1
    jobs["merges"]["steps"]["funnel"]["per_shard_s"] += 0.1
    changed = tmp_path / "report_jobs.json"
    changed.write_text(json.dumps(jobs))
    again = run(tmp_path, "--report-jobs", str(changed))
    shards = json.loads(project_scale.SCALE.read_text())["crawl"]["shards"]
    for before, after in zip(projection["rows"], again["rows"], strict=True):
        more = 0.1 * (before["size"]["shards"] - len(shards))
        funnel = before["rules"]["funnel"]["memory"]["mb"], after["rules"]["funnel"]["memory"]["mb"]
        assert funnel[1] - funnel[0] == pytest.approx(more, abs=1)
        hours = before["rules"]["funnel"]["hours"], after["rules"]["funnel"]["hours"]
        assert (hours[1] - hours[0]) * 3600 == pytest.approx(more, rel=1e-6)


def test_the_page_summaries_merge_in_a_tree_of_jobs_timed_by_the_files_they_read(
    tmp_path, projection
):
    """Past 64 shards the page summaries are merged 64 at a time, the tree's levels one after
    the other, and the last merge reads the top level's files: each job's time follows the
    files it reads (what a summary more costs, bench_report_jobs.py's `merges`), whatever the
    shards, and no longer one job's time growing with them."""
    jobs = json.loads(project_scale.REPORT_JOBS.read_text())
    jobs["merges"]["steps"]["report_summary"]["per_shard_s"] += 1.0
    changed = tmp_path / "report_jobs.json"
    changed.write_text(json.dumps(jobs))
    again = run(tmp_path, "--report-jobs", str(changed))
    run_shards = projection["rates"]["shards"]
    for before, after in zip(projection["rows"], again["rows"], strict=True):
        tree = merge_tree(before["size"]["shards"])
        assert before["size"]["summary_tree"] == tree
        merges = before["rules"]["report_summary_group"]
        assert merges["jobs"] == sum(tree[1:]) and merges["in_sequence"] == len(tree) - 1
        assert before["rules"]["report_summary"]["jobs"] == 1 and tree[-1] <= SUMMARIES_PER_MERGE
        for name, files in (
            ("report_summary_group", SUMMARIES_PER_MERGE),
            ("report_summary", tree[-1]),
        ):
            more = (after["rules"][name]["hours"] - before["rules"][name]["hours"]) * 3600
            # (a job of fewer files than the run's job: its share of the run's job)
            assert more == pytest.approx(max(files - run_shards, 0), abs=1e-6), name
            assert before["rules"][name]["hours"] < 60 / 3600
    # 10^11 words: a level of merge jobs; 10^12: two
    assert [len(row["size"]["summary_tree"]) for row in projection["rows"]] == [2, 3]


def test_reading_a_part_costs_what_the_files_parts_make_it(tmp_path, projection):
    """A range job reads a part of every shard's file: at a format whose read grows with the
    parts, the range jobs' hours grow by N reads, and the projection says so."""
    slow = tmp_path / "part_reads.json"
    slow.write_text(
        json.dumps(
            {"kinds": {"k": {"parts": {"64": {"ms_per_read": 1.4}, "4674": {"ms_per_read": 40}}}}}
        )
    )
    again = run(tmp_path, "--part-reads", str(slow))
    row, late = projection["rows"][-1], again["rows"][-1]
    seen = row["rules"]["dedup_seen"], late["rules"]["dedup_seen"]
    shards = row["size"]["shards"]
    assert seen[1]["of_which_opening_hours"] > seen[0]["of_which_opening_hours"]
    # two files a shard (its occurrences and its order's keys), ~40 ms each at P = 4,674
    assert seen[1]["of_which_opening_hours"] == pytest.approx(2 * shards * 0.040 / 3600, rel=0.2)
    assert late["wall_hours"] > row["wall_hours"]
