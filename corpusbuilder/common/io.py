"""File output shared by the stages: nothing half-written is ever left under a final name.

Snakemake deletes the outputs of a failed job, but a killed worker or a run outside Snakemake
(the command line) does not get that care, so every writer goes to a temporary name in the
same directory and renames it into place only once complete.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from corpusbuilder.common.versions import writer_metadata, writer_of

_UMASK = os.umask(0)
os.umask(_UMASK)


@contextlib.contextmanager
def atomic_path(path: Path | str) -> Iterator[Path]:
    """Yield a temporary path beside `path`; it replaces `path` when the block succeeds. A device
    or a pipe (``/dev/stdout``, even where it leads to a file, ``/dev/null``, a FIFO, or a link to
    one) gets the written bytes copied into it instead: replacing it would put a plain file where
    the stream was, and a writer that seeks (Parquet) cannot write to it."""
    path = Path(path)
    stream = is_stream(path)
    if not stream:
        path.parent.mkdir(parents=True, exist_ok=True)
        # a worker killed before its `finally` (SIGKILL, SIGTERM) leaves its temporary file
        # behind; the next writer of the same path removes it (Snakemake runs one job per output)
        for stale in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
            stale.unlink(missing_ok=True)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".tmp", dir=None if stream else path.parent
    )
    os.close(fd)
    tmp_path = Path(tmp)
    tmp_path.chmod(0o666 & ~_UMASK)  # mkstemp makes 0600; outputs are shared like any file
    # what a full disk or a file-size limit hit while writing is said of: the output, or for a
    # stream the temporary file, which lies on another file system
    written = tmp_path if stream else path
    try:
        yield tmp_path
        if stream:
            written = path
            with tmp_path.open("rb") as copied, path.open("wb") as into:
                shutil.copyfileobj(copied, into)
        else:
            os.replace(tmp_path, path)
    except OSError as error:
        if error.filename or error.errno is None and "errno" not in str(error).lower():
            raise
        raise OSError(
            error.errno or _errno_in(error), error.strerror or str(error), str(written)
        ) from error
    finally:
        tmp_path.unlink(missing_ok=True)


# /dev/stdout and /proc/self/fd/1 lead to a file when the output is redirected to one: that file
# is still the shell's open stream, which a replaced file would no longer be
_STREAM_DIRS = ("/dev/", "/proc/")


def is_stream(path: Path) -> bool:
    """Whether `path` is a device or a pipe, or leads to one through /dev or /proc."""
    link = Path(os.path.abspath(path))
    for _ in range(40):  # the kernel's own limit on links followed
        if str(link).startswith(_STREAM_DIRS):
            return True
        if not link.is_symlink():
            break
        link = Path(os.path.abspath(link.parent / os.readlink(link)))
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def npy_header(npy) -> tuple[int, np.dtype]:
    """Length and dtype of an open .npy stream (a file, or a member of an .npz), left positioned
    at its data: the one reader of the format's header (versions 1.0 and 2.0)."""
    version = np.lib.format.read_magic(npy)
    shape, _, dtype = (
        np.lib.format.read_array_header_1_0(npy)
        if version == (1, 0)
        else np.lib.format.read_array_header_2_0(npy)
    )
    return int(np.prod(shape)), dtype


def _errno_in(error: OSError) -> int:
    """The errno pyarrow writes into its message only ("[errno 28] No space left on device")."""
    return int(str(error).lower().split("[errno ", 1)[1].split("]", 1)[0])


def _stamped(schema: pa.Schema) -> dict[bytes, bytes]:
    """A schema's metadata with this process as the table's writer (common.versions)."""
    return {**(schema.metadata or {}), **writer_metadata()}


def write_table(table: pa.Table, path: Path | str, row_group_size: int | None = None) -> None:
    """Write an Arrow table as Parquet (zstd), atomically; ``row_group_size`` rows per row group
    where readers filter by row group statistics (pyarrow's default otherwise)."""
    with atomic_path(path) as tmp:
        pq.write_table(
            table.replace_schema_metadata(_stamped(table.schema)),
            tmp,
            compression="zstd",
            row_group_size=row_group_size,
        )


def table_writer(path: Path | str) -> dict | None:
    """The versions that wrote a table (`common.versions`), as its writer stamped them; None for
    one written before tables were stamped."""
    return writer_of(pq.read_schema(path).metadata)


