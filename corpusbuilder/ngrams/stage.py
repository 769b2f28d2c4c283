"""The stages: a shard's n-gram run (rule `ngram_runs`), G₂₊ of all runs by hash range (rules
`dup_ngram_part`, and `dup_ngrams` for its stats), and `corpusbuilder dup-ngrams` on plain text."""

from __future__ import annotations

import itertools
import json
import logging
import shutil
import tempfile
import time
from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from corpusbuilder.common.io import atomic_path, is_stream
from corpusbuilder.common.sizing import GIB
from corpusbuilder.common.versions import this_process
from corpusbuilder.contracts.ngramfiles import (
    ALL_HASHES,
    WRITTEN_BY,
    HashRange,
    partition_hash_range,
)
from corpusbuilder.contracts.tokenfile import block_starts
from corpusbuilder.ngrams.chunks import (
    chunk_tokens_for_budget,
    iter_chunks,
    read_kept_token_pieces,
)
from corpusbuilder.ngrams.hashing import (
    MAX_N,
    MIN_N,
    NGRAM_KINDS,
    chunk_ngram_counts,
    ngram_hashes,
)
from corpusbuilder.ngrams.runs import (
    SPILL_SUFFIX,
    merge_to_fan_in,
    merged_runs,
    release_memory,
    run_metadata,
    write_run,
    write_spill,
)

log = logging.getLogger("corpusbuilder.ngrams")

# ngrams.partitions auto: a merge job reads its hash range of every shard's run in bounded
# memory (ngrams.mem_mb), so ranges are for spreading the work: one a GiB of gzip'd WARCs. Up to
# 512: a job's time is its share of the corpus's runs (7.0 h at 10^12 words with 8 ranges, the
# old cap: bench/project_scale.py, 2026-12-02), while each job parses every run's footer.
AUTO_BYTES_PER_PARTITION = GIB
AUTO_MAX_PARTITIONS = 512


def check_ngram_params(kind: str, n: int) -> None:
    if kind not in NGRAM_KINDS:
        raise ValueError(f"unknown n-gram kind {kind!r}; expected one of {', '.join(NGRAM_KINDS)}")
    if not MIN_N <= n <= MAX_N:
        raise ValueError(f"n = {n}: n-grams of {MIN_N} to {MAX_N} tokens")


