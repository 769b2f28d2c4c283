"""De-duplicating a new crawl against an earlier corpus (`dedup.against`).

A corpus's state is every distinct n-gram it output — the n-grams whose words all stay, which
Algorithm 3.1 would have moved to G_out had a later crawl repeated them — with the
document that output it first (`tables.STATE_SCHEMA`, ``results/dedup_state.parquet``: 64-bit hashes,
sorted; 8 bytes a hash plus the document's dictionary index, which zstd packs). A run against it:

- counts the state as one more run in the n-gram merge (each n-gram once), so an n-gram the new
  crawl holds once and the old corpus output is in G₂₊;
- puts those n-grams in G_out before the first document, owned by the old corpus's documents,
  so the new corpus keeps only what the old one lacks and `duplicate_of` can name an old page;
- writes its own state as the old one merged with what it output, so month after month each
  crawl is de-duplicated against all before it.

With ``dedup.order: input`` this is the run over both crawls at once, restricted to the new one:
the old documents come first in crawl order and send exactly the state's n-grams that the new
crawl repeats. With ``dup-share`` the one run would interleave old and new documents by a share
computed over both, so no state of the old corpus alone can reproduce it. Exact de-duplication
does not read the state: a page identical to an old one loses its blocks here instead.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.dedup.store import truncate_hashes
from corpusbuilder.io import atomic_path
from corpusbuilder.ngrams.hashing import kind_mask, ngram_hashes, select_tokens
from corpusbuilder.tables import STATE_ROW_GROUP, STATE_SCHEMA, dedup_state_metadata, kept_tokens, read_dedup_state


def state_settings(params: DedupParams) -> dict:
    """What must agree between a state and the run that reads it."""
    return {"n": params.n, "kind": params.kind}


def check_state(path, params: DedupParams) -> dict:
    """The state's metadata, once its n-gram settings are this run's (else a ValueError naming the key)."""
    metadata = dedup_state_metadata(path)
    wanted = state_settings(params)
    if {key: metadata.get(key) for key in wanted} != wanted:
        raise ValueError(f"config key 'dedup.against': {path} holds n-grams of "
                         f"{ {key: metadata.get(key) for key in wanted} }, this run counts {wanted} "
                         "(dedup.ngram and dedup.kind must be the earlier corpus's)")
    return metadata


def preload_output(path, store, params: DedupParams, provenance, first_doc: int) -> list[str]:
    """Put the state's n-grams that this run's G₂₊ holds into G_out, each owned by the old
    document that output it, numbered from `first_doc` on (after this run's documents) in the
    old corpus's order, so that ties in `duplicate_of` fall as one run over both would break
    them; returns those documents' ids in that numbering."""
    check_state(path, params)
    handles, ranks, ids = [], [], []
    for hashes, doc_rank, doc_id in read_dedup_state(path):
        found, located = store.locate(truncate_hashes(hashes.copy(), params.hash_bits))
        # hashes that coincide once truncated: one is enough
        located, first = np.unique(located, return_index=True)
        rows = np.flatnonzero(found)[first]
        handles.append(located)
        ranks.append(doc_rank[rows])
        ids.append(doc_id.take(rows).to_numpy(zero_copy_only=False))
    # (a state file has a row group, if an empty one: its handles have the store's type)
    handles, first = np.unique(np.concatenate(handles), return_index=True)
    ranks = np.concatenate(ranks)[first]
    ids = np.concatenate(ids)[first]
    fresh = ~store.in_output(handles)
    used, number = np.unique(ranks[fresh], return_inverse=True)
    store.send(handles[fresh])
    provenance.record_sent(handles[fresh], (first_doc + number).astype(np.int32))
    names = np.empty(len(used), object)
    names[number] = ids[fresh]
    return names.tolist()


def kept_ngrams(tokens: dict, table: pd.DataFrame, params: DedupParams) -> tuple[np.ndarray, np.ndarray]:
    """The n-grams (64-bit hashes of `params.kind`) of one shard whose words all stay — in a good
    block (`table` is the shard's output), outside the parts sentence and span modes removed
    (`tables.kept_tokens`) — and the document (its index in the shard) of each."""
    keep = kind_mask(params.kind, tokens["is_punct"], tokens["is_stop"])
    words, word_offsets, token_of_word = select_tokens(np.asarray(tokens["token_hash"], np.uint64),
                                                       np.asarray(tokens["block_offsets"], np.int64), keep)
    hashes, starts = ngram_hashes(words, word_offsets, params.n)
    # the n-grams whose words all stay, as the pass sent them: no chunk rounding
    kept_words = np.concatenate(([0], np.cumsum(kept_tokens(tokens, table, whole_chunks=False)[token_of_word])))
    kept = kept_words[starts + params.n] - kept_words[starts] == params.n
    block = np.searchsorted(word_offsets, starts[kept], side="right") - 1
    return hashes[kept], np.asarray(tokens["block_doc"])[block]


def merged_state(old_path, new_hashes: np.ndarray, new_docs: np.ndarray,
                 new_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """The old state (if any) and this run's output n-grams (`new_docs` index `new_ids`, in
    crawl order) as one sorted state; an n-gram in both keeps its old owner, the first to
    output it. Returns (hashes, document ranks, document ids)."""
    hashes, ranks, ids = [], [], []
    if old_path is not None:
        for part, doc_rank, doc_id in read_dedup_state(old_path):
            hashes.append(part)
            ranks.append(doc_rank)
            ids.append(doc_id)
    after = max((int(r.max()) + 1 for r in ranks if len(r)), default=0)
    hashes.append(new_hashes)
    ranks.append((after + np.asarray(new_docs, np.int64)).astype(np.int32))
    ids.append(pa.array(np.asarray(new_ids, dtype=object)[np.asarray(new_docs, np.int64)], pa.string()))
    unique, first = np.unique(np.concatenate(hashes), return_index=True)
    return unique, np.concatenate(ranks)[first], pa.concat_arrays(ids).take(first)


def write_dedup_state(path, hashes: np.ndarray, doc_rank: np.ndarray, doc_id: pa.Array, params: DedupParams) -> None:
    """The state file (`tables.STATE_SCHEMA`, a row per n-gram: sorted unique `hashes` and who
    output each first), with the n-gram settings a later run checks."""
    metadata = {**state_settings(params), "ngrams": len(hashes)}
    schema = STATE_SCHEMA.with_metadata({"corpusbuilder": json.dumps(metadata)})
    with atomic_path(path) as tmp, pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
        for begin in range(0, max(len(hashes), 1), STATE_ROW_GROUP):
            part = slice(begin, begin + STATE_ROW_GROUP)
            writer.write_table(pa.table({
                "hash": pa.array(hashes[part], pa.uint64()),
                "count": pa.array(np.ones(len(hashes[part]), np.uint32)),
                "doc_rank": pa.array(doc_rank[part], pa.int32()),
                "doc_id": doc_id[part],
            }, schema=schema))
