"""Where a shard's sentences and whitespace chunks start, in the words its n-grams are made of,
for sentence and span modes (the token file's flags, `tokenise.sentence_starts` and
`tokenise.chunk_openers`, taken to the kept words of `dedup.kind`)."""

from __future__ import annotations

import numpy as np


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
