#!/usr/bin/env python3
"""Scale run: the whole workflow on a synthetic crawl (bench/make_crawl.py), per-stage times from
Snakemake's benchmark files, projected to 10^9 words next to the thesis' Table 3.7.

    python bench/scale.py            # 0.25 GB of HTML, 8 shards, --cores 2, in /tmp/cb-scale
    python bench/scale.py --gb 1 --dir /tmp/scale # the 1 GB run (~4× as long)
    python bench/scale.py --report-only --dir /tmp/cb-scale   # re-read a finished run
    python bench/scale.py --resume --dir /tmp/cb-scale ...    # continue an interrupted one
    python bench/scale.py --gb 1.9 --shards 32 --no-gzip --executor slurm --dir /tmp/scale2 \
        --out bench/results/scale_slurm.json  # ≥ 2 GB of WARCs, every job through profiles/slurm
    python bench/scale.py --gb 5 --shards 32 --executor slurm --shipped-defaults \
        --dir /tmp/scale5 --out bench/results/scale_slurm_defaults.json  # ≥ 2 GB gzip'd, + report
    python bench/scale.py --gb 4.8 --shards 32 --first-shards 16 --cores 1 --shipped-defaults \
        --dir /tmp/retime --out bench/results/scale_local_defaults.json  # its first 16 shards

Steps: generate the crawl into DIR/warcs (skipped when DIR/warcs/crawl.json has the same
--gb/--shards/--seed/--first-shards), write DIR/config.yaml (input.warcs = those shards,
everything else at its default: jusText default preset, language filter, exact dedup, block dedup
n = 10), run
`python -m snakemake --snakefile REPO/Snakefile --directory DIR --configfile DIR/config.yaml
--cores N all results/stats/stage_times.tsv` and time it, then read

- per stage: the `s` (wall seconds of the job) column of benchmarks/<rule>/*.tsv and each job's
  CPU seconds, summed over the stage's jobs. The CPU seconds are those each rule script logs as
  it exits (the `resources:` line of logs/, `corpusbuilder.common.logs`): Snakemake's
  `cpu_time` column samples a job every 30 s after its first 15 and misses what the job spent
  after the last sample, so it is only used for a rule whose jobs did not all log one. Jobs are
  single-threaded, so summed job seconds ≈ core-seconds (on a shared machine they include time
  spent waiting for a core: an upper bound);
- per rule: jobs, summed job seconds and CPU seconds, the largest peak RSS (`max_rss`), for the
  rules without `benchmark:` (the report's) from their `resources:` lines alone, so that the
  whole run's CPU less every job's is Snakemake's own (`cpu_s_outside_jobs`); with
  `--executor slurm` the jobs run under slurmd, so their CPU is counted from these files only;
- words: results/stats/funnel.tsv — `html_documents` words (all text of the HTML pages, the
  thesis' "original corpus" count, 24.6 G in Table 3.8) and `good_text` words (after jusText);
- projections per 10^9 words of original text: wall hours on this machine (total wall ÷ words),
  and core-hours per stage — next to Table 3.7 divided the same way (24.63 G original words;
  jusText, language, tokenisation on 8 cores, the rest on 1).

Results: bench/results/scale.json (with the machine description, per-rule figures, and the tokens
and duplicate n-grams of the dedup job, and issue 58's measure: the whole run's CPU, all
processes, against the extract stage's, `whole_run_x_extract`, and the same without the
report's jobs, which `snakemake all` does not run, `corpus_build_x_extract`);
`python bench/project_scale.py` projects them to 10^9, 10^10 and 10^11 words. Runs smaller than
1 GB are extrapolated linearly to 1 GB in `extrapolated_1gb`, marked as such.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from run_all import machine_info  # noqa: E402
from scale_rules import workflow_rules  # noqa: E402

from corpusbuilder.common.logs import job_cost  # noqa: E402


@contextlib.contextmanager
def local_slurm(directory: Path, cpus: int):
    """The one-node SLURM cluster of the tests, with this machine's cores and most of its memory."""
    sys.path.insert(0, str(REPO / "tests"))
    from slurm_cluster import LocalSlurm, foreign_config, missing_daemons

    if missing := missing_daemons():
        raise SystemExit(
            f"--executor slurm: missing {', '.join(missing)} (apt-get install slurm-wlm munge)"
        )
    if foreign_config():
        raise SystemExit(
            "--executor slurm: /etc/slurm/slurm.conf belongs to a real cluster; submit with its "
            "profile"
        )
    memory_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20 * 3 // 4
    cluster = LocalSlurm(directory, cpus=cpus, memory_mb=memory_mb)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


