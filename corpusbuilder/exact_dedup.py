"""Stage `exact_dedup`: remove documents whose clean text is an exact copy (thesis §3.6.1).

Thesis §3.6.1: "a MD5 checksum was computed for each document. For each group of documents
with the same checksum only one document was kept" — the checksum of the plain text without
boilerplate, not of the page's HTML (footnote 12), so a page mirrored under another URL or
re-served with different markup around the same text is caught. Here the kept one is the first
in crawl order: (shard rank in the configured input order, record index in the WARC).

Two steps, so that shards are hashed in parallel and only the merge is global:

- map (`exact_hashes`, per shard): MD5 of each document the language stage kept, over its
  clean text (`tables.survivors`: good blocks, less blocks dropped by block-level language
  filtering, joined by "\\n"), normalised per `ExactDedupParams`; written sorted by
  (md5, record_index) — `tables.HASHES_SCHEMA`.
- reduce (`exact_dedup`): a k-way merge (`heapq.merge`) of the sorted per-shard files, each read
  in record batches, so memory holds one batch per shard, never a shard. Of each run of equal
  hashes the first is kept and the others are `duplicate_of` it. Every document the language
  stage kept gets one row in its shard's decisions file (`tables.DECISIONS_SCHEMA`), in md5 order;
  documents the language stage dropped do not appear (their reason is in the language table).
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import itertools
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from corpusbuilder.config import dataclass_values
from corpusbuilder.io import ParquetBatchWriter
from corpusbuilder.language import document_texts
from corpusbuilder.tables import DECISIONS_SCHEMA, HASHES_SCHEMA, Survivors

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExactDedupParams:
    """What counts as the same text (config section `exact_dedup`), thesis §3.6.1."""

    normalise_whitespace: bool = True  # runs of whitespace (block breaks too) count as one space
    lowercase: bool = False  # the thesis compares the text as it is

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
    return hashlib.md5(normalise_text(text, params).encode("utf-8", errors="surrogatepass")).digest()


def record_index_of(doc_id: str) -> int:
    """The record index in a document id "{shard}:{record index}"."""
    return int(doc_id.rsplit(":", 1)[1])


# the block columns a document's hash and word count are computed from
HASHED_COLUMNS = ("text", "n_words")


def exact_hashes(kept: Survivors, shard_rank: int, params: ExactDedupParams) -> pa.Table:
    """MD5 of the clean text of each document the language stage kept (`tables.survivors`
    before exact de-duplication), sorted by hash."""
    texts = document_texts(kept.blocks)
    n_words = kept.blocks.groupby("doc_id", sort=False)["n_words"].sum()
    table = pa.table(
        {
            "md5": [text_md5(text, params) for text in texts],
            "shard_rank": [shard_rank] * len(texts),
            "record_index": [record_index_of(doc_id) for doc_id in texts.index],
            "doc_id": texts.index.tolist(),
            "n_words": n_words.reindex(texts.index).tolist(),
        },
        schema=HASHES_SCHEMA,
    )
    return table.sort_by([("md5", "ascending"), ("record_index", "ascending")])


def read_hashes(path: Path | str, shard_rank: int, batch_size: int) -> Iterator[tuple[bytes, int, int, str, int]]:
    """The rows of one sorted hashes file as (md5, shard_rank, record_index, doc_id, n_words),
    read `batch_size` rows at a time; the file must be the shard at `shard_rank` in crawl order."""
    with pq.ParquetFile(path) as hashes:
        for batch in hashes.iter_batches(batch_size=batch_size, columns=HASHES_SCHEMA.names):
            ranks = set(batch.column("shard_rank").unique().to_pylist())
            if ranks != {shard_rank}:
                raise ValueError(f"{path}: shard_rank {sorted(ranks)}, but it is shard {shard_rank} in crawl order")
            yield from zip(*(batch.column(name).to_pylist() for name in HASHES_SCHEMA.names))


def exact_decisions(merged: Iterator[tuple[bytes, int, int, str, int]]) -> Iterator[tuple[int, dict]]:
    """(shard_rank, decision row) for every row of a stream sorted by (md5, shard_rank,
    record_index): the first of each run of equal hashes is kept, the rest are its duplicates."""
    for md5, group in itertools.groupby(merged, key=lambda row: row[0]):
        _, first_rank, _, first_id, first_words = next(group)
        hex_md5 = md5.hex()
        yield first_rank, {"doc_id": first_id, "md5": hex_md5, "kept": True, "duplicate_of": None, "n_words": first_words}
        for _, rank, _, doc_id, n_words in group:
            yield rank, {"doc_id": doc_id, "md5": hex_md5, "kept": False, "duplicate_of": first_id, "n_words": n_words}


def exact_dedup(
    hash_paths: Sequence[Path | str],
    decision_paths: Sequence[Path | str | None],
    shard_names: Sequence[str] | None = None,
    batch_size: int = 65536,
    progress_every: int = 100_000,
) -> dict[str, int]:
    """Merge the per-shard hash files (in crawl order) into per-shard decision files; a shard whose
    decision path is None only takes part (its copies come first), its decisions are not written.

    Returns counts: documents, kept, duplicates; logs the duplicates found in each shard.
    """
    if len(hash_paths) != len(decision_paths):
        raise ValueError("exact_dedup: one decisions file per hashes file")
    shards = [read_hashes(path, rank, batch_size) for rank, path in enumerate(hash_paths)]
    merged = heapq.merge(*shards, key=lambda row: row[:3])
    counts = {"documents": 0, "kept": 0, "duplicates": 0}
    per_shard = [[0, 0] for _ in hash_paths]  # documents, duplicates
    with contextlib.ExitStack() as stack:
        writers = [
            None if path is None
            else stack.enter_context(ParquetBatchWriter(path, DECISIONS_SCHEMA, batch_rows=batch_size))
            for path in decision_paths
        ]
        for rank, row in exact_decisions(merged):
            if writers[rank] is not None:
                writers[rank].append(row)
            counts["documents"] += 1
            counts["kept" if row["kept"] else "duplicates"] += 1
            per_shard[rank][0] += 1
            per_shard[rank][1] += not row["kept"]
            if counts["documents"] % progress_every == 0:
                log.info("exact dedup: %d documents merged, %d duplicates", counts["documents"], counts["duplicates"])
    for name, (documents, duplicates) in zip(shard_names or map(str, hash_paths), per_shard):
        log.info("exact dedup: %s: %d documents, %d exact duplicates", name, documents, duplicates)
    log.info("exact dedup: %d documents, %d kept, %d exact duplicates", counts["documents"], counts["kept"], counts["duplicates"])
    return counts
