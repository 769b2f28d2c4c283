"""The n-gram files of block de-duplication, a contracts module beside `tables`: G₂₊ as the
n-gram stage writes it (a plain ``.npy`` of sorted hashes per hash range), the sorted runs it is
merged from, dedup's written state (``dedup.against``), and the partitioned mode's occurrences
and seen n-grams. Their paths are in `files.FILES`; stages read and write them only here.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from corpusbuilder.common.faults import names_the_file
from corpusbuilder.common.io import npy_header, part_count, read_part, read_parts, write_parts
from corpusbuilder.config import ConfigError
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
# a shard's output n-grams for the state (dedup.mode partitioned): the state's rows less the count,
# a part per hash range of the state (`write_state_run`)
STATE_RUN_SCHEMA = pa.schema([STATE_SCHEMA.field(name) for name in ("hash", "doc_rank", "doc_id")])

# dedup.mode partitioned: an n-gram occurrence (hash, document in its shard, first word in the
# shard's word positions); a document's duplicate n-grams in a hash range; its processing-order
# key; and an occurrence already seen, with the document holding its n-gram first (its index in
# crawl order over the corpus, and its id)
OCCURRENCE_SCHEMA = pa.schema([("hash", pa.uint64()), ("doc", pa.int32()), ("start", pa.int32())])
COUNT_SCHEMA = pa.schema([("doc", pa.int32()), ("duplicates", pa.int32())])
KEY_SCHEMA = pa.schema([("doc", pa.int32()), ("share", pa.float64())])
SEEN_SCHEMA = pa.schema(
    [
        ("doc", pa.int32()),
        ("start", pa.int32()),
        ("owner", pa.int64()),
        ("owner_id", pa.string()),
    ]
)


# the hash ranges files are cut into: G₂₊'s parts, the runs' slices merged into them, dedup's
# partitioned jobs and its state's parts
HashRange = tuple[int, int]  # [low, high) of uint64 hashes, as Python ints (high may be 2⁶⁴)
ALL_HASHES: HashRange = (0, 1 << 64)


def partition_hash_range(partition: int, partitions: int) -> HashRange:
    """Partition `partition` of `partitions`: equal ranges of the hash's top 32 bits, as
    `exact_dedup.md5_partitions` cuts (n-gram hashes are uniform, so the parts are about equal)."""
    if not 0 <= partition < partitions:
        raise ValueError(
            f"partition {partition} of {partitions}: partitions are numbered 0 to {partitions - 1}"
        )

    def low(p: int) -> int:
        return -(-(p << 32) // partitions) << 32

    return low(partition), low(partition + 1)


def row_groups_in(metadata: pq.FileMetaData, hash_range: HashRange) -> range:
    """The row groups of a sorted file (a run, a state) that may hold hashes of `hash_range`, by
    their min/max statistics: a contiguous range of groups, found by binary search."""
    groups = metadata.num_row_groups
    if hash_range == ALL_HASHES or not groups:
        return range(groups)

    def bound(group: int, which: str) -> int:
        stats = metadata.row_group(group).column(0).statistics
        if stats is None or not stats.has_min_max:  # a run written without statistics: read it all
            return 0 if which == "min" else (1 << 64) - 1
        return getattr(stats, which)

    low, high = hash_range
    first = bisect.bisect_left(range(groups), low, key=lambda g: bound(g, "max"))
    stop = bisect.bisect_left(range(groups), high, key=lambda g: bound(g, "min"))
    return range(first, max(first, stop))


def in_hash_range(hashes: np.ndarray, hash_range: HashRange) -> slice:
    """The slice of sorted `hashes` that lies in `hash_range`."""
    low, high = hash_range
    begin = int(np.searchsorted(hashes, np.uint64(low))) if low else 0
    end = int(np.searchsorted(hashes, np.uint64(high))) if high < 1 << 64 else len(hashes)
    return slice(begin, end)


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


# A state is a folder of parts, one a hash range (`FILES.dedup_state`: part p of P holds the
# n-grams of `partition_hash_range(p, P)`), written by the range jobs of dedup.mode partitioned and
# as one part by the sequential job; a single file (a state written before parts) is one part of
# every hash.
STATE_PART = re.compile(r"^(\d+)-of-(\d+)\.parquet$")


def dedup_state_parts(path: Path | str | Sequence[Path | str]) -> list[str]:
    """The files of the state at `path`, in hash order: a file as it is, or a folder's parts of
    one partitioning, every one there (a list is taken as the parts already: a job's inputs); a
    ConfigError naming `dedup.against` otherwise."""
    if not isinstance(path, (str, Path)):
        return [str(part) for part in path]
    path = Path(path)
    if path.is_file():
        return [str(path)]
    found: dict[int, dict[int, str]] = {}
    for part in sorted(path.iterdir()) if path.is_dir() else []:
        if named := STATE_PART.match(part.name):
            found.setdefault(int(named[2]), {})[int(named[1])] = str(part)
    partitionings = sorted(found)
    if len(partitionings) != 1 or sorted(found[partitionings[0]]) != list(range(partitionings[0])):
        held = ", ".join(f"{len(parts)} of {total} parts" for total, parts in sorted(found.items()))
        raise ConfigError(
            f"config key 'dedup.against': {path} is no dedup state: it should be a folder of "
            f"parts p-of-P.parquet, all P of one P (it holds {held or 'none'}; remove the parts "
            "of an older build), or a state file"
        )
    parts = found[partitionings[0]]
    return [parts[p] for p in range(partitionings[0])]


def state_part_range(path: Path | str) -> HashRange:
    """The hashes a state's part holds, by its name (a state file of one part: all of them)."""
    named = STATE_PART.match(Path(path).name)
    return ALL_HASHES if named is None else partition_hash_range(int(named[1]), int(named[2]))


def remove_other_state_parts(path: Path | str) -> None:
    """Beside the state's part at `path`, remove the parts of another partitioning (an earlier
    run's, in other hash ranges), so that the folder stays one state a later run can read."""
    named = STATE_PART.match(Path(path).name)
    if named is None:
        return
    for other in Path(path).parent.glob("*-of-*.parquet"):
        if (found := STATE_PART.match(other.name)) and found[2] != named[2]:
            other.unlink(missing_ok=True)  # the other range jobs remove them too


@names_the_file
def dedup_state_metadata(path: Path | str | Sequence[Path | str]) -> dict:
    """The n-gram settings and size a state (a file, or a folder of parts) was written with."""
    return json.loads(pq.read_schema(dedup_state_parts(path)[0]).metadata[b"corpusbuilder"])


@names_the_file
def read_dedup_state(
    path: Path | str, hash_range: HashRange = ALL_HASHES
) -> Iterator[tuple[np.ndarray, np.ndarray, pa.Array]]:
    """A state file's rows in `hash_range` (a part of another range is not opened), a row group at
    a time, only those its statistics say may hold them: (hashes, document ranks, document ids
    as a pyarrow array)."""
    part_low, part_high = state_part_range(path)
    if part_high <= hash_range[0] or hash_range[1] <= part_low:
        return
    with pq.ParquetFile(path) as state:
        for group in row_groups_in(state.metadata, hash_range):
            table = state.read_row_group(
                group, columns=["hash", "doc_rank", "doc_id"], use_threads=False
            )
            hashes, ranks = table.column("hash").to_numpy(), table.column("doc_rank").to_numpy()
            ids = table.column("doc_id").combine_chunks()
            kept = in_hash_range(hashes, hash_range)
            if kept.stop - kept.start == len(hashes):
                yield hashes, ranks, ids
            else:  # copied out: a merge of many runs holds each one's slice, not its row group
                yield (
                    hashes[kept].copy(),
                    ranks[kept].copy(),
                    pa.concat_arrays([ids.slice(kept.start, kept.stop - kept.start)]),
                )


def read_state_rows(
    path: Path | str | Sequence[Path | str], hash_range: HashRange = ALL_HASHES
) -> Iterator[tuple[np.ndarray, np.ndarray, pa.Array]]:
    """A state's rows in `hash_range`, whatever hash ranges its parts were written in
    (`dedup_state_parts`, `read_dedup_state`): in hash order, only the parts that meet it read."""
    for part in dedup_state_parts(path):
        yield from read_dedup_state(part, hash_range)


def write_state_run(
    hashes: np.ndarray, ranks: np.ndarray, ids: pa.Array, partitions: int, path: Path | str
) -> None:
    """A shard's output n-grams (sorted unique hashes, the rank and id of the document of each),
    a part per hash range of the state's `partitions`, so that the state's job of range p reads
    part p alone (`common.io.write_parts`: one part's read costs the same at any number of them,
    where a Parquet run's slice of a range is a row group's read, its footer parsed whole)."""
    lows = [partition_hash_range(p, partitions)[0] for p in range(partitions)]
    bounds = [*np.searchsorted(hashes, np.array(lows, np.uint64)).tolist(), len(hashes)]
    write_parts(
        [
            pa.table(
                {
                    "hash": pa.array(hashes[begin:end], pa.uint64()),
                    "doc_rank": pa.array(ranks[begin:end], pa.int32()),
                    "doc_id": ids.slice(begin, end - begin),
                },
                schema=STATE_RUN_SCHEMA,
            )
            for begin, end in zip(bounds[:-1], bounds[1:])
        ],
        path,
    )


@names_the_file
def read_state_run(
    path: Path | str, partition: int, partitions: int
) -> Iterator[tuple[np.ndarray, np.ndarray, pa.Array]]:
    """Hash range `partition` of the state's `partitions` in a shard's output n-grams
    (`write_state_run`): (hashes, document ranks, document ids), one part, as `read_dedup_state`
    yields a state's rows (no part when the range has none)."""
    if (written := part_count(path)) != partitions:  # the config's mismatch, not a damaged file
        raise ConfigError(
            f"config key 'dedup.state_partitions': {path} holds the state's {written} ranges, "
            f"this run's state {partitions}: the shard's dedup_shard job must run again"
        )
    part = read_part(path, partition)
    if part.num_rows:
        yield (
            part.column("hash").to_numpy(),
            part.column("doc_rank").to_numpy(),
            part.column("doc_id"),
        )


def write_occurrences(parts: Sequence[np.ndarray], path: Path | str) -> None:
    """A shard's n-gram occurrences (structured arrays of hash, doc, start), a part per hash
    range, so that range p's job reads part p (`common.io.write_parts`)."""
    write_parts(
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
    part = read_part(path, partition)
    rows = np.empty(part.num_rows, dtype)
    for name in OCCURRENCE_SCHEMA.names:
        rows[name] = part.column(name).to_numpy()
    return rows


def read_occurrence_docs(path: Path | str) -> Iterator[np.ndarray]:
    """The documents of a shard's occurrences, a hash range at a time."""
    for part in read_parts(path, ["doc"]):
        yield part.column("doc").to_numpy()


def write_pairs(parts: Sequence[tuple[np.ndarray, np.ndarray]], schema: pa.Schema, path) -> None:
    """Per-document pairs of `schema` (`COUNT_SCHEMA`: one range's duplicate counts, a part per
    shard; `KEY_SCHEMA`: one shard's keys, a part per range)."""
    write_parts([pa.table(dict(zip(schema.names, part)), schema=schema) for part in parts], path)


def read_pairs(
    paths: Sequence[Path | str], group: int, schema: pa.Schema
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Part `group` of each file `write_pairs` wrote with `schema`, as its two columns."""
    pairs = []
    for path in paths:
        part = read_part(path, group)
        first, second = (part.column(name).to_numpy() for name in schema.names)
        pairs.append((first, second))
    return pairs


def write_seen(parts: Sequence[pd.DataFrame], path: Path | str) -> None:
    """One hash range's seen occurrences, a part per shard (in crawl order)."""
    write_parts(
        [stage_table(part, SEEN_SCHEMA) for part in parts],
        path,
    )


def read_seen(paths: Sequence[Path | str], shard: int) -> pd.DataFrame:
    """Shard `shard`'s seen occurrences of every hash range."""
    import pandas as pd

    return pd.concat([read_part(path, shard).to_pandas() for path in paths], ignore_index=True)


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
