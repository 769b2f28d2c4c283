"""CPU of one rule's per-shard jobs with two checkouts side by side, on a finished build's files.

Each job is the rule's script as Snakemake runs it — the ``snakemake`` object of a job the build
ran, taken from the script Snakemake wrote for it (run one job with ``--skip-script-cleanup``
and ``--notemp``, and .snakemake/scripts/ keeps ``tmp*.RULE.py``) — with the shard's name
swapped into its input and output paths, its outputs written aside, and the script and library
read from the checkout measured (``PYTHONPATH``). Counted is the CPU of the job's whole process
(``RUSAGE_CHILDREN``: start-up, imports, the work, exit). The checkouts alternate job by job and
round by round (the machine is shared and its load moves), and each job's outputs of the two must
be the same but for the writer stamp (the commit) of token and state files.

    snakemake ... --skip-script-cleanup --notemp -f work/dedup/shards/crawl-00.parquet
    python bench/bench_shard_jobs.py BUILD/.snakemake/scripts/tmpXXXX.dedup_shard.py \\
        --build BUILD --shards crawl-00 crawl-01 crawl-02 crawl-03 --trees ../main . --out x.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path

PREAMBLE_END = "######## snakemake preamble end"


def run_job(captured: str, build: str, tree: str, outdir: str, shard: str, rank: int) -> None:
    """In this process: the captured job's ``snakemake`` object, moved to ``shard`` (the captured
    job's shard swapped in every input and output path) and ``outdir``, then the tree's script."""
    text = Path(captured).read_text()
    namespace: dict = {"__file__": captured}
    exec(text[: text.index(PREAMBLE_END)], namespace)
    snakemake = namespace["snakemake"]
    os.chdir(build)
    captured_shard = snakemake.wildcards.shard
    for name in snakemake.input._names:
        value = getattr(snakemake.input, name)
        if isinstance(value, str):
            setattr(snakemake.input, name, value.replace(captured_shard, shard))
    if hasattr(snakemake.params, "shard_rank"):
        snakemake.params.shard_rank = rank
    for name in snakemake.output._names:
        value = getattr(snakemake.output, name)
        if isinstance(value, str):
            setattr(
                snakemake.output, name, str(Path(outdir) / f"{name}-{shard}{Path(value).suffix}")
            )
        elif len(value):
            setattr(snakemake.output, name, [str(Path(outdir) / f"{name}-{shard}.arrow")])
    snakemake.log[0] = str(Path(outdir) / f"{snakemake.rule}-{shard}.log")
    script = str(Path(tree) / "scripts" / f"{snakemake.rule}.py")
    runpy.run_path(script, init_globals={"snakemake": snakemake}, run_name="__main__")


def job_cpu(args, tree: str, outdir: str, shard: str, rank: int) -> float:
    """CPU seconds of one job in a fresh interpreter reading ``tree``'s code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = [sys.executable, __file__, args.captured, "--build", args.build, "--one"]
    command += [Path(tree).resolve().as_posix(), outdir, shard, str(rank)]
    env = {**os.environ, "PYTHONPATH": str(Path(tree).resolve()), "OMP_NUM_THREADS": "1"}
    subprocess.run(command, check=True, env=env, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def same_but_stamp(a: Path, b: Path) -> bool:
    """Two outputs of a job equal, but for the writer stamp (`common.versions`: the commit) of
    token files, Parquet tables and Arrow IPC files."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from corpusbuilder.common.versions import writer_metadata

    stamp = set(writer_metadata())

    if a.suffix == ".npz":
        with np.load(a) as x, np.load(b) as y:
            return sorted(x.files) == sorted(y.files) and all(
                x[f].dtype == y[f].dtype and np.array_equal(x[f], y[f])
                for f in x.files
                if f != "writer"
            )
    if a.suffix == ".arrow":
        with pa.memory_map(str(a)) as x, pa.memory_map(str(b)) as y:
            first, second = pa.ipc.open_file(x), pa.ipc.open_file(y)
            return first.schema.remove_metadata() == second.schema.remove_metadata() and all(
                first.get_batch(i).equals(second.get_batch(i))
                for i in range(max(first.num_record_batches, second.num_record_batches))
            )
    if a.suffix == ".parquet":
        x, y = pq.read_table(a), pq.read_table(b)
        unstamped = [
            {k: v for k, v in (t.schema.metadata or {}).items() if k not in stamp} for t in (x, y)
        ]
        return x.equals(y) and unstamped[0] == unstamped[1]
    return a.read_bytes() == b.read_bytes()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("captured", help="the script Snakemake wrote for one job of the rule")
    parser.add_argument("--build", required=True, help="the build's folder (its work/ is read)")
    parser.add_argument("--shards", nargs="+", default=[], help="shards, in crawl order")
    parser.add_argument("--trees", nargs=2, default=[], help="the two checkouts: before, after")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", help="a JSON file for the figures")
    parser.add_argument("--one", nargs=4, help=argparse.SUPPRESS)  # one job, in this process
    args = parser.parse_args()
    if args.one:
        tree, outdir, shard, rank = args.one
        run_job(args.captured, args.build, tree, outdir, shard, int(rank))
        return 0
    cpu: dict[str, dict[str, list[float]]] = {t: {s: [] for s in args.shards} for t in args.trees}
    different = []
    with tempfile.TemporaryDirectory() as scratch:
        outdirs = [str(Path(scratch) / str(i)) for i in range(2)]
        for outdir in outdirs:
            Path(outdir).mkdir()
        for round_ in range(args.rounds):
            for rank, shard in enumerate(args.shards):
                order = [0, 1] if (round_ + rank) % 2 == 0 else [1, 0]
                for i in order:
                    seconds = job_cpu(args, args.trees[i], outdirs[i], shard, rank)
                    cpu[args.trees[i]][shard].append(round(seconds, 3))
        for path in sorted(Path(outdirs[0]).iterdir()):
            if path.suffix != ".log" and not same_but_stamp(path, Path(outdirs[1]) / path.name):
                different.append(path.name)
    median = {t: {s: sorted(v)[len(v) // 2] for s, v in by.items()} for t, by in cpu.items()}
    totals = {t: round(sum(m.values()), 3) for t, m in median.items()}
    before, after = (totals[t] for t in args.trees)
    result = {
        "captured_rule": Path(args.captured).suffixes[-2].lstrip("."),
        "cpu_s": cpu,
        "median_cpu_s": median,
        "sum_of_medians_cpu_s": totals,
        "after_over_before": round(after / before, 3) if before else None,
        "outputs_that_differ": different,
    }
    print(json.dumps(result, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
