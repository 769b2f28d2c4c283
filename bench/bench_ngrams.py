"""Benchmark duplicate n-grams (thesis §3.4.2, Table 3.2) against a plain numpy hash-and-sort.

    python bench/bench_ngrams.py --sizes 10M 100M --mem-mb 512

For each corpus size a Zipf corpus with planted copies (bench/zipf.py) is written in 10 M-token
shards; then, in fresh subprocesses so that each peak RSS is its own:

- ours, per job: as the workflow runs it, `shard_ngram_run` for each shard in its own process
  (rule `ngram_runs`) and the merge into dup{n}.npy in another (rule `dup_ngrams`), with the
  same `--mem-mb` at every size. The peak RSS of each job type (the largest over its jobs) is
  what a cluster's mem_mb must cover, and what must stay within `--mem-mb` (± 20 %);
- ours, one process: every shard run and the merge in a single process, as before — memory
  the allocators keep between jobs shows here and not in the workflow;
- baseline: every shard's n-gram hashes (`ngram_hashes`) in memory at once, one np.sort, the
  repeated values — fastest possible in numpy, memory growing with the corpus.

With `--partitions 1 4 16` it measures the merge alone instead (rule `dup_ngram_part`, one process
per hash range of every run, each a job of its own in the workflow): per number of ranges, each
part's CPU seconds (the less of two runs: wall time on a shared machine is mostly waiting), their
sum (core-seconds) and the longest (the wall time given as many cores), the parts' G₂₊ checked equal
to the one-range merge; saved as `partitioned_merge` beside the rest.

Both must find the same number of duplicate types. The machine is shared, so read the ratio
(baseline seconds / ours, same run) rather than the absolute seconds: ours per job and the
baseline run in turns `--repeats` times on the same corpus, and the repeat of median ratio is
reported (every repeat is kept). Tokens/s end to end are the tokens over the jobs' seconds
summed, each job's from after its imports; `..._with_startup` counts each job's whole process,
interpreter start-up and imports included. `--sa-bytes` measures the peak bytes per word of
the suffix-array step alone (now used by the exact-substring spans only), ours and
pydivsufsort's integer path.

With `--cli 3M` it measures the `corpusbuilder dup-ngrams` command instead, as a user runs it:
the whole process, start-up included, on a Zipf text with planted copies (one block a line), in
turns with `python -c pass` (`--repeats` times, the median kept), its wall and CPU seconds and
tokens/s; the output is checked against a brute-force count of the text's n-grams. Saved in
`cli` beside the rest, by the commit of the code measured (run it with PYTHONPATH at another
checkout to measure that one side by side).
Results: bench/results/ngrams.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from shutil import rmtree

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

RESULTS = Path(__file__).resolve().parent / "results" / "ngrams.json"


def peak_rss_mb() -> float:
    """Peak resident set since the start or the last reset_peak_rss (VmHWM)."""
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def reset_peak_rss() -> None:
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")


def worker_ours(shards: list[Path], n: int, kind: str, mem_mb: float, work: Path) -> dict:
    from corpusbuilder.ngrams.stage import shard_ngram_run, write_duplicate_ngrams

    started = time.perf_counter()
    runs = []
    for shard in shards:
        runs.append(work / f"{shard.stem}.parquet")
        shard_ngram_run(shard, runs[-1], kind, n, mem_mb)
    stats = write_duplicate_ngrams(runs, work / f"dup{n}.npy", work / f"dup{n}.json", mem_mb)
    seconds = time.perf_counter() - started
    chunks = [chunk for shard in stats["shards"] for chunk in shard["chunks"]]
    return {
        "seconds": seconds,
        "tokens": stats["tokens"],
        "duplicate_types": stats["duplicate_types"],
        "chunks": len(chunks),
        "chunk_tokens": stats["shards"][0]["chunk_tokens"],
        "run_bytes": sum(path.stat().st_size for path in runs),
        "peak_rss_mb": peak_rss_mb(),
    }


def worker_shard_run(shard: Path, run: Path, n: int, kind: str, mem_mb: float) -> dict:
    """One `ngram_runs` job."""
    from corpusbuilder.ngrams.stage import shard_ngram_run

    started, cpu = time.perf_counter(), time.process_time()
    stats = shard_ngram_run(shard, run, kind, n, mem_mb)
    return {
        "seconds": time.perf_counter() - started,
        "cpu_seconds": time.process_time() - cpu,
        "tokens": stats["tokens"],
        "chunks": len(stats["chunks"]),
        "chunk_tokens": stats["chunk_tokens"],
        "run_bytes": run.stat().st_size,
        "peak_rss_mb": peak_rss_mb(),
    }


def worker_merge(
    runs: list[Path], n: int, mem_mb: float, work: Path, partition: int = 0, partitions: int = 1
) -> dict:
    """A `dup_ngram_part` job (with one partition, the whole merge)."""
    from corpusbuilder.ngrams.stage import write_duplicate_ngrams

    started, cpu = time.perf_counter(), time.process_time()
    stats = write_duplicate_ngrams(
        runs,
        work / f"dup{n}-{partition}.npy",
        work / f"dup{n}-{partition}.json",
        mem_mb,
        partition=partition,
        partitions=partitions,
    )
    return {
        "seconds": time.perf_counter() - started,
        "cpu_seconds": time.process_time() - cpu,
        "duplicate_types": stats["duplicate_types"],
        "peak_rss_mb": peak_rss_mb(),
    }


def partitioned_merge(
    runs: list[Path], work: Path, counts: list[int], n: int, options: list[str]
) -> list[dict]:
    """The merge of `runs` in each number of hash ranges, one process per range; the parts of
    each checked equal to the merge in one range."""
    from corpusbuilder.contracts.ngramfiles import read_duplicate_ngrams

    rows, whole = [], None
    for partitions in counts:
        out = work / f"P{partitions}"
        out.mkdir()
        # CPU seconds, the less of two runs: on a shared machine a
        # part's wall time is mostly waiting
        parts = [
            min(
                (
                    in_subprocess(
                        "merge",
                        str(out),
                        *map(str, runs),
                        *options,
                        "--partition",
                        str(p),
                        "--partitions",
                        str(partitions),
                    )
                    for _ in range(2)
                ),
                key=lambda part: part["cpu_seconds"],
            )
            for p in range(partitions)
        ]
        g2 = read_duplicate_ngrams([out / f"dup{n}-{p}.npy" for p in range(partitions)])
        whole = g2 if whole is None else whole
        assert np.array_equal(g2, whole), partitions
        seconds = [part["cpu_seconds"] for part in parts]
        rows.append(
            {
                "partitions": partitions,
                "duplicate_types": len(g2),
                "part_seconds": [round(x, 3) for x in seconds],
                "core_seconds": round(sum(seconds), 3),
                "longest_part_seconds": round(max(seconds), 3),
                "peak_rss_mb": round(max(part["peak_rss_mb"] for part in parts), 1),
            }
        )
        print(rows[-1], flush=True)
    return rows


def ours_per_job(shards: list[str], work: Path, options: list[str]) -> dict:
    """One process per shard run, one for the merge: the workflow's jobs."""
    runs = [work / f"{Path(shard).stem}.parquet" for shard in shards]
    shard_runs = [
        in_subprocess("shard-run", shard, str(run), *options) for shard, run in zip(shards, runs)
    ]
    merge = in_subprocess("merge", str(work), *map(str, runs), *options)
    return {
        "seconds": sum(job["seconds"] for job in shard_runs) + merge["seconds"],
        "process_seconds": sum(job["process_seconds"] for job in [*shard_runs, merge]),
        "cpu_seconds": sum(job["cpu_seconds"] for job in [*shard_runs, merge]),
        "tokens": sum(job["tokens"] for job in shard_runs),
        "duplicate_types": merge["duplicate_types"],
        "chunks": sum(job["chunks"] for job in shard_runs),
        "chunk_tokens": shard_runs[0]["chunk_tokens"],
        "run_bytes": sum(job["run_bytes"] for job in shard_runs),
        "shard_run_peak_rss_mb": max(job["peak_rss_mb"] for job in shard_runs),
        "merge_peak_rss_mb": merge["peak_rss_mb"],
        "shard_runs": shard_runs,
        "merge": merge,
    }


