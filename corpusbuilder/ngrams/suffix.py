"""Word ids, a suffix array and its LCP array over a chunk (thesis §3.4.2): the repeated token
spans of any length of Lee et al.'s exact-substring mode (`chunk_repeated_spans`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from pydivsufsort import divsufsort, kasai

if TYPE_CHECKING:
    pass


def word_ids_by_first_appearance(token_hash: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Word ids numbered in order of first appearance (§3.4.2), and the id → token hash map."""
    import pandas as pd

    ids, vocabulary = pd.factorize(token_hash, sort=False)
    return ids.astype(np.int32), np.asarray(vocabulary, dtype=np.uint64)


def suffix_array(ids: np.ndarray) -> np.ndarray:
    """Suffix array of a sequence of word ids, with divsufsort.

    divsufsort sorts bytes. pydivsufsort's own integer path widens ids to a power-of-two byte
    width; we pack each id into the fewest big-endian bytes (3 for vocabularies up to 16 M), so
    byte order is id order, sort that string, and keep the suffixes starting on an id boundary.
    """
    width = max(1, (int(ids.max(initial=0)).bit_length() + 7) // 8)
    packed = np.empty((len(ids), width), dtype=np.uint8)
    for byte in range(width):
        packed[:, byte] = ids >> (8 * (width - 1 - byte))
    byte_sa = divsufsort(packed.reshape(-1))
    del packed
    if width == 1:
        return byte_sa
    # The boundary mask block by block: `byte_sa % width` whole would be another 4 B per byte.
    on_boundary = np.empty(len(byte_sa), dtype=bool)
    for begin in range(0, len(byte_sa), 1 << 20):
        np.equal(
            byte_sa[begin : begin + (1 << 20)] % width,
            0,
            out=on_boundary[begin : begin + (1 << 20)],
        )
    aligned = byte_sa[on_boundary]
    del byte_sa, on_boundary
    aligned //= width
    return aligned


def chunk_repeated_spans(
    token_hash: np.ndarray, block_offsets: np.ndarray, min_len: int, owned: int | None = None
) -> np.ndarray:
    """Exact-substring duplicates (Lee et al. 2022) of one chunk: the token ranges covered by a
    span of ≥ `min_len` tokens, inside one block, that occurs at least twice in the chunk.

    The n-gram step's suffix array and LCP array (`suffix_array`, `kasai`; built here again,
    this is not yet a stage of the workflow): suffixes sharing their first `min_len` ids form a
    run of LCP ≥ min_len; its members whose block has min_len tokens left start a repeated span
    if there are two or more of them. Returns (start, end) rows, sorted and disjoint, merged
    where spans overlap or touch. Only spans starting before `owned` are reported (their copies
    may lie anywhere in the chunk). Only copies within the chunk are seen: a span whose other
    copy lies in another chunk or shard is not reported (as `iter_chunks(..., n=min_len)`
    overlaps chunks by min_len - 1 tokens, no span is lost at a cut).
    """
    owned = len(token_hash) if owned is None else owned
    if len(token_hash) < min_len or min_len < 1:
        return np.empty((0, 2), np.int64)
    block_offsets = np.asarray(block_offsets, dtype=np.int64)
    block_end = np.repeat(block_offsets[1:], np.diff(block_offsets))  # end of each token's block
    ids, _ = word_ids_by_first_appearance(token_hash)
    sa = suffix_array(ids)
    lcp = kasai(ids, sa)
    del ids
    new_group = np.empty(len(sa), dtype=bool)
    new_group[0] = True
    np.less(lcp[:-1], min_len, out=new_group[1:])
    del lcp
    group = np.cumsum(new_group, dtype=np.int64) - 1
    del new_group
    fits = block_end[sa] - sa >= min_len
    members = np.bincount(group[fits], minlength=group[-1] + 1)
    starts = np.sort(sa[fits & (members[group] >= 2) & (sa < owned)])
    if not len(starts):
        return np.empty((0, 2), np.int64)
    # Union of [start, start + min_len): a new range where a start lies past the running end.
    ends = starts + min_len
    running_end = np.maximum.accumulate(ends)
    opens = np.concatenate(([True], starts[1:] > running_end[:-1]))
    closes = np.append(np.flatnonzero(opens)[1:] - 1, len(starts) - 1)
    return np.stack([starts[opens], running_end[closes]], axis=1).astype(np.int64)
