# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The quality stage's n-gram signals, compiled (`ngrams.shard_ngram_signals`, which is the
reference where this is not built): per document, a small open-addressing table of the n-gram
hashes per n, in cache, instead of a shard's hashes factorised per n in numpy."""

import numpy as np

from libc.stdint cimport int64_t, uint64_t

from corpusbuilder.quality._hashing cimport fib_slot, fnv_prime

cdef class _Counts:
    """An open-addressing table of 64-bit n-gram hashes: each one's count and first position.
    A stamp marks the entries of the current use, so that a table is emptied in no time."""

    cdef uint64_t[::1] keys
    cdef int64_t[::1] stamps, counts, firsts
    cdef int64_t stamp
    cdef uint64_t mask
    cdef int shift

    def __init__(self, Py_ssize_t items):
        cdef Py_ssize_t size = 16
        while size < 2 * items:
            size *= 2
        self.keys = np.zeros(size, np.uint64)
        self.stamps = np.full(size, -1, np.int64)
        self.counts, self.firsts = np.zeros(size, np.int64), np.zeros(size, np.int64)
        self.stamp = -1

    cdef void clear(self, Py_ssize_t items) noexcept:
        """Empty, for at most ``items`` keys (a table as small as they need, kept in cache)."""
        cdef uint64_t size = 16
        while size < 2 * <uint64_t> items:
            size *= 2
        self.mask, self.shift = size - 1, 64
        while size > 1:
            size >>= 1
            self.shift -= 1
        self.stamp += 1

    cdef Py_ssize_t slot(self, uint64_t key) noexcept:
        """The entry of ``key``: its own, or the empty one where it goes."""
        cdef uint64_t at = fib_slot(key, self.shift)
        while self.stamps[at] == self.stamp and self.keys[at] != key:
            at = (at + 1) & self.mask
        return at

    cdef Py_ssize_t add(self, uint64_t key, int64_t position) noexcept:
        """Count ``key`` once more; its entry (which stays its own until `clear`)."""
        return self.add_at(self.slot(key), key, position)

    cdef Py_ssize_t add_at(self, Py_ssize_t at, uint64_t key, int64_t position) noexcept:
        """`add`, ``at`` the entry `slot` gave for ``key``."""
        if self.stamps[at] != self.stamp:
            self.stamps[at], self.keys[at] = self.stamp, key
            self.counts[at], self.firsts[at] = 0, position
        self.counts[at] += 1
        return at


def ngram_signals(const int64_t[::1] ids, const uint64_t[::1] type_keys,
                  const int64_t[::1] type_lengths, const int64_t[::1] doc_offsets,
                  const int64_t[::1] sizes):
    """`ngrams.shard_ngram_signals` of the type ids ``ids`` (each type's random key and length
    read here, not gathered for the shard's tokens first), document by document:
    ``top_{2,3,4}gram_char_frac`` and
    ``dup_{5..10}gram_char_frac`` (columns) of each document (rows). As there, an n-gram is
    counted only where its (n-1)-gram repeats, by its 64-bit hash; a repeat of n >= 5 is found
    reading left to right, as datatrove's find_all_duplicate reads it."""
    cdef Py_ssize_t docs = len(doc_offsets) - 1, doc, longest = 0, first, tokens, n, k, i
    cdef Py_ssize_t candidates, repeated, best_first, slot
    cdef int64_t count, best, total, free, position
    for doc in range(docs):
        longest = max(longest, doc_offsets[doc + 1] - doc_offsets[doc])
    out = np.zeros((docs, 9))
    cdef double[:, ::1] values = out
    cdef uint64_t[::1] hashes = np.zeros(longest + 1, np.uint64), keys = np.zeros(longest + 1, np.uint64)
    cdef int64_t[::1] at = np.zeros(longest + 1, np.int64), ends = np.zeros(longest + 1, np.int64)
    cdef int64_t[::1] entry = np.zeros(longest + 1, np.int64)  # each candidate's, in `counts`
    cdef _Counts counts = _Counts(longest), seen = _Counts(longest)
    for doc in range(docs):
        first, tokens = doc_offsets[doc], doc_offsets[doc + 1] - doc_offsets[doc]
        ends[0] = 0
        for k in range(tokens):
            keys[k] = hashes[k] = type_keys[ids[first + k]]
            ends[k + 1] = ends[k] + type_lengths[ids[first + k]]
        candidates = 0
        for k in range(tokens - 1):
            at[candidates] = k
            candidates += 1
        for n in range(2, 11):
            if tokens < n:
                break
            for k in range(candidates):  # the n-grams' hashes from the (n-1)-grams'
                i = at[k]
                hashes[i] = hashes[i] * fnv_prime() ^ keys[i + n - 1]
            counts.clear(candidates)
            for k in range(candidates):
                entry[k] = counts.add(hashes[at[k]], at[k])
            repeated = 0
            best, best_first = 1, 0  # with no repeat, the top n-gram is the first, once
            for k in range(candidates):
                i = at[k]
                count = counts.counts[entry[k]]
                if count > 1:
                    at[repeated] = i
                    repeated += 1
                    if n < 5:
                        position = counts.firsts[entry[k]]
                        if count > best or (count == best and position < best_first):
                            best, best_first = count, position
            if n < 5:
                values[doc, n - 2] = (ends[best_first + n] - ends[best_first] + n - 1) * best
            else:
                seen.clear(repeated)
                total, free = 0, 0
                for k in range(repeated):
                    i = at[k]
                    if i < free:
                        continue
                    slot = seen.slot(hashes[i])
                    if seen.stamps[slot] == seen.stamp:
                        total += ends[i + n] - ends[i]
                        free = i + n
                    else:
                        seen.add_at(slot, hashes[i], i)
                values[doc, n - 2] = total
            candidates = 0  # the (n+1)-grams that may repeat start at a repeated n-gram
            for k in range(repeated):
                if at[k] + n + 1 <= tokens:
                    at[candidates] = at[k]
                    candidates += 1
        for n in range(9):
            values[doc, n] /= sizes[doc]
    return out
