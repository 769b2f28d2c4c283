"""Tokens and n-grams: the token selections of Table 3.3 and the 64-bit n-gram hashes that
G₂₊, block de-duplication and the report all use."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from corpusbuilder.contracts.tokenfile import TokenStream

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


def _start_mask(block_offsets: np.ndarray, n: int, tokens: int) -> np.ndarray:
    """Per position of a stream of `tokens` tokens that can start an n-gram (the first
    tokens - n + 1): does the n-gram starting there lie inside one block?"""
    mask = np.zeros(max(tokens - n + 1, 0), dtype=bool)
    if len(block_offsets) < 2:
        return mask
    mask[block_offsets[0] : max(block_offsets[-1] - n + 1, 0)] = True
    # an n-gram starting at i crosses boundary b when b - n < i < b: n - 1 scatters, one a
    # block, instead of a per-token block end
    inner = block_offsets[1:-1]
    for back in range(1, n):
        crossing = inner - back
        mask[crossing[(crossing >= 0) & (crossing < len(mask))]] = False
    return mask


def ngram_starts(block_offsets: np.ndarray, n: int) -> np.ndarray:
    """Start of every run of n tokens that lies inside one block."""
    block_offsets = np.asarray(block_offsets, dtype=np.int64)
    tokens = int(block_offsets[-1]) if len(block_offsets) else 0
    return np.flatnonzero(_start_mask(block_offsets, n, tokens))


def _window_hashes(token_hash: np.ndarray, n: int) -> np.ndarray:
    """h = h·B + t over uint64 (wrapping) for the n tokens from every position that has n
    tokens left, before the finaliser: 2(n - 1) contiguous in-place passes, no gather."""
    token_hash = np.asarray(token_hash, dtype=np.uint64)
    count = max(len(token_hash) - n + 1, 0)
    h = token_hash[:count].copy()
    for j in range(1, n):
        h *= _HASH_BASE
        h += token_hash[j : j + count]
    return h


def ngram_hashes(
    token_hash: np.ndarray, block_offsets: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """64-bit hash of every n-gram inside one block, and the index of its first token.

    h = h·B + t over uint64 (wrapping) for the n tokens, then the splitmix64 finaliser: n numpy
    passes over the token hashes, no loop per token.
    """
    starts = ngram_starts(block_offsets, n)
    h = _window_hashes(token_hash, n)
    if len(starts) < len(h):
        h = h[starts]
    return _splitmix64(h), starts


@dataclass(frozen=True)
class ShardNgramHashes:
    """The n-grams of a shard's token stream: the words (tokens of the kind) they are built
    from, each block's first word, each word's token, and every n-gram's hash and first word."""

    words: np.ndarray  # uint64
    word_offsets: np.ndarray  # int64, n_blocks + 1
    token_of_word: np.ndarray  # int64
    hashes: np.ndarray  # uint64
    starts: np.ndarray  # int64


def kind_words(
    tokens: TokenStream, kind: str, keep_tokens: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The words an n-gram of ``kind`` is built from, of a shard's token stream
    (`tokenfile.read_tokens`): their hashes, each block's first word and each word's token.
    ``keep_tokens`` drops tokens too, and a dropped stretch ends the block before it, so that
    no n-gram bridges it."""
    offsets = np.asarray(tokens.block_offsets, np.int64)
    keep = kind_mask(kind, tokens.is_punct, tokens.is_stop)
    if keep_tokens is not None:
        gaps = np.flatnonzero(np.diff(np.asarray(keep_tokens, np.int8))) + 1
        offsets = np.union1d(offsets, gaps)
        keep = keep & keep_tokens
    return select_tokens(np.asarray(tokens.token_hash, np.uint64), offsets, keep)


def shard_ngram_hashes(
    tokens: TokenStream, kind: str, n: int, keep_tokens: np.ndarray | None = None
) -> ShardNgramHashes:
    """Every n-gram of ``kind`` inside one block of a shard's token stream (`kind_words`), hashed
    as G₂₊ hashes it: the one chain from the token file to n-gram hashes that block dedup, its
    state and the report share."""
    words, word_offsets, token_of_word = kind_words(tokens, kind, keep_tokens)
    hashes, starts = ngram_hashes(words, word_offsets, n)
    return ShardNgramHashes(words, word_offsets, token_of_word, hashes, starts)


def chunk_ngram_counts(
    token_hash: np.ndarray, block_offsets: np.ndarray, n: int, owned: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Every distinct n-gram of one chunk with its count, as (sorted unique hashes, counts).

    The hashes of the chunk's n-grams sorted in place: equal n-grams are adjacent. Only n-grams
    starting before `owned` count: a chunk carries the next chunk's first n - 1 tokens so that no
    n-gram is lost at the cut.
    """
    owned = len(token_hash) if owned is None else owned
    block_offsets = np.asarray(block_offsets, dtype=np.int64)
    keep = _start_mask(block_offsets, n, len(token_hash))
    keep[owned:] = False
    hashes = _window_hashes(token_hash, n)[keep]
    del keep
    hashes = _splitmix64(hashes)
    hashes.sort()
    if not len(hashes):
        return hashes, np.empty(0, np.uint32)
    new = np.empty(len(hashes), dtype=bool)
    new[0] = True
    np.not_equal(hashes[1:], hashes[:-1], out=new[1:])
    first = np.flatnonzero(new)
    del new
    # the differences written as uint32 straight away: no int64 copy of them per n-gram
    counts = np.empty(len(first), np.uint32)
    np.subtract(first[1:], first[:-1], out=counts[:-1], casting="unsafe")
    counts[-1] = len(hashes) - first[-1]
    return hashes[first], counts


def _splitmix64(z: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, in place on `z` (callers pass an array of their own)."""
    shifted = z >> np.uint64(30)
    z ^= shifted
    z *= _MIX_1
    np.right_shift(z, np.uint64(27), out=shifted)
    z ^= shifted
    z *= _MIX_2
    np.right_shift(z, np.uint64(31), out=shifted)
    z ^= shifted
    return z


# A run stores counts as uint32; a sum past it saturates there instead of wrapping, so an n-gram
# seen 2³² times stays in G₂₊ (its count is then a lower bound).
COUNT_MAX = np.iinfo(np.uint32).max


def sum_equal_hashes(hashes: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Collapse runs of equal hashes in sorted input, summing their counts (saturating at
    COUNT_MAX)."""
    if len(hashes) == 0:
        return hashes, counts.astype(np.uint32)
    first = np.flatnonzero(np.concatenate(([True], hashes[1:] != hashes[:-1])))
    if len(first) == len(hashes):
        return hashes, counts.astype(np.uint32)
    summed = np.add.reduceat(counts.astype(np.uint64), first)
    return hashes[first], np.minimum(summed, COUNT_MAX).astype(np.uint32)
