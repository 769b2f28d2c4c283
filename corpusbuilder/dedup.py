"""Removing duplicate text blocks with a list of duplicate n-grams (thesis §3.5, Algorithm 3.1).

G₂₊ holds the hashes of every n-gram seen at least twice in the corpus (the ngrams stage,
``work/ngrams/dup{n}.npy``); G_out those already sent to output. Documents are taken in an order
(§3.5: increasing share of duplicate n-grams), and each unit — a text block (§3.5.2) or a whole
document — is judged by the share of its words covered by n-grams already output: in G_out, or,
as the public onion tool counts them, seen earlier in the same document. Over the threshold it
becomes ``duplicate``; otherwise it is kept and its duplicate n-grams move from G₂₊ to G_out.
jusText's context-sensitive pass then runs again with ``duplicate`` acting as ``bad`` (Fig. 3.5),
so stubs left between removed duplicates go too.

Speed: G₂₊ ∪ G_out never changes (n-grams only move between the two), so "is this n-gram a
duplicate at all" is answered for a whole shard with one numpy membership test; only the rare
duplicate n-grams reach the per-document loop and the set structures.

Memory: the dup-share order is global, but no more than one shard's tokens are held at a time.
A first pass reads each shard once and keeps per document only its sort key (share, shard, position)
and token count. The sorted keys are cut into buckets of at most ``bucket_tokens`` tokens; for each
bucket the shards holding its documents are read one at a time and only those documents' duplicate
n-grams are kept, then the bucket is processed in order. Per block, three small result arrays
(share, duplicate flag, provenance) live until the output is written. The hash sets keep no
owner per n-gram (the default backend holds 8⅛ bytes per duplicate n-gram); who sent what to
output is logged to disk and joined back for ``duplicate_of`` after the pass (`Provenance`).
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from corpusbuilder.config import dataclass_values
from corpusbuilder.io import atomic_path, write_table
from corpusbuilder.justext import (
    BAD,
    DUPLICATE,
    GOOD,
    PRESETS,
    JustextParams,
    classify_context_sensitive_columns,
)
from corpusbuilder.ngrams import NGRAM_KINDS, kind_mask, ngram_hashes, select_tokens
from corpusbuilder.tables import DEDUP_SCHEMA, read_duplicate_ngrams, read_table
from corpusbuilder.tokenfile import read_tokens

log = logging.getLogger("corpusbuilder.dedup")

LEVELS = ("block", "document")
ORDERS = ("dup-share", "input")
BACKENDS = ("sorted-array", "judy")
# no document known: an n-gram nobody has sent to output yet, a quoted n-gram whose sender is
# looked up among G_out's owners later, a duplicate unit nothing is resolved to
NO_DOCUMENT = -1

@dataclass(frozen=True)
class DedupParams:
    """Block de-duplication settings (config section `dedup`); defaults are the thesis'."""

    n: int = 10  # n-gram length; must match G₂₊ (§3.6.4, Table 3.4: 10-grams are the safe choice)
    kind: str = "all"  # tokens the n-grams are built from, Table 3.3; must match G₂₊
    threshold: float = 0.5  # §3.6.4: a unit with more than this share of duplicate words goes
    level: str = "block"  # §3.5.2: judge text blocks ("block") or whole documents ("document")
    order: str = "dup-share"  # §3.5: documents with the least duplicate content first; or "input"
    backend: str = "sorted-array"  # storage of G₂₊/G_out: "sorted-array" or "judy" (§3.5.1)
    hash_bits: int = 64  # n-gram hash width kept (§3.5.1: 56 bits are cheaper in Judy, Fig. 3.4)
    bucket_tokens: int = 50_000_000  # tokens of one processing bucket (bounds memory, not results)

    def __post_init__(self) -> None:
        for name, value, allowed in (("kind", self.kind, NGRAM_KINDS), ("level", self.level, LEVELS),
                                     ("order", self.order, ORDERS), ("backend", self.backend, BACKENDS)):
            if value not in allowed:
                raise ValueError(f"dedup {name} must be one of {', '.join(allowed)}, not {value!r}")
        if not 0 <= self.threshold <= 1:
            raise ValueError(f"dedup threshold must lie in [0, 1], not {self.threshold}")
        if not 16 <= self.hash_bits <= 64:
            raise ValueError(f"dedup hash_bits must lie in 16..64, not {self.hash_bits}")

    @classmethod
    def from_config(cls, section: dict) -> DedupParams:
        """From the validated `dedup` config section (its n-gram length is the key `ngram`)."""
        return cls(**dataclass_values(cls, section, renamed={"n": "ngram"}))


def truncate_hashes(hashes: np.ndarray, hash_bits: int) -> np.ndarray:
    """Keep the low `hash_bits` bits, in place (the n-gram hash finaliser spreads entropy over
    all bits)."""
    if hash_bits >= 64:
        return hashes
    return np.bitwise_and(hashes, np.uint64((1 << hash_bits) - 1), out=hashes)


