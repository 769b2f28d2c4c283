"""The n-gram files of block de-duplication, a contracts module beside `tables`: G₂₊ as the
n-gram stage writes it (a plain ``.npy`` of sorted hashes per hash range), the sorted runs it is
merged from, dedup's written state (``dedup.against``), and the partitioned mode's occurrences
and seen n-grams. Their paths are in `files.FILES`; stages read and write them only here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from corpusbuilder.common.faults import names_the_file
from corpusbuilder.common.io import npy_header, write_row_groups
from corpusbuilder.contracts.tables import stage_table

if TYPE_CHECKING:  # pandas only for dedup's seen n-grams: the n-gram stage's jobs never load it
    import pandas as pd

# ngram_runs: sorted (hash, count) runs, zstd
RUN_SCHEMA = pa.schema([("hash", pa.uint64()), ("count", pa.uint32())])

# dedup's state: every distinct n-gram a corpus output (64-bit hashes, sorted), a count of 1 (so
# that the n-gram merge reads the file as one more run), and the document that output it first:
# its id and its rank in crawl order over every corpus merged into the state
STATE_SCHEMA = pa.schema(
    [
        ("hash", pa.uint64()),
        ("count", pa.uint32()),
        ("doc_rank", pa.int32()),
        ("doc_id", pa.string()),
    ]
)
STATE_ROW_GROUP = 1 << 16

# dedup.mode partitioned: an n-gram occurrence (hash, document in its shard, first word in the
# shard's word positions); and one already seen, with the document holding its n-gram first
# (its index in crawl order over the corpus, and its id)
OCCURRENCE_SCHEMA = pa.schema([("hash", pa.uint64()), ("doc", pa.int32()), ("start", pa.int32())])
SEEN_SCHEMA = pa.schema(
    [
        ("doc", pa.int32()),
        ("start", pa.int32()),
        ("owner", pa.int64()),
        ("owner_id", pa.string()),
    ]
)


def duplicate_ngram_count(paths: Path | str | Sequence[Path | str]) -> int:
    """|G₂₊|: the hashes its parts hold, from their headers alone."""
    paths = [paths] if isinstance(paths, (str, Path)) else paths
    total = 0
    for path in paths:
        with open(path, "rb") as npy:
            total += npy_header(npy)[0]
    return total


def read_duplicate_ngrams(paths: Path | str | Sequence[Path | str]) -> np.ndarray:
    """G₂₊ as the n-gram stage writes it: the sorted unique uint64 hashes of every n-gram seen
    twice or more, a plain ``.npy`` per hash range (`ngrams.partitions`), given in partition
    order. The parts are read into one array of their total length: no part is held twice."""
    paths = [paths] if isinstance(paths, (str, Path)) else paths
    hashes = np.empty(duplicate_ngram_count(paths), np.uint64)
    filled = 0
    for path in paths:
        with open(path, "rb") as npy:
            count, dtype = npy_header(npy)
            if dtype != np.dtype("<u8"):
                raise ValueError(f"{path}: G₂₊ holds {dtype} hashes, not uint64")
            if npy.readinto(hashes[filled : filled + count].data.cast("B")) != count * 8:
                raise ValueError(f"{path}: G₂₊ part is shorter than its header says")
        filled += count
    return hashes


# the key of a G₂₊ part's stats that names the versions that wrote the part (common.versions)
WRITTEN_BY = "written_by"


@names_the_file
def duplicate_ngrams_writer(stats_path: Path | str) -> dict | None:
    """The versions that wrote a part of G₂₊ (`common.versions`), from the stats its job wrote
    beside it (a plain ``.npy`` holds no metadata); None for a part written before they were
    stamped."""
    return json.loads(Path(stats_path).read_text(encoding="utf-8")).get(WRITTEN_BY)


@names_the_file
def dedup_state_metadata(path: Path | str) -> dict:
    """The n-gram settings and size a state file was written with."""
    return json.loads(pq.read_schema(path).metadata[b"corpusbuilder"])


@names_the_file
def read_dedup_state(path: Path | str):
    """The state file a row group at a time: (hashes, document ranks,
    document ids as a pyarrow array)."""
    with pq.ParquetFile(path) as state:
        for group in range(state.metadata.num_row_groups):
            table = state.read_row_group(
                group, columns=["hash", "doc_rank", "doc_id"], use_threads=False
            )
            yield (
                table.column("hash").to_numpy(),
                table.column("doc_rank").to_numpy(),
                table.column("doc_id").combine_chunks(),
            )


def write_occurrences(parts: Sequence[np.ndarray], path: Path | str) -> None:
    """A shard's n-gram occurrences (structured arrays of hash, doc, start), a row group per
    hash range, so that range p's job reads row group p."""
    write_row_groups(
        [
            pa.table(
                {name: part[name] for name in OCCURRENCE_SCHEMA.names}, schema=OCCURRENCE_SCHEMA
            )
            for part in parts
        ],
        path,
    )


def read_occurrences(path: Path | str, partition: int, dtype: np.dtype) -> np.ndarray:
    """Hash range `partition` of a shard's occurrences, as a structured array of `dtype`."""
    with pq.ParquetFile(path) as file:
        table = file.read_row_group(partition, use_threads=False)
    rows = np.empty(table.num_rows, dtype)
    for name in OCCURRENCE_SCHEMA.names:
        rows[name] = table.column(name).to_numpy()
    return rows


def write_seen(parts: Sequence[pd.DataFrame], path: Path | str) -> None:
    """One hash range's seen occurrences, a row group per shard (in crawl order)."""
    write_row_groups(
        [stage_table(part, SEEN_SCHEMA) for part in parts],
        path,
    )


def read_seen(paths: Sequence[Path | str], shard: int) -> pd.DataFrame:
    """Shard `shard`'s seen occurrences of every hash range."""
    import pandas as pd

    parts = []
    for path in paths:
        with pq.ParquetFile(path) as file:
            parts.append(file.read_row_group(shard, use_threads=False).to_pandas())
    return pd.concat(parts, ignore_index=True)


def read_duplicate_ngram_range(paths: Sequence[Path | str], low: int, high: int) -> np.ndarray:
    """The hashes of G₂₊ in [low, high) (high may be 2⁶⁴), from whichever of its parts hold
    them: each part is mapped, and only its slice in the range is read."""
    found = []
    for path in paths:
        part = np.load(path, mmap_mode="r")
        first = int(np.searchsorted(part, np.uint64(low)))
        last = len(part) if high >= 2**64 else int(np.searchsorted(part, np.uint64(high)))
        if last > first:
            found.append(np.array(part[first:last], np.uint64))
    return np.concatenate(found) if found else np.empty(0, np.uint64)
