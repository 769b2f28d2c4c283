"""De-duplicating a new crawl against an earlier corpus (`dedup.against`).

A corpus's state is every distinct n-gram it output — the n-grams whose words all stay, which
Algorithm 3.1 would have moved to G_out had a later crawl repeated them — with the document that
output it first, by its id and its rank in crawl order over every corpus merged in
(`ngramfiles.STATE_SCHEMA`: 64-bit hashes, sorted; 12.5 bytes an n-gram on the dev crawl, zstd),
in ``results/dedup_state/``, a part per hash range (`FILES.dedup_state`; the sequential job writes
one part, the partitioned mode a part per range of the state's own, `dedup.state_partitions`,
each by its job). A run against it reads it in whatever
ranges it needs (`ngramfiles.read_state_rows`: the parts are sorted, so a range of any
partitioning is a slice of the parts that meet it), and:

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
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from corpusbuilder.common.io import atomic_path
from corpusbuilder.contracts.ngramfiles import (
    ALL_HASHES,
    STATE_ROW_GROUP,
    STATE_SCHEMA,
    HashRange,
    dedup_state_metadata,
    dedup_state_parts,
    partition_hash_range,
    read_dedup_state,
    read_state_rows,
    read_state_run,
    remove_other_state_parts,
)
from corpusbuilder.contracts.tokenfile import TokenStream, kept_tokens
from corpusbuilder.dedup.memory import STATE_ROUND_ROWS
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.dedup.store import truncate_hashes, unique_first
from corpusbuilder.ngrams.hashing import shard_ngram_hashes

if TYPE_CHECKING:
    import pandas as pd


def state_settings(params: DedupParams) -> dict:
    """What must agree between a state and the run that reads it."""
    return {"n": params.n, "kind": params.kind}


def check_state(path, params: DedupParams) -> dict:
    """The state's metadata, once its n-gram settings are this run's (else a
    ValueError naming the key)."""
    metadata = dedup_state_metadata(path)
    wanted = state_settings(params)
    if {key: metadata.get(key) for key in wanted} != wanted:
        raise ValueError(
            f"config key 'dedup.against': {path} holds n-grams of "
            f"{ {key: metadata.get(key) for key in wanted} }, this run counts {wanted} "
            "(dedup.ngram and dedup.kind must be the earlier corpus's)"
        )
    return metadata


def preload_output(path, store, params: DedupParams, provenance, first_doc: int) -> list[str]:
    """Put the state's n-grams that this run's G₂₊ holds into G_out, each owned by the old
    document that output it, numbered from `first_doc` on (after this run's documents) in the
    old corpus's order, so that ties in `duplicate_of` fall as one run over both would break
    them; returns those documents' ids in that numbering."""
    check_state(path, params)
    handle_parts, rank_parts, id_parts = [], [], []
    for hashes, doc_rank, doc_id in read_state_rows(path):
        found, located = store.locate(truncate_hashes(hashes.copy(), params.hash_bits))
        # hashes that coincide once truncated: one is enough
        located, first = np.unique(located, return_index=True)
        rows = np.flatnonzero(found)[first]
        handle_parts.append(located)
        rank_parts.append(doc_rank[rows])
        id_parts.append(doc_id.take(rows).to_numpy(zero_copy_only=False))
    # (a state file has a row group, if an empty one: its handles have the store's type)
    handles, first = np.unique(np.concatenate(handle_parts), return_index=True)
    ranks = np.concatenate(rank_parts)[first]
    ids = np.concatenate(id_parts)[first]
    fresh = ~store.in_output(handles)
    used, number = np.unique(ranks[fresh], return_inverse=True)
    store.send(handles[fresh])
    provenance.record_sent(handles[fresh], (first_doc + number).astype(np.int32))
    names = np.empty(len(used), object)
    names[number] = ids[fresh]
    return names.tolist()


def kept_ngrams(
    tokens: TokenStream, table: pd.DataFrame, params: DedupParams
) -> tuple[np.ndarray, np.ndarray]:
    """The n-grams (64-bit hashes of `params.kind`) of one shard whose words all stay — in a good
    block (`table` is the shard's output), outside the parts sentence and span modes removed
    (`tokenfile.kept_tokens`) — and the document (its index in the shard) of each."""
    ngrams = shard_ngram_hashes(tokens, params.kind, params.n)
    hashes, starts, word_offsets = ngrams.hashes, ngrams.starts, ngrams.word_offsets
    token_of_word = ngrams.token_of_word
    # the n-grams whose words all stay, as the pass sent them: no chunk rounding
    kept_words = np.concatenate(
        ([0], np.cumsum(kept_tokens(tokens, table, whole_chunks=False)[token_of_word]))
    )
    kept = kept_words[starts + params.n] - kept_words[starts] == params.n
    block = np.searchsorted(word_offsets, starts[kept], side="right") - 1
    return hashes[kept], np.asarray(tokens.block_doc)[block]


StateRows = tuple[np.ndarray, np.ndarray, pa.Array]


class OutputRuns:
    """This run's output n-grams for its state: a sorted run per shard in a temporary directory,
    merged with the earlier corpus's state by `write`. Held a shard at a time, like the tokens;
    the merge holds a piece of each run. A run is its hashes and their documents' ranks, raw
    (`_run_rows`): the documents' ids are the ranks' (`doc_ids`, this corpus's in crawl order),
    taken once a round is merged, and nothing is compressed that is read back once."""

    def __init__(self, directory, against, doc_ids: Sequence[str]):
        Path(directory).mkdir(parents=True, exist_ok=True)
        self._tmp = tempfile.TemporaryDirectory(dir=directory, prefix=".state-")
        self.against = [Path(p) for p in dedup_state_parts(against)] if against is not None else []
        self.runs: list[tuple[Path, int]] = []  # this run's: file, rows
        # ranks continue the earlier corpus's, in crawl order: the first to output an n-gram owns it
        self.first_rank = (
            dedup_state_metadata(against).get("next_rank", 0) if against is not None else 0
        )
        self.next_rank = self.first_rank + len(doc_ids)
        self._ids = pa.array(doc_ids, pa.string())

    def add(self, hashes: np.ndarray, docs: np.ndarray) -> None:
        """One shard's output n-grams and their documents (index into `doc_ids`, in crawl order)."""
        hashes, first = unique_first(np.asarray(hashes, np.uint64))
        ranks = (self.first_rank + np.asarray(docs, np.int64)[first]).astype(np.int32)
        path = Path(self._tmp.name) / f"run-{len(self.runs):05d}.bin"
        with path.open("wb") as out:
            hashes.tofile(out)
            ranks.tofile(out)
        self.runs.append((path, len(hashes)))

    def write(self, path, params: DedupParams) -> None:
        """The merged state: each n-gram once, owned by the document of the lowest rank."""
        write_state_rows(
            path,
            merge_sorted_rows(
                [
                    *(read_dedup_state(part) for part in self.against),
                    *(_run_rows(run, rows, self._ids, self.first_rank) for run, rows in self.runs),
                ]
            ),
            {**state_settings(params), "next_rank": self.next_rank},
        )
        self._tmp.cleanup()


def _run_rows(path: Path, rows: int, ids: pa.Array, first_rank: int) -> Iterator[StateRows]:
    """A run of `OutputRuns`, `STATE_ROW_GROUP` rows at a time, its ids a dictionary array: the
    documents' indices into `ids`, which `_merged` takes once the round is merged."""
    with path.open("rb") as run:
        for begin in range(0, rows, STATE_ROW_GROUP):
            length = min(STATE_ROW_GROUP, rows - begin)
            run.seek(begin * 8)
            hashes = np.fromfile(run, np.uint64, length)
            run.seek(rows * 8 + begin * 4)
            ranks = np.fromfile(run, np.int32, length)
            yield hashes, ranks, pa.DictionaryArray.from_arrays(ranks - np.int32(first_rank), ids)


def merge_state_runs(paths, hash_range: HashRange = ALL_HASHES) -> Iterator[StateRows]:
    """`merge_sorted_rows` of state files (a state's parts, a run of the sequential job) in
    `hash_range`."""
    return merge_sorted_rows(read_dedup_state(path, hash_range) for path in paths)


def merge_sorted_rows(runs: Iterable[Iterator[StateRows]]) -> Iterator[StateRows]:
    """k-way merge of sorted runs of state rows (hashes, document ranks, document ids), each
    read a piece at a time, a round at a time: every hash up to a bound is merged with one sort,
    the bound the smallest among the runs' current pieces of their last hash, or of their hash
    at their share of `memory.STATE_ROUND_ROWS` where the piece is longer (a state job's runs
    are each read whole, and a round's copies cost 240 B a row); of equal hashes the lowest rank
    stays. Ids may be dictionary arrays, all of one dictionary (`OutputRuns`' runs)."""
    heads = [[*part, reader] for reader in runs if (part := next(reader, None)) is not None]
    while heads:
        heads = [head for head in heads if len(head[0]) or _refill(head)]
        if not heads:
            return
        share = max(1, STATE_ROUND_ROWS // len(heads))
        bound = min(head[0][min(len(head[0]), share) - 1] for head in heads)
        parts = []
        for head in heads:
            cut = int(np.searchsorted(head[0], bound, side="right"))
            parts.append((head[0][:cut], head[1][:cut], head[2].slice(0, cut)))
            head[0], head[1], head[2] = head[0][cut:], head[1][cut:], head[2].slice(cut)
        yield _merged(parts)


def _merged(parts: list[StateRows]) -> StateRows:
    """One round: its slices of the runs as one sorted piece, each hash once, the lowest rank's
    (a function, so that its copies are gone before the next round makes its own)."""
    hashes = np.concatenate([h for h, _, _ in parts])
    ranks = np.concatenate([r for _, r, _ in parts])
    first = lowest_rank_first(hashes, ranks)
    return hashes[first], ranks[first], _taken_ids([ids for _, _, ids in parts], first)


def lowest_rank_first(hashes: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """Where each distinct hash lies, in hash order, the row of the lowest rank among its rows
    (the first of those) — the first row of each hash after ``np.lexsort((ranks, hashes))``. The
    hashes are sorted runs one after another, which a stable sort merges (timsort: a pass per
    halving of the runs); equal hashes are rare, and only those compare their ranks."""
    order = np.argsort(hashes, kind="stable")
    ordered = hashes[order]
    new = np.empty(len(order), bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    if len(starts) == len(order):
        return order
    del ordered, new
    group = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(order))))
    ordered_ranks = ranks[order]
    lowest = np.flatnonzero(ordered_ranks == np.minimum.reduceat(ordered_ranks, starts)[group])
    return order[lowest[np.concatenate(([True], group[lowest][1:] != group[lowest][:-1]))]]


def _taken_ids(pieces: list[pa.Array], rows: np.ndarray) -> pa.Array:
    """`rows` of the pieces' ids joined, as strings: dictionary pieces (all of one dictionary)
    by their indices, so that only the rows taken are copied as strings."""
    if all(pa.types.is_dictionary(piece.type) for piece in pieces):
        indices = np.concatenate([piece.indices.to_numpy() for piece in pieces])
        return pieces[0].dictionary.take(pa.array(indices[rows]))
    return pa.concat_arrays(
        [
            piece.dictionary_decode() if pa.types.is_dictionary(piece.type) else piece
            for piece in pieces
        ]
    ).take(pa.array(rows))


def write_state_part(
    path, runs: Sequence, against: Sequence, partition: int, partitions: int, metadata: dict
) -> None:
    """Part `partition` of a state of `partitions` (rule dedup_state): that part of every shard's
    run (`ngramfiles.read_state_run`, each read whole) and the earlier state's rows in its range
    (`against`, its parts in any ranges, a row group at a time), merged."""
    hash_range = partition_hash_range(partition, partitions)
    write_state_rows(
        path,
        merge_sorted_rows(
            [
                read_state_rows(against, hash_range),
                *(read_state_run(run, partition, partitions) for run in runs),
            ]
        ),
        metadata,
    )


def _refill(head: list) -> bool:
    for part in head[3]:
        if len(part[0]):
            head[0], head[1], head[2] = part
            return True
    return False


def write_state_rows(path, parts, metadata: dict) -> None:
    """A state file (`ngramfiles.STATE_SCHEMA`) of sorted (hashes, ranks, doc ids) parts, with the
    n-gram settings a later run checks in `metadata`; always a row group, if an empty one. A
    state's part replaces the parts of another partitioning beside it."""
    schema = STATE_SCHEMA.with_metadata({"corpusbuilder": json.dumps(metadata)})
    # no dictionary for the hashes, all distinct: trying one cost a quarter of the writing's CPU
    # and made the file 12 % larger
    dictionary = [name for name in STATE_SCHEMA.names if name != "hash"]
    with (
        atomic_path(path) as tmp,
        pq.ParquetWriter(tmp, schema, compression="zstd", use_dictionary=dictionary) as writer,
    ):
        written = False
        for hashes, ranks, ids in _row_groups(parts, STATE_ROW_GROUP):
            writer.write_table(
                pa.table(
                    {
                        "hash": pa.array(hashes, pa.uint64()),
                        "count": pa.array(np.ones(len(hashes), np.uint32)),
                        "doc_rank": pa.array(ranks, pa.int32()),
                        "doc_id": ids,
                    },
                    schema=schema,
                )
            )
            written = True
        if not written:
            writer.write_table(schema.empty_table())
    remove_other_state_parts(path)


def _row_groups(parts: Iterable[StateRows], rows: int) -> Iterator[StateRows]:
    """The rows of `parts` (a merge's rounds, of any length) cut into pieces of `rows` rows, the
    last shorter: a state file's row groups whatever the rounds it was merged in. Each piece is
    a copy, so that no round's arrays outlive it while the next is merged."""
    pending: list[StateRows] = []
    held = 0
    for part in parts:
        length, begin = len(part[0]), 0
        while length - begin >= rows - held:
            pending.append(_sliced(part, begin, rows - held))
            begin += rows - held
            yield _joined(pending)
            pending, held = [], 0
        if begin < length:
            pending.append(_joined([_sliced(part, begin, length - begin)]))
            held += length - begin
        del part
    if held:
        yield _joined(pending)


def _sliced(part: StateRows, begin: int, length: int) -> StateRows:
    hashes, ranks, ids = part
    return hashes[begin : begin + length], ranks[begin : begin + length], ids.slice(begin, length)


def _joined(parts: list[StateRows]) -> StateRows:
    """The pieces as one, copied."""
    return (
        np.concatenate([hashes for hashes, _, _ in parts]),
        np.concatenate([ranks for _, ranks, _ in parts]),
        pa.concat_arrays([ids for _, _, ids in parts]),
    )
