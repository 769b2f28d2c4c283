"""Gopher's n-gram repetition signals (Rae et al. 2021, App. A, Table A1) of a whole shard's
documents at once: one hash pass and one count per n over the shard's tokens, each n-gram's
hash salted with its document's, so that n-grams count within their document only. The
per-document functions of `corpusbuilder.quality.signals` (`top_ngram_chars`,
`duplicate_ngram_chars`) state the same signals for one token sequence."""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

import numpy as np

from corpusbuilder.common.arrays import factorize

if TYPE_CHECKING:
    pass

NGRAM_PRIME = np.uint64(0x100000001B3)
_SALT = np.uint64(0x9E3779B97F4A7C15)
NGRAM_SIGNALS = (
    *(f"top_{n}gram_char_frac" for n in (2, 3, 4)),
    *(f"dup_{n}gram_char_frac" for n in range(5, 11)),
)


def _first_positions(codes: np.ndarray, count: int) -> np.ndarray:
    """Per position: the first position of its code."""
    positions = np.arange(len(codes))
    first = np.empty(count, np.int64)
    first[codes[::-1]] = positions[::-1]  # the last write of each code is its first position
    return first[codes]


def _top_chars(counts: np.ndarray, chars: np.ndarray, docs: np.ndarray) -> tuple:
    """(documents, characters of all occurrences of each one's most frequent n-gram, the
    earliest seen of equally frequent ones), given each occurrence's n-gram's count, in
    document order: the first occurrence of a most frequent n-gram is the first position at
    the top count."""
    starts = np.flatnonzero(np.concatenate([[True], docs[1:] != docs[:-1]]))
    top = np.maximum.reduceat(counts, starts)
    at_top = np.flatnonzero(counts == np.repeat(top, np.diff(np.append(starts, len(counts)))))
    first = at_top[np.concatenate([[True], docs[at_top][1:] != docs[at_top][:-1]])]
    return docs[starts], chars[first] * top


def _duplicate_chars(codes, chars, docs, positions: np.ndarray, n: int, total: np.ndarray):
    """Add to ``total`` (per document) the characters of its n-grams that repeat an earlier one,
    read left to right skipping the n tokens of each repeat (`signals.duplicate_ngram_chars`).
    ``positions`` are the n-grams' first tokens in the shard: a repeat's skip (the n - 1 tokens
    after it) stays inside its document, whose last n - 1 tokens start no n-gram."""
    first_at = _first_positions(codes, int(codes.max()) + 1)
    later = np.flatnonzero(first_at < np.arange(len(codes)))
    if not len(later):
        return
    read: set[int] = set()
    skip_starts: list[int] = []
    free = 0
    for index, code, origin, size, doc in zip(
        positions[later].tolist(),
        codes[later].tolist(),
        positions[first_at[later]].tolist(),
        chars[later].tolist(),
        docs[later].tolist(),
    ):
        if index < free:
            continue
        window = bisect.bisect_right(skip_starts, origin) - 1
        if window < 0 or origin >= skip_starts[window] + n - 1 or code in read:
            total[doc] += size
            skip_starts.append(index + 1)
            free = index + n
        else:
            read.add(code)


def shard_ngram_signals(
    keys: np.ndarray, lengths: np.ndarray, doc_offsets: np.ndarray, sizes: np.ndarray
) -> dict[str, np.ndarray]:
    """``top_{2,3,4}gram_char_frac`` and ``dup_{5..10}gram_char_frac`` of every document, given
    its tokens' random keys and lengths (concatenated, documents at ``doc_offsets``) and its
    text's characters (``sizes``, at least 1)."""
    documents = len(doc_offsets) - 1
    tokens = len(keys)
    doc_of = np.repeat(np.arange(documents), np.diff(doc_offsets))
    doc_end = doc_offsets[1:][doc_of]
    salt = (doc_of.astype(np.uint64) + np.uint64(1)) * _SALT
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    signals: dict[str, np.ndarray] = {}
    hashes = keys
    # the n-grams that may repeat: an n-gram repeats only where its first n - 1 tokens do, so
    # each n counts only the positions whose (n-1)-gram repeats
    candidates = np.arange(tokens)
    first_tokens = doc_offsets[:-1]
    for n in range(2, 11):
        name = NGRAM_SIGNALS[n - 2]
        value = np.zeros(documents, np.int64)
        signals[name] = value
        if tokens < n:
            continue
        # the n-grams' hashes from the (n-1)-grams' (`signals.ngram_hashes`)
        hashes = hashes[:-1] * NGRAM_PRIME ^ keys[n - 1 :]
        candidates = candidates[candidates + n <= doc_end[candidates]]
        if n < 5:  # with no repeat, a document's top n-gram is its first, once
            long = np.flatnonzero(np.diff(doc_offsets) >= n)
            start = first_tokens[long]
            value[long] = offsets[start + n] - offsets[start] + n - 1
        if not len(candidates):
            continue
        codes, _ = factorize(hashes[candidates] ^ salt[candidates])
        counts = np.bincount(codes)[codes]
        repeated = counts > 1
        candidates, codes, counts = candidates[repeated], codes[repeated], counts[repeated]
        if not len(candidates):
            continue
        docs = doc_of[candidates]
        if n < 5:  # an n-gram's characters as its words joined by spaces
            chars = offsets[candidates + n] - offsets[candidates] + n - 1
            found, top = _top_chars(counts, chars, docs)
            value[found] = top
        else:  # the words joined without spaces
            chars = offsets[candidates + n] - offsets[candidates]
            _duplicate_chars(codes, chars, docs, candidates, n, value)
    return {name: value / sizes for name, value in signals.items()}
