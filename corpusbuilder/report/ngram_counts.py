"""Duplicate content of a corpus in n-grams (thesis §3.6.4, Table 3.4's last columns).

A duplicate n-gram is one occurring twice or more in the whole corpus, so the count needs every
n-gram hash of the corpus at once. `RangeCounts` spills the hashes to disk by hash range and
counts one range at a time: every occurrence of an n-gram falls in the same range, so the sums
over the ranges are the corpus' counts, held in memory a range at a time. One ``np.unique`` over
a 2 GB crawl's 5 × 10⁸ hashes took 21 GB; at `COUNT_RANGES` ranges a range of 10¹¹ tokens' hashes
is 3 GB.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from types import TracebackType

import numpy as np

from corpusbuilder.contracts.tokenfile import TokenStream
from corpusbuilder.ngrams.hashing import shard_ngram_hashes

MEASURE_N = 10  # the thesis measures duplicate content with 10-grams on all tokens (§3.6.4)
COUNT_RANGES = 256  # at most 2**16: a range's key is a uint16


def block_ngrams(
    tokens: TokenStream,
    keep_tokens: np.ndarray | None = None,
    n: int = MEASURE_N,
    kind: str = "all",
) -> np.ndarray:
    """Hashes of every n-gram (tokens of ``kind``; all by default) inside one block, over the
    tokens of ``keep_tokens`` (all when ``None``; `tokenfile.kept_tokens` after de-duplication). A
    dropped stretch — a block, or sentences removed from one — ends the text before it, so no
    n-gram bridges the gap: only n-grams of the original text are counted."""
    return shard_ngram_hashes(tokens, kind, n, keep_tokens).hashes


@dataclass
class DuplicateCounts:
    """How much of a corpus is duplicate content, in n-grams (Table 3.4's last column)."""

    ngram_instances: int = 0
    distinct_ngrams: int = 0
    duplicate_instances: int = 0  # occurrences of the n-grams that occur 2+ times
    distinct_duplicates: int = 0  # n-gram types occurring 2+ times

    def __add__(self, other: DuplicateCounts) -> DuplicateCounts:
        """The counts of two disjoint sets of n-gram types (two hash ranges)."""
        return DuplicateCounts(
            *(getattr(self, f.name) + getattr(other, f.name) for f in fields(self))
        )


def duplicate_counts(hashes: Sequence[np.ndarray] | np.ndarray) -> DuplicateCounts:
    """Count n-gram hashes held in memory, all of them at once (`RangeCounts` for a corpus)."""
    if isinstance(hashes, np.ndarray):
        hashes = [hashes]
    everything = np.concatenate(
        [np.asarray(h, np.uint64) for h in hashes] + [np.empty(0, np.uint64)]
    )
    if len(everything) == 0:
        return DuplicateCounts()
    _, counts = np.unique(everything, return_counts=True)
    repeated = counts >= 2
    return DuplicateCounts(
        ngram_instances=int(len(everything)),
        distinct_ngrams=int(len(counts)),
        duplicate_instances=int(counts[repeated].sum()),
        distinct_duplicates=int(repeated.sum()),
    )


def by_range(hashes: np.ndarray, ranges: int) -> list[np.ndarray]:
    """The hashes of each hash range (hash modulo ``ranges``): every occurrence of an n-gram is in
    the same one, so the ranges' `duplicate_counts` add up to the corpus'."""
    hashes = np.asarray(hashes, np.uint64)
    # small integer keys: numpy's stable sort is a radix sort, linear in the hashes
    keys = (hashes % np.uint64(ranges)).astype(np.uint16)
    order = np.argsort(keys, kind="stable")
    bounds = np.searchsorted(keys[order], np.arange(ranges + 1))
    by_key = hashes[order]
    return [by_key[bounds[r] : bounds[r + 1]] for r in range(ranges)]


class RangeCounts:
    """`duplicate_counts` of every hash `add`ed, through files on disk (``directory``, a
    temporary one by default), one hash range in memory at a time. Use as a context manager."""

    def __init__(self, ranges: int = COUNT_RANGES, directory: Path | None = None):
        self._spill = tempfile.TemporaryDirectory(prefix="ngram-counts-", dir=directory)
        self._paths = [Path(self._spill.name) / f"{r}.u64" for r in range(ranges)]
        self._files = [open(path, "wb") for path in self._paths]

    def add(self, hashes: np.ndarray) -> None:
        for part, file in zip(by_range(hashes, len(self._files)), self._files, strict=True):
            part.tofile(file)

    def counts(self) -> DuplicateCounts:
        for file in self._files:
            file.close()
        total = DuplicateCounts()
        for path in self._paths:
            total += duplicate_counts(np.fromfile(path, np.uint64))
            path.unlink()
        return total

    def __enter__(self) -> RangeCounts:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        for file in self._files:
            file.close()
        self._spill.cleanup()
