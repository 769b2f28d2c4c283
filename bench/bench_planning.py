#!/usr/bin/env python3
"""Planning time and memory of the workflow against the number of input WARCs: `snakemake -n`
(parse, config checks, DAG, dry-run listing) on a config of N inputs, nothing run.

    python bench/bench_planning.py                # 1,000 and 10,000 WARCs, both input kinds
    python bench/bench_planning.py --warcs 1000 10000 100000 --inputs cc_paths --warcs-per-shard 100
    python bench/bench_planning.py --snakefile /tmp/old/Snakefile --label k-way-merge --warcs 1000

Input kinds:
- cc_paths: a warc.paths.gz listing of N Common Crawl paths (`input.cc_paths`), as a real run
  over Common Crawl is configured; nothing local is read per WARC.
- local: N links to resources/sample/sample-00.warc.gz listed in `input.warcs`; the config check
  (corpusbuilder.download.inputs.check_input_paths) opens each one at every parse.

--warcs-per-shard sets input.warcs_per_shard (one point per value; 1, one WARC a shard, is the
default): the jobs per WARC fall with it, the WARCs listed and checked do not.

Two commands per point, each a fresh process timed on its own (wall clock; peak RSS from
os.wait4): `--list-rules`, which runs the Snakefile (config validation and checks, input
resolution) but builds no DAG, and `--dry-run`, which also builds the DAG and lists every job.
Results go to bench/results/planning.json under --label (the machine description beside them).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from run_all import machine_info  # noqa: E402

RESULTS = HERE / "results" / "planning.json"
SAMPLE_WARC = REPO / "resources" / "sample" / "sample-00.warc.gz"
CC_BASE_URL = "https://data.commoncrawl.org"


def cc_path(index: int) -> str:
    """A Common Crawl WARC path of the usual shape (segment, then file number)."""
    segment = f"1707947473{index // 1000:03d}.{index % 97:02d}"
    return (
        f"crawl-data/CC-MAIN-2024-10/segments/{segment}/warc/CC-MAIN-20240220-{index:05d}.warc.gz"
    )


def write_workdir(directory: Path, inputs: str, n: int, per_shard: int) -> Path:
    """A working directory whose config lists `n` WARCs of the given kind, `per_shard` a shard;
    returns the config."""
    directory.mkdir(parents=True, exist_ok=True)
    if inputs == "cc_paths":
        listing = directory / "warc.paths.gz"
        listing.write_bytes(gzip.compress("".join(cc_path(i) + "\n" for i in range(n)).encode()))
        config = {
            "input": {"cc_paths": {"listing": str(listing), "base_url": CC_BASE_URL, "limit": n}}
        }
    else:
        links = directory / "warcs"
        links.mkdir(exist_ok=True)
        for i in range(n):
            link = links / f"w{i:06d}.warc.gz"
            if not link.is_symlink():
                link.symlink_to(SAMPLE_WARC)
        config = {"input": {"warcs": [str(links / f"w{i:06d}.warc.gz") for i in range(n)]}}
    config["input"]["warcs_per_shard"] = per_shard
    path = directory / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def timed(command: list[str]) -> dict:
    """Wall seconds, CPU seconds (user + system: what a busy shared machine does not inflate),
    peak RSS (MB) and output of one command in a fresh process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise RuntimeError(
            f"{' '.join(command[:6])}... failed ({process.returncode}):\n{output[-3000:]}"
        )
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024),
        "output": output,
    }


def plan(snakefile: Path, directory: Path, config: Path) -> dict:
    base = [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(snakefile),
        "--directory",
        str(directory),
        "--cores",
        "1",
        "--configfile",
        str(config),
    ]
    parse = timed([*base, "--list-rules"])
    dry = timed([*base, "--dry-run", "--quiet", "rules"])
    total = re.search(r"^\s*total\s+(\d+)\s*$", dry["output"], re.MULTILINE)
    return {
        "parse_s": parse["wall_s"],
        "parse_peak_rss_mb": parse["peak_rss_mb"],
        "dry_run_s": dry["wall_s"],
        "dry_run_cpu_s": dry["cpu_s"],
        "dry_run_peak_rss_mb": dry["peak_rss_mb"],
        "jobs": int(total.group(1)) if total else None,
    }


def print_table(label: str, rows: dict[str, dict]) -> None:
    """The points, and the dry-run's CPU time per job: about constant
    where planning grows linearly."""
    print(f"\n{label}")
    print(
        f"{'inputs':<10} {'WARCs':>8} {'a shard':>7} {'jobs':>9} {'parse s':>8} {'parse MB':>9} "
        f"{'-n s':>8} {'-n CPU s':>8} {'-n MB':>7} {'CPU ms/job':>10}"
    )
    for row in rows.values():
        cpu = row.get("dry_run_cpu_s", float("nan"))
        per_job = 1000 * cpu / row["jobs"] if row["jobs"] else float("nan")
        print(
            f"{row['inputs']:<10} {row['warcs']:>8,} {row.get('warcs_per_shard', 1):>7} "
            f"{row['jobs'] or 0:>9,} {row['parse_s']:>8.1f} {row['parse_peak_rss_mb']:>9,} "
            f"{row['dry_run_s']:>8.1f} {cpu:>8.1f} {row['dry_run_peak_rss_mb']:>7,} "
            f"{per_job:>10.2f}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--warcs", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument(
        "--inputs", nargs="+", choices=["cc_paths", "local"], default=["cc_paths", "local"]
    )
    parser.add_argument("--warcs-per-shard", type=int, nargs="+", default=[1])
    parser.add_argument("--snakefile", type=Path, default=REPO / "Snakefile")
    parser.add_argument("--label", default="grouped", help="key of this series in the results file")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/cb-planning"))
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    results = json.loads(args.out.read_text()) if args.out.exists() else {}
    series = results.setdefault(args.label, {"snakefile": str(args.snakefile), "points": {}})
    for inputs in args.inputs:
        for per_shard in args.warcs_per_shard:
            for n in args.warcs:
                # one WARC a shard keeps the point names of the series before the key existed
                name = f"{inputs}-{n}" + (f"-per-{per_shard}" if per_shard != 1 else "")
                directory = args.dir / name
                config = write_workdir(directory, inputs, n, per_shard)
                series["points"][name] = {
                    "inputs": inputs,
                    "warcs": n,
                    "warcs_per_shard": per_shard,
                    **plan(args.snakefile, directory, config),
                }
            series["machine"] = machine_info()
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(results, indent=1) + "\n")  # after each point: long runs
    print_table(args.label, series["points"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
