"""Duplicate n-grams by suffix sorting in chunks (thesis §3.4.2, Table 3.2).

G₂₊ — every n-gram that occurs at least twice in the corpus — drives block de-duplication.
The thesis finds it with memory bounded by configuration, not by corpus size:

1. words → integer ids in order of first appearance (frequent words get small ids);
2. the token stream is cut into chunks sized from the memory budget; per chunk a suffix array
   and its LCP array give every distinct n-gram of the chunk with its count (§3.4.2: "generating
   the list of sorted n-grams from a suffix array is straightforward");
3. each chunk's n-grams are written, sorted and compressed, to a run file, and a k-way merge
   of the runs sums the counts: an n-gram seen once in each of two chunks is a duplicate too.

One departure from the thesis, on purpose: a run is sorted by the n-gram's 64-bit hash
(`ngram_hashes`), not by its word-id sequence. Word ids are then needed only inside a chunk, so
shards are processed independently (in parallel, and a shard added later never touches the runs
of the old ones), and the merge compares uint64 keys with numpy instead of id tuples. The
output is those hashes anyway: block de-duplication tests membership with `np.isin`.

n-grams never cross a block boundary, and the three n-gram kinds of Table 3.3 (all tokens /
no punctuation / no punctuation and no stop words) are token selections made before chunking.
"""

from __future__ import annotations

import ctypes
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from pydivsufsort import divsufsort, kasai

from corpusbuilder.io import atomic_path
from corpusbuilder.tables import RUN_SCHEMA
from corpusbuilder.tokenfile import TokenStream, read_token_pieces, write_token_stream
from corpusbuilder.tokenise import word_hashes

log = logging.getLogger("corpusbuilder.ngrams")

NGRAM_KINDS = ("all", "no-punct", "no-punct-no-stop")  # thesis Table 3.3
MIN_N, MAX_N = 3, 20

# Polynomial rolling hash over the tokens' own 64-bit hashes, then splitmix64's finaliser so
# that n-grams differing only in their last token still differ in every bit of the result.
_HASH_BASE = np.uint64(0x9E3779B97F4A7C15)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)

# Peak bytes per token of a chunk, measured on Zipf text (peak RSS of `shard_ngram_run` less the
# interpreter's, over the chunk size): the held token stream (9 B), the n-gram hashes by
# position (8 B), the word ids (4 B, 8 B while factorising), the 3-byte packed ids and their
# byte-level suffix array (3 + 12 B), the aligned suffix array (4 B), then LCP and groups.
CHUNK_BYTES_PER_TOKEN = 88
# Bytes per (hash, count) row of a merge round: the round's rows concatenated (12 B), their
# sort order (8 B), the sorted copy (12 B), the summed output and its masks.
MERGE_BYTES_PER_ROW = 64
# Bytes per row of a run's row group held while it is merged: the decoded columns (12 B) and
# pyarrow's decompression buffers (measured: 10 open row groups of 2¹⁸ rows, 49 MB allocated).
READ_BYTES_PER_ROW = 20
# divsufsort has a fixed cost of some milliseconds per call (its 2¹⁶-entry bucket tables).
MIN_CHUNK_TOKENS = 1 << 15
# Runs merged at once: a merge round costs Python work per run, so thousands of chunk runs
# are merged in passes of at most this many (fewer if their row groups do not fit the budget).
MERGE_FAN_IN = 64
# A merge holds one row group of each run it reads: 2¹⁶ rows are 1.3 MB with READ_BYTES_PER_ROW.
RUN_ROW_GROUP = 1 << 16


# --- tokens and n-grams ----------------------------------------------------------------------


def kind_mask(kind: str, is_punct: np.ndarray, is_stop: np.ndarray) -> np.ndarray:
    """Keep-mask of the tokens an n-gram of `kind` is built from (thesis Table 3.3)."""
    if kind == "all":
        return np.ones(len(is_punct), dtype=bool)
    if kind == "no-punct":
        return ~np.asarray(is_punct, dtype=bool)
    if kind == "no-punct-no-stop":
        return ~(np.asarray(is_punct, dtype=bool) | np.asarray(is_stop, dtype=bool))
    raise ValueError(f"unknown n-gram kind {kind!r}; expected one of {', '.join(NGRAM_KINDS)}")