def worker_baseline(shards: list[Path], n: int, kind: str) -> dict:
    from corpusbuilder.ngrams.hashing import kind_mask, ngram_hashes, select_tokens

    started, cpu = time.perf_counter(), time.process_time()
    hashes, tokens = [], 0
    for shard in shards:
        with np.load(shard) as data:
            keep = kind_mask(kind, data["is_punct"], data["is_stop"])
            token_hash, offsets, _ = select_tokens(data["token_hash"], data["block_offsets"], keep)
        tokens += len(token_hash)
        hashes.append(ngram_hashes(token_hash, offsets, n)[0])
        del token_hash
    hashes = np.concatenate(hashes)
    hashes.sort()
    repeated = hashes[1:] == hashes[:-1]
    duplicates = np.unique(hashes[1:][repeated])
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "cpu_seconds": time.process_time() - cpu,
        "tokens": tokens,
        "duplicate_types": len(duplicates),
        "peak_rss_mb": peak_rss_mb(),
    }


def worker_sa_bytes(tokens: int, path: str) -> dict:
    """Peak bytes per word of building the suffix array (and LCP) of `tokens` Zipf word ids."""
    from pydivsufsort import divsufsort, kasai
    from zipf import zipf_shard

    from corpusbuilder.ngrams.chunks import resident_bytes
    from corpusbuilder.ngrams.suffix import suffix_array, word_ids_by_first_appearance

    rng = np.random.default_rng(0)
    ranks, _ = zipf_shard(rng, tokens, np.zeros(2_000_000, np.uint64), 1.15, 40, 0.05, None)
    ids, _ = word_ids_by_first_appearance(ranks)
    del ranks
    before = resident_bytes()
    reset_peak_rss()  # so the generator's own peak does not mask the suffix array's
    started = time.perf_counter()
    sa = suffix_array(ids) if path == "packed" else divsufsort(ids)
    sa_seconds = time.perf_counter() - started
    sa_peak = peak_rss_mb() * 2**20 - before
    started = time.perf_counter()
    kasai(ids, sa)
    return {
        "path": path,
        "tokens": tokens,
        "sa_seconds": sa_seconds,
        "sa_bytes_per_word": sa_peak / tokens,
        "sa_lcp_bytes_per_word": (peak_rss_mb() * 2**20 - before) / tokens,
        "lcp_seconds": time.perf_counter() - started,
        "vocabulary": int(ids.max()) + 1,
    }


