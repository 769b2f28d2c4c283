"""CPU time to read one part of a file of parts, for each kind the partitioned jobs pass, in the
format written now (Arrow IPC, `common.io.write_parts` / `read_part`) and in the one before it
(Parquet, a row group per part, read with `ParquetFile.read_row_group`):

    python bench/bench_part_reads.py [--parts 64 1024 4674] [--rows 16] [--reads 9]

A job that reads part p of a Parquet file parses the file's whole footer first (Thrift: every row
group's column metadata and statistics), so one read costs O(P); an IPC file's footer is an array
of batch offsets (FlatBuffers), read in place. The parts are small (``--rows`` random rows of the
kind's schema) so that what is measured is the cost of finding a part, not of decoding it: at
10¹² words a shard's occurrences file holds 4,674 parts (dedup ranges) and a range's counts or
seen file 29,334 (shards), each small (docs/dedup-scale.md, issue 59). Each read opens the file
afresh, as a job does; the figure is the median over ``--reads`` parts spread over the file, in
process CPU time (the machine's load moves wall time). Every part read is checked against the part
written.

Results go to bench/results/part_reads.json: per kind and number of parts, ``ms_per_read`` of the
format in use and ``old_ms_per_read`` of Parquet, with both files' sizes, the date, the commit and
the machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))
from run_all import machine_info  # noqa: E402

from corpusbuilder.common.io import read_part, write_parts, write_row_groups  # noqa: E402
from corpusbuilder.contracts.ngramfiles import (  # noqa: E402
    COUNT_SCHEMA,
    KEY_SCHEMA,
    OCCURRENCE_SCHEMA,
    SEEN_SCHEMA,
)
from corpusbuilder.contracts.reportfiles import NGRAM_SCHEMA  # noqa: E402
from corpusbuilder.contracts.tables import HASHES_SCHEMA  # noqa: E402

OUT = REPO / "bench" / "results" / "part_reads.json"

# parts a file holds at 64, 1,024 and 4,674 dedup ranges (4,674: 10¹² words, docs/dedup-scale.md);
# a file of a part per shard also at 29,334 shards (10¹² words)
RANGES = [64, 1024, 4674]
SHARDS = [*RANGES, 29_334]

# the files read a part at a time (contracts.files.FILES): their schema and what a part is
KINDS: dict[str, tuple[pa.Schema, str, list[int]]] = {
    "dedup_occurrences": (OCCURRENCE_SCHEMA, "a shard's, a part per dedup range", RANGES),
    "dedup_counts": (COUNT_SCHEMA, "a dedup range's, a part per shard", SHARDS),
    "dedup_order": (KEY_SCHEMA, "a shard's keys, a part per dedup range", RANGES),
    "dedup_seen": (SEEN_SCHEMA, "a dedup range's, a part per shard", SHARDS),
    "report_ngrams": (NGRAM_SCHEMA, "a shard's 10-gram hashes, a part per report range", RANGES),
    "exact_hashes": (HASHES_SCHEMA, "a shard's MD5s, a part per exact-dedup partition", RANGES),
}


def random_column(kind: pa.DataType, rows: int, rng: np.random.Generator) -> pa.Array:
    if pa.types.is_boolean(kind):
        return pa.array(rng.random(rows) < 0.5)
    if pa.types.is_unsigned_integer(kind) or pa.types.is_signed_integer(kind):
        high = 2 ** (kind.bit_width - (0 if pa.types.is_unsigned_integer(kind) else 1))
        return pa.array(rng.integers(0, high, rows, dtype=kind.to_pandas_dtype()), kind)
    if pa.types.is_floating(kind):
        return pa.array(rng.random(rows), kind)
    if pa.types.is_string(kind):
        return pa.array([f"crawl-{rng.integers(1 << 30)}:{i}" for i in range(rows)], kind)
    if pa.types.is_fixed_size_binary(kind):
        return pa.array([rng.bytes(kind.byte_width) for _ in range(rows)], kind)
    raise TypeError(f"no random values of {kind}")


def parts_of(schema: pa.Schema, parts: int, rows: int, seed: int) -> list[pa.Table]:
    rng = np.random.default_rng(seed)
    return [
        pa.table([random_column(field.type, rows, rng) for field in schema], schema=schema)
        for _ in range(parts)
    ]


def read_parquet_part(path: Path, part: int) -> pa.Table:
    """Part `part` as the readers before IPC read it (contracts at e99ccb8)."""
    with pq.ParquetFile(path) as file:
        return file.read_row_group(part, use_threads=False)


def ms_per_read(read, path: Path, picks: list[int], written: list[pa.Table]) -> float:
    """The median CPU time of reading each of `picks` (a fresh open each), checked as read."""
    times = []
    for part in picks:
        started = time.process_time()
        got = read(path, part)
        times.append(time.process_time() - started)
        got = got if isinstance(got, pa.Table) else pa.Table.from_batches([got])
        if not got.equals(written[part]):
            raise AssertionError(f"{path}: part {part} read back differs from the part written")
    return round(1000 * statistics.median(times), 3)


def measure(kind: str, parts: int, rows: int, reads: int, folder: Path) -> dict:
    schema, _, _ = KINDS[kind]
    written = parts_of(schema, parts, rows, seed=parts)
    arrow, parquet = folder / f"{kind}-{parts}.arrow", folder / f"{kind}-{parts}.parquet"
    write_parts(written, arrow)
    write_row_groups(written, parquet)
    picks = sorted({round(i * (parts - 1) / max(reads - 1, 1)) for i in range(reads)})
    result = {
        "ms_per_read": ms_per_read(read_part, arrow, picks, written),
        "old_ms_per_read": ms_per_read(read_parquet_part, parquet, picks, written),
        "bytes": arrow.stat().st_size,
        "old_bytes": parquet.stat().st_size,
        "reads": len(picks),
    }
    arrow.unlink()
    parquet.unlink()
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", type=int, nargs="+", help="parts a file (default: per kind)")
    parser.add_argument("--rows", type=int, default=16, help="rows a part")
    parser.add_argument("--reads", type=int, default=9, help="parts read a file (median)")
    parser.add_argument("--kinds", nargs="+", choices=sorted(KINDS), default=sorted(KINDS))
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    machine = machine_info()
    kinds = {}
    with tempfile.TemporaryDirectory(prefix="part-reads-") as folder:
        for kind in args.kinds:
            _, what, grid = KINDS[kind]
            kinds[kind] = {"file": what, "format": "arrow", "old_format": "parquet", "parts": {}}
            for parts in args.parts or grid:
                kinds[kind]["parts"][str(parts)] = found = measure(
                    kind, parts, args.rows, args.reads, Path(folder)
                )
                print(
                    f"{kind:18} P={parts:6d}  arrow {found['ms_per_read']:8.3f} ms"
                    f"  parquet {found['old_ms_per_read']:8.3f} ms"
                    f"  ({found['bytes']:,} B against {found['old_bytes']:,} B)",
                    flush=True,
                )
    result = {
        "date": datetime.now(timezone.utc).date().isoformat(),
        "commit": machine["git_commit"],
        "machine": machine,
        "method": (
            f"{args.rows} random rows a part; per file, the median process CPU time of reading "
            f"{args.reads} parts spread over it, each file opened afresh"
        ),
        "rows_per_part": args.rows,
        "kinds": kinds,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
