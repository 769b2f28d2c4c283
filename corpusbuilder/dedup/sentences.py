"""A shard's sentences in the words its n-grams are made of, for sentence mode (the token file's
sentence starts, `tokenise.sentence_starts`, taken to the kept words of `dedup.kind`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Sentences:
    """A shard's sentences in the words n-grams are made of (a sentence without such a word has
    no start here): where each starts, whether that is inside its block (not its first word),
    and its index among its block's sentences (`tokenise.block_sentences`)."""

    at: np.ndarray  # int64, sorted word positions
    inner: np.ndarray  # bool
    index: np.ndarray  # int32

    @classmethod
    def of(cls, sentence_start: np.ndarray, block_offsets: np.ndarray, kept_tokens: np.ndarray,
           word_offsets: np.ndarray) -> Sentences:
        sentence = np.cumsum(sentence_start) - 1  # of every token
        word_sentence = sentence[kept_tokens]
        at = np.flatnonzero(np.concatenate(([True], word_sentence[1:] != word_sentence[:-1]))[:len(word_sentence)])
        block = np.searchsorted(word_offsets, at, side="right") - 1
        index = word_sentence[at] - sentence[np.asarray(block_offsets, np.int64)[block]]
        return cls(at.astype(np.int64), at != word_offsets[block], index.astype(np.int32))

    def index_at(self, words: np.ndarray) -> np.ndarray:
        """The index in its block of the sentence starting at each of `words`."""
        return self.index[np.searchsorted(self.at, words)]
