"""Prepared shards spilled to scratch files (issue 20): pass 1 prepares each shard once and writes
its arrays uncompressed, pass 2 maps them again, so a bucket reads only the pages of its own
documents and the page cache, not the job's heap, holds the rest."""

from __future__ import annotations

import dataclasses
import mmap
import os
import tempfile
from pathlib import Path

import numpy as np

ALIGN = 64  # each array starts on a cache line, so numpy reads it where it lies


@dataclasses.dataclass
class _Spilled:
    path: Path
    skeleton: object  # the prepared shard, its arrays taken out (lists and object arrays stay)
    arrays: dict[
        tuple[str, ...], tuple[np.dtype, tuple[int, ...], int]
    ]  # field path → dtype, shape, offset


class SpilledShards:
    """Prepared shards (dataclasses of numpy arrays, nested ones too), each written once to a
    file in a scratch directory next to the job's outputs and mapped read-only on demand; the
    directory goes with `cleanup` (or with the process)."""

    def __init__(self, directory: Path | str):
        Path(directory).mkdir(parents=True, exist_ok=True)
        self._tmp = tempfile.TemporaryDirectory(dir=directory, prefix=".prepared-")
        self._shards: dict[int, _Spilled] = {}
        self.nbytes = 0

    def put(self, key: int, prepared) -> None:
        path = Path(self._tmp.name) / f"{key}.bin"
        arrays: dict = {}
        with path.open("wb") as f:
            skeleton = _write_arrays(prepared, (), f, arrays)
            self.nbytes += f.tell()
        self._shards[key] = _Spilled(path, skeleton, arrays)

    def get(self, key: int):
        """Shard `key` as it was put, its arrays read-only views of the mapped file (unmapped
        when the last view goes)."""
        spilled = self._shards[key]
        with spilled.path.open("rb") as f:
            # mmap refuses an empty file; a shard without arrays to hold maps nothing
            buffer = (
                mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                if os.fstat(f.fileno()).st_size
                else b""
            )
        views = {
            name: np.frombuffer(buffer, dtype, int(np.prod(shape)), offset).reshape(shape)
            for name, (dtype, shape, offset) in spilled.arrays.items()
        }
        return _fill(spilled.skeleton, (), views)

    def cleanup(self) -> None:
        self._shards.clear()
        self._tmp.cleanup()


def _write_arrays(obj, prefix: tuple[str, ...], f, arrays: dict):
    """Write `obj`'s numeric arrays to `f`, noting where each lies; `obj` without them."""
    taken: dict[str, object] = {}
    for field in dataclasses.fields(obj):
        value, name = getattr(obj, field.name), (*prefix, field.name)
        if isinstance(value, np.ndarray) and value.dtype != object:
            f.write(bytes(-f.tell() % ALIGN))
            value = np.ascontiguousarray(value)
            arrays[name] = (value.dtype, value.shape, f.tell())
            f.write(value.data.cast("B") if value.size else b"")
            taken[field.name] = None
        elif dataclasses.is_dataclass(value):
            taken[field.name] = _write_arrays(value, name, f, arrays)
    return dataclasses.replace(obj, **taken)


def _fill(skeleton, prefix: tuple[str, ...], views: dict):
    """`skeleton` with its arrays put back from `views`."""
    filled = {}
    for field in dataclasses.fields(skeleton):
        value, name = getattr(skeleton, field.name), (*prefix, field.name)
        if name in views:
            filled[field.name] = views[name]
        elif dataclasses.is_dataclass(value):
            filled[field.name] = _fill(value, name, views)
    return dataclasses.replace(skeleton, **filled)