# --- storage of G₂₊ and G_out (§3.5.1) ---------------------------------------------------------

def _set_bits(bitmap: np.ndarray, positions: np.ndarray) -> None:
    """Set the bits at `positions` of a uint8 bitmap (repeated positions are fine)."""
    np.bitwise_or.at(bitmap, positions >> 3, np.left_shift(1, positions & 7).astype(np.uint8))


def _test_bits(bitmap: np.ndarray, positions: np.ndarray) -> np.ndarray:
    return (bitmap[positions >> 3] >> (positions & 7).astype(np.uint8)) & 1 == 1


class _NgramSet:
    """What both backends share: hash-level calls built on `locate`/`in_output`/`send`, which
    take handles (a shard's duplicate n-grams are located once: G₂₊ ∪ G_out never changes)."""

    def is_duplicate(self, hashes: np.ndarray) -> np.ndarray:
        """Membership in G₂₊ ∪ G_out."""
        return self.locate(hashes)[0]

    def is_output(self, hashes: np.ndarray) -> np.ndarray:
        """For duplicate hashes: is each in G_out."""
        return self.in_output(self.locate(hashes)[1])

    def send_to_output(self, hashes: np.ndarray) -> None:
        """Move duplicate hashes (all still in G₂₊) to G_out."""
        self.send(self.locate(hashes)[1])


