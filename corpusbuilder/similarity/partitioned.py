"""The min-hash pairing as many jobs, none of which holds every signature.

`minhash.similar_pairs` pairs the corpus in one process: every document's k min-hashes in
memory (8·k B a document). Here the same pairs come from three kinds of job
(docs/dedup-scale.md, "The other global step"):

1. per band job (`similarity.band_jobs`): the candidate pairs of its groups — its LSH bands, or
   its min-hash functions under collision counting — from those columns of every shard's
   signatures alone (one Parquet column per min-hash), a group at a time, in
   `similarity.key_passes` passes each holding the documents of one range of bucket keys;
   written a row group per pair partition;
2. per pair partition (`similarity.partitions`, pairs by their first document): its candidates
   of every band job, scored against the full signatures of the documents in them, read shard by
   shard, so the job holds those rows only;
3. one merge: the partitions' pairs, sorted, named and clustered as `named_pairs` does it.

A pair is a candidate when it shares a bucket in some group; each group is in exactly one band
job, each bucket in one pass, and each pair in exactly one partition, so the pairs and their
estimates are those of the one job, whatever the three counts (tests/test_similarity.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from corpusbuilder.common.io import atomic_path, write_table
from corpusbuilder.similarity.minhash import (
    EMPTY,
    MinHashParams,
    bucket_pair_blocks,
    estimated_resemblance,
    group_columns,
    group_count,
    group_key,
    named_pairs,
)

if TYPE_CHECKING:
    import pandas as pd

# pairs scored at once: 2 × 65,536 × k × 8 B of signature rows (100 MB at k = 100)
SCORE_CHUNK = 1 << 16


# --------------------------------------------------------------------------- signatures


def _column(i: int) -> str:
    return f"h{i}"


def write_signatures(ids: Sequence[str], signatures: np.ndarray, path: Path | str) -> None:
    """A shard's documents' ids and min-hash signatures, one uint64 column per min-hash, so that
    a band job reads only the columns of its bands."""
    columns = {"id": pa.array(list(ids), pa.string())}
    for i, column in enumerate(signatures.T):
        columns[_column(i)] = pa.array(column, pa.uint64())
    write_table(pa.table(columns), path)


def shard_documents(paths: Sequence[Path | str]) -> np.ndarray:
    """Each shard's document count, from the Parquet footers alone."""
    return np.array([pq.ParquetFile(path).metadata.num_rows for path in paths], dtype=np.int64)


def read_signature_columns(paths: Sequence[Path | str], columns: Sequence[int]) -> np.ndarray:
    """(documents × len(columns)) of those min-hashes of every shard, in corpus order."""
    out = np.empty((int(shard_documents(paths).sum()), len(columns)), dtype=np.uint64)
    row = 0
    for path in paths:
        table = pq.read_table(path, columns=[_column(i) for i in columns])
        for j, name in enumerate(table.column_names):
            out[row : row + table.num_rows, j] = table.column(name).to_numpy()
        row += table.num_rows
    return out


def read_signatures(paths: Sequence[Path | str], k: int) -> tuple[list[str], np.ndarray]:
    """Every shard's ids and full signatures, in the order given (the one-job pairing)."""
    ids = [i for path in paths for i in pq.read_table(path, columns=["id"]).column(0).to_pylist()]
    return ids, read_signature_columns(paths, range(k))


def _read_rows(paths: Sequence[Path | str], rows: np.ndarray, columns: list[str]) -> list[pa.Table]:
    """Those rows (sorted corpus indices) of each shard's table, a shard read at a time."""
    starts = np.concatenate([[0], np.cumsum(shard_documents(paths))])
    parts = []
    for path, start, end in zip(paths, starts[:-1], starts[1:]):
        wanted = rows[(rows >= start) & (rows < end)] - start
        if len(wanted):
            parts.append(pq.read_table(path, columns=columns).take(pa.array(wanted)))
    return parts


def read_signature_rows(paths: Sequence[Path | str], k: int, rows: np.ndarray) -> np.ndarray:
    """(len(rows) × k) full signatures of those documents (sorted corpus indices)."""
    out = np.empty((len(rows), k), dtype=np.uint64)
    row = 0
    for part in _read_rows(paths, rows, [_column(i) for i in range(k)]):
        for j in range(k):
            out[row : row + part.num_rows, j] = part.column(j).to_numpy()
        row += part.num_rows
    return out


