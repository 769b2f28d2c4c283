"""Stage `exact_dedup`: remove documents whose clean text is an exact copy (thesis §3.6.1).

Thesis §3.6.1: "a MD5 checksum was computed for each document. For each group of documents
with the same checksum only one document was kept" — the checksum of the plain text without
boilerplate, not of the page's HTML (footnote 12), so a page mirrored under another URL or
re-served with different markup around the same text is caught. Here the kept one is the first
in crawl order: (shard rank in the configured input order, record index in the WARC).

Map, reduce by hash partition, split back by shard, so that no job reads more than one
partition of every shard or every partition of one shard (a linear plan: N + P + N jobs, 2·N·P
file edges for N shards and P = `ExactDedupParams.partitions`):

- map (`exact_hashes`, per shard): MD5 of each document the language stage kept, over its
  clean text (`survivors.survivors`: good blocks, less blocks dropped by block-level language
  filtering, joined by "\\n"), normalised per `ExactDedupParams`; written sorted by
  (md5, record_index) — `tables.HASHES_SCHEMA` — as one row group per hash partition: P ranges of
  equal width of the hash's first 32 bits (`md5_partitions`), so partitions in order are hashes in
  order, and equal hashes share one.
- reduce (`exact_partition`, per partition): the partition's rows of every shard, in crawl order;
  of each group of equal hashes the first in crawl order is kept and the others are `duplicate_of`
  it (`first_copy_decisions`, vectorised over one partition in memory).
- split (`exact_dedup`, per shard): the shard's rows of each partition's decisions, concatenated
  in partition order (`shard_decisions`). Every document the language stage kept gets one row in
  its shard's decisions file (`tables.DECISIONS_SCHEMA`), in md5 order; documents the language
  stage dropped do not appear (their reason is in the language table).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from corpusbuilder.common.arrays import factorize
from corpusbuilder.common.sizing import AUTO, GIB
from corpusbuilder.config import dataclass_values
from corpusbuilder.contracts.survivors import Survivors, id_rows
from corpusbuilder.contracts.tables import (
    HASHES_SCHEMA,
    PARTITION_DECISIONS_SCHEMA,
    read_hash_partition,
    read_hashed_documents,
    read_shard_decisions,
)
from corpusbuilder.contracts.text import texts_by_document

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)

# exact_dedup.partitions auto: a partition job holds ~60 B a document of its range, so one is
# plenty for 4 GiB of gzip'd WARCs; 16 (the old fixed count) spreads a large crawl, and more
# when a job would need more than resources.max_mem_mb (`partition_job_mb`) at the crawl's
# projected hashes: 0.01 B of exact_hashes file a byte of gzip'd WARC, the largest measured (the
# dev crawl's real pages 0.0021, 70,771 B of 33,952,289; the synthetic crawl of
# docs/dedup-scale.md's threshold, denser in pages, HASH_FILE_MEASURED there).
AUTO_BYTES_PER_PARTITION = 4 * GIB
AUTO_MAX_PARTITIONS = 16
MAX_PARTITIONS = 4096
HASH_FILE_BYTES_PER_INPUT_BYTE = 0.01


def partition_job_mb(hashes_mb: float, partitions: int) -> int:
    """A partition job's memory (rule exact_partition): its share of every shard's hashes file
    (``hashes_mb`` in all), 16 times their zstd bytes decoded and sorted, on 1,000 MB."""
    return 1000 + int(16 * hashes_mb) // partitions


@dataclass(frozen=True)
class ExactDedupParams:
    """What counts as the same text (config section `exact_dedup`), thesis §3.6.1, and how many
    hash partitions the decisions are made in (the same decisions for any number)."""

    normalise_whitespace: bool = True  # runs of whitespace (block breaks too) count as one space
    lowercase: bool = False  # the thesis compares the text as it is
    # `AUTO` follows the crawl's size, planned by the workflow (rules/common.smk); a caller of
    # `hash_partitions` gives the number
    partitions: int | str = AUTO

    @classmethod
    def from_config(cls, section: dict) -> ExactDedupParams:
        return cls(**dataclass_values(cls, section))


def normalise_text(text: str, params: ExactDedupParams) -> str:
    if params.normalise_whitespace:
        text = " ".join(text.split())
    if params.lowercase:
        text = text.lower()
    return text


def text_md5(text: str, params: ExactDedupParams) -> bytes:
    return hashlib.md5(
        normalise_text(text, params).encode("utf-8", errors="surrogatepass")
    ).digest()


# the block columns a document's hash and word count are computed from
HASHED_COLUMNS = ("text", "n_words")


def exact_hashes(kept: Survivors, shard_rank: int, params: ExactDedupParams) -> pa.Table:
    """MD5 of the clean text of each document the language stage kept (`survivors.survivors`
    before exact de-duplication), sorted by hash."""
    blocks = kept.blocks
    codes, doc_ids = factorize(blocks["doc_id"])
    texts = texts_by_document(codes, len(doc_ids), blocks["text"])
    n_words = np.bincount(codes, weights=np.asarray(blocks["n_words"]), minlength=len(doc_ids))
    n_words = np.rint(n_words).astype(np.int64)  # sums of integers, exact in a float64
    record_index = np.asarray(kept.documents["record_index"], np.int64)
    table = pa.table(
        {
            "md5": [text_md5(text, params) for text in texts],
            "shard_rank": pa.array(np.full(len(texts), shard_rank, np.int32)),
            "record_index": record_index[id_rows(doc_ids, kept.documents["doc_id"])],
            "doc_id": doc_ids,
            "n_words": n_words,
        },
        schema=HASHES_SCHEMA,
    )
    return table.sort_by([("md5", "ascending"), ("record_index", "ascending")])


def md5_bytes(md5: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The hashes of a binary(16) column as an (n, 16) uint8 array."""
    if isinstance(md5, pa.ChunkedArray):
        md5 = md5.combine_chunks()
    buffer = md5.buffers()[1]
    if buffer is None:  # an empty array may have no data buffer
        return np.zeros((0, 16), dtype=np.uint8)
    return np.frombuffer(
        buffer, dtype=np.uint8, count=16 * len(md5), offset=16 * md5.offset
    ).reshape(-1, 16)