class SortedArrayNgrams(_NgramSet):
    """G₂₊ ∪ G_out as one sorted uint64 array, G_out as a bit per entry: 8⅛ bytes per duplicate
    n-gram, whatever their number or width. Who sent an n-gram to output is not kept here
    (it would cost 4 more bytes each) but logged to disk (`Provenance`)."""

    def __init__(self, duplicates: np.ndarray):
        self.keys = np.asarray(duplicates, dtype=np.uint64)
        self.bits = np.zeros((len(self.keys) + 7) // 8, dtype=np.uint8)

    def locate(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Membership in G₂₊ ∪ G_out and, for the members, their positions in the array."""
        if len(self.keys) == 0:
            return np.zeros(len(hashes), bool), np.empty(0, np.int64)
        at = np.minimum(np.searchsorted(self.keys, hashes), len(self.keys) - 1)
        found = self.keys[at] == hashes
        return found, at[found]

    def in_output(self, handles: np.ndarray) -> np.ndarray:
        return _test_bits(self.bits, handles)

    def send(self, handles: np.ndarray) -> None:
        _set_bits(self.bits, handles)

    def owner_table(self) -> PositionOwners:
        """Give up the sets (the pass is over) for a table of who sent each n-gram: 4 bytes an entry."""
        entries = len(self.keys)
        self.keys = self.bits = np.empty(0, np.uint8)
        return PositionOwners(entries)

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def nbytes(self) -> int:
        return self.keys.nbytes + self.bits.nbytes


class PositionOwners:
    """Document that sent each duplicate n-gram to output, by its position in the sorted array."""

    def __init__(self, entries: int):
        self.owner = np.full(entries, NO_DOCUMENT, dtype=np.int32)

    def record(self, handles: np.ndarray, docs: np.ndarray) -> None:
        self.owner[handles.astype(np.int64)] = docs

    def lookup(self, handles: np.ndarray) -> np.ndarray:
        return self.owner[handles.astype(np.int64)]


class JudyNgrams(_NgramSet):
    """G₂₊ and G_out as two Judy1 sets, as the thesis' implementation keeps them (§3.5.1).

    Judy has no vectorised lookup, so a bitmap on the hashes' top bits (about 8 bits per
    duplicate n-gram) screens out most non-duplicate n-grams in numpy first; only the hashes that
    pass are looked up one by one. Handles are the hashes themselves.
    """

    def __init__(self, duplicates: np.ndarray, hash_bits: int):
        import judy

        duplicates = np.asarray(duplicates, dtype=np.uint64)
        self.g2 = judy.JudyIntSet.FromArray(duplicates)
        self.g_out = judy.JudyIntSet()
        self._index_bits = min(hash_bits, max(int(len(duplicates)).bit_length() + 3, 6))
        self._shift = np.uint64(hash_bits - self._index_bits)
        self.screen = np.zeros(1 << (self._index_bits - 3), dtype=np.uint8)
        self._mark(duplicates)

    def _mark(self, hashes: np.ndarray, chunk: int = 1 << 16) -> None:
        for start in range(0, len(hashes), chunk):  # in chunks: temporaries of 8 bytes a hash
            _set_bits(self.screen, hashes[start:start + chunk] >> self._shift)

    def _may_be_duplicate(self, hashes: np.ndarray) -> np.ndarray:
        return _test_bits(self.screen, hashes >> self._shift)

    def locate(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        found = self._may_be_duplicate(hashes)
        at = np.flatnonzero(found)
        g2, g_out = self.g2, self.g_out
        found[at] = [h in g2 or h in g_out for h in hashes[at].tolist()]
        return found, hashes[found]

    def in_output(self, handles: np.ndarray) -> np.ndarray:
        g_out = self.g_out
        return np.fromiter((h in g_out for h in handles.tolist()), dtype=bool, count=len(handles))

    def send(self, handles: np.ndarray) -> None:
        for h in handles.tolist():
            self.g2.remove(h)
            self.g_out.add(h)

    def owner_table(self) -> JudyOwners:
        self.g2.clear()
        self.g_out.clear()
        return JudyOwners()

    def __len__(self) -> int:
        return len(self.g2) + len(self.g_out)

    @property
    def nbytes(self) -> int:
        return self.g2.__sizeof__() + self.g_out.__sizeof__() + self.screen.nbytes


class JudyOwners:
    """Document that sent each duplicate n-gram to output, as a JudyL map hash → document."""

    def __init__(self):
        import judy

        self.owner = judy.JudyIntIntMap()

    def record(self, handles: np.ndarray, docs: np.ndarray) -> None:
        for h, doc in zip(handles.tolist(), docs.tolist()):
            self.owner[h] = doc

    def lookup(self, handles: np.ndarray) -> np.ndarray:
        get = self.owner.get
        return np.fromiter((get(h, NO_DOCUMENT) for h in handles.tolist()), dtype=np.int32, count=len(handles))


def duplicate_ngram_store(duplicates: np.ndarray, params: DedupParams):
    """G₂₊ in the configured backend, at the configured hash width. `duplicates` (sorted unique
    hashes, as dup{n}.npy holds them) is taken over and reused in place: no second copy is made."""
    duplicates = truncate_hashes(np.asarray(duplicates, dtype=np.uint64), params.hash_bits)
    if params.hash_bits < 64:
        duplicates.sort()  # truncation breaks the order; two hashes may now coincide
        duplicates = duplicates[:unique_sorted_in_place(duplicates)]
    if params.backend == "judy":
        return JudyNgrams(duplicates, params.hash_bits)
    return SortedArrayNgrams(duplicates)


def unique_sorted_in_place(values: np.ndarray, chunk: int = 1 << 16) -> int:
    """Drop repeats from a sorted array by moving its distinct values to the front, a chunk at a
    time (a mask over the whole array would cost a byte per entry); returns how many there are."""
    kept = 0
    for start in range(0, len(values), chunk):
        part = values[start:start + chunk]
        new = np.ones(len(part), bool)
        new[1:] = part[1:] != part[:-1]
        if kept:
            new[0] = part[0] != values[kept - 1]
        distinct = part[new]  # a copy: the front being written may overlap this chunk
        values[kept:kept + len(distinct)] = distinct
        kept += len(distinct)
    return kept


# --- who sent what to output: provenance on disk -----------------------------------------------

SENT = np.dtype([("handle", "<u8"), ("doc", "<i4")])
QUOTED = np.dtype([("unit", "<i8"), ("handle", "<u8"), ("doc", "<i4")])


class Provenance:
    """The data `duplicate_of` is computed from, logged to disk during the pass so that G_out
    needs no owner beside each n-gram: every n-gram sent to output with the document that sent
    it (each is sent once, so that is its owner), and every output n-gram of a duplicate unit
    with the unit's number (with the unit's own document when it repeats an earlier part of the
    page, -1 when it was in G_out). `resolve` joins the two once the sets are given up."""

    def __init__(self, directory: Path | str, chunk_rows: int = 1 << 20):
        Path(directory).mkdir(parents=True, exist_ok=True)
        self._tmp = tempfile.TemporaryDirectory(dir=directory, prefix=".provenance-")
        self._paths = {name: Path(self._tmp.name) / name for name in ("sent", "quoted")}
        self._files = {name: path.open("wb") for name, path in self._paths.items()}
        # a document's rows are few: they are gathered and written a chunk at a time
        self._pending = {name: [] for name in self._paths}
        self._pending_rows = 0
        self.chunk_rows = chunk_rows
        self.units = 0

    def record(self, verdicts: UnitVerdicts, doc: int) -> np.ndarray:
        """Log one document's sends and quotes; returns the numbers given to its duplicate units."""
        sent = np.empty(len(verdicts.sent), SENT)
        sent["handle"], sent["doc"] = verdicts.sent, doc
        duplicate = np.flatnonzero(verdicts.duplicate)
        numbers = np.full(len(verdicts.duplicate), -1, np.int64)
        numbers[duplicate] = self.units + np.arange(len(duplicate))
        self.units += len(duplicate)
        quoted = np.empty(len(verdicts.quoted_unit), QUOTED)
        quoted["unit"], quoted["handle"] = numbers[verdicts.quoted_unit], verdicts.quoted_handle
        quoted["doc"] = np.where(verdicts.quoted_self, doc, NO_DOCUMENT)
        self._pending["sent"].append(sent)
        self._pending["quoted"].append(quoted)
        self._pending_rows += len(sent) + len(quoted)
        if self._pending_rows >= self.chunk_rows:
            self._flush()
        return numbers

    def _flush(self) -> None:
        for name, rows in self._pending.items():
            if rows:
                np.concatenate(rows).tofile(self._files[name])
            rows.clear()
        self._pending_rows = 0

    def _chunks(self, name: str, dtype: np.dtype):
        with self._paths[name].open("rb") as f:
            while len(rows := np.fromfile(f, dtype=dtype, count=self.chunk_rows)):
                yield rows

    def resolve(self, owners) -> np.ndarray:
        """Per duplicate unit, the document that sent most of its output n-grams (the smallest
        of equally frequent ones); `owners` is the store's `owner_table()`."""
        self._flush()
        for f in self._files.values():
            f.close()
        for rows in self._chunks("sent", SENT):
            owners.record(rows["handle"], rows["doc"])
        pairs, counts = [], []
        for rows in self._chunks("quoted", QUOTED):
            doc = rows["doc"].copy()
            from_gout = doc == NO_DOCUMENT
            doc[from_gout] = owners.lookup(rows["handle"][from_gout])
            key, count = np.unique((rows["unit"].astype(np.uint64) << np.uint64(32)) | doc.astype(np.uint64),
                                   return_counts=True)
            pairs.append(key)
            counts.append(count)
        best = np.full(self.units, NO_DOCUMENT, np.int32)
        if pairs:
            key, where = np.unique(np.concatenate(pairs), return_inverse=True)
            count = np.bincount(where, weights=np.concatenate(counts))
            unit, doc = (key >> np.uint64(32)).astype(np.int64), (key & np.uint64(0xFFFFFFFF)).astype(np.int64)
            ranked = np.lexsort((doc, -count, unit))
            first = ranked[np.concatenate(([True], unit[ranked][1:] != unit[ranked][:-1]))]
            best[unit[first]] = doc[first]
        self._tmp.cleanup()
        return best


