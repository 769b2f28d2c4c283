"""Algorithm 3.1 on one document: each unit's share of words covered by n-grams already output,
its verdict, and the n-grams it sends to output — all units at once, in numpy."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


def covered_tokens(ngram_starts: np.ndarray, n: int, length: int) -> np.ndarray:
    """Which of `length` words lie inside at least one of the n-grams starting at `ngram_starts`
    (Algorithm 3.1's set I), by a difference array: +1 at each start, -1 n words later."""
    starts = np.bincount(ngram_starts, minlength=length + n)
    edges = starts.copy()
    edges[n:] -= starts[:-n]
    return np.cumsum(edges[:length]) > 0


@dataclass
class UnitVerdicts:
    """Algorithm 3.1's decision for each unit (block or document) of one document, and what
    `Provenance` logs of it."""

    share: np.ndarray  # float: share of the unit's words covered by n-grams already output
    duplicate: np.ndarray  # bool: share > threshold
    sent: np.ndarray  # handles the kept units moved from G₂₊ to G_out
    quoted_unit: np.ndarray  # int: the duplicate units' output n-grams: unit,
    quoted_handle: np.ndarray  # handle,
    quoted_self: np.ndarray  # bool: and whether it repeats this page rather than G_out


def dedup_document(handles: np.ndarray, dup_starts: np.ndarray, unit_offsets: np.ndarray,
                   n: int, threshold: float, store,
                   smooth: Callable[[np.ndarray], np.ndarray] | None = None) -> UnitVerdicts:
    """Algorithm 3.1 over the units of one document; updates `store`.

    `handles`/`dup_starts` are the document's duplicate n-grams (members of G₂₊ ∪ G_out, as
    `store.locate` names them) and their first words, in word order; `unit_offsets` bound the
    units in the same word positions (n-grams never cross a block). As in onion, an n-gram
    counts as already output when it is in G_out as it stood before the document, or when it
    occurred earlier in the same document (in this unit or an earlier one, kept or not): a page
    that repeats itself is judged like a copy of itself. So every unit is judged at once, and
    G_out changes only between documents, by the duplicate n-grams of the kept units.

    `smooth`, given the units' duplicate flags when there is one, says which units the
    context-sensitive pass keeps (§3.5.2); as onion smooths before it stores the document's
    n-grams, the stubs it removes send nothing to output.
    """
    units = len(unit_offsets) - 1
    in_gout = store.in_output(handles)
    repeat = np.ones(len(handles), bool)
    repeat[np.unique(handles, return_index=True)[1]] = False
    output = in_gout | repeat
    unit_of = np.searchsorted(unit_offsets, dup_starts, side="right") - 1
    first_word = unit_offsets[0]
    covered = np.flatnonzero(covered_tokens(dup_starts[output] - first_word, n, unit_offsets[-1] - first_word))
    words = np.bincount(np.searchsorted(unit_offsets, covered + first_word, side="right") - 1, minlength=units)
    lengths = np.diff(unit_offsets)
    share = np.divide(words, lengths, out=np.zeros(units), where=lengths > 0)
    # Removed when MORE than the threshold is duplicate: §3.6.4 ("all text blocks were marked as
    # duplicate which contained more than 50 % of duplicate texts", the run behind Tables 3.4-3.9)
    # and Algorithm 3.1's own output condition ("none ... has more than t percent of content in
    # common"). Its loop test `|I|/|D| < t` would also drop a unit at exactly t; we keep it.
    duplicate = share > threshold
    kept = ~duplicate
    if smooth is not None and duplicate.any():
        kept &= smooth(duplicate)
    send = np.unique(handles[~in_gout & kept[unit_of]])
    if len(send):
        store.send(send)
    quoted = output & duplicate[unit_of]
    return UnitVerdicts(share, duplicate, send, unit_of[quoted], handles[quoted], ~in_gout[quoted])
