"""Scores of an extractor's output against gold (thesis §2.9.1, §2.9.6; Evert's cleaneval.py).

Every measure is reduced to counts (true positives, output size, gold size) so that scores over
a dataset are micro-averaged — the dataset scored "as if it were a single big document" (§2.9.1)
— by adding counts page by page and dividing once.

* word level (:func:`aligned_word_counts`): cleaneval.py's method (§2.9.6): output and gold are
  cut into words, the two word sequences are aligned (cleaneval.py uses difflib; we compute the
  exact longest common subsequence, which difflib approximates — see :func:`lcs_length`), and
  aligned words are true positives. Weighted by words. As in the thesis' runs (``cleaneval.py
  -a``) non-ASCII characters are removed first, so that encoding mistakes do not count as
  extraction mistakes.
* bag of words (:func:`bag_of_words_counts`): the multiset intersection of lower-cased
  whitespace tokens, each character of a script written without spaces (Chinese, Japanese,
  Thai: `common.scripts`) a token of its own; order-free, so it forgives an extractor that
  reorders blocks.
* snippets (:func:`snippet_counts`, trafilatura's evaluation): each ``with`` snippet found in the
  output is a true positive, each one missing a false negative; each ``without`` snippet found is
  a false positive. Precision = TP / (TP + FP), recall = TP / (TP + FN). A snippet is "found"
  when it is a substring of the output once whitespace runs in both are collapsed to one space
  (extractors differ in how they break lines, the snippets do not care). Weighted by snippets.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from corpusbuilder.common.scripts import unit_tokens


@dataclass(frozen=True)
class Counts:
    """What a score is computed from: matched units, units output, units in the gold."""

    matched: int = 0
    output: int = 0
    gold: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.matched + other.matched, self.output + other.output, self.gold + other.gold
        )


@dataclass(frozen=True)
class Scores:
    precision: float
    recall: float
    f1: float
    f05: float


def f_beta(precision: float, recall: float, beta: float) -> float:
    """(1 + β²)·P·R / (β²·P + R) (§2.9.1); 0 when either is 0 or undefined (NaN)."""
    if not precision > 0 or not recall > 0:  # also catches NaN
        return 0.0
    return (1 + beta * beta) * precision * recall / (beta * beta * precision + recall)


def scores(counts: Counts) -> Scores:
    """P = matched / output, R = matched / gold, F1 and F0.5 (§2.9.1).

    Precision of an empty output and recall of an empty gold are undefined (NaN), not 0 or 1:
    a threshold sweep that keeps nothing should leave a gap in the plot, not a fake point.
    """
    precision = counts.matched / counts.output if counts.output else math.nan
    recall = counts.matched / counts.gold if counts.gold else math.nan
    return Scores(precision, recall, f_beta(precision, recall, 1.0), f_beta(precision, recall, 0.5))


# "?" goes too: it is what a lossy conversion leaves for a non-ASCII character (L3S-GN1's
# annotated pages read "Kosovo?s" where the page has "Kosovo’s"). Removed on both sides, a
# genuine "?" costs nothing.
_NON_ASCII = re.compile(r"[^\x00-\x7f?]+|\?+")


def cleaneval_words(text: str, ascii_only: bool = True) -> list[str]:
    """Whitespace-separated words, non-ASCII characters and "?" removed
    first (cleaneval.py ``-a``)."""
    if ascii_only:
        text = _NON_ASCII.sub("", text)
    return text.split()


def lcs_length(first: Sequence, second: Sequence) -> int:
    """Length of a longest common subsequence, by bit-parallel dynamic programming.

    Crochemore et al.'s bit-vector recurrence (V ← (V + U) | (V − U), U = V & match-mask of the
    next item) runs one Python big-int operation per item of ``second`` over a bit per item of
    ``first``: O(n·m / 64) machine-word steps, a few milliseconds for pages of thousands of words
    where difflib takes seconds. The LCS is the optimal word alignment that difflib's greedy
    longest-block-first matching approximates (difflib's count is never larger; on the shared
    gold sets the two differ by at most a word per page).
    """
    masks: dict = {}
    for position, item in enumerate(first):
        masks[item] = masks.get(item, 0) | (1 << position)
    all_ones = (1 << len(first)) - 1
    vector = all_ones
    for item in second:
        matched = vector & masks.get(item, 0)
        vector = ((vector + matched) | (vector - matched)) & all_ones
    return len(first) - vector.bit_count()


def aligned_word_counts(output: str, gold: str, ascii_only: bool = True) -> Counts:
    """Word-level counts: aligned words = a longest common subsequence of
    the word sequences (§2.9.6)."""
    output_words = cleaneval_words(output, ascii_only)
    gold_words = cleaneval_words(gold, ascii_only)
    return Counts(lcs_length(output_words, gold_words), len(output_words), len(gold_words))


def bag_of_words_counts(output: str, gold: str) -> Counts:
    """Counts from the multiset intersection of lower-cased whitespace tokens, a character each
    in scripts without spaces (else a Chinese paragraph is one token, all or nothing)."""
    output_bag = Counter(unit_tokens(output.lower()))
    gold_bag = Counter(unit_tokens(gold.lower()))
    matched = sum((output_bag & gold_bag).values())
    return Counts(matched, sum(output_bag.values()), sum(gold_bag.values()))


def _collapse_whitespace(text: str) -> str:
    return " ".join(text.split())


def snippet_counts(output: str, with_snippets, without_snippets) -> Counts:
    """Snippet counts: matched = ``with`` found (TP); output = TP + ``without`` found (FP);
    gold = all ``with`` snippets (TP + FN). See the module docstring."""
    text = _collapse_whitespace(output)
    found_with = sum(_collapse_whitespace(s) in text for s in with_snippets)
    found_without = sum(_collapse_whitespace(s) in text for s in without_snippets)
    return Counts(found_with, found_with + found_without, len(with_snippets))


# --- document fragmentation (§2.9.10, Table 2.11) -------------------------------------------------


def fragment_lengths(block_lengths: Sequence[int], kept: Sequence[bool]) -> list[int]:
    """Lengths of a cleaned document's fragments (§2.9.10).

    A fragment is a maximal run of consecutive kept blocks: "continuous sequences of good text
    separated by gaps after removed text". Its length is the sum of its blocks' lengths
    (characters in the thesis).
    """
    fragments: list[int] = []
    in_fragment = False
    for length, keep in zip(block_lengths, kept, strict=True):
        if keep and in_fragment:
            fragments[-1] += length
        elif keep:
            fragments.append(length)
        in_fragment = keep
    return fragments


@dataclass(frozen=True)
class Fragmentation:
    """Table 2.11's three numbers over a dataset."""

    documents: int
    fragments: int
    mean_length: float  # characters per fragment over the whole dataset
    median_length: float
    fragments_per_document: float  # documents that kept nothing count, with 0 fragments


def fragmentation(per_document: Sequence[Sequence[int]]) -> Fragmentation:
    """Summarise per-document fragment lengths (from :func:`fragment_lengths`) as Table 2.11."""
    lengths = [length for document in per_document for length in document]
    documents = len(per_document)
    return Fragmentation(
        documents,
        len(lengths),
        statistics.fmean(lengths) if lengths else math.nan,
        float(statistics.median(lengths)) if lengths else math.nan,
        len(lengths) / documents if documents else math.nan,
    )
