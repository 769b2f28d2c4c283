#!/usr/bin/env python3
"""A small input's build: the jobs and seconds of the whole workflow on one WARC, with the hash
partitions planned from the input's size (`exact_dedup.partitions` and `ngrams.partitions`
`auto`, the defaults) against the fixed counts that were the defaults before (16 and 8), side by
side in one run.

    python bench/bench_small_build.py                       # resources/sample/sample-00.warc.gz
    python bench/bench_small_build.py --warc crawl.warc.gz --cores 2 --repeats 2

Each build is `snakemake --cores N` in a fresh working directory (wall clock, the median of
--repeats); its job count is the dry run's job stats total, `all` included. Results go to
bench/results/small_build.json (the machine description beside them).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from run_all import machine_info  # noqa: E402

RESULTS = HERE / "results" / "small_build.json"
SAMPLE_WARC = REPO / "resources" / "sample" / "sample-00.warc.gz"
SETTINGS = {
    "auto": {},
    "fixed 16/8": {"exact_dedup": {"partitions": 16}, "ngrams": {"partitions": 8}},
}


def snakemake(workdir: Path, cores: int, *args: str) -> str:
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile")]
    command += ["--directory", str(workdir), "--cores", str(cores), "--configfile"]
    command += [str(workdir / "config.yaml"), *args]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode:
        sys.exit(f"snakemake failed in {workdir}:\n{result.stderr[-3000:]}")
    return result.stdout + result.stderr


def build(warc: Path, settings: dict, cores: int) -> tuple[int, float]:
    """(jobs, wall seconds) of one build of ``warc`` with ``settings`` over the defaults."""
    with tempfile.TemporaryDirectory(prefix="small-build-") as directory:
        workdir = Path(directory)
        config = {"input": {"warcs": [str(warc.resolve())]}, **settings}
        (workdir / "config.yaml").write_text(yaml.safe_dump(config))
        plan = snakemake(workdir, cores, "--dry-run", "--quiet", "rules")
        jobs = int(re.search(r"^total\s+(\d+)", plan, re.M).group(1))
        start = time.perf_counter()
        snakemake(workdir, cores, "--quiet")
        return jobs, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warc", type=Path, default=SAMPLE_WARC, help="the one input WARC")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1, help="builds per setting (median)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    rows = {}
    for _ in range(args.repeats):  # settings alternate, so a noisy minute hits both alike
        for label, settings in SETTINGS.items():
            jobs, seconds = build(args.warc, settings, args.cores)
            rows.setdefault(label, {"jobs": jobs, "seconds": []})["seconds"].append(seconds)
    for label, row in rows.items():
        row["median_seconds"] = round(statistics.median(row["seconds"]), 2)
        print(f"{label:>12}: {row['jobs']} jobs, {row['median_seconds']} s")
    auto, fixed = rows["auto"], rows["fixed 16/8"]
    result = {
        "warc": str(args.warc.relative_to(REPO) if args.warc.is_relative_to(REPO) else args.warc),
        "warc_bytes": args.warc.stat().st_size,
        "cores": args.cores,
        "builds": rows,
        "seconds_ratio_auto_to_fixed": round(auto["median_seconds"] / fixed["median_seconds"], 3),
        "machine": machine_info(),
    }
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"auto / fixed: {result['seconds_ratio_auto_to_fixed']} of the time -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
