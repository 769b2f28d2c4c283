"""Sorted runs — Parquet (hash uint64, count uint32), sorted by hash — and their k-way merge in
passes, within the memory budget."""

from __future__ import annotations

import ctypes
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from corpusbuilder.common.io import atomic_path, npy_header
from corpusbuilder.common.versions import writer_metadata
from corpusbuilder.contracts.ngramfiles import (
    ALL_HASHES,
    RUN_SCHEMA,
    HashRange,
    in_hash_range,
    row_groups_in,
)
from corpusbuilder.ngrams.chunks import resident_bytes
from corpusbuilder.ngrams.hashing import sum_equal_hashes

# Bytes per (hash, count) row of a merge round: the round's rows concatenated (12 B), their
# sort order (8 B), the sorted copy (12 B), the summed output and its masks.
MERGE_BYTES_PER_ROW = 64
# Bytes per row of a run's row group held while it is merged: the decoded columns (12 B) and
# pyarrow's decompression buffers (measured: 10 open row groups of 2¹⁸ rows, 49 MB allocated).
READ_BYTES_PER_ROW = 20
# Runs merged at once: a merge round costs Python work per run, so thousands of chunk runs
# are merged in passes of at most this many (fewer if their row groups do not fit the budget).
MERGE_FAN_IN = 64
# A merge holds one row group of each run it reads: 2¹⁶ rows are 1.3 MB with READ_BYTES_PER_ROW.
RUN_ROW_GROUP = 1 << 16


def write_run(
    path: Path | str, blocks: Iterable[tuple[np.ndarray, np.ndarray]], metadata: dict | None = None
) -> int:
    """Write sorted (hash, count) blocks as one run file, atomically; return its row count.

    Small blocks (a merge's rounds) are gathered into row groups of RUN_ROW_GROUP rows, so a
    run read back holds at most that many rows in memory whatever the blocks were.
    """
    rows = 0
    schema = RUN_SCHEMA.with_metadata(
        {b"corpusbuilder": json.dumps(metadata or {}).encode(), **writer_metadata()}
    )
    pending: list[tuple[np.ndarray, np.ndarray]] = []
    pending_rows = 0

    def flush(writer, final: bool = False) -> None:
        nonlocal pending, pending_rows
        hashes = np.concatenate([h for h, _ in pending])
        counts = np.concatenate([c for _, c in pending])
        full = len(hashes) if final else len(hashes) // RUN_ROW_GROUP * RUN_ROW_GROUP
        writer.write_table(_run_table(hashes[:full], counts[:full], schema), RUN_ROW_GROUP)
        pending = [(hashes[full:].copy(), counts[full:].copy())] if full < len(hashes) else []
        pending_rows = len(hashes) - full

    with atomic_path(path) as tmp:
        with pq.ParquetWriter(tmp, schema, compression="zstd", use_dictionary=False) as writer:
            for hashes, counts in blocks:
                if not len(hashes):
                    continue
                rows += len(hashes)
                pending.append((hashes, counts))
                pending_rows += len(hashes)
                if pending_rows >= RUN_ROW_GROUP:
                    flush(writer)
            if pending:
                flush(writer, final=True)
    return rows


def _run_table(hashes: np.ndarray, counts: np.ndarray, schema: pa.Schema) -> pa.Table:
    """The rows as an Arrow table over the arrays' own buffers: `pa.table` or `pa.array` would
    import pandas (a third of a job's start-up) only to ask whether the arrays are pandas'."""
    columns = [
        pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(values)])
        for kind, values in (
            (pa.uint64(), np.ascontiguousarray(hashes, np.uint64)),
            (pa.uint32(), np.ascontiguousarray(counts, np.uint32)),
        )
    ]
    return pa.Table.from_arrays(columns, schema=schema)


# A chunk's counts wait for the shard's merge in a spill file: two raw .npy records (hashes, then
# counts), written and read at the disk's speed, where a zstd Parquet run spent more time
# compressing and decoding the temporary rows than the chunk took to count them. Read back a
# run's row group (RUN_ROW_GROUP rows) at a time.
SPILL_SUFFIX = ".npy"


def write_spill(path: Path | str, hashes: np.ndarray, counts: np.ndarray) -> None:
    """A chunk's sorted (hash, count) rows as a spill file, atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as out:
        np.save(out, np.asarray(hashes, np.uint64))
        np.save(out, np.asarray(counts, np.uint32))


def _read_spill(
    path: Path | str, batch_rows: int, hash_range: HashRange
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    with open(path, "rb") as spill:
        rows, _ = npy_header(spill)
        hashes_at = spill.tell()
        spill.seek(hashes_at + 8 * rows)
        npy_header(spill)
        counts_at = spill.tell()
        step = max(1, min(batch_rows, RUN_ROW_GROUP))
        for begin in range(0, rows, step):
            hashes = np.empty(min(step, rows - begin), np.uint64)
            counts = np.empty(len(hashes), np.uint32)
            spill.seek(hashes_at + 8 * begin)
            spill.readinto(hashes.data.cast("B"))
            spill.seek(counts_at + 4 * begin)
            spill.readinto(counts.data.cast("B"))
            kept = in_hash_range(hashes, hash_range)
            yield hashes[kept], counts[kept]


def read_run(
    path: Path | str, batch_rows: int, hash_range: HashRange = ALL_HASHES
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Stream a run file's (or a spill's) hashes in `hash_range` as (hash, count)
    blocks of at most `batch_rows` rows.

    Row group by row group, without threads: pyarrow's `iter_batches` reads ahead (measured:
    34 MB held per open run at 2¹⁶-row batches, 54 MB at 658 k), which a merge of many runs
    multiplies past any budget. Here a run holds one row group, and the blocks are views of it.
    Only the row groups that overlap `hash_range` are read (a merge partition reads its slice).
    """
    if Path(path).suffix == SPILL_SUFFIX:
        yield from _read_spill(path, batch_rows, hash_range)
        return
    with pq.ParquetFile(path) as run:
        for group in row_groups_in(run.metadata, hash_range):
            # a dedup state (ngramfiles.STATE_SCHEMA) is a run with its
            # owners beside it: not read here
            table = run.read_row_group(group, columns=["hash", "count"], use_threads=False)
            hashes = _values(table.column(0), np.dtype(np.uint64))
            counts = _values(table.column(1), np.dtype(np.uint32))
            del table
            kept = in_hash_range(hashes, hash_range)
            hashes, counts = hashes[kept], counts[kept]
            for begin in range(0, len(hashes), batch_rows):
                yield hashes[begin : begin + batch_rows], counts[begin : begin + batch_rows]
            del hashes, counts  # before the next row group is read