def in_subprocess(*args: str) -> dict:
    """A worker's result, with `process_seconds`: its wall time from spawn to exit, the
    interpreter's start-up and imports included (its own `seconds` start after them)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, __file__, "--worker", *args], capture_output=True, text=True
    )
    if done.returncode:
        raise RuntimeError(f"worker {args[0]} failed:\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["process_seconds"] = time.perf_counter() - started
    return result


def brute_force_tsv(text_path: Path, n: int) -> dict[str, int]:
    """Every n-gram of the text seen twice or more, counted one by one, spelled as the TSV's."""
    from collections import Counter

    counts: Counter = Counter()
    with open(text_path, encoding="utf-8") as text:
        for line in text:
            words = line.split()
            counts.update(zip(*(words[i:] for i in range(n))))
    return {" ".join(ngram): count for ngram, count in counts.items() if count >= 2}


def timed_process(command: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds user + system) of a whole child process."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def cli_throughput(size: str, n: int, repeats: int) -> dict:
    """`corpusbuilder dup-ngrams` on a Zipf text of `size` tokens, in turns with an empty
    interpreter; its output checked against a brute-force count."""
    from zipf import write_zipf_text

    with tempfile.TemporaryDirectory(prefix="bench-ngrams-cli-") as tmp:
        text, out = Path(tmp) / "zipf.txt", Path(tmp) / "dup.tsv"
        tokens = write_zipf_text(text, parse_size(size))
        command = [sys.executable, "-m", "corpusbuilder.cli.main", "dup-ngrams", str(text)]
        rows = []
        for _ in range(repeats):
            empty_wall, empty_cpu = timed_process([sys.executable, "-c", "pass"])
            wall, cpu = timed_process([*command, str(out), "--n", str(n)])
            rows.append(
                {
                    "seconds": round(wall, 3),
                    "cpu_seconds": round(cpu, 3),
                    "python_pass_seconds": round(empty_wall, 3),
                    "python_pass_cpu_seconds": round(empty_cpu, 3),
                }
            )
        found = {
            ngram: int(count)
            for count, ngram in (
                line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()
            )
        }
        exact = found == brute_force_tsv(text, n)
        assert exact, "dup-ngrams differs from the brute-force count"
    median = sorted(rows, key=lambda row: row["seconds"])[len(rows) // 2]
    return {
        "size": size,
        "tokens": tokens,
        "n": n,
        "duplicate_ngrams": len(found),
        "exact_against_brute_force": exact,
        "tokens_per_s_with_startup": tokens / median["seconds"],
        "tokens_per_cpu_s_with_startup": tokens / median["cpu_seconds"],
        "seconds_over_python_pass": median["seconds"] / median["python_pass_seconds"],
        "median": median,
        "repeats": rows,
    }


def run_stamp() -> dict:
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "commit": subprocess.run(
            ["git", "-C", str(Path(__file__).parent), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
        ).stdout.strip(),
    }


def code_commit() -> str:
    """The commit of the checkout a child process imports corpusbuilder from (PYTHONPATH)."""
    where = subprocess.run(
        [sys.executable, "-c", "import corpusbuilder; print(corpusbuilder.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return subprocess.run(
        ["git", "-C", str(Path(where).parent), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
    ).stdout.strip()


def parse_size(text: str) -> int:
    return int(float(text.rstrip("M")) * 1_000_000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["10M", "100M"])
    parser.add_argument("--mem-mb", type=float, default=512)
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--kind", default="all")
    parser.add_argument(
        "--sa-bytes",
        type=int,
        default=5_000_000,
        help="tokens for the bytes-per-word probe (0: skip)",
    )
    parser.add_argument(
        "--no-one-process",
        dest="one_process",
        action="store_false",
        help="skip the run of every job in one process",
    )
    parser.add_argument(
        "--partitions",
        type=int,
        nargs="+",
        help="measure the merge alone in each of these numbers of hash ranges (first --sizes only)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="runs of ours per job and of the baseline per size, on the same corpus (the median "
        "is reported: the machine is shared)",
    )
    parser.add_argument(
        "--cli",
        metavar="SIZE",
        help="measure the `corpusbuilder dup-ngrams` command, start-up included, on a text of "
        "SIZE tokens (e.g. 3M) instead",
    )
    parser.add_argument("--partition", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        role, *rest = args.worker
        if role == "sa-bytes":
            result = worker_sa_bytes(int(rest[0]), rest[1])
        elif role == "shard-run":
            result = worker_shard_run(Path(rest[0]), Path(rest[1]), args.n, args.kind, args.mem_mb)
        elif role == "merge":
            result = worker_merge(
                [Path(p) for p in rest[1:]],
                args.n,
                args.mem_mb,
                Path(rest[0]),
                args.partition,
                (args.partitions or [1])[0],
            )
        elif role == "ours":
            result = worker_ours(
                [Path(p) for p in rest[1:]], args.n, args.kind, args.mem_mb, Path(rest[0])
            )
        else:
            result = worker_baseline([Path(p) for p in rest], args.n, args.kind)
        print(json.dumps(result))
        return

    from zipf import write_zipf_corpus

    options = ["--n", str(args.n), "--kind", args.kind, "--mem-mb", str(args.mem_mb)]
    if args.cli:
        cli = {
            **run_stamp(),
            "code_commit": code_commit(),
            **cli_throughput(args.cli, args.n, args.repeats),
        }
        print(
            f"dup-ngrams CLI, {cli['tokens']:,} tokens: "
            f"{cli['tokens_per_s_with_startup'] / 1e6:.2f} M tokens/s wall, "
            f"{cli['tokens_per_cpu_s_with_startup'] / 1e6:.2f} M per CPU second, start-up "
            f"included ({cli['seconds_over_python_pass']:.1f}x `python -c pass`); "
            f"{cli['duplicate_ngrams']:,} duplicate n-grams, exact against brute force",
            flush=True,
        )
        results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        # by the commit of the code measured: a run with PYTHONPATH at another checkout sits
        # beside this one's
        results.setdefault("cli", {})[cli["code_commit"]] = cli
        RESULTS.write_text(json.dumps(results, indent=1) + "\n")
        return
    if args.partitions:
        with tempfile.TemporaryDirectory(prefix="bench-ngrams-") as tmp:
            shards = [
                str(p) for p in write_zipf_corpus(Path(tmp) / "tokens", parse_size(args.sizes[0]))
            ]
            runs = [Path(tmp) / f"{Path(shard).stem}.parquet" for shard in shards]
            shard_runs = [
                in_subprocess("shard-run", shard, str(run), *options)
                for shard, run in zip(shards, runs)
            ]
            rows = partitioned_merge(runs, Path(tmp), args.partitions, args.n, options)
        results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        results["partitioned_merge"] = {
            "size": args.sizes[0],
            "tokens": sum(job["tokens"] for job in shard_runs),
            "runs": len(runs),
            "run_bytes": sum(job["run_bytes"] for job in shard_runs),
            "shard_run_cpu_seconds": round(sum(job["cpu_seconds"] for job in shard_runs), 3),
            "mem_mb": args.mem_mb,
            "merges": rows,
        }
        RESULTS.write_text(json.dumps(results, indent=1) + "\n")
        return

    report = {
        **run_stamp(),
        "n": args.n,
        "kind": args.kind,
        "mem_mb": args.mem_mb,
        "repeats": args.repeats,
        "sizes": [],
    }
    if args.sa_bytes:
        report["suffix_array"] = [
            in_subprocess("sa-bytes", str(args.sa_bytes), path)
            for path in ("packed", "pydivsufsort-int")
        ]
        for row in report["suffix_array"]:
            print(
                f"suffix array of {row['tokens']:,} ids, {row['path']}: {row['sa_seconds']:.2f} s, "
                f"{row['sa_bytes_per_word']:.1f} B/word (with LCP "
                f"{row['sa_lcp_bytes_per_word']:.1f})",
                flush=True,
            )
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="bench-ngrams-") as tmp:
            shards = [str(p) for p in write_zipf_corpus(Path(tmp) / "tokens", parse_size(size))]
            for work in ("jobs", "one-process"):
                (Path(tmp) / work).mkdir()
            # ours and the baseline in turns, so that both see the same spells of load
            repeats = []
            for _ in range(args.repeats):
                rmtree(Path(tmp) / "jobs")
                (Path(tmp) / "jobs").mkdir()
                per_job = ours_per_job(shards, Path(tmp) / "jobs", options)
                baseline = in_subprocess("baseline", *shards, *options)
                repeats.append((per_job["seconds"] / baseline["seconds"], per_job, baseline))
            whole = (
                in_subprocess("ours", str(Path(tmp) / "one-process"), *shards, *options)
                if args.one_process
                else None
            )
        for _, per_job, baseline in repeats:
            assert per_job["duplicate_types"] == baseline["duplicate_types"], (per_job, baseline)
        if whole:
            assert whole["duplicate_types"] == baseline["duplicate_types"], (whole, baseline)
        # the repeat of median speed ratio stands for the size; every repeat is kept
        _, per_job, baseline = sorted(repeats, key=lambda r: r[0])[len(repeats) // 2]
        tokens = per_job["tokens"]
        row = {
            "size": size,
            "ours_per_job": per_job,
            "ours_one_process": whole,
            "baseline": baseline,
            "ours_tokens_per_s": tokens / per_job["seconds"],
            "ours_tokens_per_s_with_startup": tokens / per_job["process_seconds"],
            "baseline_tokens_per_s": tokens / baseline["seconds"],
            "speed_ratio": baseline["seconds"] / per_job["seconds"],
            # CPU seconds: what a job costs a core, less moved than wall time by other load
            "ours_tokens_per_cpu_s": tokens / per_job["cpu_seconds"],
            "baseline_tokens_per_cpu_s": tokens / baseline["cpu_seconds"],
            "cpu_speed_ratio": baseline["cpu_seconds"] / per_job["cpu_seconds"],
            "repeats": [
                {
                    "ours_seconds": round(ours["seconds"], 3),
                    "ours_process_seconds": round(ours["process_seconds"], 3),
                    "baseline_seconds": round(base["seconds"], 3),
                    "speed_ratio": round(base["seconds"] / ours["seconds"], 4),
                    "ours_cpu_seconds": round(ours["cpu_seconds"], 3),
                    "baseline_cpu_seconds": round(base["cpu_seconds"], 3),
                }
                for _, ours, base in repeats
            ],
        }
        report["sizes"].append(row)
        budget = args.mem_mb
        print(
            f"{size}: ours {row['ours_tokens_per_s'] / 1e6:.2f} M tokens/s "
            f"({row['ours_tokens_per_s_with_startup'] / 1e6:.2f} with start-up; "
            f"{per_job['chunks']} "
            f"chunks of {per_job['chunk_tokens']:,}); peak RSS per job: shard run "
            f"{per_job['shard_run_peak_rss_mb']:.0f} MB "
            f"({per_job['shard_run_peak_rss_mb'] / budget - 1:+.0%} of the budget), merge "
            f"{per_job['merge_peak_rss_mb']:.0f} MB "
            f"({per_job['merge_peak_rss_mb'] / budget - 1:+.0%})"
            + (
                f"; all jobs in one process {whole['peak_rss_mb']:.0f} MB "
                f"({whole['tokens'] / whole['seconds'] / 1e6:.2f} M tokens/s)"
                if whole
                else ""
            )
            + f"; baseline {row['baseline_tokens_per_s'] / 1e6:.2f} M tokens/s, peak "
            f"{baseline['peak_rss_mb']:.0f} MB; ours/baseline speed {row['speed_ratio']:.2f} "
            f"(CPU time: ours {row['ours_tokens_per_cpu_s'] / 1e6:.2f} M tokens/s, "
            f"{row['cpu_speed_ratio']:.2f}); "
            f"{per_job['duplicate_types']:,} duplicate types",
            flush=True,
        )
    RESULTS.parent.mkdir(exist_ok=True)
    # the merge-alone (--partitions) and CLI (--cli) measurements are runs of their own: kept
    earlier = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    for kept in ("partitioned_merge", "cli"):
        if kept in earlier:
            report[kept] = earlier[kept]
    RESULTS.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