# --- one document: Algorithm 3.1 on its units --------------------------------------------------

def covered_tokens(ngram_starts: np.ndarray, n: int, length: int) -> np.ndarray:
    """Which of `length` words lie inside at least one of the n-grams starting at `ngram_starts`
    (Algorithm 3.1's set I), by a difference array: +1 at each start, -1 n words later."""
    starts = np.bincount(ngram_starts, minlength=length + n)
    edges = starts.copy()
    edges[n:] -= starts[:-n]
    return np.cumsum(edges[:length]) > 0


@dataclass
class UnitVerdicts:
    """Algorithm 3.1's decision for each unit (block or document) of one document, and what
    `Provenance` logs of it."""

    share: np.ndarray  # float: share of the unit's words covered by n-grams already output
    duplicate: np.ndarray  # bool: share > threshold
    sent: np.ndarray  # handles the kept units moved from G₂₊ to G_out
    quoted_unit: np.ndarray  # int: the duplicate units' output n-grams: unit,
    quoted_handle: np.ndarray  # handle,
    quoted_self: np.ndarray  # bool: and whether it repeats this page rather than G_out


def dedup_document(handles: np.ndarray, dup_starts: np.ndarray, unit_offsets: np.ndarray,
                   n: int, threshold: float, store,
                   smooth: Callable[[np.ndarray], np.ndarray] | None = None) -> UnitVerdicts:
    """Algorithm 3.1 over the units of one document; updates `store`.

    `handles`/`dup_starts` are the document's duplicate n-grams (members of G₂₊ ∪ G_out, as
    `store.locate` names them) and their first words, in word order; `unit_offsets` bound the
    units in the same word positions (n-grams never cross a block). As in onion, an n-gram
    counts as already output when it is in G_out as it stood before the document, or when it
    occurred earlier in the same document (in this unit or an earlier one, kept or not): a page
    that repeats itself is judged like a copy of itself. So every unit is judged at once, and
    G_out changes only between documents, by the duplicate n-grams of the kept units.

    `smooth`, given the units' duplicate flags when there is one, says which units the
    context-sensitive pass keeps (§3.5.2); as onion smooths before it stores the document's
    n-grams, the stubs it removes send nothing to output.
    """
    units = len(unit_offsets) - 1
    in_gout = store.in_output(handles)
    repeat = np.ones(len(handles), bool)
    repeat[np.unique(handles, return_index=True)[1]] = False
    output = in_gout | repeat
    unit_of = np.searchsorted(unit_offsets, dup_starts, side="right") - 1
    first_word = unit_offsets[0]
    covered = np.flatnonzero(covered_tokens(dup_starts[output] - first_word, n, unit_offsets[-1] - first_word))
    words = np.bincount(np.searchsorted(unit_offsets, covered + first_word, side="right") - 1, minlength=units)
    lengths = np.diff(unit_offsets)
    share = np.divide(words, lengths, out=np.zeros(units), where=lengths > 0)
    duplicate = share > threshold
    kept = ~duplicate
    if smooth is not None and duplicate.any():
        kept &= smooth(duplicate)
    send = np.unique(handles[~in_gout & kept[unit_of]])
    if len(send):
        store.send(send)
    quoted = output & duplicate[unit_of]
    return UnitVerdicts(share, duplicate, send, unit_of[quoted], handles[quoted], ~in_gout[quoted])