def read_ids(paths: Sequence[Path | str], rows: np.ndarray) -> np.ndarray:
    """The ids of those documents (sorted corpus indices)."""
    ids = [i for part in _read_rows(paths, rows, ["id"]) for i in part.column(0).to_pylist()]
    return np.array(ids, dtype=object)


# --------------------------------------------------------------------------- band jobs


def band_job_count(band_jobs: int, params: MinHashParams) -> int:
    """`similarity.band_jobs`, at most one job a group."""
    return min(band_jobs, group_count(params))


def band_job_groups(job: int, jobs: int, params: MinHashParams) -> np.ndarray:
    """The groups band job ``job`` of ``jobs`` buckets by: a contiguous run of them."""
    return np.array_split(np.arange(group_count(params)), jobs)[job]


def _keyed_passes(
    signature_paths: Sequence[Path | str], group: int, passes: int, params: MinHashParams
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """One group's bucket keys and documents, a pass at a time: pass q holds the documents whose
    key is q modulo ``passes`` (so every bucket whole), read a shard at a time — the group's
    columns and the first (an empty document's signature is EMPTY throughout)."""
    columns = sorted({0, *group_columns(group, params)})
    at = [columns.index(c) for c in group_columns(group, params)]
    starts = np.concatenate([[0], np.cumsum(shard_documents(signature_paths))])
    for q in range(passes):
        keys, docs = [np.empty(0, np.uint64)], [np.empty(0, np.int64)]
        for path, start in zip(signature_paths, starts):
            shard = read_signature_columns([path], columns)
            shard_docs = np.arange(start, start + len(shard), dtype=np.int64)
            key = group_key(shard[:, at], shard_docs, shard[:, 0] == EMPTY, params)
            mine = key % np.uint64(passes) == q
            keys.append(key[mine])
            docs.append(shard_docs[mine])
        yield np.concatenate(keys), np.concatenate(docs)


def _candidates(partition: np.ndarray, pairs: np.ndarray) -> pa.Table:
    """A band job's row group: pairs of one partition (the column its statistics select by)."""
    return pa.table(
        {
            "partition": pa.array(partition, pa.int32()),
            "a": pa.array(pairs[:, 0], pa.int64()),
            "b": pa.array(pairs[:, 1], pa.int64()),
        }
    )


def write_band_candidates(
    signature_paths: Sequence[Path | str],
    job: int,
    jobs: int,
    partitions: int,
    params: MinHashParams,
    path: Path | str,
    passes: int = 1,
) -> int:
    """Band job ``job``: the candidate pairs (a < b) of its groups, each block's distinct pairs
    written a row group per partition (a % partitions), so a partition job reads its row groups
    alone. Each group is bucketed in ``passes`` passes over the signatures, each holding the
    documents of one range of keys. Returns the number written (a pair found in two of its
    groups may count twice)."""
    keyed = (
        keyed_pass
        for group in band_job_groups(job, jobs, params)
        for keyed_pass in _keyed_passes(signature_paths, int(group), passes, params)
    )
    empty_file = _candidates(np.empty(0, np.int64), np.empty((0, 2), np.int64))
    written = 0
    with (
        atomic_path(path) as tmp,
        pq.ParquetWriter(tmp, empty_file.schema, compression="zstd") as writer,
    ):
        writer.write_table(empty_file)  # a file, also when there are no candidates
        for block in bucket_pair_blocks(keyed, params.max_bucket):
            block = np.unique(block, axis=0)
            part = block[:, 0] % partitions
            order = np.argsort(part, kind="stable")
            block, part = block[order], part[order]
            bounds = np.flatnonzero(np.r_[True, part[1:] != part[:-1], True])
            for start, end in zip(bounds[:-1], bounds[1:]):
                writer.write_table(_candidates(part[start:end], block[start:end]))
            written += len(block)
    return written


# --------------------------------------------------------------------------- partition jobs


def read_partition_candidates(paths: Sequence[Path | str], partition: int) -> np.ndarray:
    """(m × 2) distinct candidate pairs of one partition, from every band job's file (only the
    row groups of that partition: their statistics say which)."""
    found = [np.empty((0, 2), dtype=np.int64)]
    for path in paths:
        table = pq.read_table(path, columns=["a", "b"], filters=[("partition", "==", partition)])
        found.append(np.column_stack([table.column("a").to_numpy(), table.column("b").to_numpy()]))
    return np.unique(np.concatenate(found), axis=0)


def score_partition(
    candidate_paths: Sequence[Path | str],
    signature_paths: Sequence[Path | str],
    partition: int,
    threshold: float,
    params: MinHashParams,
) -> pd.DataFrame:
    """One partition's pairs (a, b, resemblance) whose estimate exceeds ``threshold``, sorted:
    its candidates scored against the signatures of the documents in them."""
    import pandas as pd

    pairs = read_partition_candidates(candidate_paths, partition)
    rows = np.unique(pairs)
    signatures = read_signature_rows(signature_paths, params.k, rows)
    local = np.searchsorted(rows, pairs)
    estimate = np.empty(len(pairs))
    for start in range(0, len(pairs), SCORE_CHUNK):
        chunk = local[start : start + SCORE_CHUNK]
        estimate[start : start + SCORE_CHUNK] = estimated_resemblance(
            signatures[chunk[:, 0]], signatures[chunk[:, 1]]
        )
    keep = estimate > threshold
    return pd.DataFrame(
        {"a": pairs[keep, 0], "b": pairs[keep, 1], "resemblance": estimate[keep].astype(np.float32)}
    )


def write_partition_pairs(pairs: pd.DataFrame, path: Path | str) -> None:
    write_table(pa.Table.from_pandas(pairs, preserve_index=False), path)


# --------------------------------------------------------------------------- the merge


def merge_partition_pairs(
    pair_paths: Sequence[Path | str], signature_paths: Sequence[Path | str]
) -> pd.DataFrame:
    """Every partition's pairs → id_a, id_b, resemblance, cluster, sorted by document order."""
    import pandas as pd

    pairs = pd.concat([pq.read_table(path).to_pandas() for path in pair_paths], ignore_index=True)
    pairs = pairs.sort_values(["a", "b"], ignore_index=True)
    return named_pairs(pairs, lambda rows: read_ids(signature_paths, rows))


# --------------------------------------------------------------------------- what each job holds

BASE_MB = 200  # the interpreter with numpy, pandas and pyarrow


def job_memory_mb(
    job: str,
    shard_sizes: Sequence[int],
    params: MinHashParams,
    passes: int,
    partitions: int,
    candidates: int = 0,
    pairs: int = 0,
) -> float:
    """What a job of the pairing holds, in MB (docs/dedup-scale.md's table), from each shard's
    documents, the candidate pairs of every band job (``candidates``, repeats included) and the
    similar pairs (``pairs``).

    - ``candidates``: per pass over a group, the key and index of the documents in its range of
      keys and their sort (64 B each, a ``passes``-th of the documents); one shard's columns of
      the group, as read and as keys (16 B × (r + 1) + 48 B a document); and a block of
      candidate pairs (128 B × max_bucket²);
    - ``score``: its partition's candidates (90 B a pair), the full signatures of the documents
      in them (8·k B each, at most every document), one shard's table as it is read, and a chunk
      of pairs scored (17 × 65,536 × k B);
    - ``merge``: the pairs (200 B each, with their ids) and one shard's ids.
    """
    documents, largest = int(sum(shard_sizes)), max(shard_sizes, default=0)
    k = params.k
    need: float
    if job == "candidates":
        rows = len(group_columns(0, params))
        need = (
            64 * documents / passes + largest * (16 * (rows + 1) + 48) + 128 * params.max_bucket**2
        )
    elif job == "score":
        mine = candidates / partitions
        need = (
            90 * mine
            + 8 * k * min(documents, 2 * mine)
            + 2 * largest * (8 * k + 64)
            + 17 * SCORE_CHUNK * k
        )
    else:
        need = 200 * pairs + 64 * largest
    return BASE_MB + need / 2**20


def job_memory_mb_by_files(
    job: str,
    signature_paths: Sequence[Path | str],
    params: MinHashParams,
    passes: int,
    partitions: int,
    candidate_paths: Sequence[Path | str] = (),
    pair_paths: Sequence[Path | str] = (),
) -> float:
    """`job_memory_mb` from the footers of those of the files that exist (before they do, the
    workflow plans with what there is and asks again when the job is ready to run)."""

    def rows(paths: Sequence[Path | str]) -> list[int]:
        return shard_documents([path for path in paths if Path(path).exists()]).tolist()

    return job_memory_mb(
        job,
        rows(signature_paths),
        params,
        passes,
        partitions,
        candidates=sum(rows(candidate_paths)),
        pairs=sum(rows(pair_paths)),
    )
