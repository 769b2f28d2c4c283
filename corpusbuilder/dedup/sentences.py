"""Where a shard's sentences start, in the words its n-grams are made of, for sentence mode (the
token file's sentence starts, `tokenise.sentence_starts`, taken to the kept words of `dedup.kind`)."""

from __future__ import annotations

import numpy as np


def inner_sentence_starts(sentence_start: np.ndarray, kept_tokens: np.ndarray, word_offsets: np.ndarray) -> np.ndarray:
    """Sorted word positions at which a sentence starts inside its block (not at its first word).
    A sentence without a kept word (punctuation alone, under kind no-punct) has no start."""
    sentence = np.cumsum(sentence_start)[kept_tokens]
    at = np.flatnonzero(sentence[1:] != sentence[:-1]) + 1
    return np.setdiff1d(at, word_offsets).astype(np.int64)
