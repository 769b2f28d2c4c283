"""The stages: a shard's n-gram run (rule `ngram_runs`), G₂₊ of all runs by hash range (rules
`dup_ngram_part`, and `dup_ngrams` for its stats), and `corpusbuilder dup-ngrams` on plain text."""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from corpusbuilder.common.io import atomic_path, is_stream
from corpusbuilder.common.sizing import GIB
from corpusbuilder.common.versions import this_process
from corpusbuilder.ngramfiles import WRITTEN_BY
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
    ALL_HASHES,
    SPILL_SUFFIX,
    HashRange,
    merge_to_fan_in,
    merged_runs,
    partition_hash_range,
    release_memory,
    run_metadata,
    write_run,
    write_spill,
)
from corpusbuilder.tokenfile import TokenStream, write_token_stream

log = logging.getLogger("corpusbuilder.ngrams")

# ngrams.partitions auto: a merge job reads its hash range of every shard's run in bounded
# memory (ngrams.mem_mb), so ranges are for spreading the work: one a GiB of gzip'd WARCs, up to
# 8 (the old fixed count).
AUTO_BYTES_PER_PARTITION = GIB
AUTO_MAX_PARTITIONS = 8


def check_ngram_params(kind: str, n: int) -> None:
    if kind not in NGRAM_KINDS:
        raise ValueError(f"unknown n-gram kind {kind!r}; expected one of {', '.join(NGRAM_KINDS)}")
    if not MIN_N <= n <= MAX_N:
        raise ValueError(f"n = {n}: n-grams of {MIN_N} to {MAX_N} tokens")


def shard_ngram_run(
    tokens_path: Path | str,
    run_path: Path | str,
    kind: str,
    n: int,
    mem_mb: float,
    chunk_tokens: int | None = None,
) -> dict:
    """One shard's sorted run: chunk counts (§3.4.2) merged into one (hash, count) file.

    Chunk runs are temporary files beside the output; the shard run keeps every n-gram, those
    seen once included, so the corpus-wide merge can find n-grams repeated across shards.
    """
    check_ngram_params(kind, n)
    run_path = Path(run_path)
    chunk_tokens = chunk_tokens or chunk_tokens_for_budget(mem_mb, n)
    stats: dict[str, Any] = {
        "tokens_path": str(tokens_path),
        "kind": kind,
        "n": n,
        "chunk_tokens": chunk_tokens,
        "chunks": [],
    }
    run_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{run_path.name}.", dir=run_path.parent) as tmp:
        chunk_paths: list[Path] = []
        pieces = read_kept_token_pieces(tokens_path, kind, max(chunk_tokens // 4, 1024))
        for token_hash, block_offsets, owned in iter_chunks(pieces, chunk_tokens, n):
            started = time.perf_counter()
            hashes, counts = chunk_ngram_counts(token_hash, block_offsets, n, owned)
            chunk_paths.append(Path(tmp) / f"chunk-{len(chunk_paths):05d}{SPILL_SUFFIX}")
            write_spill(chunk_paths[-1], hashes, counts)
            stats["chunks"].append(
                {
                    "tokens": owned,
                    "distinct": len(hashes),
                    "seconds": round(time.perf_counter() - started, 3),
                }
            )
            del token_hash, block_offsets, hashes, counts
            release_memory()
        stats["tokens"] = sum(chunk["tokens"] for chunk in stats["chunks"])
        started = time.perf_counter()
        chunk_paths = merge_to_fan_in(chunk_paths, Path(tmp), mem_mb)
        stats["distinct"] = write_run(run_path, merged_runs(chunk_paths, mem_mb), stats)
        stats["merge_seconds"] = round(time.perf_counter() - started, 3)
    log.info(
        "%s: %d tokens in %d chunks, %d distinct %d-grams",
        tokens_path,
        stats["tokens"],
        len(stats["chunks"]),
        stats["distinct"],
        n,
    )
    return stats


def duplicate_ngrams(
    run_paths: list[Path | str],
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

    The same engine as the workflow: a token file, a chunked run, the merge. Returns the number
    of duplicate n-grams written.
    """
    # the tokeniser (and pandas with it) only here: not a cost of every n-gram job's start-up
    from corpusbuilder.tokenise import word_hashes

    check_ngram_params("all", n)
    with open(input_path, encoding="utf-8") as text:
        blocks = [line.split() for line in text]
    words = np.array([word for block in blocks for word in block], dtype=object)
    block_offsets = np.concatenate(([0], np.cumsum([len(block) for block in blocks]))).astype(
        np.int64
    )
    del blocks
    # The tokenise stage's hash, so a hand run's n-grams hash as the workflow's do.
    token_hash = word_hashes(words)
    output_path = Path(output_path)
    output_path.parent.mkdir(parents=True, exist_ok=True)
    # the work files beside the output, on its file system, unless the output is a stream
    with tempfile.TemporaryDirectory(
        prefix=f".{output_path.name}.", dir=None if is_stream(output_path) else output_path.parent
    ) as work:
        tokens_path, run_path = Path(work) / "tokens.npz", Path(work) / "run.parquet"
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
            out.write(f"{counts[i]}\t{' '.join(words[start : start + n])}\n")
    return len(hashes)
