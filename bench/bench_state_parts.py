"""The state's job (rule dedup_state) and its files, at Common Crawl's document ids:

    python bench/bench_state_parts.py [--shards 32] [--rows 400000 800000 1600000]
        [--partitions 2] [--part-rows 1700]

Two measurements, each over synthetic shard runs as `partitioned.shard_state_run` writes them
(`ngramfiles.write_state_run`: sorted unique 64-bit hashes, a tenth of them shared with other
shards, each owned by a random document of its shard, ranked in crawl order, named as the
workflow names a Common Crawl WARC's documents, ``<WARC name>:<index>``):

- **on disk**: a run's bytes a row as Arrow IPC (zstd) with parts of ``--part-rows`` rows (about a
  shard's run over the state's ranges at 10¹¹ and 10¹² words, docs/dedup-scale.md), against the
  same rows as a state's Parquet part (`state.write_state_rows`);
- **held**: a child process runs the job (`state.write_state_part`) for range 0 of
  ``--partitions`` over ``--shards`` runs of each ``--rows`` rows, and reports its peak RSS above
  what it held once its modules were imported (/proc/self/status: VmHWM, which exec resets, where
  ru_maxrss keeps the forking parent's); over the sizes, the line
  through those peaks: the bytes a row of its range (the runs' parts, held whole) and what is
  held besides (the merge's round, `memory.STATE_ROUND_ROWS` rows at most, and the row group
  written).

Results go to bench/results/state_parts.json, with the date, the commit and the machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))
from run_all import machine_info  # noqa: E402

from corpusbuilder.contracts.ngramfiles import write_state_run  # noqa: E402
from corpusbuilder.dedup.state import write_state_rows  # noqa: E402

OUT = REPO / "bench" / "results" / "state_parts.json"
# a Common Crawl WARC's shard name (download.sources.shard_name): its file name, 43 characters
WARC_NAME = "CC-MAIN-20240220211055-20240221001055-{:05d}"
# output n-grams a document (the 2 GB build: 0.806 rows a token, 769 tokens a document)
ROWS_PER_DOCUMENT = 620


def shard_run(shard: int, rows: int, shared: np.ndarray, rng: np.random.Generator):
    """One shard's output n-grams: (sorted unique hashes, ranks, document ids)."""
    own = rng.integers(0, 2**64, size=rows - rows // 10, dtype=np.uint64)
    hashes = np.unique(np.concatenate([own, rng.choice(shared, rows // 10, replace=False)]))
    documents = max(len(hashes) // ROWS_PER_DOCUMENT, 1)
    docs = rng.integers(0, documents, size=len(hashes))
    ids = pc.binary_join_element_wise(
        pa.array(np.full(len(hashes), WARC_NAME.format(shard))),
        pc.cast(pa.array(docs), pa.string()),
        ":",
    )
    if isinstance(ids, pa.ChunkedArray):  # (as the shard job's: one array)
        ids = ids.combine_chunks()
    return hashes, (shard * documents + docs).astype(np.int32), ids


def on_disk(rows: int, part_rows: int, folder: Path) -> dict:
    """A run's bytes a row with parts of `part_rows` rows (IPC), and as a state's part
    (Parquet)."""
    rng = np.random.default_rng(1)
    hashes, ranks, ids = shard_run(0, rows, rng.integers(0, 2**64, rows, np.uint64), rng)
    partitions = max(len(hashes) // part_rows, 1)
    write_state_run(hashes, ranks, ids, partitions, folder / "run.arrow")
    write_state_rows(folder / "state.parquet", [(hashes, ranks, ids)], {})
    return {
        "rows": len(hashes),
        "parts": partitions,
        "rows_a_part": len(hashes) / partitions,
        "run_bytes_per_row": (folder / "run.arrow").stat().st_size / len(hashes),
        "state_part_bytes_per_row": (folder / "state.parquet").stat().st_size / len(hashes),
        "id_characters": float(np.mean(pc.utf8_length(ids).to_numpy())),
    }


JOB = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from corpusbuilder.contracts.ngramfiles import read_state_rows
    from corpusbuilder.dedup.state import write_state_part
    def status(key):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    folder, partitions = Path(sys.argv[1]), int(sys.argv[2])
    before = status("VmRSS")
    runs = sorted(folder.glob("run-*.arrow"))
    start = time.process_time()
    write_state_part(folder / f"0-of-{partitions}.parquet", runs, [], 0, partitions, {})
    seconds = time.process_time() - start
    peak = status("VmHWM")
    written = sum(len(h) for h, _, _ in read_state_rows(folder / f"0-of-{partitions}.parquet"))
    print(json.dumps({"modules_kb": before, "peak_kb": peak, "cpu_s": seconds,
                      "written_rows": written}))
    """
)


def held(shards: int, rows: int, partitions: int, folder: Path) -> dict:
    """The job's peak above its modules for range 0 of `partitions` over `shards` runs."""
    rng = np.random.default_rng(2)
    shared = rng.integers(0, 2**64, size=rows, dtype=np.uint64)
    in_range = 0
    for shard in range(shards):
        hashes, ranks, ids = shard_run(shard, rows, shared, rng)
        write_state_run(hashes, ranks, ids, partitions, folder / f"run-{shard:05d}.arrow")
        in_range += int(np.searchsorted(hashes, np.uint64(2**64 // partitions)))
    child = subprocess.run(
        [sys.executable, "-c", JOB, str(folder), str(partitions)],
        check=True,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    job = json.loads(child.stdout)
    return {
        "shards": shards,
        "rows_a_run": rows,
        "partitions": partitions,
        "rows_read": in_range,
        "rows_written": job["written_rows"],
        "modules_mb": job["modules_kb"] / 1024,
        "peak_mb": job["peak_kb"] / 1024,
        "cpu_s": job["cpu_s"],
        "held_bytes_per_row": (job["peak_kb"] - job["modules_kb"]) * 1024 / in_range,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shards", type=int, default=32)
    parser.add_argument("--rows", type=int, nargs="+", default=[400_000, 800_000, 1_600_000])
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--part-rows", type=int, default=1700)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="state-parts-") as tmp:
        disk = on_disk(args.rows[0], args.part_rows, Path(tmp))
    jobs = []
    for rows in args.rows:
        with tempfile.TemporaryDirectory(prefix="state-parts-") as tmp:
            jobs.append(held(args.shards, rows, args.partitions, Path(tmp)))
    job = {"sizes": jobs}
    if len(jobs) > 1:
        slope, intercept = np.polyfit(
            [j["rows_read"] for j in jobs], [j["peak_mb"] - j["modules_mb"] for j in jobs], 1
        )
        job.update(bytes_per_row=slope * 2**20, besides_mb=intercept)
    info = machine_info()
    result = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "commit": info.get("git_commit"),
        "machine": info,
        "how_run": "python bench/bench_state_parts.py " + " ".join(argv or sys.argv[1:]),
        "on_disk": disk,
        "job": job,
        "seconds": time.time() - start,
    }
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({"on_disk": disk, "job": job}, indent=1))


if __name__ == "__main__":
    main()