def _values(column: pa.ChunkedArray, dtype: np.dtype) -> np.ndarray:
    """A run column's values, read-only over its buffer as `to_numpy` gives them: `to_numpy`
    would import pandas (a third of a merge job's start-up) to check for extension types."""
    values = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    return np.frombuffer(values.buffers()[1], dtype, len(values), values.offset * dtype.itemsize)


def _largest_row_group(path: Path) -> int:
    if path.suffix == SPILL_SUFFIX:
        return RUN_ROW_GROUP
    metadata = pq.read_metadata(path)
    return max((metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)), default=0)


def run_metadata(path: Path | str) -> dict:
    # the footer's key-value metadata: read_schema would import pandas for its own metadata
    return json.loads(pq.read_metadata(path).metadata[b"corpusbuilder"])


def merge_ngram_runs(
    runs: list[Iterator[tuple[np.ndarray, np.ndarray]]],
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """k-way merge of sorted (hash, count) runs, summing the counts of equal hashes.

    Vectorised by rounds: every hash up to the smallest last hash among the runs' current
    blocks is already in memory, so that slice of every block is merged with one numpy sort.
    """
    heads: list[list] = []  # [hashes, counts, iterator] of each run not yet exhausted
    for run in runs:
        block = next(run, None)
        if block is not None:
            heads.append([*block, run])
    while heads:
        bound = min(head[0][-1] for head in heads)
        parts_h, parts_c = [], []
        for head in heads:
            cut = np.searchsorted(head[0], bound, side="right")
            parts_h.append(head[0][:cut])
            parts_c.append(head[1][:cut])
            head[0], head[1] = head[0][cut:], head[1][cut:]
        hashes, counts = np.concatenate(parts_h), np.concatenate(parts_c)
        if len(parts_h) > 1:
            order = np.argsort(hashes, kind="stable")
            hashes, counts = hashes[order], counts[order]
        yield sum_equal_hashes(hashes, counts)
        heads = [head for head in heads if len(head[0]) or _refill(head)]


def _refill(head: list) -> bool:
    """Load a run's next non-empty block into its head; False once the run is exhausted."""
    for hashes, counts in head[2]:
        if len(hashes):
            head[0], head[1] = hashes, counts
            return True
    return False


def merge_budget(mem_mb: float) -> float:
    """Bytes a merge may use: the budget less what the process already holds."""
    release_memory()
    return mem_mb * 2**20 - resident_bytes()


def merged_runs(
    run_paths: list[Path], mem_mb: float, hash_range: HashRange = ALL_HASHES
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """merge_ngram_runs over run files' `hash_range`. Each open run holds one row group; what is
    left of the budget bounds the rows a merge round takes from each run."""
    free_bytes = merge_budget(mem_mb)
    held = sum(_largest_row_group(path) for path in run_paths) * READ_BYTES_PER_ROW
    rows = max(1024, int((free_bytes - held) / (MERGE_BYTES_PER_ROW * max(len(run_paths), 1))))
    return merge_ngram_runs([read_run(path, rows, hash_range) for path in run_paths])


def runs_per_merge(run_paths: list[Path], mem_mb: float) -> int:
    """Runs merged at once: at most MERGE_FAN_IN, and no more than half the free budget's worth
    of row groups (the other half is for the merge rounds)."""
    group = max((_largest_row_group(path) for path in run_paths), default=RUN_ROW_GROUP)
    fits = int(
        merge_budget(mem_mb) / 2 / (max(group, 1) * (READ_BYTES_PER_ROW + MERGE_BYTES_PER_ROW / 8))
    )
    return max(2, min(MERGE_FAN_IN, fits))


def merge_to_fan_in(
    run_paths: list[Path], tmp_dir: Path, mem_mb: float, hash_range: HashRange = ALL_HASHES
) -> list[Path]:
    """Merge runs' `hash_range` a fan-in at a time into temporary runs until at most that many
    are left (the temporary runs hold that range only, and a range of them is all of them)."""
    fan_in = runs_per_merge(run_paths, mem_mb)
    while len(run_paths) > fan_in:
        merged: list[Path] = []
        for begin in range(0, len(run_paths), fan_in):
            merged.append(tmp_dir / f"pass-{id(merged):x}-{begin:06d}.parquet")
            write_run(
                merged[-1], merged_runs(run_paths[begin : begin + fan_in], mem_mb, hash_range)
            )
        for path in run_paths:
            if path.parent == tmp_dir:
                path.unlink()
        run_paths = merged
    return run_paths


def release_memory() -> None:
    """Hand freed memory back to the system: pyarrow's pool and glibc's heap keep it otherwise,
    and the next step's budget is computed from the resident set."""
    pa.default_memory_pool().release_unused()
    if _malloc_trim is not None:
        _malloc_trim(0)


def _load_malloc_trim():
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


_malloc_trim = _load_malloc_trim()
