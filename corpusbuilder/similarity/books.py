"""How two long paginated documents relate, page by page (Spasojević & Poncin §IV).

Two scans or editions of a book: the same pages (SAME_PAGINATION), the same text re-paginated
(DIFFERENT_PAGINATION), one a contiguous part of the other (CONTIGUOUS_SUBSET), or only some text in
common (OVERLAPPING_TEXT). Signals come from the books' and the pages' min-hash signatures
(`similarity`), the class from the paper's hand-set filters (Eq. 4). `corpusbuilder compare-books`
runs it on two text files whose pages are separated by form feeds (as `pdftotext` writes them).

The paper classifies only pairs its first step found similar ("books with some amount of
similarity", §IV-A: its filter removes "books with no overlap", §III-D), so none of its four
classes means "nothing in common". A pair given here directly may be such a pair: NO_OVERLAP,
when no page of one resembles a page of the other and the books' own resemblance is below the
page threshold too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from corpusbuilder.similarity.minhash import (
    MinHashParams,
    document_signatures,
    estimated_resemblance,
)

PAGE_BREAK = "\f"

# a pair the paper's similar-books step would have removed before classifying (module docstring)
NO_OVERLAP = "NO_OVERLAP"

# a page pair below this resemblance is no match (relation_signals' min_page_similarity)
MIN_PAGE_SIMILARITY = 0.1


def page_signatures(pages: Sequence[str], params: MinHashParams = MinHashParams()) -> np.ndarray:
    """(pages × k_page) min-hashes; a page is a group of blocks (or a printed page)."""
    return document_signatures(pages, replace(params, k=params.k_page))


def page_similarity_matrix(pages_a: np.ndarray, pages_b: np.ndarray) -> np.ndarray:
    return estimated_resemblance(pages_a[:, None, :], pages_b[None, :, :])


@dataclass(frozen=True)
class RelationSignals:
    """§IV-B signals for a pair of paginated documents; book 1 is the one with denser pages."""

    book_similarity: float
    page_similarity: float  # mean similarity over matching pages
    slope: float  # linear fit p2 = a·p1 + b of matching page numbers (Eq. 2)
    offset: float
    delta_page_count: float  # max(p2) − (a·max(p1) + b) (Eq. 3), over the books' last pages
    consecutive_correlation: float  # relative consecutive page correlation
    coverage_1: float  # share of book 1's pages with a match
    coverage_2: float  # share of book 2's pages with a match


def relation_signals(
    book_1: np.ndarray,
    pages_1: np.ndarray,
    book_2: np.ndarray,
    pages_2: np.ndarray,
    min_page_similarity: float = MIN_PAGE_SIMILARITY,
) -> RelationSignals:
    """Signals from book and page signatures; pass the denser-paged book (fewer pages) first."""
    sim = page_similarity_matrix(pages_1, pages_2)
    sim = np.where(sim >= min_page_similarity, sim, 0.0)
    best = sim.argmax(axis=1)
    matched = sim[np.arange(len(sim)), best] > 0
    p1, p2 = np.flatnonzero(matched), best[matched]
    if len(p1) >= 2 and np.ptp(p1) > 0:
        slope, offset = np.polyfit(p1, p2, 1)
    else:
        slope, offset = (1.0, float(p2[0] - p1[0])) if len(p1) else (0.0, 0.0)
    delta = (len(pages_2) - 1) - (slope * (len(pages_1) - 1) + offset)
    # pages of book 1 that overlap two consecutive pages of book 2: the wrap-around of re-pagination
    both = (sim[:, :-1] > 0) & (sim[:, 1:] > 0)
    consecutive = float(
        (np.where(both, sim[:, :-1] + sim[:, 1:], 0.0)).sum() / max(len(pages_1), 1)
    )
    return RelationSignals(
        book_similarity=float(estimated_resemblance(book_1, book_2)),
        page_similarity=float(sim[p1, p2].mean()) if len(p1) else 0.0,
        slope=float(slope),
        offset=float(offset),
        delta_page_count=float(delta),
        consecutive_correlation=consecutive,
        coverage_1=float(matched.mean()) if len(matched) else 0.0,
        coverage_2=float(np.isin(np.arange(len(pages_2)), p2).mean()) if len(pages_2) else 0.0,
    )


def high_pass(value: float, edge: float, width: float) -> float:
    """1 at value ≥ edge, falling quadratically to 0 at edge − width (the paper's φ shape)."""
    return max(0.0, 1.0 - (max(0.0, edge - value) / width) ** 2)


def low_pass(value: float, edge: float, width: float) -> float:
    return max(0.0, 1.0 - (max(0.0, value - edge) / width) ** 2)


def band_pass(value: float, centre: float, width: float) -> float:
    return max(0.0, 1.0 - ((value - centre) / width) ** 2)


def relation_confidences(s: RelationSignals) -> dict[str, float]:
    """Eq. 4: confidence_R = Π φ_R,i(s_i), φ hand-set low/high/band filters per relation."""
    same_extent = low_pass(abs(s.delta_page_count) + abs(s.offset), 0.5, 2.0)
    return {
        # the paper's own φ for mean page similarity: max(0, 1 − ((1 − s)/0.4)²)
        "SAME_PAGINATION": high_pass(s.page_similarity, 1.0, 0.4)
        * band_pass(s.slope, 1.0, 0.1)
        * low_pass(s.consecutive_correlation, 0.1, 0.3)
        * same_extent,
        "DIFFERENT_PAGINATION": high_pass(s.book_similarity, 1.0, 0.5)
        * high_pass(s.consecutive_correlation, 0.4, 0.4)
        * high_pass(min(s.coverage_1, s.coverage_2), 0.9, 0.3),
        "CONTIGUOUS_SUBSET": high_pass(s.page_similarity, 1.0, 0.4)
        * band_pass(s.slope, 1.0, 0.1)
        * low_pass(s.consecutive_correlation, 0.1, 0.3)
        * (1.0 - same_extent)
        * high_pass(max(s.coverage_1, s.coverage_2), 0.95, 0.2),
    }


def classify_relation(
    s: RelationSignals,
    min_confidence: float = 0.5,
    min_page_similarity: float = MIN_PAGE_SIMILARITY,
) -> str:
    """NO_OVERLAP for books without a matching page and below ``min_page_similarity`` (the one
    `relation_signals` matched pages with) as wholes; else the most confident class, or
    OVERLAPPING_TEXT when none is confident enough (§IV-C)."""
    if s.coverage_1 == 0 and s.coverage_2 == 0 and s.book_similarity < min_page_similarity:
        return NO_OVERLAP
    confidences = relation_confidences(s)
    best = max(confidences, key=confidences.__getitem__)
    return best if confidences[best] >= min_confidence else "OVERLAPPING_TEXT"


def compare_paginated(
    pages_a: Sequence[str], pages_b: Sequence[str], params: MinHashParams = MinHashParams()
) -> tuple[str, RelationSignals]:
    """Relation class and signals of two documents given as lists of page texts."""
    if sum(map(len, pages_a)) / max(len(pages_a), 1) < sum(map(len, pages_b)) / max(
        len(pages_b), 1
    ):
        pages_a, pages_b = pages_b, pages_a  # book 1 has the higher text density
    books = document_signatures(["\n".join(pages_a), "\n".join(pages_b)], params)
    signals = relation_signals(
        books[0], page_signatures(pages_a, params), books[1], page_signatures(pages_b, params)
    )
    return classify_relation(signals), signals


def read_pages(path) -> list[str]:
    """A text file's pages: the text between form feeds (empty trailing pages dropped).
    UnicodeDecodeError for a file that is not UTF-8 (a PDF or a WARC given by mistake)."""
    with open(path, encoding="utf-8") as text:
        pages = text.read().split(PAGE_BREAK)
    while pages and not pages[-1].strip():
        pages.pop()
    return pages
