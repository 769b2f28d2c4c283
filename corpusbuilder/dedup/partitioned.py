"""Block de-duplication as many jobs (`dedup.mode: partitioned`, issue 38).

Algorithm 3.1 judges a unit against the n-grams of what was already *kept*, in one global
order, so it is one job. This mode changes one word of it: an occurrence of a duplicate n-gram
is *already seen* when the same n-gram occurs earlier in the global order — in an earlier
document, kept or not, or earlier in the same document (as onion counts a page that repeats
itself). An n-gram's first occurrence is its owner, every later one is covered. Whether an
occurrence is covered then no longer depends on any verdict, so it is decided per hash range,
and each document is judged alone, per shard:

1. `shard_occurrences` (a job per shard): every n-gram of the shard, (hash, document, first
   word), sorted by hash and cut into the hash ranges of `dedup.partitions`;
2. `duplicate_counts` (a job per range): of that range of every shard, the occurrences in G₂₊,
   counted per document that has any — the dup-share order's numerator, a row group per shard;
3. `shard_keys` (a job per shard): each document's share of duplicate n-grams (§3.5), its counts
   of every range summed, handed back to each range for the documents it met there. Documents
   are processed by increasing share, ties in crawl order: (share, index in crawl order) is the
   global processing order, so no job ranks, or holds a number for, every document of the corpus;
4. `seen_occurrences` (a job per range): the same occurrences in that order; each one after its
   n-gram's first is seen, and names the document of the first (`duplicate_of`). An n-gram of
   the `dedup.against` state is seen everywhere, owned by the earlier corpus;
5. `judge_shard` (a job per shard): the shard's tokens, blocks and its seen occurrences of every
   range → the same per-block table the sequential job writes (Algorithm 3.1's unit tests,
   sentence and span levels and the context-sensitive pass are `document.dedup_document`'s).

Where it decides differently from Algorithm 3.1: when every earlier copy of an n-gram lies in a
removed unit, Algorithm 3.1 has not output it, so a later unit holding it counts it as fresh; here
it counts as seen. At the block level a unit can only go where Algorithm 3.1 keeps it, never the
reverse, and only when an earlier holder of its n-grams was removed for other n-grams; the span
level's run rules can turn a few either way (docs/dedup-scale.md measures how often). The
processing order is the one Algorithm 3.1 starts from (§3.5); it does not depend on the verdicts
either.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from corpusbuilder.common.io import atomic_path, write_table
from corpusbuilder.contracts.ngramfiles import (
    partition_hash_range,
    read_state_rows,
    write_state_run,
)
from corpusbuilder.contracts.tables import DEDUP_SCHEMA, stage_table
from corpusbuilder.contracts.tokenfile import TokenStream
from corpusbuilder.dedup.context import Reclassify, remembered
from corpusbuilder.dedup.corpus import (
    BLOCK_COLUMNS,
    BlockVerdicts,
    DedupStats,
    ShardNgrams,
    count_verdicts,
    shard_ngrams,
    shard_output,
)
from corpusbuilder.dedup.document import dedup_shard_document
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.dedup.state import kept_ngrams
from corpusbuilder.dedup.store import unique_first
from corpusbuilder.ngrams.hashing import shard_ngram_hashes

if TYPE_CHECKING:
    import pandas as pd

OCCURRENCE = np.dtype([("hash", "<u8"), ("doc", "<i4"), ("start", "<i4")])


def shard_occurrences(
    tokens: TokenStream, params: DedupParams, partitions: int
) -> list[np.ndarray]:
    """Every n-gram of a shard as (hash, document in the shard, first word in shard-wide word
    positions), sorted by hash and cut into `partitions` hash ranges (`partition_hash_range`)."""
    ngrams = shard_ngram_hashes(tokens, params.kind, params.n)
    hashes, starts = ngrams.hashes, ngrams.starts
    block = np.searchsorted(ngrams.word_offsets, starts, side="right") - 1
    rows = np.empty(len(hashes), OCCURRENCE)
    rows["hash"], rows["start"] = hashes, starts
    rows["doc"] = np.asarray(tokens.block_doc, np.int32)[block]
    rows = rows[np.argsort(rows["hash"], kind="stable")]
    return [
        rows[range_slice(rows["hash"], partition_hash_range(p, partitions))]
        for p in range(partitions)
    ]


def in_duplicates(rows: np.ndarray, duplicates: np.ndarray) -> np.ndarray:
    """The occurrences whose n-gram is in G₂₊'s part (sorted unique hashes of the same range)."""
    if len(duplicates) == 0:
        return rows[:0]
    at = np.minimum(np.searchsorted(duplicates, rows["hash"]), len(duplicates) - 1)
    return rows[duplicates[at] == rows["hash"]]