RESULTS = HERE / "results" / "scale.json"

# Thesis Table 3.7 (ClueWeb09_English_1, 24,633,016,767 original words; Table 3.8) — hours, cores.
THESIS_WORDS = 24_633_016_767
THESIS_CLEAN_WORDS = 11_363_624_711
THESIS_STAGES = {
    "extract": ("removing boilerplate (jusText)", 26 + 37 / 60, 8),
    "language": ("language filtering (Trigram)", 5 + 22 / 60, 8),
    "tokenise": ("tokenisation", 15 + 54 / 60, 8),
    "exact dedup": ("removing exact duplicates", 12 + 44 / 60, 1),
    "dup n-grams": ("duplicate n-grams extraction", 9 + 49 / 60, 1),
    "dedup": ("block level de-duplication", 69 + 8 / 60, 1),
}
STAGE_OF_RULE = {
    "extract": "extract",
    "language": "language",
    "tokenise": "tokenise",
    "exact_hashes": "exact dedup",
    "exact_partition": "exact dedup",
    "exact_dedup": "exact dedup",
    "ngram_runs": "dup n-grams",
    "dup_ngram_part": "dup n-grams",
    "dup_ngrams": "dup n-grams",
    "dedup": "dedup",
    # dedup.mode partitioned: its jobs are the same stage
    "dedup_occurrences": "dedup",
    "dedup_counts": "dedup",
    "dedup_order": "dedup",
    "dedup_seen": "dedup",
    "dedup_shard": "dedup",
    "dedup_merge": "dedup",
}


def read_benchmarks(directory: Path) -> dict[str, dict]:
    """rule → {jobs, s (sum), cpu_time (sum), max_rss (max, MB)} from
    benchmarks/<rule>[/...].tsv."""
    rules: dict[str, dict] = defaultdict(
        lambda: {"jobs": 0, "s": 0.0, "cpu_time": 0.0, "max_rss_mb": 0.0}
    )
    for path in sorted((directory / "benchmarks").rglob("*.tsv")):
        relative = path.relative_to(directory / "benchmarks")
        rule = relative.parts[0] if len(relative.parts) > 1 else path.stem
        with open(path) as stream:
            for row in csv.DictReader(stream, delimiter="\t"):
                entry = rules[rule]
                entry["jobs"] += 1
                entry["s"] += float(row["s"])
                entry["cpu_time"] += float(row.get("cpu_time") or 0)
                try:
                    entry["max_rss_mb"] = max(entry["max_rss_mb"], float(row.get("max_rss") or 0))
                except ValueError:  # "NA" on very short jobs
                    pass
    logged = read_logged_jobs(directory)
    for rule, entry in rules.items():
        jobs, cpu, _, _ = logged.get(rule, (0, 0.0, 0.0, 0.0))
        entry["cpu_time_benchmark"] = entry["cpu_time"]
        if jobs == entry["jobs"]:
            entry["cpu_time"] = cpu
    # Rules without `benchmark:` (light ones, the report's): their jobs' own lines alone, so that
    # the jobs' CPU is every job's and what is left of the whole run is Snakemake's.
    for rule, (jobs, cpu, wall, rss) in logged.items():
        if rule not in rules:
            rules[rule] = {"jobs": jobs, "s": wall, "cpu_time": cpu, "max_rss_mb": rss}
    return {rule: {k: round(v, 2) for k, v in entry.items()} for rule, entry in rules.items()}


def read_logged_jobs(directory: Path) -> dict[str, tuple[int, float, float, float]]:
    """rule → (jobs, CPU seconds, wall seconds, largest peak RSS in MB) from the `resources:`
    line each rule script logs as it exits."""
    found: dict[str, list[dict[str, str]]] = defaultdict(list)
    for path in (directory / "logs").rglob("*.log"):
        for line in path.read_text(errors="replace").splitlines():
            if fields := job_cost(line):
                found[fields["rule"]].append(fields)
    return {
        rule: (
            len(jobs),
            sum(float(job["cpu_s"]) for job in jobs),
            sum(float(job["wall_s"]) for job in jobs),
            max(float(job["max_rss_mb"]) for job in jobs),
        )
        for rule, jobs in found.items()
    }


