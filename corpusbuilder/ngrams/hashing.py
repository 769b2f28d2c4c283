"""Tokens and n-grams: the token selections of Table 3.3 and the 64-bit n-gram hashes that
G₂₊, block de-duplication and the report all use."""

from __future__ import annotations

import numpy as np

NGRAM_KINDS = ("all", "no-punct", "no-punct-no-stop")  # thesis Table 3.3
MIN_N, MAX_N = 3, 20

# Polynomial rolling hash over the tokens' own 64-bit hashes, then splitmix64's finaliser so
# that n-grams differing only in their last token still differ in every bit of the result.
_HASH_BASE = np.uint64(0x9E3779B97F4A7C15)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)


def kind_mask(kind: str, is_punct: np.ndarray, is_stop: np.ndarray) -> np.ndarray:
    """Keep-mask of the tokens an n-gram of `kind` is built from (thesis Table 3.3)."""
    if kind == "all":
        return np.ones(len(is_punct), dtype=bool)
    if kind == "no-punct":
        return ~np.asarray(is_punct, dtype=bool)
    if kind == "no-punct-no-stop":
        return ~(np.asarray(is_punct, dtype=bool) | np.asarray(is_stop, dtype=bool))
    raise ValueError(f"unknown n-gram kind {kind!r}; expected one of {', '.join(NGRAM_KINDS)}")


def select_tokens(
    token_hash: np.ndarray, block_offsets: np.ndarray, keep: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kept tokens, their blocks' new offsets and each kept token's index in the input."""
    if keep.all():  # kind "all": no copy of the tokens
        return token_hash, np.asarray(block_offsets, dtype=np.int64), np.arange(len(token_hash))
    kept_before = np.concatenate(([0], np.cumsum(keep, dtype=np.int64)))
    index = np.flatnonzero(keep)
    return token_hash[index], kept_before[block_offsets], index


def ngram_starts(block_offsets: np.ndarray, n: int) -> np.ndarray:
    """Start of every run of n tokens that lies inside one block."""
    block_offsets = np.asarray(block_offsets, dtype=np.int64)
    lengths = np.diff(block_offsets)
    counts = np.maximum(lengths - n + 1, 0)
    # For each start: its block's first offset plus its rank within the block.
    first = np.repeat(block_offsets[:-1], counts)
    rank = np.arange(counts.sum(), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return first + rank


def ngram_hashes(
    token_hash: np.ndarray, block_offsets: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """64-bit hash of every n-gram inside one block, and the index of its first token.

    h = h·B + t over uint64 (wrapping) for the n tokens, then the splitmix64 finaliser: n numpy
    passes over the token hashes, no loop per token.
    """
    token_hash = np.asarray(token_hash, dtype=np.uint64)
    starts = ngram_starts(block_offsets, n)
    h = token_hash[starts]
    for j in range(1, n):
        h *= _HASH_BASE
        h += token_hash[starts + j]
    return _splitmix64(h), starts


def _splitmix64(z: np.ndarray) -> np.ndarray:
    z = z ^ (z >> np.uint64(30))
    z *= _MIX_1
    z ^= z >> np.uint64(27)
    z *= _MIX_2
    z ^= z >> np.uint64(31)
    return z