# --- shard preparation: n-grams of every document, only the duplicate ones kept ----------------

@dataclass
class ShardNgrams:
    """One shard's documents reduced to what de-duplication reads: units in word positions and
    the duplicate n-grams (G₂₊ ∪ G_out members), all in shard-wide word positions."""

    doc_ids: list[str]
    block_doc: np.ndarray  # int32, document of each block
    block_index: np.ndarray  # int32, block's index in its page
    word_offsets: np.ndarray  # int64, n_blocks + 1, blocks in words of the chosen kind
    doc_blocks: np.ndarray  # int64, n_docs + 1, each document's block range
    dup_handles: np.ndarray  # the duplicate n-grams as `store.locate` names them
    dup_starts: np.ndarray
    doc_ngrams: np.ndarray  # int64, n-grams per document
    doc_duplicates: np.ndarray  # int64, duplicate n-grams per document
    pages: PageBlocks | None = None  # every block of the pages, for the context-sensitive pass

    def duplicate_share(self) -> np.ndarray:
        """Share of each document's n-grams that are duplicate (the §3.5 ordering key)."""
        return np.divide(self.doc_duplicates, self.doc_ngrams, out=np.zeros(len(self.doc_ngrams)),
                         where=self.doc_ngrams > 0)

    def document_units(self, doc: int, level: str) -> np.ndarray:
        first, last = self.doc_blocks[doc], self.doc_blocks[doc + 1]
        if level == "document":
            return self.word_offsets[[first, last]]
        return self.word_offsets[first:last + 1]

    def document_duplicates(self, doc: int) -> tuple[np.ndarray, np.ndarray]:
        first, last = self.word_offsets[self.doc_blocks[[doc, doc + 1]]]
        lo, hi = np.searchsorted(self.dup_starts, [first, last])
        return self.dup_handles[lo:hi], self.dup_starts[lo:hi]


def shard_ngrams(tokens: dict, params: DedupParams, store, blocks: pd.DataFrame | None = None) -> ShardNgrams:
    """Hash every n-gram of a shard's tokens at once and keep the duplicate ones (with `blocks`,
    the shard's blocks.parquet, every block of its pages for the context-sensitive pass)."""
    keep = kind_mask(params.kind, tokens["is_punct"], tokens["is_stop"])
    words, word_offsets, _ = select_tokens(np.asarray(tokens["token_hash"], np.uint64),
                                           np.asarray(tokens["block_offsets"], np.int64), keep)
    hashes, starts = ngram_hashes(words, word_offsets, params.n)
    hashes = truncate_hashes(hashes, params.hash_bits)
    duplicate, handles = store.locate(hashes)
    block_doc = np.asarray(tokens["block_doc"], np.int32)
    doc_ids = [str(d) for d in tokens["doc_ids"]]
    doc_blocks = np.searchsorted(block_doc, np.arange(len(doc_ids) + 1)).astype(np.int64)
    if np.any(np.diff(block_doc) < 0):
        raise ValueError("token file: blocks of a document must be contiguous and in document order")
    doc_of_start = np.searchsorted(word_offsets[doc_blocks], starts, side="right") - 1
    return ShardNgrams(
        doc_ids=doc_ids, block_doc=block_doc, block_index=np.asarray(tokens["block_index"], np.int32),
        word_offsets=word_offsets, doc_blocks=doc_blocks,
        dup_handles=handles, dup_starts=starts[duplicate],
        doc_ngrams=np.bincount(doc_of_start, minlength=len(doc_ids)),
        doc_duplicates=np.bincount(doc_of_start[duplicate], minlength=len(doc_ids)),
        pages=None if blocks is None else page_blocks(blocks, doc_ids, block_doc, tokens["block_index"]),
    )


def processing_order(shares: list[np.ndarray], order: str) -> np.ndarray:
    """(shard, document) pairs in processing order: by increasing share of duplicate n-grams,
    ties in crawl order (§3.5), or crawl order alone."""
    shard = np.concatenate([np.full(len(s), i, np.int32) for i, s in enumerate(shares)] + [np.empty(0, np.int32)])
    position = np.concatenate([np.arange(len(s), dtype=np.int32) for s in shares] + [np.empty(0, np.int32)])
    if order == "dup-share":
        keys = np.concatenate(list(shares) + [np.empty(0)])
        ranked = np.lexsort((position, shard, keys))
    else:
        ranked = np.lexsort((position, shard))
    return np.stack([shard[ranked], position[ranked]], axis=1)