def read_funnel(directory: Path) -> dict[str, dict]:
    with open(directory / "results" / "stats" / "funnel.tsv") as stream:
        return {
            row["stage"]: {"documents": int(row["documents"]), "words": int(row["words"])}
            for row in csv.DictReader(stream, delimiter="\t")
        }


def report(
    directory: Path, wall_s: float | None, cpu_s: float | None, cores: int, crawl: dict | None
) -> dict:
    rules = read_benchmarks(directory)
    funnel = read_funnel(directory)
    words = funnel["html_documents"]["words"]
    clean_words = funnel["good_text"]["words"]
    per_billion = 1e9 / words / 3600  # seconds on this corpus → hours per 10^9 original words
    stages = {}
    for rule, entry in rules.items():
        stage = STAGE_OF_RULE.get(rule, rule)
        s = stages.setdefault(
            stage, {"rules": [], "jobs": 0, "job_s": 0.0, "cpu_time_s": 0.0, "max_rss_mb": 0.0}
        )
        s["rules"].append(rule)
        s["jobs"] += entry["jobs"]
        s["job_s"] += entry["s"]
        s["cpu_time_s"] += entry["cpu_time"]
        s["max_rss_mb"] = max(s["max_rss_mb"], entry["max_rss_mb"])
    for stage, s in stages.items():
        s["core_hours_per_1e9_words"] = round(s["job_s"] * per_billion, 3)
        if stage in THESIS_STAGES:
            name, hours, thesis_cores = THESIS_STAGES[stage]
            s["thesis"] = {
                "phase": name,
                "hours": round(hours, 2),
                "cores": thesis_cores,
                "core_hours_per_1e9_words": round(hours * thesis_cores / THESIS_WORDS * 1e9, 3),
            }
            s["speedup_vs_thesis_per_core"] = (
                round(s["thesis"]["core_hours_per_1e9_words"] / s["core_hours_per_1e9_words"], 2)
                if s["core_hours_per_1e9_words"]
                else None
            )
        s["job_s"] = round(s["job_s"], 1)
        s["cpu_time_s"] = round(s["cpu_time_s"], 1)
    order = list(THESIS_STAGES)
    stages = dict(
        sorted(
            stages.items(),
            key=lambda item: (order.index(item[0]) if item[0] in order else len(order), item[0]),
        )
    )
    pipeline = [s for name, s in stages.items() if name in THESIS_STAGES]
    # `snakemake all` builds the corpus; the stage-times table (and the page) is the report's,
    # a target of its own, whose jobs are left out of the corpus build's figure
    report_rules = set(workflow_rules(REPO, "rules/report.smk"))
    report_cpu_s = sum(e["cpu_time"] for rule, e in rules.items() if rule in report_rules)
    extract_cpu_s = rules["extract"]["cpu_time"] if "extract" in rules else None
    thesis_wall = sum(h for _, h, _ in THESIS_STAGES.values())
    thesis_core = sum(h * c for _, h, c in THESIS_STAGES.values())
    result = {
        "dir": str(directory),
        "cores": cores,
        "crawl": crawl,
        "funnel": funnel,
        "words_original": words,
        "words_after_jusText": clean_words,
        "wall_s": wall_s,
        "cpu_s_all_processes": cpu_s,
        # every job's own CPU seconds (logged by each script as it exits, else Snakemake's
        # benchmark files): also what jobs that slurmd ran spent
        "cpu_s_jobs": round(sum(entry["cpu_time"] for entry in rules.values()), 1),
        # the rest: Snakemake's own process, the shell each job starts in, the scheduler's
        # solver, and each job's exit after its last line
        "cpu_s_outside_jobs": round(cpu_s - sum(e["cpu_time"] for e in rules.values()), 1)
        if cpu_s
        else None,
        "cpu_s_report_jobs": round(report_cpu_s, 1),
        # issue 58's measure: all the run's CPU against the extract stage's
        "whole_run_x_extract": round(cpu_s / extract_cpu_s, 2) if cpu_s and extract_cpu_s else None,
        "corpus_build_x_extract": round((cpu_s - report_cpu_s) / extract_cpu_s, 2)
        if cpu_s and extract_cpu_s
        else None,
        "words_per_wall_second": round(words / wall_s) if wall_s else None,
        "rules": rules,
        "stages": stages,
        "pipeline_job_s": round(sum(s["job_s"] for s in pipeline), 1),
        "projection_per_1e9_original_words": {
            "wall_hours_this_machine": round(wall_s * per_billion, 2) if wall_s else None,
            "core_hours_pipeline_stages_job_wall": round(
                sum(s["job_s"] for s in pipeline) * per_billion, 2
            ),
            "cpu_hours_whole_run": round(cpu_s * per_billion, 2) if cpu_s else None,
            "cpu_hours_jobs": round(
                sum(entry["cpu_time"] for entry in rules.values()) * per_billion, 2
            ),
            "per_1e9_clean_words_wall_hours": round(wall_s * 1e9 / clean_words / 3600, 2)
            if wall_s
            else None,
        },
        "thesis_table_3_7": {
            "original_words": THESIS_WORDS,
            "clean_words": THESIS_CLEAN_WORDS,
            "wall_hours": round(thesis_wall, 1),
            "core_hours": round(thesis_core, 1),
            "wall_hours_per_1e9_original_words": round(thesis_wall / THESIS_WORDS * 1e9, 2),
            "core_hours_per_1e9_original_words": round(thesis_core / THESIS_WORDS * 1e9, 2),
            "brief_upper_bound_core_hours_per_1e9": round(6 * 24 * 8 / THESIS_WORDS * 1e9, 1),
            "note": "6 days x 8 cores / 24.6 G words = 47 core-h per 10^9 words counts 8 cores "
            "for the single-process phases too; Table 3.7's own phases and cores give the "
            "core-hours above",
        },
        "stage_times_tsv": (directory / "results" / "stats" / "stage_times.tsv").read_text()
        if (directory / "results" / "stats" / "stage_times.tsv").exists()
        else None,
    }
    dedup_stats = directory / "work" / "dedup" / "stats.json"
    if dedup_stats.exists():  # what bench/project_scale.py sizes the dedup job by
        dedup = json.loads(dedup_stats.read_text())
        result["dedup_tokens"], result["dedup_duplicate_ngrams"] = (
            dedup["tokens"],
            dedup["duplicate_ngrams"],
        )
    if crawl and crawl["args"]["gb"] < 1:
        factor = 1 / crawl["args"]["gb"]
        result["extrapolated_1gb"] = {
            "EXTRAPOLATED": f"linear from the {crawl['args']['gb']} GB run (x{factor:g}), not "
            "measured",
            "wall_s": round(wall_s * factor) if wall_s else None,
            "words_original": round(words * factor),
            "stage_job_s": {name: round(s["job_s"] * factor) for name, s in stages.items()},
        }
    return result