def _files_pieces(
    paths: Sequence[Path | str], kind: str, piece_tokens: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The kept token pieces of each file in turn, a later file's first token starting a block:
    no n-gram spans two files, as none spans two documents."""
    for number, path in enumerate(paths):
        first = number > 0
        for token_hash, starts_block in read_kept_token_pieces(path, kind, piece_tokens):
            if first and len(token_hash):
                starts_block[0], first = True, False
            yield token_hash, starts_block


def shard_ngram_run(
    tokens_path: Path | str | Sequence[Path | str],
    run_path: Path | str,
    kind: str,
    n: int,
    mem_mb: float,
    chunk_tokens: int | None = None,
) -> dict:
    """One shard's sorted run: chunk counts (§3.4.2) merged into one (hash, count) file; or one
    run of several shards' token files (the parts of a WARC read as several shards, one run a
    WARC: the corpus-wide merge's passes grow with the runs), n-grams within each.

    Chunk runs are temporary files beside the output; the shard run keeps every n-gram, those
    seen once included, so the corpus-wide merge can find n-grams repeated across shards.
    """
    check_ngram_params(kind, n)
    run_path = Path(run_path)
    chunk_tokens = chunk_tokens or chunk_tokens_for_budget(mem_mb, n)
    paths = [tokens_path] if isinstance(tokens_path, (str, Path)) else list(tokens_path)
    stats: dict[str, Any] = {
        "tokens_path": ", ".join(map(str, paths)),
        "kind": kind,
        "n": n,
        "chunk_tokens": chunk_tokens,
        "chunks": [],
    }
    run_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{run_path.name}.", dir=run_path.parent) as tmp:
        pieces = _files_pieces(paths, kind, max(chunk_tokens // 4, 1024))
        chunk_paths = chunk_spills(pieces, Path(tmp), n, chunk_tokens, stats["chunks"])
        stats["tokens"] = sum(chunk["tokens"] for chunk in stats["chunks"])
        started = time.perf_counter()
        chunk_paths = merge_to_fan_in(chunk_paths, Path(tmp), mem_mb)
        stats["distinct"] = write_run(run_path, merged_runs(chunk_paths, mem_mb), stats)
        stats["merge_seconds"] = round(time.perf_counter() - started, 3)
    log.info(
        "%s: %d tokens in %d chunks, %d distinct %d-grams",
        stats["tokens_path"],
        stats["tokens"],
        len(stats["chunks"]),
        stats["distinct"],
        n,
    )
    return stats


def chunk_spills(
    pieces: Iterable[tuple[np.ndarray, np.ndarray]],
    tmp: Path,
    n: int,
    chunk_tokens: int,
    chunk_stats: list[dict],
) -> list[Path]:
    """Each chunk's (hash, count) rows (§3.4.2) as a spill file in `tmp`, in stream order; a
    stats row per chunk appended to `chunk_stats`."""
    paths: list[Path] = []
    for token_hash, block_offsets, owned in iter_chunks(pieces, chunk_tokens, n):
        started = time.perf_counter()
        hashes, counts = chunk_ngram_counts(token_hash, block_offsets, n, owned)
        paths.append(tmp / f"chunk-{len(paths):05d}{SPILL_SUFFIX}")
        write_spill(paths[-1], hashes, counts)
        chunk_stats.append(
            {
                "tokens": owned,
                "distinct": len(hashes),
                "seconds": round(time.perf_counter() - started, 3),
            }
        )
        del token_hash, block_offsets, hashes, counts
        release_memory()
    return paths


def duplicate_ngrams(
    run_paths: Sequence[Path | str],
    mem_mb: float,
    min_count: int = 2,
    hash_range: HashRange = ALL_HASHES,
) -> Iterator[tuple[np.ndarray, np.ndarray, int]]:
    """Merge the shard runs' `hash_range`; yield (hashes, counts) of n-grams seen ≥ `min_count`
    times and the number of distinct n-grams of the round, block by block, in hash order."""
    paths = [Path(path) for path in run_paths]
    with tempfile.TemporaryDirectory(
        prefix=".merge.", dir=paths[0].parent if paths else None
    ) as tmp:
        passes = merge_to_fan_in(paths, Path(tmp), mem_mb, hash_range)
        for hashes, counts in merged_runs(passes, mem_mb, hash_range):
            repeated = counts >= min_count
            yield hashes[repeated], counts[repeated], len(hashes)


def write_duplicate_ngrams(
    run_paths: list[Path | str],
    output_path: Path | str,
    stats_path: Path | str,
    mem_mb: float,
    min_count: int = 2,
    partition: int = 0,
    partitions: int = 1,
) -> dict:
    """G₂₊, or its part `partition` of `partitions` hash ranges (rule `dup_ngram_part`):
    `output_path` (.npy of sorted unique uint64 hashes) and a JSON stats file."""
    started = time.perf_counter()
    stats: dict[str, Any] = {
        "distinct_ngrams": 0,
        "duplicate_types": 0,
        "duplicate_instances": 0,
        "min_count": min_count,
        "partition": partition,
        "partitions": partitions,
    }
    output_path = Path(output_path)
    hash_range = partition_hash_range(partition, partitions)
    with tempfile.TemporaryFile(
        dir=output_path.parent if output_path.parent.exists() else None
    ) as raw:
        for hashes, counts, distinct in duplicate_ngrams(run_paths, mem_mb, min_count, hash_range):
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
    # the runs' own stats once, in the first part: every part would read every run's footer again
    stats["shards"] = [run_metadata(path) for path in run_paths] if partition == 0 else []
    first = stats["shards"][0] if stats["shards"] else {}
    stats["kind"], stats["n"] = first.get("kind"), first.get("n")
    stats["tokens"] = sum(shard.get("tokens", 0) for shard in stats["shards"])
    # the part's .npy has no room for it: its stats name the versions that wrote both
    stats[WRITTEN_BY] = this_process()
    with atomic_path(stats_path) as tmp:
        tmp.write_text(json.dumps(stats, indent=1) + "\n", encoding="utf-8")
    return stats


# the counts a part holds of its hash range: the whole G₂₊ holds their sums
PART_SUMS = ("distinct_ngrams", "duplicate_types", "duplicate_instances", "merge_seconds")


def duplicate_ngrams_stats(part_stats_paths: list[Path | str]) -> dict:
    """The stats of G₂₊ from those of its parts (in partition order; the first holds the runs'
    stats), as the dedup job logs them; the merge's seconds are summed over the parts (CPU time,
    not the wall time of parallel jobs)."""
    parts = [json.loads(Path(path).read_text(encoding="utf-8")) for path in part_stats_paths]
    found = [part["partition"] for part in parts]
    if found != list(range(len(parts))) or any(part["partitions"] != len(parts) for part in parts):
        raise ValueError(
            f"G₂₊ parts {found} of {[part['partitions'] for part in parts]}: "
            f"expected partitions 0 to {len(parts) - 1} of {len(parts)}"
        )
    stats = {**parts[0], **{key: sum(part[key] for part in parts) for key in PART_SUMS}}
    stats["partitions"] = len(parts)
    stats["part_merge_seconds"] = [part["merge_seconds"] for part in parts]
    del stats["partition"]
    # each part's own writer is in the provenance record (`ngramfiles.duplicate_ngrams_writer`)
    stats.pop(WRITTEN_BY, None)
    return stats


# --- by hand: plain text in, TSV out ----------------------------------------------------------


def dup_ngrams_from_text(
    input_path: Path | str,
    output_path: Path | str,
    n: int = 10,
    mem_mb: float = 256,
    min_count: int = 2,
) -> int:
    """`corpusbuilder dup-ngrams`: text with one block per line (tokens split on white space)
    → TSV of every n-gram seen ≥ `min_count` times, `count<TAB>n-gram`, most frequent first.

    The same engine as the workflow: chunk counts within the memory budget and their merge, on
    the text's tokens held in memory. Returns the number of duplicate n-grams written.
    """
    # the tokeniser only here: not a cost of every n-gram job's start-up
    from corpusbuilder.tokenise import token_hashes

    check_ngram_params("all", n)
    ids, block_offsets, vocabulary = read_text_blocks(input_path)
    # The tokenise stage's hash, so a hand run's n-grams hash as the workflow's do.
    token_hash = token_hashes(vocabulary)[ids]
    output_path = Path(output_path)
    output_path.parent.mkdir(parents=True, exist_ok=True)
    # the work files beside the output, on its file system, unless the output is a stream
    with tempfile.TemporaryDirectory(
        prefix=f".{output_path.name}.", dir=None if is_stream(output_path) else output_path.parent
    ) as work:
        # the text's tokens are in memory: chunked as a token file's pieces would be, and the
        # chunks' spills merged without a shard run between
        pieces = [(token_hash, block_starts(block_offsets, len(token_hash)))]
        spills = chunk_spills(pieces, Path(work), n, chunk_tokens_for_budget(mem_mb, n), [])
        del pieces
        found = [(h, c) for h, c, _ in duplicate_ngrams(spills, mem_mb, min_count)]
    # in hash order: the merge yields its blocks so
    hashes = np.concatenate([h for h, _ in found] + [np.empty(0, np.uint64)])
    counts = np.concatenate([c for _, c in found] + [np.empty(0, np.uint32)])
    first_start = first_occurrences(hashes, *ngram_hashes(token_hash, block_offsets, n))
    order = np.lexsort((first_start, -counts.astype(np.int64)))
    spelled = np.array(vocabulary, dtype=object)
    with atomic_path(output_path) as tmp, open(tmp, "w", encoding="utf-8") as out:
        for batch in np.array_split(order, max(1, -(-len(order) // SPELLED_ROWS))):
            words = spelled[ids[first_start[batch, None] + np.arange(n)]].tolist()
            out.writelines(
                f"{count}\t{' '.join(ngram)}\n"
                for count, ngram in zip(counts[batch].tolist(), words)
            )
    return len(hashes)


# n-grams spelled at a time: a row of n words each
SPELLED_ROWS = 1 << 16


def read_text_blocks(path: Path | str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(type id of every token, block offsets, the types by id) of UTF-8 text with one block per
    line, tokens split on white space. Only the types are kept as strings: a line's words are
    looked up in C and dropped, so a token costs 8 bytes, not a Python string."""
    index: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    ids, ends = array("q"), array("q", [0])
    with open(path, encoding="utf-8") as text:
        for line in text:
            ids.extend(map(index.__getitem__, line.split()))
            ends.append(len(ids))
    return np.frombuffer(ids, np.int64), np.frombuffer(ends, np.int64), list(index)


# 16 MB: few false hits while the duplicates are well under 16 million
FIRST_FILTER_SIZE = 1 << 24


def first_occurrences(hashes: np.ndarray, ngram_hash: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The first start of each of the sorted `hashes` among the text's n-grams (`ngram_hash` at
    `starts`, in text order); every one of them occurs there."""
    if not len(hashes):
        return np.empty(0, np.int64)
    # The n-grams whose hash's low bits are some duplicate's first: a binary search of every
    # n-gram misses the cache at each step, a look-up in the bitmap once.
    low_bits = np.uint64(FIRST_FILTER_SIZE - 1)
    duplicate_low_bits = np.zeros(FIRST_FILTER_SIZE, bool)
    duplicate_low_bits[hashes & low_bits] = True
    maybe = np.flatnonzero(duplicate_low_bits[ngram_hash & low_bits])
    ngram_hash, starts = ngram_hash[maybe], starts[maybe]
    at = np.minimum(np.searchsorted(hashes, ngram_hash), len(hashes) - 1)
    hit = hashes[at] == ngram_hash
    _, first = np.unique(at[hit], return_index=True)
    return starts[hit][first]