def duplicate_counts(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Of one shard's duplicate occurrences in a hash range (`in_duplicates`), the documents that
    hold any (in the shard, ascending) and how many each holds."""
    doc, count = np.unique(rows["doc"], return_counts=True)
    return doc.astype(np.int32), count.astype(np.int32)


def document_ngrams(docs: Iterable[np.ndarray], documents: int) -> np.ndarray:
    """Each document's n-grams (the share's denominator): the documents of a shard's occurrences,
    every range's (`docs`), counted; `documents`: the shard's document count."""
    total = np.zeros(documents, np.int64)
    for part in docs:
        total += np.bincount(part, minlength=documents)
    return total


def shard_keys(
    ngrams: np.ndarray, counts: list[tuple[np.ndarray, np.ndarray]], order: str
) -> list[np.ndarray]:
    """A shard's processing-order keys, per hash range for the documents of that range's
    `duplicate_counts` (`counts`, every range's, in range order): each document's share of its
    `ngrams` in G₂₊ (dup-share, §3.5) or 0 (crawl order). Ties fall to crawl order where
    `seen_occurrences` sorts."""
    duplicates = np.zeros(len(ngrams), np.int64)
    for doc, count in counts:
        duplicates[doc] += count
    share = np.zeros(len(ngrams))
    if order == "dup-share":
        np.divide(duplicates, ngrams, out=share, where=ngrams > 0)
    return [share[doc] for doc, _ in counts]


def seen_occurrences(
    parts: list[np.ndarray],
    keys: list[tuple[np.ndarray, np.ndarray]],
    shard_documents: list[int],
    earlier: tuple[np.ndarray, np.ndarray] | None = None,
) -> list[pd.DataFrame]:
    """Per shard, the occurrences of this range that are already seen: (doc, start, owner), the
    owner the corpus-wide index (crawl order) of the document holding the n-gram's first
    occurrence. `parts`: each shard's occurrences in G₂₊ of this range (`in_duplicates`); `keys`:
    each shard's documents in this range (ascending) and their keys (`shard_keys`). `earlier`
    (an earlier corpus's state in this range: sorted hashes, and the index each owner gets,
    after this corpus's documents): its n-grams are seen everywhere."""
    import pandas as pd

    base = np.concatenate(([0], np.cumsum(shard_documents))).astype(np.int64)
    shard = np.repeat(np.arange(len(parts), dtype=np.int32), [len(r) for r in parts])
    rows = np.concatenate(parts) if parts else np.empty(0, OCCURRENCE)
    key = np.concatenate(
        [share[np.searchsorted(doc, part["doc"])] for part, (doc, share) in zip(parts, keys)]
        or [np.empty(0)]
    )
    doc = rows["doc"].astype(np.int64) + base[shard]
    hashes, starts = rows["hash"], rows["start"]
    # (key, corpus-wide index) is each document's place in the processing order
    order = np.lexsort((starts, doc, key, hashes))
    del rows, key
    hashes, doc, shard, starts = hashes[order], doc[order], shard[order], starts[order]
    del order
    first = np.ones(len(hashes), bool)
    first[1:] = hashes[1:] != hashes[:-1]
    owner = doc[np.maximum.accumulate(np.where(first, np.arange(len(first)), 0))]
    seen = ~first
    if earlier is not None and len(earlier[0]):
        at = np.minimum(np.searchsorted(earlier[0], hashes), len(earlier[0]) - 1)
        old = earlier[0][at] == hashes
        seen |= old
        owner = np.where(old, earlier[1][at], owner)
    out = []
    for s in range(len(parts)):
        mine = seen & (shard == s)
        out.append(
            pd.DataFrame(
                {
                    "doc": (doc[mine] - base[s]).astype(np.int32),
                    "start": starts[mine].astype(np.int32),
                    "owner": owner[mine].astype(np.int64),
                }
            )
        )
    return out


def name_owners(
    seen: list[pd.DataFrame],
    shard_documents: list[int],
    doc_ids_of: Callable[[int], np.ndarray],
    earlier_ids: dict[int, str] | None = None,
) -> list[pd.DataFrame]:
    """`seen_occurrences`' rows with each owner's document id (`owner_id`): ids are read only of
    the shards that own an n-gram here (`doc_ids_of(shard)`), an earlier corpus's from
    `earlier_ids` (owner index → id)."""
    base = np.concatenate(([0], np.cumsum(shard_documents))).astype(np.int64)
    owners = np.unique(np.concatenate([part["owner"].to_numpy() for part in seen] or [[]]))
    names = dict(earlier_ids or {})
    mine = owners[owners < base[-1]].astype(np.int64)
    shard_of = np.searchsorted(base, mine, side="right") - 1
    for s in np.unique(shard_of):
        ids = np.asarray(doc_ids_of(int(s))).astype(str)
        for owner in mine[shard_of == s].tolist():
            names[owner] = ids[owner - base[s]]
    return [part.assign(owner_id=part["owner"].map(names).astype(object)) for part in seen]


def judge_shard(
    tokens: TokenStream,
    blocks: pd.DataFrame | None,
    seen: pd.DataFrame,
    params: DedupParams,
    reclassify: Reclassify,
) -> tuple[pd.DataFrame, DedupStats]:
    """One shard's verdicts: each document judged alone by `document.dedup_document`, its seen
    occurrences (`seen`: start, owner and owner_id, every range's rows of this shard) standing
    for G_out. Returns the table `corpus.shard_output` writes, and its counts."""
    import pandas as pd

    seen = seen.sort_values("start", kind="stable")
    reclassify = remembered(reclassify)
    owners = seen["owner"].to_numpy(np.int64)
    owner_ids = dict(zip(owners.tolist(), seen["owner_id"].tolist()))
    shard = shard_ngrams(
        tokens, params, None, blocks_for(blocks, params), seen["start"].to_numpy(np.int64)
    )
    stats = DedupStats(documents=len(shard.doc_ids), tokens=len(tokens.token_hash))
    verdicts = BlockVerdicts.empty(len(shard.block_doc))
    owner_index: dict[int, int] = {}
    for d in np.flatnonzero(shard.doc_duplicates):
        stats.documents_processed += 1
        judge_document(shard, int(d), owners, params, reclassify, verdicts, owner_index)
    local = np.empty(len(owner_index), object)
    for owner, i in owner_index.items():
        local[i] = owner_ids[owner]
    table = shard_output(
        blocks if blocks is not None else pd.DataFrame(columns=BLOCK_COLUMNS),
        tokens,
        verdicts,
        local if len(local) else np.array([""], object),
        reclassify,
        params,
    )
    count_verdicts(stats, table)
    return table, stats


def blocks_for(blocks: pd.DataFrame | None, params: DedupParams) -> pd.DataFrame | None:
    """What shard_ngrams reads of the blocks: none at document level (no context pass)."""
    return None if params.level == "document" else blocks


class _SeenStore:
    """The shard's seen occurrences in the place of G₂₊ ∪ G_out: every one passed to
    `dedup_document` is output already; nothing is ever sent."""

    def in_output(self, handles: np.ndarray) -> np.ndarray:
        return np.ones(len(handles), bool)

    def send(self, handles: np.ndarray) -> None:
        return None


def judge_document(
    shard: ShardNgrams,
    d: int,
    owners: np.ndarray,
    params: DedupParams,
    reclassify: Reclassify,
    verdicts: BlockVerdicts,
    owner_index: dict[int, int],
) -> None:
    """Algorithm 3.1's test on one document with its seen occurrences; fills `verdicts`, and
    names for each duplicate unit the owner most of its seen n-grams share (the first in crawl
    order of equally frequent ones), as `provenance_log.Provenance.resolve` does."""
    result, first, stop = dedup_shard_document(shard, d, params, reclassify, _SeenStore())
    # dedup_document always says where the units it judged lie
    unit_block, unit_offsets = (
        np.asarray(result.unit_block, np.int64),
        np.asarray(result.unit_offsets, np.int64),
    )
    whole = np.bincount(unit_block, weights=~result.duplicate, minlength=len(result.share)) == 0
    verdicts.share[first:stop] = result.share
    verdicts.duplicate[first:stop] = whole
    if not result.duplicate.any():
        return
    owner_of_unit = unit_owners(
        result.quoted_unit, owners[result.quoted_handle], len(result.duplicate)
    )
    bounds = np.arange(first, stop + 1) if params.level != "document" else np.array([first, stop])
    for u in np.flatnonzero(result.duplicate):
        b = unit_block[u]
        # a unit may go with no seen n-gram of its own (a sentence its neighbours' n-grams
        # cover): like the sequential job, it names no document (-1)
        owner = (
            owner_index.setdefault(int(owner_of_unit[u]), len(owner_index))
            if owner_of_unit[u] >= 0
            else -1
        )
        if whole[b]:
            verdicts.duplicate_of[bounds[b] : bounds[b + 1]] = owner
        else:
            verdicts.removed.append(
                (
                    int(bounds[b]),
                    int(unit_offsets[u]),
                    int(unit_offsets[u + 1]),
                    owner,
                )
            )


def unit_owners(unit: np.ndarray, owner: np.ndarray, units: int) -> np.ndarray:
    """Per unit, the owner most of its quoted n-grams name (the smallest of equally frequent)."""
    best = np.full(units, -1, np.int64)
    if len(unit) == 0:
        return best
    # the distinct (unit, owner) pairs, sorted, and their counts: `np.unique(axis=1)` sorts a
    # structured view, many times slower on a document's few pairs
    order = np.lexsort((owner, unit))
    unit, owner = unit[order], owner[order]
    starts = np.flatnonzero(
        np.concatenate(([True], (unit[1:] != unit[:-1]) | (owner[1:] != owner[:-1])))
    )
    pairs = np.stack([unit[starts], owner[starts]])
    count = np.diff(np.append(starts, len(unit)))
    ranked = np.lexsort((pairs[1], -count, pairs[0]))
    keep = np.ones(len(ranked), bool)
    keep[1:] = pairs[0][ranked][1:] != pairs[0][ranked][:-1]
    best[pairs[0][ranked][keep]] = pairs[1][ranked][keep]
    return best


def dedup_partitioned(
    shards: list,
    duplicates: np.ndarray,
    params: DedupParams,
    partitions: int,
    reclassify: Reclassify,
    read_tokens: Callable,
    read_blocks: Callable,
    earlier: tuple[np.ndarray, np.ndarray, dict[int, str]] | None = None,
) -> list[tuple[pd.DataFrame, DedupStats]]:
    """Every job of the mode in one process, in the workflow's order (tests and benchmarks; the
    workflow runs each as its own job on files): `shards` in crawl order, read with
    `read_tokens(shard)` and `read_blocks(shard)`; `duplicates` all of G₂₊ (sorted);
    `earlier`: an earlier corpus's state (sorted hashes, owner index of each, owner ids)."""
    import pandas as pd

    doc_ids = [read_tokens(s).doc_ids for s in shards]
    documents = [len(ids) for ids in doc_ids]
    occurrences = [shard_occurrences(read_tokens(s), params, partitions) for s in shards]
    ranges = [partition_hash_range(p, partitions) for p in range(partitions)]
    parts = [duplicates[range_slice(duplicates, r)] for r in ranges]
    found = [[in_duplicates(occ[p], parts[p]) for p in range(partitions)] for occ in occurrences]
    counts = [[duplicate_counts(rows) for rows in shard] for shard in found]
    keys = [
        shard_keys(
            document_ngrams((part["doc"] for part in occ), documents[s]), counts[s], params.order
        )
        for s, occ in enumerate(occurrences)
    ]
    seen = [
        name_owners(
            seen_occurrences(
                [rows[p] for rows in found],
                [(counts[s][p][0], keys[s][p]) for s in range(len(shards))],
                documents,
                None
                if earlier is None
                else (
                    earlier[0][range_slice(earlier[0], ranges[p])],
                    earlier[1][range_slice(earlier[0], ranges[p])],
                ),
            ),
            documents,
            doc_ids.__getitem__,
            None if earlier is None else earlier[2],
        )
        for p in range(partitions)
    ]
    return [
        judge_shard(
            read_tokens(shard),
            read_blocks(shard),
            pd.concat([part[s] for part in seen], ignore_index=True),
            params,
            reclassify,
        )
        for s, shard in enumerate(shards)
    ]


def range_slice(hashes: np.ndarray, bounds: tuple[int, int]) -> slice:
    """Where sorted hashes lie in [low, high) (high may be 2⁶⁴, past every hash)."""
    low = int(np.searchsorted(hashes, np.uint64(bounds[0])))
    high = len(hashes) if bounds[1] >= 2**64 else int(np.searchsorted(hashes, np.uint64(bounds[1])))
    return slice(low, high)


def write_dedup_table(table: pd.DataFrame, path) -> None:
    """A shard's verdicts (`judge_shard`) as the sequential job writes them."""
    write_table(stage_table(table, DEDUP_SCHEMA), path)


def sum_stats(parts: list[DedupStats]) -> DedupStats:
    """The shards' counts summed: the one stats file the report reads."""
    total = DedupStats()
    for part in parts:
        for name in (
            "documents",
            "documents_processed",
            "tokens",
            "partly_kept_blocks",
            "removed_parts",
        ):
            setattr(total, name, getattr(total, name) + getattr(part, name))
        for name in ("blocks", "words"):
            for key, value in getattr(part, name).items():
                getattr(total, name)[key] = getattr(total, name).get(key, 0) + value
    return total


def earlier_in_range(path, bounds: tuple[int, int], first_owner: int):
    """An earlier corpus's state (`dedup.against`) in one hash range: its sorted hashes, the
    owner index of each (`first_owner` + the document's rank in the state, after this corpus's
    documents, as the sequential job numbers them) and the ids of those owners."""
    hashes, owners = [np.empty(0, np.uint64)], [np.empty(0, np.int64)]
    names: dict[int, str] = {}
    for part, rank, ids in read_state_rows(path, bounds):
        hashes.append(part)
        owners.append(first_owner + rank.astype(np.int64))
        names.update(zip(owners[-1].tolist(), ids.to_pylist()))
    return np.concatenate(hashes), np.concatenate(owners), names


def shard_state_run(
    tokens: TokenStream,
    table: pd.DataFrame,
    params: DedupParams,
    first_rank: int,
    state_partitions: int,
    path,
) -> None:
    """A shard's output n-grams, a sorted run of the state ranked from `first_rank` (the shard's
    first document's rank in crawl order over every corpus merged), a part per hash range of the
    state (`ngramfiles.write_state_run`)."""
    hashes, docs = kept_ngrams(tokens, table, params)
    hashes, first = unique_first(hashes)
    docs = np.asarray(docs, np.int64)[first]
    # each row's id taken in Arrow from the shard's ids, not a Python string per row
    ids = pa.array(np.asarray(tokens.doc_ids).astype(str).tolist(), pa.string())
    write_state_run(
        hashes,
        (first_rank + docs).astype(np.int32),
        ids.take(pa.array(docs)),
        state_partitions,
        path,
    )


# --- each shard's document count (rule dedup_documents): a file between this stage's jobs only


def write_array(array: np.ndarray, path: Path | str) -> None:
    """A plain .npy (each shard's document count), atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as out:
        np.save(out, array)


def read_array(path: Path | str) -> np.ndarray:
    """A plain .npy."""
    return np.load(path, allow_pickle=False)