def buckets(order: np.ndarray, doc_tokens: list[np.ndarray], bucket_tokens: int) -> list[np.ndarray]:
    """Cut the processing order into consecutive runs of at most `bucket_tokens` tokens
    (a single longer document makes a bucket of its own)."""
    sizes = np.array([doc_tokens[s][d] for s, d in order], dtype=np.int64)
    bucket_of = np.cumsum(sizes) // max(bucket_tokens, 1)
    cuts = np.flatnonzero(np.diff(bucket_of)) + 1
    return [part for part in np.split(order, cuts) if len(part)]


# --- final classes: the context-sensitive pass with duplicates (§3.5.2, Fig. 3.5) --------------

def final_classes(cf_classes: list[str], justext_final: list[str], duplicate: list[bool],
                  n_chars: list[int], heading: list[bool], params: JustextParams) -> list[str]:
    """Classes of one page's blocks after de-duplication: duplicate blocks enter Algorithm 2.3
    as "duplicate" (bad for their neighbours), and what jusText already found bad stays bad."""
    classes = [DUPLICATE if dup else cf for cf, dup in zip(cf_classes, duplicate)]
    resolved = classify_context_sensitive_columns(classes, n_chars, heading, params)
    return [BAD if before == BAD and cls != DUPLICATE else cls for cls, before in zip(resolved, justext_final)]


def drop_orphan_stubs(classes: list[str], duplicate: list[bool], n_words: list[int], min_words: int) -> list[str]:
    """A page that lost blocks as duplicates and keeps only blocks too short to hold an n-gram
    (fewer than ``min_words`` words) keeps nothing: what is left are the headings and stubs of
    the copied text, which n-grams cannot judge. jusText's context pass mostly removes them
    already (they are short there); a classifier that keeps headings (preset best) needs this."""
    if not any(duplicate) or any(c == GOOD and w >= min_words for c, w in zip(classes, n_words)):
        return classes
    return [BAD if c == GOOD else c for c in classes]


def page_classes_after_dedup(cf_classes: list[str], justext_final: list[str], duplicate: list[bool],
                             n_chars: list[int], heading: list[bool], n_words: list[int], params: JustextParams,
                             min_words: int) -> list[str]:
    """One page's final classes: the context-sensitive pass with its duplicates, then no orphan stubs."""
    classes = final_classes(cf_classes, justext_final, duplicate, n_chars, heading, params)
    return drop_orphan_stubs(classes, duplicate, n_words, min_words)


@dataclass
class PageBlocks:
    """Every block of a shard's pages, tokenised or not (jusText's bad blocks are context too),
    in page order, with what the context-sensitive pass reads; classes as category codes."""

    rows: np.ndarray  # int64, n_docs + 1: each document's rows
    token_block_row: np.ndarray  # int64: the row of each tokenised block
    classes: np.ndarray  # object: the class names the codes index
    cf_class: np.ndarray  # int8 codes
    final_class: np.ndarray  # int8 codes
    n_chars: np.ndarray
    heading: np.ndarray
    n_words: np.ndarray

    def kept_blocks(self, doc: int, first_block: int, duplicate: np.ndarray, justext: JustextParams,
                    min_words: int) -> np.ndarray:
        """Which of a document's tokenised blocks (from `first_block`, flagged `duplicate`) are
        still good once the context-sensitive pass has run with the duplicates."""
        lo, hi = self.rows[doc], self.rows[doc + 1]
        at = self.token_block_row[first_block:first_block + len(duplicate)] - lo
        flags = np.zeros(hi - lo, bool)
        flags[at] = duplicate
        resolved = page_classes_after_dedup(
            self.classes[self.cf_class[lo:hi]].tolist(), self.classes[self.final_class[lo:hi]].tolist(),
            flags.tolist(), self.n_chars[lo:hi].tolist(), self.heading[lo:hi].tolist(),
            self.n_words[lo:hi].tolist(), justext, min_words)
        return np.array(resolved, dtype=object)[at] == GOOD


def page_blocks(blocks: pd.DataFrame, doc_ids: list[str], block_doc: np.ndarray, block_index: np.ndarray) -> PageBlocks:
    """The blocks.parquet rows of the tokenised documents, grouped by document in token order."""
    doc_of = pd.Index(doc_ids).get_indexer(blocks["doc_id"])
    mine = doc_of >= 0
    doc_of = doc_of[mine]
    order = np.argsort(doc_of, kind="stable")  # blocks.parquet keeps a page's blocks in order
    table = blocks[mine].iloc[order]
    doc_of = doc_of[order]
    keys = pd.MultiIndex.from_arrays([doc_of, table["block_index"].to_numpy(np.int64)])
    token_block_row = keys.get_indexer(pd.MultiIndex.from_arrays([np.asarray(block_doc, np.int64),
                                                                  np.asarray(block_index, np.int64)]))
    if np.any(token_block_row < 0):
        missing = int(np.flatnonzero(token_block_row < 0)[0])
        raise ValueError(f"blocks.parquet has no row for tokenised block {block_index[missing]} of document "
                         f"{doc_ids[block_doc[missing]]!r}")
    codes, classes = pd.factorize(pd.concat([table["cf_class"], table["final_class"]], ignore_index=True))
    codes = codes.astype(np.int8)
    return PageBlocks(rows=np.searchsorted(doc_of, np.arange(len(doc_ids) + 1)).astype(np.int64),
                      token_block_row=token_block_row.astype(np.int64),
                      classes=np.asarray(classes, dtype=object),
                      cf_class=codes[:len(table)], final_class=codes[len(table):],
                      n_chars=table["n_chars"].to_numpy(np.int64), heading=table["heading"].to_numpy(bool),
                      n_words=table["n_words"].to_numpy(np.int64))