def md5_partitions(md5: np.ndarray, partitions: int) -> np.ndarray:
    """The hash partition of each (n, 16) hash: `partitions` ranges of equal width of its first 32
    bits, so sorted hashes have non-decreasing partitions."""
    top = md5[:, :4].copy().view(">u4").ravel().astype(np.uint64)
    return (top * np.uint64(partitions)) >> np.uint64(32)


def hash_partitions(hashes: pa.Table, partitions: int) -> list[pa.Table]:
    """A hashes table sorted by md5 cut into its `partitions` hash partitions, in order, empty ones
    too (the parts of its exact_hashes file)."""
    ids = md5_partitions(md5_bytes(hashes["md5"]), partitions)
    bounds = np.searchsorted(ids, np.arange(partitions + 1, dtype=np.uint64))
    return [hashes.slice(lo, hi - lo) for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist())]


_HEX_DIGITS = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
# rows per chunk of `md5_hex`: a string array's offsets are 32-bit
_HEX_CHUNK_ROWS = 1 << 24


def md5_hex(md5: np.ndarray) -> pa.ChunkedArray:
    """(n, 16) hashes as 32-character lower-case hex strings."""
    chunks = []
    for start in range(0, max(len(md5), 1), _HEX_CHUNK_ROWS):
        part = md5[start : start + _HEX_CHUNK_ROWS]
        digits = np.empty((len(part), 32), dtype=np.uint8)
        digits[:, 0::2] = _HEX_DIGITS[part >> 4]
        digits[:, 1::2] = _HEX_DIGITS[part & 15]
        offsets = np.arange(0, 32 * len(part) + 1, 32, dtype=np.int32)
        chunks.append(
            pa.StringArray.from_buffers(len(part), pa.py_buffer(offsets), pa.py_buffer(digits))
        )
    return pa.chunked_array(chunks, pa.string())


