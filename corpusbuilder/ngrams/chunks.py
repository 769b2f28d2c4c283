"""Cutting a shard's token stream into chunks sized from the memory budget, read piece by piece
from its token file (the measured bytes per token are here)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from corpusbuilder.contracts.tokenfile import read_token_pieces
from corpusbuilder.ngrams.hashing import kind_mask, select_tokens

# Peak bytes per token of a chunk, measured on Zipf text (peak RSS of `shard_ngram_run` less the
# interpreter's, over the chunk size: 41-45 B at budgets of 256 MB to 1 GB): the held token stream
# (9 B, up to a piece more, and the piece being read), the start mask (1 B), the n-gram hashes by
# position (8 B) and the kept ones (8 B), then the sorted hashes' group starts (8 B) and the
# counts (12 B).
CHUNK_BYTES_PER_TOKEN = 46

# Each chunk is a spill file and one more run in the shard's merge: a budget too small for
# more than a few thousand tokens would make thousands of them.
MIN_CHUNK_TOKENS = 1 << 15


def chunk_tokens_for_budget(mem_mb: float, n: int) -> int:
    """Tokens per chunk so that this process stays within `mem_mb` (resident set included)."""
    free_bytes = mem_mb * 2**20 - resident_bytes()
    return max(MIN_CHUNK_TOKENS, int(free_bytes / CHUNK_BYTES_PER_TOKEN))


def resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def iter_chunks(
    pieces: Iterable[tuple[np.ndarray, np.ndarray]], chunk_tokens: int, n: int
) -> Iterator[tuple[np.ndarray, np.ndarray, int]]:
    """Cut a stream of (token_hash, starts_block) pieces into chunks of `chunk_tokens` n-gram
    starts; yield (token_hash, block_offsets, owned). Each chunk also holds the next n - 1
    tokens, so n-grams straddling the cut are counted, once, by the chunk they start in."""
    need = chunk_tokens + n - 1
    held: list[tuple[np.ndarray, np.ndarray]] = []
    held_tokens = 0
    for piece in pieces:
        held.append(piece)
        held_tokens += len(piece[0])
        if held_tokens < need:
            continue
        token_hash = np.concatenate([p[0] for p in held])
        starts_block = np.concatenate([p[1] for p in held])
        # copied above: the pieces are not kept while the chunk is processed
        held = []
        del piece
        while len(token_hash) >= need:
            yield token_hash[:need], _block_offsets(starts_block[:need]), chunk_tokens
            token_hash, starts_block = token_hash[chunk_tokens:], starts_block[chunk_tokens:]
        held, held_tokens = [(token_hash, starts_block)], len(token_hash)
    if held_tokens >= n:
        token_hash = np.concatenate([p[0] for p in held])
        starts_block = np.concatenate([p[1] for p in held])
        yield token_hash, _block_offsets(starts_block), len(token_hash)


def _block_offsets(starts_block: np.ndarray) -> np.ndarray:
    """Offsets of the blocks of a chunk (which may begin inside a block) from start flags."""
    inner = np.flatnonzero(starts_block[1:]) + 1
    return np.concatenate(([0], inner, [len(starts_block)])).astype(np.int64)


# --- token files, read piece by piece ------------------------------------------------------------


def read_kept_token_pieces(
    tokens_path: Path | str, kind: str, piece_tokens: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Stream a shard's tokens of ``kind`` as (token_hash, starts_block) pieces of at most
    `piece_tokens` input tokens, so a shard is never loaded whole (only its block offsets)."""
    kind_mask(kind, np.zeros(0, bool), np.zeros(0, bool))  # reject an unknown kind up front
    fields = ("token_hash",) if kind == "all" else ("token_hash", "is_punct", "is_stop")
    pending = False
    for arrays, block_starts in read_token_pieces(tokens_path, fields, piece_tokens):
        count = len(arrays["token_hash"])
        keep = kind_mask(
            kind,
            arrays.get("is_punct", np.zeros(count, bool)),
            arrays.get("is_stop", np.zeros(count, bool)),
        )
        token_hash, offsets, _ = select_tokens(
            arrays["token_hash"], np.concatenate(([0], block_starts, [count])), keep
        )
        starts_block = np.zeros(len(token_hash), dtype=bool)
        mapped = offsets[1:-1]
        starts_block[mapped[mapped < len(token_hash)]] = True
        # A block whose kept tokens all lie in later pieces starts at the next kept token.
        if len(token_hash):
            starts_block[0] |= pending
        pending = bool(np.any(mapped == len(token_hash))) or (pending and not len(token_hash))
        yield token_hash, starts_block
