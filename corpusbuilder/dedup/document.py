"""Algorithm 3.1 on one document: each unit's share of words covered by n-grams already output,
its verdict, and the n-grams it sends to output — all units at once, in numpy."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from corpusbuilder.dedup.params import PART_LEVELS, DedupParams

if TYPE_CHECKING:
    from corpusbuilder.dedup.context import Reclassify
    from corpusbuilder.dedup.corpus import ShardNgrams


def covered_tokens(ngram_starts: np.ndarray, n: int, length: int) -> np.ndarray:
    """Which of `length` words lie inside at least one of the n-grams starting at `ngram_starts`
    (Algorithm 3.1's set I), by a difference array: +1 at each start, -1 n words later."""
    starts = np.bincount(ngram_starts, minlength=length + n)
    edges = starts.copy()
    edges[n:] -= starts[:-n]
    return np.cumsum(edges[:length]) > 0


def unit_shares(covered: np.ndarray, unit_offsets: np.ndarray) -> np.ndarray:
    """Each unit's share of covered words (`unit_offsets` in the positions of `covered`)."""
    at = np.searchsorted(unit_offsets, np.flatnonzero(covered), side="right") - 1
    words = np.bincount(at, minlength=len(unit_offsets) - 1)
    lengths = np.diff(unit_offsets)
    return np.divide(words, lengths, out=np.zeros(len(lengths)), where=lengths > 0)


def part_units(
    block_offsets: np.ndarray, inner_starts: np.ndarray, split: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Units that cut the blocks flagged `split` into their parts (`inner_starts`: where a part
    starts inside a block, never at its first word), and each unit's block."""
    block_of = np.searchsorted(block_offsets, inner_starts, side="right") - 1
    cut = split[block_of]
    offsets = np.concatenate([block_offsets, inner_starts[cut]])
    blocks = np.concatenate([np.arange(len(block_offsets)), block_of[cut]])
    # inner starts never equal a block offset; stable, so empty blocks keep their order and the
    # end of the last block stays last
    order = np.argsort(offsets, kind="stable")
    return offsets[order], blocks[order][:-1]


def span_removal(
    output_starts: np.ndarray,
    block_offsets: np.ndarray,
    n: int,
    repeat_ratio: float,
    chunk_start: np.ndarray,
) -> np.ndarray:
    """Span mode: which words of a document go. A word goes when no fresh n-gram covers it (every
    n-gram of a block that does not start at `output_starts` is fresh): it only repeats output
    text. Cuts fall between whitespace chunks (`chunk_start`, per word), as the kept text is
    written: a chunk with a word that goes goes whole ("word," whose comma repeats output text),
    which costs the one fresh n-gram that ends (or starts) at its other word, where keeping it
    would keep an output n-gram whole. A run of words that stays goes too when the output n-grams
    wholly inside it outnumber its fresh ones by more than `repeat_ratio` to one — a near copy
    edited every few words, whose fresh n-grams overlap and hold the copied words between them.
    Positions relative to the document's first word."""
    length = block_offsets[-1]
    block_end = np.repeat(block_offsets[1:], np.diff(block_offsets))
    fits = np.arange(length) + n <= block_end
    output = np.zeros(length, bool)
    output[output_starts] = True
    fresh = fits & ~output
    gone = ~covered_tokens(np.flatnonzero(fresh), n, length)
    chunk_start = chunk_start.copy()
    chunk_start[block_offsets[:-1][np.diff(block_offsets) > 0]] = True  # a chunk never spans blocks
    chunk = np.cumsum(chunk_start) - 1
    gone = (np.bincount(chunk, weights=gone) > 0)[chunk] if length else gone
    if not np.isfinite(repeat_ratio):
        return gone
    # runs of words that stay or go, never across a block
    opens = np.zeros(length, bool)
    opens[1:] = gone[1:] != gone[:-1]
    opens[block_offsets[:-1][np.diff(block_offsets) > 0]] = True
    run = np.cumsum(opens) - 1
    bounds = np.flatnonzero(opens)
    last = np.minimum(np.arange(length) + n - 1, max(length - 1, 0))
    inside = fits & output & (run == run[last])
    repeated = np.bincount(run[inside], minlength=len(bounds))
    new = np.bincount(run[fresh], minlength=len(bounds))
    return gone | (repeated > repeat_ratio * new)[run]


@dataclass
class UnitVerdicts:
    """Algorithm 3.1's decision for each unit (a block, a document, or a part of a partly copied
    block: a sentence or a span) of one document, and what `Provenance` logs of it."""

    share: (
        np.ndarray
    )  # float: share of each given unit's (block's) words covered by n-grams already output
    duplicate: np.ndarray  # bool: the unit judged goes
    sent: np.ndarray  # handles the kept units moved from G₂₊ to G_out
    quoted_unit: np.ndarray  # int: the duplicate units' output n-grams: unit,
    quoted_handle: np.ndarray  # handle,
    quoted_self: np.ndarray  # bool: and whether it repeats this page rather than G_out
    # where the units judged lie (what the stage maps back to blocks;
    # `Provenance` needs none of it):
    unit_offsets: np.ndarray | None = None  # in word positions: the given units, or finer
    unit_block: np.ndarray | None = None  # int: the given unit (block) each lies in


def dedup_document(
    handles: np.ndarray,
    dup_starts: np.ndarray,
    unit_offsets: np.ndarray,
    n: int,
    threshold: float,
    store,
    smooth: Callable[[np.ndarray], np.ndarray] | None = None,
    parts: str | None = None,
    inner_starts: np.ndarray | None = None,
    band: tuple[float, float] = (0.0, 1.0),
    repeat_ratio: float = np.inf,
    chunk_start: np.ndarray | None = None,
) -> UnitVerdicts:
    """Algorithm 3.1 over the units of one document; updates `store`.

    `handles`/`dup_starts` are the document's duplicate n-grams (members of G₂₊ ∪ G_out, as
    `store.locate` names them) and their first words, in word order; `unit_offsets` bound the
    units in the same word positions (n-grams never cross a block). As in onion, an n-gram
    counts as already output when it is in G_out as it stood before the document, or when it
    occurred earlier in the same document (in this unit or an earlier one, kept or not): a page
    that repeats itself is judged like a copy of itself. So every unit is judged at once, and
    G_out changes only between documents, by the duplicate n-grams of the kept units.

    `parts` (beyond the thesis): a block whose share lies in `band` (low, high] is judged by
    its parts instead —

    - "sentence": its sentences (`inner_starts`: where one starts inside a block), each by the
      block's test, more than `threshold` of its words covered (counting the n-grams that reach
      into it from its neighbours);
    - "span": the runs of its words that no fresh n-gram covers go, the rest stays: exactly the
      words that only repeat output text, so every fresh n-gram stays whole and a copied stretch
      goes once it is long enough (n + n - 1 words) that no fresh n-gram spans it; a run that
      stays but repeats more than `repeat_ratio` times what it adds goes too (`span_removal`).

    A block whose parts all go is a duplicate block, one whose parts all stay is kept whole; only
    a mixed block is cut.

    `smooth`, given the blocks' duplicate flags when there is one, says which blocks the
    context-sensitive pass keeps (§3.5.2); as onion smooths before it stores the document's
    n-grams, the stubs it removes send nothing to output. A partly kept block is not duplicate.
    """
    in_gout = store.in_output(handles)
    # the n-grams by handle, each one's occurrences in word order: one sort serves both the
    # repeats and the sends (np.unique twice cost more in its wrapper than in the sort)
    order = np.argsort(handles, kind="stable")
    ordered = handles[order]
    repeat = np.zeros(len(handles), bool)
    repeat[order[1:]] = ordered[1:] == ordered[:-1]
    output = in_gout | repeat
    first_word = unit_offsets[0]
    starts = dup_starts - first_word
    covered = covered_tokens(starts[output], n, unit_offsets[-1] - first_word)
    blocks = unit_offsets - first_word
    block_share = unit_shares(covered, blocks)
    # Removed when MORE than the threshold is duplicate: §3.6.4 ("all text blocks were marked as
    # duplicate which contained more than 50 % of duplicate texts", the run behind Tables 3.4-3.9)
    # and Algorithm 3.1's own output condition ("none ... has more than t percent of content in
    # common"). Its loop test `|I|/|D| < t` would also drop a unit at exactly t; we keep it.
    units, unit_block, duplicate = blocks, np.arange(len(block_share)), block_share > threshold
    split = (
        (block_share > band[0]) & (block_share <= band[1])
        if parts
        else np.zeros(len(block_share), bool)
    )
    if split.any():
        if parts == "span":
            if chunk_start is None:
                raise ValueError("parts 'span' needs chunk_start")
            gone = span_removal(starts[output], blocks, n, repeat_ratio, chunk_start)
            inner_starts = np.setdiff1d(np.flatnonzero(np.diff(gone)) + 1, blocks)

            def goes(offsets):
                return gone[offsets[:-1].clip(max=max(len(gone) - 1, 0))] & (np.diff(offsets) > 0)
        else:
            inner_starts = inner_starts - first_word

            def goes(offsets):
                return unit_shares(covered, offsets) > threshold

        pieces, piece_block = part_units(blocks, inner_starts, split)
        gone_pieces = np.bincount(piece_block, weights=goes(pieces), minlength=len(block_share))
        all_pieces = np.bincount(piece_block, minlength=len(block_share))
        mixed = split & (gone_pieces > 0) & (gone_pieces < all_pieces)
        duplicate = np.where(split, gone_pieces == all_pieces, duplicate) & (np.diff(blocks) > 0)
        units, unit_block = part_units(blocks, inner_starts, mixed)
        duplicate = np.where(mixed[unit_block], goes(units), duplicate[unit_block])
    kept = ~duplicate
    if smooth is not None and duplicate.any():
        block_duplicate = (
            np.bincount(unit_block, weights=~duplicate, minlength=len(block_share)) == 0
        )
        if block_duplicate.any():  # parts removed from kept blocks leave no stub
            kept &= smooth(block_duplicate)[unit_block]
    unit_of = np.searchsorted(units, starts, side="right") - 1
    # an n-gram goes to output when all its words stay: one reaching from a kept part into a
    # removed one is not in the kept text (a block is kept or removed whole, so in block mode this
    # is its first word's unit)
    kept_words = np.concatenate(([0], np.cumsum(np.repeat(kept, np.diff(units)))))
    whole = kept_words[np.minimum(starts + n, len(kept_words) - 1)] - kept_words[starts] == n
    send = ordered[(~in_gout & whole)[order]]  # sorted; distinct below
    send = send[np.concatenate(([True], send[1:] != send[:-1]))] if len(send) else send
    if len(send):
        store.send(send)
    quoted = output & duplicate[unit_of]
    return UnitVerdicts(
        block_share,
        duplicate,
        send,
        unit_of[quoted],
        handles[quoted],
        ~in_gout[quoted],
        units + first_word,
        unit_block,
    )


def dedup_shard_document(
    shard: ShardNgrams, d: int, params: DedupParams, reclassify: Reclassify, store
) -> tuple[UnitVerdicts, int, int]:
    """`dedup_document` on document ``d`` of a shard at the configured level, against
    ``store`` (the sequential G_out, or the partitioned mode's seen n-grams): its verdicts and
    the range [first, stop) of its blocks in the shard."""
    handles, starts = shard.document_duplicates(d)
    first, stop = shard.doc_blocks[d], shard.doc_blocks[d + 1]
    smooth = (
        None
        if shard.pages is None
        else partial(shard.pages.kept_blocks, d, first, reclassify=reclassify, min_words=params.n)
    )
    result = dedup_document(
        handles,
        starts,
        shard.document_units(d, params.level),
        params.n,
        params.threshold,
        store,
        smooth,
        params.level if params.level in PART_LEVELS else None,
        shard.document_sentence_starts(d),
        params.partial_band,
        params.span_repeat_ratio,
        shard.document_chunk_starts(d),
    )
    return result, first, stop