def write_row_groups(parts: Sequence[pa.Table], path: Path | str) -> None:
    """Write tables of one schema as one Parquet file (zstd), atomically, each as one row group
    (an empty one too), so that a reader finds part i as row group i."""
    with (
        atomic_path(path) as tmp,
        pq.ParquetWriter(
            tmp, parts[0].schema.with_metadata(_stamped(parts[0].schema)), compression="zstd"
        ) as writer,
    ):
        for part in parts:
            writer.write_table(part, row_group_size=max(part.num_rows, 1))


def write_parts(parts: Sequence[pa.Table], path: Path | str) -> None:
    """Write tables of one schema as one Arrow IPC file (zstd), atomically, each as one record
    batch (an empty one too), so that a reader finds part i as batch i (`read_part`).

    A file read a part at a time by many jobs, for which Parquet's row groups cost each reader
    O(parts): its footer (Thrift) is parsed whole, every row group's column metadata, before one
    is read. The IPC file's footer (FlatBuffers) is an array of batch offsets, read in place
    (bench/bench_part_reads.py: under 1.2 ms a read at any number of parts, against 32 ms at
    4,674 Parquet row groups and 249 ms at 29,334; docs/measurements.md)."""
    schema = parts[0].schema.with_metadata(_stamped(parts[0].schema))
    with (
        atomic_path(path) as tmp,
        pa.ipc.new_file(tmp, schema, options=pa.ipc.IpcWriteOptions(compression="zstd")) as writer,
    ):
        for part in parts:
            writer.write_batch(_one_batch(part, schema))


def _one_batch(part: pa.Table, schema: pa.Schema) -> pa.RecordBatch:
    """A table's rows as one record batch (a table holds any number of chunks, none if empty)."""
    columns = part.combine_chunks().columns
    return pa.RecordBatch.from_arrays(
        [column.chunk(0) if column.num_chunks else pa.array([], column.type) for column in columns],
        schema=schema,
    )


def read_part(path: Path | str, part: int, columns: Sequence[str] | None = None) -> pa.RecordBatch:
    """Part ``part`` of a file `write_parts` wrote (``columns`` of it, all unless named): the file
    is mapped, and only its footer and that batch are read."""
    with pa.memory_map(str(path)) as source:
        return _opened(source, columns).get_batch(part)


def read_parts(path: Path | str, columns: Sequence[str] | None = None) -> Iterator[pa.RecordBatch]:
    """Every part of a file `write_parts` wrote, in order (``columns`` of each, all unless
    named)."""
    with pa.memory_map(str(path)) as source:
        reader = _opened(source, columns)
        for part in range(reader.num_record_batches):
            yield reader.get_batch(part)


def _opened(source: pa.MemoryMappedFile, columns: Sequence[str] | None):
    """An IPC file's reader, of ``columns`` only where named (the others are not decompressed)."""
    reader = pa.ipc.open_file(source)
    if columns is None:
        return reader
    names = reader.schema.names
    return pa.ipc.open_file(
        source, options=pa.ipc.IpcReadOptions(included_fields=[names.index(c) for c in columns])
    )


def parts_writer(path: Path | str) -> dict | None:
    """The versions that wrote a file of parts (`write_parts`), as its writer stamped them."""
    with pa.memory_map(str(path)) as source:
        return writer_of(pa.ipc.open_file(source).schema.metadata)


def part_count(path: Path | str) -> int:
    """How many parts a file `write_parts` wrote holds, from its footer."""
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).num_record_batches


class ParquetBatchWriter:
    """Append rows (dicts) and flush them as Parquet row groups, so a shard
    never sits in memory whole."""

    def __init__(self, path: Path | str, schema: pa.Schema, batch_rows: int = 20_000):
        self.path = Path(path)
        self.schema = schema
        self.batch_rows = batch_rows
        self._rows: list[dict] = []
        self._atomic = atomic_path(self.path)
        self._writer: pq.ParquetWriter | None = None

    def __enter__(self) -> ParquetBatchWriter:
        tmp = self._atomic.__enter__()
        self._writer = pq.ParquetWriter(
            tmp, self.schema.with_metadata(_stamped(self.schema)), compression="zstd"
        )
        return self

    def append(self, row: dict) -> None:
        self._rows.append(row)
        if len(self._rows) >= self.batch_rows:
            self._flush()

    def _flush(self) -> None:
        if self._rows:
            assert self._writer is not None, "rows are appended inside the with block only"
            self._writer.write_table(pa.Table.from_pylist(self._rows, schema=self.schema))
            self._rows = []

    def __exit__(self, exc_type, exc, tb) -> bool | None:
        assert self._writer is not None, "__enter__ opened it"
        try:
            if exc_type is None:
                self._flush()
        finally:
            self._writer.close()
        return self._atomic.__exit__(exc_type, exc, tb)