# --- the stage ---------------------------------------------------------------------------------

@dataclass
class Shard:
    name: str
    tokens: Path
    blocks: Path
    output: Path


@dataclass
class _BlockVerdicts:
    """Per-block results of one shard, filled bucket by bucket."""

    share: np.ndarray
    duplicate: np.ndarray
    duplicate_of: np.ndarray  # global document index

    @classmethod
    def empty(cls, blocks: int) -> _BlockVerdicts:
        return cls(np.zeros(blocks, np.float32), np.zeros(blocks, bool), np.full(blocks, -1, np.int32))


@dataclass
class DedupStats:
    documents: int = 0
    documents_processed: int = 0  # documents holding at least one duplicate n-gram
    duplicate_ngrams: int = 0
    store_bytes: int = 0
    tokens: int = 0
    blocks: dict = field(default_factory=dict)  # final class → blocks (of the deduplicated ones)
    words: dict = field(default_factory=dict)  # final class → words (blocks.parquet n_words)
    seconds: dict = field(default_factory=dict)


def dedup_corpus(shards: list[Shard], duplicates_path: Path | str, stats_path: Path | str | None,
                 params: DedupParams, justext: JustextParams = PRESETS["default"]) -> DedupStats:
    """The dedup stage over every shard: tokens + blocks + G₂₊ → per-shard override tables."""
    started = time.perf_counter()
    stats = DedupStats()
    store = duplicate_ngram_store(read_duplicate_ngrams(duplicates_path), params)
    stats.duplicate_ngrams = len(store)
    stats.store_bytes = store.nbytes

    # Pass 1: ordering keys and sizes, one shard at a time. The prepared shards are cached for
    # pass 2 as long as they hold no more than `bucket_tokens` tokens (the memory a bucket may
    # take anyway), so a corpus that fits one bucket is read and hashed once.
    shares, doc_tokens, doc_ids, verdicts = [], [], [], []
    cached: dict[int, ShardNgrams] = {}
    cached_tokens = 0
    for s, shard in enumerate(shards):
        tokens = read_tokens(shard.tokens)
        fits_cache = cached_tokens + len(tokens["token_hash"]) <= params.bucket_tokens
        prepared = shard_ngrams(tokens, params, store, context_blocks(shard, params) if fits_cache else None)
        if fits_cache:
            cached[s] = prepared
            cached_tokens += len(tokens["token_hash"])
        shares.append(prepared.duplicate_share())
        doc_tokens.append(np.diff(np.asarray(tokens["block_offsets"])[prepared.doc_blocks]))
        doc_ids.append(prepared.doc_ids)
        verdicts.append(_BlockVerdicts.empty(len(prepared.block_doc)))
        stats.tokens += len(tokens["token_hash"])
    doc_base = np.concatenate(([0], np.cumsum([len(ids) for ids in doc_ids]))).astype(np.int64)
    stats.documents = int(doc_base[-1])
    order = processing_order(shares, params.order)
    stats.seconds["order"] = round(time.perf_counter() - started, 3)

    # Pass 2: Algorithm 3.1, bucket by bucket in processing order.
    provenance = Provenance(shards[0].output.parent if shards else Path("."))
    units = []  # per document with duplicate units: (shard, first block of each unit, block after it)
    for bucket in buckets(order, doc_tokens, params.bucket_tokens):
        prepared = {}
        for s in np.unique(bucket[:, 0]):
            prepared[s] = cached[s] if s in cached else shard_ngrams(read_tokens(shards[s].tokens), params, store,
                                                                 context_blocks(shards[s], params))
        for s, d in bucket:
            shard = prepared[s]
            if shard.doc_duplicates[d] == 0:
                continue
            stats.documents_processed += 1
            hashes, starts = shard.document_duplicates(d)
            first, stop = shard.doc_blocks[d], shard.doc_blocks[d + 1]
            smooth = None if shard.pages is None else partial(shard.pages.kept_blocks, d, first, justext=justext,
                                                                     min_words=params.n)
            result = dedup_document(hashes, starts, shard.document_units(d, params.level), params.n,
                                    params.threshold, store, smooth)
            provenance.record(result, int(doc_base[s] + d))
            # a document-level verdict is broadcast to all its blocks
            verdicts[s].share[first:stop] = result.share
            verdicts[s].duplicate[first:stop] = result.duplicate
            if result.duplicate.any():
                bounds = np.arange(first, stop + 1) if params.level == "block" else np.array([first, stop])
                at = np.flatnonzero(result.duplicate)
                units.append((s, bounds[at], bounds[at + 1]))
        del prepared
    cached.clear()
    # duplicate_of: the sets are given up for a table of who sent what to output
    owners = store.owner_table()
    del store
    for (s, firsts, stops), owner in zip(units, np.split(provenance.resolve(owners),
                                                         np.cumsum([len(f) for _, f, _ in units]))):
        for first, stop, doc in zip(firsts, stops, owner):
            verdicts[s].duplicate_of[first:stop] = doc
    del owners
    stats.seconds["dedup"] = round(time.perf_counter() - started - stats.seconds["order"], 3)

    # Pass 3: the context-sensitive pass on pages with duplicates, and the override tables.
    all_ids = np.array([i for ids in doc_ids for i in ids] or [""], dtype=object)
    for shard, shard_verdicts in zip(shards, verdicts):
        tokens = read_tokens(shard.tokens, ("doc_ids", "block_doc", "block_index"))
        table = shard_output(read_table(shard.blocks, BLOCK_COLUMNS), tokens, shard_verdicts, all_ids,
                             justext, params.n)
        _count(stats, table)
        write_table(pa.Table.from_pandas(table[DEDUP_SCHEMA.names], schema=DEDUP_SCHEMA, preserve_index=False),
                    shard.output)
    stats.seconds["total"] = round(time.perf_counter() - started, 3)
    if stats_path is not None:
        with atomic_path(stats_path) as tmp:
            tmp.write_text(json.dumps({"params": asdict(params), **asdict(stats)}, indent=1) + "\n")
    log.info("dedup: %d documents, %d tokens, blocks %s, %.1f s", stats.documents, stats.tokens,
             stats.blocks, stats.seconds["total"])
    return stats


