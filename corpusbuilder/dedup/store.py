"""G₂₊ and G_out (thesis §3.5.1): the duplicate n-grams, and which of them are already in the
output — a sorted array with a bit per entry, or Judy arrays. Both answer for a whole shard at
once; neither keeps an owner per n-gram (see `provenance_log`)."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from corpusbuilder.dedup.params import NO_DOCUMENT, DedupParams


def truncate_hashes(hashes: np.ndarray, hash_bits: int) -> np.ndarray:
    """Keep the low `hash_bits` bits, in place (the n-gram hash finaliser spreads entropy over
    all bits)."""
    if hash_bits >= 64:
        return hashes
    return np.bitwise_and(hashes, np.uint64((1 << hash_bits) - 1), out=hashes)


def searchsorted_in_order(
    keys: np.ndarray, needles: np.ndarray, chunk: int = 1 << 20
) -> np.ndarray:
    """`np.searchsorted(keys, needles)` of uint64 hashes, each chunk of needles searched grouped
    by their leading 16 bits (of the keys' width): numpy starts each search where the last one
    ended, so needles grouped by their leading bits touch the keys' pages in order instead of
    missing the cache at each step of each search. The groups are a radix sort of a 16-bit key,
    where sorting the needles took a comparison sort: 0.26 s against 0.50 s sorted and 1.7 s
    unordered, 3.0 M hashes in 2.0 M keys (2026-12-03). In chunks, so that the order's copies
    hold 26 MB whatever the shard's size."""
    positions = np.empty(len(needles), np.int64)
    # the keys' leading 16 bits: truncated hashes (dedup.hash_bits) leave the top ones zero
    shift = np.uint64(max(int(keys[-1]).bit_length() - 16, 0) if len(keys) else 0)
    for begin in range(0, len(needles), chunk):
        part = needles[begin : begin + chunk]
        # needles above the keys' range all go last, where any order finds them
        leading = np.right_shift(part, shift)
        order = np.argsort(
            np.minimum(leading, np.uint64(0xFFFF), out=leading).astype(np.uint16), kind="stable"
        )
        del leading
        positions[begin + order] = np.searchsorted(keys, part[order])
    return positions


def unique_first(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(hashes, return_index=True)` of uint64 hashes: the sorted distinct hashes and
    where each first occurs. Sorted as one array of keys, each hash's leading bits with its
    position in the low bits below them, which numpy sorts without an index array (1.7x faster
    than the stable argsort on 2.7 M hashes, 2026-12-03); hashes whose leading bits coincide
    come out by position, and a stable sort of the nearly sorted hashes puts them right."""
    count = len(hashes)
    bits = np.uint64(max(count - 1, 1).bit_length())
    keys = (hashes >> bits) << bits
    keys |= np.arange(count, dtype=np.uint64)
    keys.sort()
    where = (keys & ((np.uint64(1) << bits) - np.uint64(1))).astype(np.int64)
    del keys
    ordered = hashes[where]
    if np.any(ordered[1:] < ordered[:-1]):
        order = np.argsort(ordered, kind="stable")  # a merge of runs: cheap on sorted data
        ordered, where = ordered[order], where[order]
    first = np.empty(count, bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first], where[first]


def _set_bits(bitmap: np.ndarray, positions: np.ndarray) -> None:
    """Set the bits at `positions` of a uint8 bitmap (repeated positions are fine)."""
    np.bitwise_or.at(bitmap, positions >> 3, np.left_shift(1, positions & 7).astype(np.uint8))


def _test_bits(bitmap: np.ndarray, positions: np.ndarray) -> np.ndarray:
    return (bitmap[positions >> 3] >> (positions & 7).astype(np.uint8)) & 1 == 1


class _NgramSet(ABC):
    """What both backends share: hash-level calls built on `locate`/`in_output`/`send`, which
    take handles (a shard's duplicate n-grams are located once: G₂₊ ∪ G_out never changes)."""

    @abstractmethod
    def locate(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...

    @abstractmethod
    def in_output(self, handles: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def send(self, handles: np.ndarray) -> None: ...

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
        self.keys: np.ndarray = np.asarray(duplicates, dtype=np.uint64)
        self.bits = np.zeros((len(self.keys) + 7) // 8, dtype=np.uint8)

    def locate(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Membership in G₂₊ ∪ G_out and, for the members, their positions in the array."""
        if len(self.keys) == 0:
            return np.zeros(len(hashes), bool), np.empty(0, np.int64)
        at = np.minimum(searchsorted_in_order(self.keys, hashes), len(self.keys) - 1)
        found = self.keys[at] == hashes
        return found, at[found]

    def in_output(self, handles: np.ndarray) -> np.ndarray:
        return _test_bits(self.bits, handles)

    def send(self, handles: np.ndarray) -> None:
        _set_bits(self.bits, handles)

    def owner_table(self) -> PositionOwners:
        """Give up the sets (the pass is over) for a table of who sent
        each n-gram: 4 bytes an entry."""
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
            _set_bits(self.screen, hashes[start : start + chunk] >> self._shift)

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
        return np.fromiter(
            (get(h, NO_DOCUMENT) for h in handles.tolist()), dtype=np.int32, count=len(handles)
        )


def duplicate_ngram_store(duplicates: np.ndarray, params: DedupParams):
    """G₂₊ in the configured backend, at the configured hash width. `duplicates` (sorted unique
    hashes: G₂₊'s parts read into one array) is taken over and reused in place: no second copy is
    made."""
    duplicates = truncate_hashes(np.asarray(duplicates, dtype=np.uint64), params.hash_bits)
    if params.hash_bits < 64:
        duplicates.sort()  # truncation breaks the order; two hashes may now coincide
        duplicates = duplicates[: unique_sorted_in_place(duplicates)]
    if params.backend == "judy":
        return JudyNgrams(duplicates, params.hash_bits)
    return SortedArrayNgrams(duplicates)


def unique_sorted_in_place(values: np.ndarray, chunk: int = 1 << 16) -> int:
    """Drop repeats from a sorted array by moving its distinct values to the front, a chunk at a
    time (a mask over the whole array would cost a byte per entry); returns how many there are."""
    kept = 0
    for start in range(0, len(values), chunk):
        part = values[start : start + chunk]
        new = np.ones(len(part), bool)
        new[1:] = part[1:] != part[:-1]
        if kept:
            new[0] = part[0] != values[kept - 1]
        distinct = part[new]  # a copy: the front being written may overlap this chunk
        values[kept : kept + len(distinct)] = distinct
        kept += len(distinct)
    return kept