def select_tokens(
    token_hash: np.ndarray, block_offsets: np.ndarray, keep: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kept tokens, their blocks' new offsets and each kept token's index in the input."""
    if keep.all():  # kind "all": no copy of the tokens
        return token_hash, np.asarray(block_offsets, dtype=np.int64), np.arange(len(token_hash))
    kept_before = np.concatenate(([0], np.cumsum(keep, dtype=np.int64)))
    index = np.flatnonzero(keep)
    return token_hash[index], kept_before[block_offsets], index


def _ngram_starts(block_offsets: np.ndarray, n: int) -> np.ndarray:
    """Start of every run of n tokens that lies inside one block."""
    block_offsets = np.asarray(block_offsets, dtype=np.int64)
    lengths = np.diff(block_offsets)
    counts = np.maximum(lengths - n + 1, 0)
    # For each start: its block's first offset plus its rank within the block.
    first = np.repeat(block_offsets[:-1], counts)
    rank = np.arange(counts.sum(), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return first + rank


def ngram_hashes(token_hash: np.ndarray, block_offsets: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """64-bit hash of every n-gram inside one block, and the index of its first token.

    h = h·B + t over uint64 (wrapping) for the n tokens, then the splitmix64 finaliser: n numpy
    passes over the token hashes, no loop per token.
    """
    token_hash = np.asarray(token_hash, dtype=np.uint64)
    starts = _ngram_starts(block_offsets, n)
    h = token_hash[starts]
    for j in range(1, n):
        h *= _HASH_BASE
        h += token_hash[starts + j]
    return _splitmix64(h), starts


def _splitmix64(z: np.ndarray) -> np.ndarray:
    z = z ^ (z >> np.uint64(30))
    z *= _MIX_1
    z ^= z >> np.uint64(27)
    z *= _MIX_2
    z ^= z >> np.uint64(31)
    return z


# --- one chunk: suffix array and LCP ---------------------------------------------------------


def word_ids_by_first_appearance(token_hash: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Word ids numbered in order of first appearance (§3.4.2), and the id → token hash map."""
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
        np.equal(byte_sa[begin:begin + (1 << 20)] % width, 0, out=on_boundary[begin:begin + (1 << 20)])
    aligned = byte_sa[on_boundary]
    del byte_sa, on_boundary
    aligned //= width
    return aligned


def chunk_ngram_counts(
    token_hash: np.ndarray, block_offsets: np.ndarray, n: int, owned: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Every distinct n-gram of one chunk with its count, as (sorted unique hashes, counts).

    Suffixes whose first n ids agree are adjacent in the suffix array with an LCP ≥ n, so a
    group of equal n-grams is a run of LCP ≥ n. Only n-grams starting before `owned` count:
    a chunk carries the next chunk's first n - 1 tokens so that no n-gram is lost at the cut.
    """
    owned = len(token_hash) if owned is None else owned
    hashes, starts = ngram_hashes(token_hash, block_offsets, n)
    in_chunk = starts < owned
    if not in_chunk.any():
        return np.empty(0, np.uint64), np.empty(0, np.uint32)
    # Each n-gram's hash at its start position; a scatter, so the lookup below is one gather.
    hash_at = np.zeros(len(token_hash), dtype=np.uint64)
    hash_at[starts[in_chunk]] = hashes[in_chunk]
    is_start = np.zeros(len(token_hash), dtype=bool)
    is_start[starts[in_chunk]] = True
    del hashes, starts, in_chunk
    ids, _ = word_ids_by_first_appearance(token_hash)
    sa = suffix_array(ids)
    lcp = kasai(ids, sa)  # lcp[i] = LCP(sa[i], sa[i + 1])
    del ids
    new_group = np.empty(len(sa), dtype=bool)
    new_group[0] = True
    np.less(lcp[:-1], n, out=new_group[1:])
    del lcp
    group = np.cumsum(new_group, dtype=np.int64)
    del new_group
    valid = is_start[sa]
    group, position = group[valid], sa[valid]
    del sa, valid, is_start
    first = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))
    counts = np.diff(np.append(first, len(group))).astype(np.uint32)
    group_hash = hash_at[position[first]]
    order = np.argsort(group_hash)
    return _sum_equal_hashes(group_hash[order], counts[order])


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


def _sum_equal_hashes(hashes: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Collapse runs of equal hashes in sorted input, summing their counts."""
    if len(hashes) == 0:
        return hashes, counts.astype(np.uint32)
    first = np.flatnonzero(np.concatenate(([True], hashes[1:] != hashes[:-1])))
    if len(first) == len(hashes):
        return hashes, counts.astype(np.uint32)
    return hashes[first], np.add.reduceat(counts.astype(np.uint64), first).astype(np.uint32)


# --- chunking a token stream by memory budget -------------------------------------------------


def chunk_tokens_for_budget(mem_mb: float, n: int) -> int:
    """Tokens per chunk so that this process stays within `mem_mb` (resident set included)."""
    free_bytes = mem_mb * 2**20 - _resident_bytes()
    return max(MIN_CHUNK_TOKENS, int(free_bytes / CHUNK_BYTES_PER_TOKEN))


def _resident_bytes() -> int:
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
        held = piece = []  # copied above: the pieces are not kept while the chunk is processed
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
        keep = kind_mask(kind, arrays.get("is_punct", np.zeros(count, bool)), arrays.get("is_stop", np.zeros(count, bool)))
        token_hash, offsets, _ = select_tokens(arrays["token_hash"], np.concatenate(([0], block_starts, [count])), keep)
        starts_block = np.zeros(len(token_hash), dtype=bool)
        mapped = offsets[1:-1]
        starts_block[mapped[mapped < len(token_hash)]] = True
        # A block whose kept tokens all lie in later pieces starts at the next kept token.
        if len(token_hash):
            starts_block[0] |= pending
        pending = bool(np.any(mapped == len(token_hash))) or (pending and not len(token_hash))
        yield token_hash, starts_block


# --- sorted runs: Parquet (hash uint64, count uint32), sorted by hash, zstd -------------------


def write_run(path: Path | str, blocks: Iterable[tuple[np.ndarray, np.ndarray]], metadata: dict | None = None) -> int:
    """Write sorted (hash, count) blocks as one run file, atomically; return its row count.

    Small blocks (a merge's rounds) are gathered into row groups of RUN_ROW_GROUP rows, so a
    run read back holds at most that many rows in memory whatever the blocks were.
    """
    rows = 0
    schema = RUN_SCHEMA.with_metadata({"corpusbuilder": json.dumps(metadata or {})})
    pending: list[tuple[np.ndarray, np.ndarray]] = []
    pending_rows = 0

    def flush(writer, final: bool = False) -> None:
        nonlocal pending, pending_rows
        hashes = np.concatenate([h for h, _ in pending])
        counts = np.concatenate([c for _, c in pending])
        full = len(hashes) if final else len(hashes) // RUN_ROW_GROUP * RUN_ROW_GROUP
        writer.write_table(pa.table({"hash": hashes[:full], "count": counts[:full]}, schema=schema),
                           row_group_size=RUN_ROW_GROUP)
        pending = [(hashes[full:].copy(), counts[full:].copy())] if full < len(hashes) else []
        pending_rows = len(hashes) - full

    with atomic_path(path) as tmp:
        with pq.ParquetWriter(tmp, schema, compression="zstd", use_dictionary=False) as writer:
            for hashes, counts in blocks:
                if not len(hashes):
                    continue
                rows += len(hashes)
                pending.append((hashes, counts))
                pending_rows += len(hashes)
                if pending_rows >= RUN_ROW_GROUP:
                    flush(writer)
            if pending:
                flush(writer, final=True)
    return rows


def read_run(path: Path | str, batch_rows: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Stream a run file as (hash, count) blocks of at most `batch_rows` rows.

    Row group by row group, without threads: pyarrow's `iter_batches` reads ahead (measured:
    34 MB held per open run at 2¹⁶-row batches, 54 MB at 658 k), which a merge of many runs
    multiplies past any budget. Here a run holds one row group, and the blocks are views of it.
    """
    with pq.ParquetFile(path) as run:
        for group in range(run.metadata.num_row_groups):
            table = run.read_row_group(group, use_threads=False)
            hashes = table.column(0).to_numpy()
            counts = table.column(1).to_numpy()
            del table
            for begin in range(0, len(hashes), batch_rows):
                yield hashes[begin:begin + batch_rows], counts[begin:begin + batch_rows]
            del hashes, counts  # before the next row group is read


def _largest_row_group(path: Path) -> int:
    metadata = pq.read_metadata(path)
    return max((metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)), default=0)


def run_metadata(path: Path | str) -> dict:
    return json.loads(pq.read_schema(path).metadata[b"corpusbuilder"])


def merge_ngram_runs(runs: list[Iterator[tuple[np.ndarray, np.ndarray]]]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """k-way merge of sorted (hash, count) runs, summing the counts of equal hashes.

    Vectorised by rounds: every hash up to the smallest last hash among the runs' current
    blocks is already in memory, so that slice of every block is merged with one numpy sort.
    """
    heads = []  # [hashes, counts, iterator] of each run not yet exhausted
    for run in runs:
        block = next(run, None)
        if block is not None:
            heads.append([*block, run])
    while heads:
        bound = min(head[0][-1] for head in heads)
        parts_h, parts_c = [], []
        for head in heads:
            cut = np.searchsorted(head[0], bound, side="right")
            parts_h.append(head[0][:cut])
            parts_c.append(head[1][:cut])
            head[0], head[1] = head[0][cut:], head[1][cut:]
        hashes, counts = np.concatenate(parts_h), np.concatenate(parts_c)
        if len(parts_h) > 1:
            order = np.argsort(hashes, kind="stable")
            hashes, counts = hashes[order], counts[order]
        yield _sum_equal_hashes(hashes, counts)
        heads = [head for head in heads if len(head[0]) or _refill(head)]


def _refill(head: list) -> bool:
    """Load a run's next non-empty block into its head; False once the run is exhausted."""
    for hashes, counts in head[2]:
        if len(hashes):
            head[0], head[1] = hashes, counts
            return True
    return False


def _merge_budget(mem_mb: float) -> float:
    """Bytes a merge may use: the budget less what the process already holds."""
    _release_memory()
    return mem_mb * 2**20 - _resident_bytes()


def _merged_runs(run_paths: list[Path], mem_mb: float) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """merge_ngram_runs over run files. Each open run holds one row group; what is left of the
    budget bounds the rows a merge round takes from each run."""
    free_bytes = _merge_budget(mem_mb)
    held = sum(_largest_row_group(path) for path in run_paths) * READ_BYTES_PER_ROW
    rows = max(1024, int((free_bytes - held) / (MERGE_BYTES_PER_ROW * max(len(run_paths), 1))))
    return merge_ngram_runs([read_run(path, rows) for path in run_paths])


def _fan_in(run_paths: list[Path], mem_mb: float) -> int:
    """Runs merged at once: at most MERGE_FAN_IN, and no more than half the free budget's worth
    of row groups (the other half is for the merge rounds)."""
    group = max((_largest_row_group(path) for path in run_paths), default=RUN_ROW_GROUP)
    fits = int(_merge_budget(mem_mb) / 2 / (max(group, 1) * (READ_BYTES_PER_ROW + MERGE_BYTES_PER_ROW / 8)))
    return max(2, min(MERGE_FAN_IN, fits))


def _merge_to_fan_in(run_paths: list[Path], tmp_dir: Path, mem_mb: float) -> list[Path]:
    """Merge runs a fan-in at a time into temporary runs until at most that many are left."""
    fan_in = _fan_in(run_paths, mem_mb)
    while len(run_paths) > fan_in:
        merged = []
        for begin in range(0, len(run_paths), fan_in):
            merged.append(tmp_dir / f"pass-{id(merged):x}-{begin:06d}.parquet")
            write_run(merged[-1], _merged_runs(run_paths[begin:begin + fan_in], mem_mb))
        for path in run_paths:
            if path.parent == tmp_dir:
                path.unlink()
        run_paths = merged
    return run_paths


def _release_memory() -> None:
    """Hand freed memory back to the system: pyarrow's pool and glibc's heap keep it otherwise,
    and the next step's budget is computed from the resident set."""
    pa.default_memory_pool().release_unused()
    if _malloc_trim is not None:
        _malloc_trim(0)


def _load_malloc_trim():
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


_malloc_trim = _load_malloc_trim()


# --- stages ----------------------------------------------------------------------------------


def check_ngram_params(kind: str, n: int) -> None:
    if kind not in NGRAM_KINDS:
        raise ValueError(f"unknown n-gram kind {kind!r}; expected one of {', '.join(NGRAM_KINDS)}")
    if not MIN_N <= n <= MAX_N:
        raise ValueError(f"n = {n}: n-grams of {MIN_N} to {MAX_N} tokens")


def shard_ngram_run(
    tokens_path: Path | str, run_path: Path | str, kind: str, n: int, mem_mb: float,
    chunk_tokens: int | None = None,
) -> dict:
    """One shard's sorted run: chunk counts (§3.4.2) merged into one (hash, count) file.

    Chunk runs are temporary files beside the output; the shard run keeps every n-gram, those
    seen once included, so the corpus-wide merge can find n-grams repeated across shards.
    """
    check_ngram_params(kind, n)
    run_path = Path(run_path)
    chunk_tokens = chunk_tokens or chunk_tokens_for_budget(mem_mb, n)
    stats = {"tokens_path": str(tokens_path), "kind": kind, "n": n, "chunk_tokens": chunk_tokens, "chunks": []}
    run_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{run_path.name}.", dir=run_path.parent) as tmp:
        chunk_paths = []
        pieces = read_kept_token_pieces(tokens_path, kind, max(chunk_tokens // 4, 1024))
        for token_hash, block_offsets, owned in iter_chunks(pieces, chunk_tokens, n):
            started = time.perf_counter()
            hashes, counts = chunk_ngram_counts(token_hash, block_offsets, n, owned)
            chunk_paths.append(Path(tmp) / f"chunk-{len(chunk_paths):05d}.parquet")
            write_run(chunk_paths[-1], [(hashes, counts)])
            stats["chunks"].append(
                {"tokens": owned, "distinct": len(hashes), "seconds": round(time.perf_counter() - started, 3)}
            )
            del token_hash, block_offsets, hashes, counts
            _release_memory()
        stats["tokens"] = sum(chunk["tokens"] for chunk in stats["chunks"])
        started = time.perf_counter()
        chunk_paths = _merge_to_fan_in(chunk_paths, Path(tmp), mem_mb)
        stats["distinct"] = write_run(run_path, _merged_runs(chunk_paths, mem_mb), stats)
        stats["merge_seconds"] = round(time.perf_counter() - started, 3)
    log.info("%s: %d tokens in %d chunks, %d distinct %d-grams", tokens_path, stats["tokens"],
             len(stats["chunks"]), stats["distinct"], n)
    return stats


def duplicate_ngrams(
    run_paths: list[Path | str], mem_mb: float, min_count: int = 2
) -> Iterator[tuple[np.ndarray, np.ndarray, int]]:
    """Merge the shard runs; yield (hashes, counts) of n-grams seen ≥ `min_count` times and
    the number of distinct n-grams of the round, block by block, in hash order."""
    run_paths = [Path(path) for path in run_paths]
    with tempfile.TemporaryDirectory(prefix=".merge.", dir=run_paths[0].parent if run_paths else None) as tmp:
        for hashes, counts in _merged_runs(_merge_to_fan_in(run_paths, Path(tmp), mem_mb), mem_mb):
            repeated = counts >= min_count
            yield hashes[repeated], counts[repeated], len(hashes)


def write_duplicate_ngrams(
    run_paths: list[Path | str], output_path: Path | str, stats_path: Path | str,
    mem_mb: float, min_count: int = 2,
) -> dict:
    """G₂₊: `output_path` (.npy of sorted unique uint64 hashes) and a JSON stats file."""
    started = time.perf_counter()
    stats = {"distinct_ngrams": 0, "duplicate_types": 0, "duplicate_instances": 0, "min_count": min_count}
    output_path = Path(output_path)
    with tempfile.TemporaryFile(dir=output_path.parent if output_path.parent.exists() else None) as raw:
        for hashes, counts, distinct in duplicate_ngrams(run_paths, mem_mb, min_count):
            stats["distinct_ngrams"] += distinct
            stats["duplicate_types"] += len(hashes)
            stats["duplicate_instances"] += int(counts.sum(dtype=np.uint64))
            raw.write(hashes.astype("<u8").tobytes())
        raw.seek(0)
        with atomic_path(output_path) as tmp, open(tmp, "wb") as out:
            np.lib.format.write_array_header_1_0(
                out, {"descr": "<u8", "fortran_order": False, "shape": (stats["duplicate_types"],)}
            )
            shutil.copyfileobj(raw, out, 1 << 22)
    stats["merge_seconds"] = round(time.perf_counter() - started, 3)
    stats["shards"] = [run_metadata(path) for path in run_paths]
    first = stats["shards"][0] if stats["shards"] else {}
    stats["kind"], stats["n"] = first.get("kind"), first.get("n")
    stats["tokens"] = sum(shard.get("tokens", 0) for shard in stats["shards"])
    with atomic_path(stats_path) as tmp:
        tmp.write_text(json.dumps(stats, indent=1) + "\n", encoding="utf-8")
    return stats


# --- by hand: plain text in, TSV out ----------------------------------------------------------


def dup_ngrams_from_text(
    input_path: Path | str, output_path: Path | str, n: int = 10, mem_mb: float = 256, min_count: int = 2
) -> int:
    """`corpusbuilder dup-ngrams`: text with one block per line (tokens split on white space)
    → TSV of every n-gram seen ≥ `min_count` times, `count<TAB>n-gram`, most frequent first.

    The same engine as the workflow: a token file, a chunked run, the merge. Returns the number
    of duplicate n-grams written.
    """
    check_ngram_params("all", n)
    with open(input_path, encoding="utf-8") as text:
        blocks = [line.split() for line in text]
    words = np.array([word for block in blocks for word in block], dtype=object)
    block_offsets = np.concatenate(([0], np.cumsum([len(block) for block in blocks]))).astype(np.int64)
    del blocks
    # The tokenise stage's hash, so a hand run's n-grams hash as the workflow's do.
    token_hash = word_hashes(words)
    output_path = Path(output_path)
    output_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{output_path.name}.", dir=output_path.parent) as tmp:
        tokens_path, run_path = Path(tmp) / "tokens.npz", Path(tmp) / "run.parquet"
        write_token_stream(TokenStream.of_blocks(token_hash, block_offsets), tokens_path)
        shard_ngram_run(tokens_path, run_path, "all", n, mem_mb)
        found = [(h, c) for h, c, _ in duplicate_ngrams([run_path], mem_mb, min_count)]
    hashes = np.concatenate([h for h, _ in found] + [np.empty(0, np.uint64)])
    counts = np.concatenate([c for _, c in found] + [np.empty(0, np.uint32)])
    # Spell each duplicate n-gram from its first occurrence.
    all_hashes, starts = ngram_hashes(token_hash, block_offsets, n)
    hit = np.isin(all_hashes, hashes)
    first_hash, first_at = np.unique(all_hashes[hit], return_index=True)
    first_start = starts[hit][first_at]
    order = np.lexsort((first_start[np.searchsorted(first_hash, hashes)], -counts.astype(np.int64)))
    with atomic_path(output_path) as tmp, open(tmp, "w", encoding="utf-8") as out:
        for i in order:
            start = first_start[np.searchsorted(first_hash, hashes[i])]
            out.write(f"{counts[i]}\t{' '.join(words[start:start + n])}\n")
    return len(hashes)