def first_copy_decisions(hashes: pa.Table) -> pa.Table:
    """The decisions on the hashes of one partition of every shard (HASHES_SCHEMA rows, any order):
    of each group of equal hashes the first in crawl order, (shard_rank, record_index), is kept,
    the others are `duplicate_of` it. PARTITION_DECISIONS_SCHEMA rows, sorted by (shard_rank,
    md5, record_index)."""
    import pyarrow.compute as pc

    md5 = md5_bytes(hashes["md5"])
    high = md5[:, :8].copy().view(">u8").ravel()
    low = md5[:, 8:].copy().view(">u8").ravel()
    rank = hashes["shard_rank"].to_numpy()
    record = hashes["record_index"].to_numpy()
    crawl_order = np.lexsort((record, rank, low, high))
    starts = np.ones(len(crawl_order), dtype=bool)  # the first of a group of equal hashes
    starts[1:] = (np.diff(high[crawl_order]) != 0) | (np.diff(low[crawl_order]) != 0)
    first = crawl_order[np.maximum.accumulate(np.where(starts, np.arange(len(starts)), 0))]
    kept = np.empty_like(starts)
    kept[crawl_order] = starts
    first_of = np.empty_like(crawl_order)
    first_of[crawl_order] = first
    table = pa.table(
        {
            "shard_rank": hashes["shard_rank"],
            "doc_id": hashes["doc_id"],
            "md5": md5_hex(md5),
            "kept": kept,
            "duplicate_of": pc.if_else(
                kept, pa.scalar(None, pa.string()), hashes["doc_id"].take(first_of)
            ),
            "n_words": hashes["n_words"],
        },
        schema=PARTITION_DECISIONS_SCHEMA,
    )
    return table.take(np.lexsort((record, low, high, rank)))


def decide_partition(hash_paths: Sequence[Path | str], partition: int, partitions: int) -> pa.Table:
    """`first_copy_decisions` over hash partition `partition` of every shard's exact_hashes file,
    given in crawl order (each file must hold the shard of its rank)."""
    import pyarrow.compute as pc

    parts = []
    for rank, path in enumerate(hash_paths):
        part = read_hash_partition(path, partition, partitions)
        if pc.any(pc.not_equal(part["shard_rank"], rank)).as_py():
            ranks = sorted(set(part["shard_rank"].to_pylist()))
            raise ValueError(f"{path}: shard_rank {ranks}, but it is shard {rank} in crawl order")
        parts.append(part)
    return first_copy_decisions(pa.concat_tables(parts))


def shard_decisions(
    partition_paths: Sequence[Path | str], hashes_path: Path | str, shard_rank: int
) -> pa.Table:
    """The decisions file of the shard at `shard_rank`: its rows of every partition's decisions, in
    partition order, so in md5 order; one for each document of its exact_hashes file."""
    table = pa.concat_tables([read_shard_decisions(path, shard_rank) for path in partition_paths])
    hashed = read_hashed_documents(hashes_path)
    if table.num_rows != len(hashed) or set(table["doc_id"].to_pylist()) != set(hashed):
        raise ValueError(
            f"{hashes_path}: {len(hashed)} documents hashed, but the partitions decide "
            f"{table.num_rows} of shard {shard_rank}; are they of another crawl order?"
        )
    return table


def decision_counts(decisions: pa.Table) -> dict[str, int]:
    """Documents, kept and duplicates of a decisions table."""
    import pyarrow.compute as pc

    kept = pc.sum(decisions["kept"]).as_py() or 0
    return {"documents": decisions.num_rows, "kept": kept, "duplicates": decisions.num_rows - kept}


def earlier_shards_digests(sources: Sequence[str]) -> list[str]:
    """For each shard in crawl order, a digest of the sources of the shards before it. A shard's
    decisions depend on those shards, yet its exact_dedup job does not wait for them (so adding a
    shard at the end decides no old shard again); this digest, a param of its exact_hashes job,
    hashes it again, and so decides it again, when an earlier shard is
    removed, replaced or moved."""
    digest = hashlib.sha1()
    digests = []
    for source in sources:
        digests.append(digest.hexdigest())
        digest.update(source.encode("utf-8", errors="surrogatepass") + b"\n")
    return digests