def print_report(result: dict) -> None:
    crawl = result["crawl"] or {}
    on_disk = "gzip'd" if crawl.get("args", {}).get("gzip", True) else "plain .warc"
    print(
        f"\ncrawl: {crawl.get('payload_bytes', 0) / 1e9:.3f} GB HTML "
        f"({crawl.get('file_bytes', 0) / 1e9:.3f} GB of WARC files, {on_disk}, "
        f"{len(crawl.get('shards', []))} files), {crawl.get('pages', '?')} pages; "
        f"{result['words_original']:,} words of page text, {result['words_after_jusText']:,} after "
        f"jusText; wall {result['wall_s'] or float('nan'):.0f} s on --cores {result['cores']}, CPU "
        f"{result['cpu_s_all_processes'] or float('nan'):.0f} s (all processes), "
        f"{result['cpu_s_jobs']:.0f} s in jobs; {result['words_per_wall_second'] or 0:,} words per "
        "wall second"
    )
    if result.get("whole_run_x_extract"):
        print(
            f"whole run {result['whole_run_x_extract']:.2f}x extract's CPU; the corpus build "
            f"(the report's {result['cpu_s_report_jobs']:.0f} CPU s in jobs left out) "
            f"{result['corpus_build_x_extract']:.2f}x"
        )
    print(
        "\n| rule | jobs | job s (sum) | cpu_time s (sum) | peak RSS MB (max) |\n"
        "|---|---|---|---|---|"
    )
    for rule, entry in sorted(result["rules"].items()):
        print(
            f"| {rule} | {entry['jobs']} | {entry['s']:.1f} | {entry['cpu_time']:.1f} | "
            f"{entry['max_rss_mb']:.0f} |"
        )
    print(
        "\n| stage | jobs | job s (sum) | cpu_time s | peak RSS MB | core-h / 10^9 words | thesis "
        "core-h / 10^9 | per-core speed-up |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, s in result["stages"].items():
        thesis = s.get("thesis")
        print(
            f"| {name} | {s['jobs']} | {s['job_s']:.1f} | {s['cpu_time_s']:.1f} | "
            f"{s['max_rss_mb']:.0f} | {s['core_hours_per_1e9_words']:.2f} | "
            f"{thesis['core_hours_per_1e9_words']:.2f} | {s['speedup_vs_thesis_per_core']}× |"
            if thesis
            else f"| {name} | {s['jobs']} | {s['job_s']:.1f} | {s['cpu_time_s']:.1f} | "
            f"{s['max_rss_mb']:.0f} | {s['core_hours_per_1e9_words']:.2f} | — | — |"
        )
    p, t = result["projection_per_1e9_original_words"], result["thesis_table_3_7"]
    print(
        f"\nper 10^9 original words: {p['wall_hours_this_machine']} wall hours here (--cores "
        f"{result['cores']}), {p['core_hours_pipeline_stages_job_wall']} job-hours in the six "
        "thesis stages (job wall time, an upper bound on core-hours under load), "
        f"{p['cpu_hours_whole_run']} CPU-hours measured over the whole run (rusage); thesis: "
        f"{t['wall_hours_per_1e9_original_words']} wall h (8 cores), "
        f"{t['core_hours_per_1e9_original_words']} core-h (the brief's upper bound "
        f"{t['brief_upper_bound_core_hours_per_1e9']})"
    )
    if "extrapolated_1gb" in result:
        e = result["extrapolated_1gb"]
        print(
            f"EXTRAPOLATED to 1 GB ({e['EXTRAPOLATED']}): {e['wall_s']} s wall, "
            f"{e['words_original']:,} words"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dir", type=Path, default=Path("/tmp/cb-scale"))
    parser.add_argument("--gb", type=float, default=0.25, help="uncompressed HTML, GB (10^9 bytes)")
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--first-shards",
        type=int,
        default=None,
        help="build only the first N shards of the crawl (make_crawl.py --first): the same shards "
        "as the whole crawl's, for a run with no time for all of them",
    )
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument(
        "--no-gzip",
        dest="gzip",
        action="store_false",
        help="plain .warc files (make_crawl.py --no-gzip)",
    )
    parser.add_argument(
        "--executor",
        choices=("local", "slurm"),
        default="local",
        help="slurm: submit every job through profiles/slurm to a one-node SLURM cluster started "
        "on this machine for the run (tests/slurm_cluster.py; needs slurm-wlm and munge, as root)",
    )
    parser.add_argument(
        "--dedup-mode",
        choices=("sequential", "partitioned"),
        default="sequential",
        help="dedup.mode of the run (docs/dedup-scale.md)",
    )
    parser.add_argument("--dedup-partitions", type=int, default=8, help="dedup.partitions")
    parser.add_argument(
        "--shipped-defaults",
        action="store_true",
        help="leave dedup.mode and dedup.partitions at the shipped defaults (auto), ignoring the "
        "two options above, and build results/report.html too",
    )
    parser.add_argument("--report-only", action="store_true", help="read a finished run in --dir")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted run in --dir: keep its outputs and benchmark files (every "
        "finished job keeps its figures), rerun the incomplete jobs, add this run's wall time",
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    directory = args.dir.resolve()
    warcs_dir = directory / "warcs"
    crawl_json = warcs_dir / "crawl.json"
    wall_s = cpu_s = None
    if not args.report_only:
        crawl = json.loads(crawl_json.read_text()) if crawl_json.exists() else None
        wanted = [args.gb, args.shards, args.seed, args.gzip, args.first_shards]
        have = {"gzip": True, "first": None, **(crawl["args"] if crawl else {})}
        if not crawl or [have[k] for k in ("gb", "shards", "seed", "gzip", "first")] != wanted:
            if args.resume:
                raise SystemExit(
                    f"--resume: {warcs_dir} is not the crawl of these --gb, --shards, --seed"
                )
            shutil.rmtree(warcs_dir, ignore_errors=True)
            subprocess.run(
                [
                    sys.executable,
                    str(HERE / "make_crawl.py"),
                    str(warcs_dir),
                    "--gb",
                    str(args.gb),
                    "--shards",
                    str(args.shards),
                    "--seed",
                    str(args.seed),
                    *([] if args.gzip else ["--no-gzip"]),
                    *(["--first", str(args.first_shards)] if args.first_shards else []),
                ],
                check=True,
            )
        crawl = json.loads(crawl_json.read_text())
        config = directory / "config.yaml"
        # The run times the corpus build: with no gold sets in reach, the stage-times table does not
        # wait for the gold-set evaluation (and its model training) first.
        config.write_text(
            "input:\n  warcs:\n"
            + "".join(f"    - {s['path']}\n" for s in crawl["shards"])
            + f"evaluate:\n  gold_dir: {directory / 'no-gold-sets'}\n"
            + (
                ""
                if args.shipped_defaults
                else f"dedup:\n  mode: {args.dedup_mode}\n  partitions: {args.dedup_partitions}\n"
            )
        )
        print(
            f"[{time.strftime('%H:%M:%S')}] workflow on {len(crawl['shards'])} shards, "
            f"{'--cores ' + str(args.cores) if args.executor == 'local' else 'SLURM profile'}",
            flush=True,
        )
        if not args.resume:
            for stale in ("benchmarks", "work", "results", "logs", "data", ".snakemake"):
                shutil.rmtree(
                    directory / stale, ignore_errors=True
                )  # a fresh run, so every stage is timed
        command = [
            sys.executable,
            "-m",
            "snakemake",
            "all",
            "results/stats/stage_times.tsv",
            *(["results/report.html"] if args.shipped_defaults else []),
            "--snakefile",
            str(REPO / "Snakefile"),
            "--directory",
            str(directory),
            "--configfile",
            str(config),
            *(["--rerun-incomplete"] if args.resume else []),
        ]
        with contextlib.ExitStack() as stack:
            env = None
            if args.executor == "slurm":
                env = stack.enter_context(local_slurm(directory / "slurm", args.cores)).env
                command += [
                    "--workflow-profile",
                    str(REPO / "profiles" / "slurm"),
                    "--slurm-no-account",
                    "--slurm-init-seconds-before-status-checks",
                    "5",
                ]
            else:
                command += ["--cores", str(args.cores)]
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            with open(directory / "run.log", "a" if args.resume else "w") as log:
                done = subprocess.run(
                    command, stdout=log, stderr=subprocess.STDOUT, env=env, check=False
                )
            wall_s = round(time.perf_counter() - started, 1)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        # Jobs that slurmd started are no children of this process: their
        # CPU is in the benchmark files.
        cpu_s = (
            round(after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime, 1)
            if args.executor == "local"
            else None
        )
        times = directory / "wall_s.txt"
        if args.resume and times.exists():
            # a resumed run's times are its segments' sums
            wall, cpu, *_ = times.read_text().split()
            wall_s = round(wall_s + float(wall), 1)
            cpu_s = None if cpu_s is None or cpu == "nan" else round(cpu_s + float(cpu), 1)
        # written for a failed segment too, so that --resume adds the time it took
        times.write_text(f"{wall_s} {cpu_s or 'nan'} {args.executor}\n")
        if done.returncode:
            raise SystemExit(
                f"workflow failed after {wall_s} s, see {directory / 'run.log'}; "
                "--resume continues it"
            )
    else:
        crawl = json.loads(crawl_json.read_text()) if crawl_json.exists() else None
        if (directory / "wall_s.txt").exists():
            wall, cpu, *executor = (directory / "wall_s.txt").read_text().split()
            wall_s, cpu_s, args.executor = (
                float(wall),
                None if cpu == "nan" else float(cpu),
                *(executor or ["local"]),
            )
    result = report(directory, wall_s, cpu_s, args.cores, crawl)
    result["executor"] = args.executor
    if args.executor == "slurm" and (directory / "run.log").exists():
        # what a job costs the scheduler is paid per submission: grouped rules share one
        result["slurm_submissions"] = (
            (directory / "run.log").read_text().count("has been submitted with SLURM jobid")
        )
    result["machine"] = machine_info()
    print_report(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"\n{args.out} written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
