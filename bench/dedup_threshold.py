#!/usr/bin/env python3
"""Where `dedup.mode: auto` switches: block de-duplication in both modes through the workflow, on
the first k WARCs of a crawl for several k, per rule CPU seconds, wall seconds and peak RSS
(Snakemake's benchmark files), into bench/results/dedup_threshold.json.

    python bench/dedup_threshold.py PREPARED --name dev --sizes 2 4 8 --out /tmp/threshold

PREPARED is a working directory whose config (test-config.yaml, or --config) lists the crawl's
WARCs and which was built up to G₂₊ and the token files (``snakemake --until dup_ngram_part``):
each size copies it, plans the first k WARCs (extraction is reused, exact dedup and G₂₊ are made
again for them; all of them: nothing is), and then each mode copies that and runs only block
dedup with ``dedup.write_state`` (the defaults) and ``dedup.partitions: auto``. On a machine
shared with other work wall seconds wait for the cores; CPU seconds do not, so the comparison is
made on them: the sequential job runs on one core, the partitioned mode's jobs on ``--cores`` at
once.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import yaml
from scale import read_benchmarks

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results" / "dedup_threshold.json"
UNTIL = {
    "sequential": ["dedup"],
    "partitioned": ["dedup_merge", "dedup_state"],
}
FIRST = {"sequential": "dedup", "partitioned": "dedup_occurrences"}
DEDUP_RULES = (
    "dedup",
    "dedup_occurrences",
    "dedup_counts",
    "dedup_order",
    "dedup_seen",
    "dedup_shard",
    "dedup_state",
    "dedup_merge",
)


def run(workdir: Path, config: dict, until: list[str], cores: int, *extra: str) -> float:
    """Snakemake on ``workdir`` with ``config`` up to the rules ``until``; its wall seconds."""
    (workdir / "threshold.yaml").write_text(yaml.safe_dump(config))
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "--snakefile",
            str(REPO / "Snakefile"),
            "--directory",
            str(workdir),
            "--cores",
            str(cores),
            *extra,
            "--until",
            *until,
            "--configfile",
            str(workdir / "threshold.yaml"),
        ],
        check=True,
        capture_output=True,
    )
    return round(time.perf_counter() - started, 1)


def measure(prepared: Path, config: dict, k: int, out: Path, cores: int) -> dict:
    warcs = config["input"]["warcs"][:k]
    base = out / f"{k}-warcs"
    shutil.copytree(prepared, base, symlinks=True)
    sized = {**config, "input": {**config["input"], "warcs": warcs}}
    # exact dedup keeps the first copy in crawl order, so the first k shards' survivors, tokens
    # and n-gram runs are the whole crawl's: only G₂₊ is merged again (not on files' times)
    if k < len(config["input"]["warcs"]):
        run(
            base,
            {**sized, "dedup": {"mode": "sequential"}},
            ["dup_ngram_part"],
            cores,
            "--rerun-triggers",
            "input",
            "params",
            "--forcerun",
            "dup_ngram_part",
        )
    row: dict = {
        "warcs": k,
        "input_bytes": sum(Path(w).stat().st_size for w in warcs),
        "tokens": sum(
            json.loads(p.read_text())["tokens"]
            for p in sorted((base / "work" / "ngrams" / "dup10").glob("0.stats.json"))
        ),
    }
    for mode, until in UNTIL.items():
        workdir = out / f"{k}-warcs-{mode}"
        shutil.copytree(base, workdir, symlinks=True)
        shutil.rmtree(workdir / "benchmarks", ignore_errors=True)
        # the mode's first job forced, and what follows it (on files' times: a build made by
        # another commit is not extracted again)
        wall = run(
            workdir,
            {**sized, "dedup": {"mode": mode}},
            until,
            cores,
            "--rerun-triggers",
            "mtime",
            "--forcerun",
            FIRST[mode],
        )
        rules = {r: v for r, v in read_benchmarks(workdir).items() if r in DEDUP_RULES}
        cpu = sum(v["cpu_time"] for v in rules.values())
        row[mode] = {
            "wall_s": wall,
            "cpu_s": round(cpu, 2),
            "jobs": sum(v["jobs"] for v in rules.values()),
            "max_rss_mb": max(v["max_rss_mb"] for v in rules.values()),
            "rules": rules,
        }
    # on `cores` cores: the one job takes its CPU seconds; the jobs share the cores
    row["sequential_over_partitioned_on_cores"] = round(
        row["sequential"]["cpu_s"] / (row["partitioned"]["cpu_s"] / cores), 2
    )
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prepared", type=Path)
    parser.add_argument("--config", type=Path, help="default: PREPARED/test-config.yaml")
    parser.add_argument("--sizes", type=int, nargs="+", required=True, help="WARCs per build")
    parser.add_argument("--out", type=Path, required=True, help="folder for the builds")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--name", required=True, help="the crawl's entry in the results file")
    args = parser.parse_args(argv)
    config = yaml.safe_load((args.config or args.prepared / "test-config.yaml").read_text())
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for k in args.sizes:
        rows.append(measure(args.prepared, config, k, args.out, args.cores))
        print(json.dumps(rows[-1], indent=1), flush=True)
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results["what"] = __doc__.splitlines()[0]
    results.setdefault("crawls", {})[args.name] = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "commit": commit,
        "cores": args.cores,
        "machine": platform.platform(),
        "sizes": rows,
    }
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
