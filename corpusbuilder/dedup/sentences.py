"""Where a shard's sentences and whitespace chunks start, in the words its n-grams are made of,
for sentence and span modes (the token file's flags, `tokenise.sentence_starts` and
`tokenise.chunk_openers`, taken to the kept words of `dedup.kind`); and the removed parts of a
block in its text's whitespace chunks (`removed_chunks`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from corpusbuilder.contracts.tokenfile import TokenStream


def inner_sentence_starts(
    sentence_start: np.ndarray, kept_tokens: np.ndarray, word_offsets: np.ndarray
) -> np.ndarray:
    """Sorted word positions at which a sentence starts inside its block (not at its first word).
    A sentence without a kept word (punctuation alone, under kind no-punct) has no start."""
    sentence = np.cumsum(sentence_start)[kept_tokens]
    at = np.flatnonzero(sentence[1:] != sentence[:-1]) + 1
    return np.setdiff1d(at, word_offsets).astype(np.int64)


def first_words_of_chunks(chunk_start: np.ndarray, kept_tokens: np.ndarray) -> np.ndarray:
    """Per kept word: is it the first kept word of its whitespace chunk."""
    chunk = np.cumsum(chunk_start)[kept_tokens]
    return np.concatenate(([True], chunk[1:] != chunk[:-1]))[: len(chunk)]


def removed_chunks(
    first: np.ndarray, end: np.ndarray, block_end: np.ndarray, tokens: TokenStream
) -> tuple[np.ndarray, np.ndarray]:
    """Removed token ranges [first, end) (shard-wide; `block_end`: the token after each one's
    block) in their blocks' whitespace chunks (``text.split()``): the chunks all of whose tokens
    go, with the chunks without a token that follow them (`tokenfile.TokenStream.chunk_end`). A
    chunk the range cuts stays whole, as the kept text is written."""
    chunk_start = np.asarray(tokens.chunk_start, bool)
    chunk_end = np.asarray(tokens.chunk_end, np.int64)
    offsets = np.asarray(tokens.block_offsets, np.int64)
    # where each token's chunk begins: where the chunk before it in its block ends, or 0
    opener = np.maximum.accumulate(np.where(chunk_start, np.arange(len(chunk_start)), 0))
    first_of_block = np.zeros(len(chunk_start) + 1, bool)
    first_of_block[offsets[:-1]] = True
    begin = np.where(first_of_block[opener], 0, chunk_end[np.maximum(opener - 1, 0)])
    chunk_first = np.where(chunk_start[first], begin[first], chunk_end[first])
    at_boundary = (end == block_end) | chunk_start[np.minimum(end, len(chunk_start) - 1)]
    chunk_last = np.where(at_boundary, chunk_end[end - 1], begin[end - 1])
    return chunk_first, chunk_last