BLOCK_COLUMNS = ["doc_id", "block_index", "cf_class", "final_class", "n_chars", "heading", "n_words"]


def context_blocks(shard: Shard, params: DedupParams) -> pd.DataFrame | None:
    """What the context-sensitive pass reads of a shard's blocks, when it judges blocks."""
    if params.level != "block":
        return None
    return read_table(shard.blocks, BLOCK_COLUMNS)


def shard_output(blocks: pd.DataFrame, tokens: dict, verdicts: _BlockVerdicts, all_ids: np.ndarray,
                 justext: JustextParams, min_words: int) -> pd.DataFrame:
    """Every block of the shard's de-duplicated documents with its class after de-duplication
    (plus `n_words`, for the stats). Pages without a duplicate block keep jusText's classes."""
    doc_ids = np.asarray(tokens["doc_ids"]).astype(str)
    keyed = pd.DataFrame({
        "doc_id": doc_ids[np.asarray(tokens["block_doc"])],
        "block_index": np.asarray(tokens["block_index"], np.int32),
        "dup_share": verdicts.share,
        "duplicate": verdicts.duplicate,
        "duplicate_of": pd.Series(all_ids[np.maximum(verdicts.duplicate_of, 0)]).where(verdicts.duplicate_of >= 0),
    })
    table = blocks.loc[blocks["doc_id"].isin(set(doc_ids)), BLOCK_COLUMNS]
    # blocks.parquet order is page order; a left merge keeps it
    table = table.merge(keyed, on=["doc_id", "block_index"], how="left", sort=False)
    duplicate = table["duplicate"].astype("boolean").fillna(False).to_numpy(bool)
    table["duplicate"] = duplicate
    final = table["final_class"].to_numpy(dtype=object).copy()
    page = table["doc_id"].to_numpy(dtype=object)
    starts = np.flatnonzero(np.concatenate(([True], page[1:] != page[:-1]))) if len(page) else np.empty(0, int)
    ends = np.append(starts[1:], len(page))
    touched = np.flatnonzero(np.add.reduceat(duplicate, starts) > 0) if len(page) else starts
    if len(touched):
        cf, n_chars, heading, n_words = (table[c].to_numpy() for c in ("cf_class", "n_chars", "heading", "n_words"))
        for first, last in zip(starts[touched], ends[touched]):
            final[first:last] = page_classes_after_dedup(
                cf[first:last].tolist(), final[first:last].tolist(), duplicate[first:last].tolist(),
                n_chars[first:last].tolist(), heading[first:last].tolist(), n_words[first:last].tolist(),
                justext, min_words)
    table["final_class"] = final
    return table[["doc_id", "block_index", "final_class", "duplicate_of", "dup_share", "n_words"]]


def _count(stats: DedupStats, table: pd.DataFrame) -> None:
    for cls, group in table.groupby("final_class"):
        stats.blocks[cls] = stats.blocks.get(cls, 0) + len(group)
        stats.words[cls] = stats.words.get(cls, 0) + int(group["n_words"].sum())
