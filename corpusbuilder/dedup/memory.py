"""The dedup job's memory: stated before the pass and checked against the job's
`resources.mem_mb`, since Algorithm 3.1 is one sequential job whose G₂₊ grows with the crawl.

Four terms, each a constant below measured by bench/bench_dedup.py (its figures, dated, are in
bench/results/dedup.json):

- G₂₊ and G_out: bytes per duplicate n-gram of the backend at its peak — loading, the pass, and
  the table of who sent what that replaces the sets after it (the largest of the measured sizes
  is taken, so a crawl between them is not under-counted);
- the plan, per token of the corpus: what pass 1 keeps of every shard for the passes after it —
  document ids, sizes and ordering keys, and the per-block verdicts pass 2 fills. The prepared
  shards themselves are not held: pass 1 spills each to a scratch file (`spill`) and pass 2 maps
  only those its bucket touches, clean page-cache pages the kernel takes back under pressure,
  so they are no term here;
- the interpreter with the job's modules;
- one shard at a time, per token of the largest shard: what pass 1 holds while it hashes a
  shard and pass 3 while it builds its output table and its part of the state.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Sequence
from pathlib import Path

from corpusbuilder.common.sizing import fewest_partitions
from corpusbuilder.contracts.ngramfiles import STATE_ROW_GROUP
from corpusbuilder.contracts.tokenfile import token_count
from corpusbuilder.dedup.params import DedupParams

log = logging.getLogger("corpusbuilder.dedup")

BYTES_PER_DUPLICATE_NGRAM = {"sorted-array": 8.6, "judy": 31.0}
PLAN_BYTES_PER_TOKEN = 0.31
MODULES_MB = 163
LARGEST_SHARD_BYTES_PER_TOKEN = 213.0


# a token file holds its token hash and four flags per token (`tokenfile`), then block and document
# arrays: its size over this is at least its tokens
TOKEN_FILE_BYTES_PER_TOKEN = 12


class DedupMemoryError(ValueError):
    """The dedup job's `resources.mem_mb` cannot hold what it needs."""


def dedup_memory_mb_by_sizes(
    duplicates: Sequence[Path | str], tokens: Sequence[Path | str], params: DedupParams
) -> dict:
    """`dedup_memory_mb` from the files' sizes alone (a stat each, for the rule's resources):
    at least what the job computes from their headers, since each file is at least its payload."""
    return dedup_memory_mb(
        sum(os.path.getsize(path) for path in duplicates) // 8,
        [os.path.getsize(path) // TOKEN_FILE_BYTES_PER_TOKEN for path in tokens],
        params,
    )


def dedup_memory_mb(
    duplicate_ngrams: int, shard_tokens: Sequence[int], params: DedupParams
) -> dict:
    """The memory the dedup job needs, in MB, and its terms: |G₂₊| = `duplicate_ngrams`, and the
    tokens of each shard."""
    terms = {
        "duplicate_ngrams": duplicate_ngrams * BYTES_PER_DUPLICATE_NGRAM[params.backend] / 2**20,
        "largest_shard": max(shard_tokens, default=0) * LARGEST_SHARD_BYTES_PER_TOKEN / 2**20,
        "plan": sum(shard_tokens) * PLAN_BYTES_PER_TOKEN / 2**20,
        "modules": MODULES_MB,
    }
    return {
        "total": math.ceil(sum(terms.values())),
        **{key: round(value) for key, value in terms.items()},
    }


def check_dedup_memory(
    duplicates: Sequence[Path | str],
    tokens: Sequence[Path | str],
    params: DedupParams,
    mem_mb: int | None,
) -> dict:
    """Log the memory the job needs, in one line, before the pass; a DedupMemoryError naming
    `resources.mem_mb` when the job's `mem_mb` cannot hold it."""
    from corpusbuilder.contracts.ngramfiles import duplicate_ngram_count

    count = duplicate_ngram_count(duplicates)
    shard_tokens = [token_count(path) for path in tokens]
    need = dedup_memory_mb(count, shard_tokens, params)
    terms = (
        f"{count:,} duplicate n-grams × {BYTES_PER_DUPLICATE_NGRAM[params.backend]} B "
        f"({params.backend}) {need['duplicate_ngrams']} MB + {len(shard_tokens)} shards' "
        f"{sum(shard_tokens):,} tokens planned {need['plan']} MB + the largest shard's "
        f"{max(shard_tokens, default=0):,} tokens {need['largest_shard']} MB + modules "
        f"{need['modules']} MB"
    )
    log.info("dedup needs %d MB (%s); resources.mem_mb is %s", need["total"], terms, mem_mb)
    if mem_mb is not None and need["total"] > mem_mb:
        raise DedupMemoryError(
            f"dedup needs {need['total']} MB ({terms}), more than its resources.mem_mb of "
            f"{mem_mb}: give it more with --set-resources dedup:mem_mb={need['total']}"
        )
    return need


# dedup.mode partitioned: each job's memory from its inputs (docs/dedup-scale.md, "The jobs, and
# what each holds"). Measured as peak RSS on the 0.25 GB synthetic crawl (8 shards of 3.4 M tokens,
# P = 2; 2026-12-02, bench/results/dedup_jobs_memory.json): a job that holds next to nothing (the
# documents job, the order job there) peaks at 211-212 MB, the interpreter with this stage's
# modules. The shard job's occurrences: 64 B a token of the shard, hashed and sorted. A range job
# reads one shard's range at a time and holds only the occurrences in G₂₊, of every shard: bytes per
# such occurrence measured (the one shard read at a time and G₂₊'s range included), at
# `DUPLICATE_OCCURRENCE_SHARE` of the range's tokens. The order job: its shard's (document, range)
# counts — at most its duplicate occurrences — with a key each, and per document its n-grams,
# duplicates and share. No job holds a number for every document of the corpus; the documents job
# holds one per shard.
PARTITIONED_MODULES_MB = 212
OCCURRENCE_JOB_BYTES_PER_TOKEN = 64
# 17.8 % of the synthetic crawl's n-gram occurrences at dedup are in G₂₊ (4,319,124 of
# 24,232,778), 16.7 % of the 2 GB build's 10-gram instances; sized for a third
DUPLICATE_OCCURRENCE_SHARE = 1 / 3
RANGE_JOB_BYTES_PER_DUPLICATE_OCCURRENCE = {"counts": 32, "seen": 102}
ORDER_JOB_BYTES_PER_DUPLICATE_OCCURRENCE = 32
ORDER_JOB_BYTES_PER_DOCUMENT = 32


# A state part's job (dedup_state) holds its hash range of the state (dedup.state_partitions): that
# part of every shard's run, each read whole (`ngramfiles.read_state_run`: at scale a run's rows
# in a range are fewer than any piece it could be read in), merged a round of at most
# `STATE_ROUND_ROWS` rows at a time with the earlier state's rows in the range, read a row group
# at a time (dedup.state.merge_sorted_rows), and written a row group at a time. Measured by
# bench/bench_state_parts.py (2026-12-02 on 59e3e71, bench/results/state_parts.json: 32 runs,
# 6.4-25.6 M rows in the range, document ids of Common Crawl's WARC names, 47 characters): 68 B a
# row of the range (hash, rank, id, and the run's mapped file) and 466 MB for a round of 2²¹ rows
# (its copies: the slices joined, the order, the merged rows); 70 B and 240 B a round's row bound
# all three sizes. What grows is the range's share of this corpus's output n-grams, so the
# state's ranges follow its size (`auto_state_partitions`); the earlier state is read a row group
# at a time, whatever its size. On disk a run's part is 14.7 B a row (zstd Arrow IPC, parts of
# 1,700 rows: a shard's run over the state's ranges at 10¹¹ and 10¹² words), a state's part
# 14.5 B (zstd Parquet: the 2 GB build's 32 runs, 12.9 M rows each).
STATE_RUN_BYTES_PER_ROW = 14.7
STATE_ROUND_ROWS = 1 << 21
STATE_ROW_BYTES_HELD = 70
STATE_ROUND_BYTES_PER_ROW = 240
# rows of the state runs a token at dedup (the 2 GB build: 417,251,199 for 517,784,565 tokens)
STATE_ROWS_PER_TOKEN = 0.806
# dedup.state_partitions' maximum (config/schema.yaml): each shard's run is a part per range
MAX_STATE_PARTITIONS = 65536


def state_run_rows(run_bytes: int) -> float:
    """The rows of state runs of `run_bytes` in all, from the files' sizes alone (a stat each,
    for the rule's resources)."""
    return run_bytes / STATE_RUN_BYTES_PER_ROW


def state_part_memory_mb(run_rows: float, partitions: int) -> int:
    """The memory of one `dedup_state` job, in MB: its range's share of the runs' `run_rows`
    (hashes are uniform, so the ranges are about equal) and a row group being written, a round
    of the merge, and the interpreter."""
    rows = run_rows / partitions
    held = (rows + STATE_ROW_GROUP) * STATE_ROW_BYTES_HELD
    held += min(rows, STATE_ROUND_ROWS) * STATE_ROUND_BYTES_PER_ROW
    return PARTITIONED_MODULES_MB + math.ceil(held / 2**20)


def partitioned_memory_mb(job: str, tokens: int, documents: int, partitions: int) -> int:
    """The memory of one job of the partitioned mode, in MB: `tokens` and `documents` of its
    shard (occurrences, order, shard) or of the corpus (counts, seen: each holds its range,
    1/`partitions` of them; documents: a count per shard)."""
    duplicates = tokens * DUPLICATE_OCCURRENCE_SHARE
    held = {
        "occurrences": tokens * OCCURRENCE_JOB_BYTES_PER_TOKEN,
        "counts": duplicates / partitions * RANGE_JOB_BYTES_PER_DUPLICATE_OCCURRENCE["counts"],
        "order": duplicates * ORDER_JOB_BYTES_PER_DUPLICATE_OCCURRENCE
        + documents * ORDER_JOB_BYTES_PER_DOCUMENT,
        "documents": 0,
        "seen": duplicates / partitions * RANGE_JOB_BYTES_PER_DUPLICATE_OCCURRENCE["seen"],
        "shard": tokens * LARGEST_SHARD_BYTES_PER_TOKEN,
    }[job]
    return math.ceil(PARTITIONED_MODULES_MB + held / 2**20)


# --- dedup.mode auto and dedup.partitions auto (docs/dedup-scale.md, "How auto decides") -------
# The corpus at dedup projected from the input's gzip'd WARC bytes: the 2 GB build's tokens at
# dedup (513,452,924 of 2,172,780,687 bytes) and duplicate 10-grams (36,242,649),
# bench/results/scale_slurm_partitioned.json (2026-11-28, 1fe8a2c) — the most text a byte
# measured (the dev crawl's real pages: 0.091 tokens), so no job is under-sized. Documents: at
# least one per 250 tokens (measured 769 there, 1,300 on the dev crawl), as the rules count them.
TOKENS_PER_INPUT_BYTE = 0.2363
DUPLICATE_NGRAMS_PER_TOKEN = 0.0706
DOCUMENT_TOKENS = 250
MAX_PARTITIONS = 8192
# the rules ask for each job's need plus a fifth (`partitioned_job_mb`, rules/common.smk)
SPARE = 1.2
# dedup.mode auto: partitioned above this many bytes of gzip'd WARCs, sequential below. Measured
# on 2 cores (bench/results/dedup_threshold.json, docs/dedup-scale.md): the sequential job's CPU
# seconds over the partitioned jobs' shared by the cores are 0.36 on the dev crawl (34 MB), 2.12
# on 57 MB of the synthetic crawl, 3.3 on 226 MB; 1 at 7 M tokens, 30-80 MB of WARCs as their text
# is dense (the synthetic crawl's, or the dev crawl's real pages)
PARTITIONED_ABOVE_BYTES = 64 * 2**20


def partitioned_job_mb(job: str, tokens: int, partitions: int) -> int:
    """A partitioned dedup job's `resources.mem_mb`: `partitioned_memory_mb` with documents as
    the rules count them, and a fifth to spare."""
    return math.ceil(
        SPARE * partitioned_memory_mb(job, tokens, tokens // DOCUMENT_TOKENS, partitions)
    )


def planned_range_job_mb(input_bytes: int, partitions: int) -> int:
    """The `resources.mem_mb` of the largest range job (counts, seen) at the corpus's size
    projected from `input_bytes`."""
    tokens = round(input_bytes * TOKENS_PER_INPUT_BYTE)
    return max(partitioned_job_mb(job, tokens, partitions) for job in ("counts", "seen"))


def auto_dedup_partitions(input_bytes: int, max_mem_mb: int) -> int:
    """`dedup.partitions: auto`: the fewest hash ranges whose range jobs each need at most
    `max_mem_mb` at the corpus's projected size (at most `MAX_PARTITIONS`: each shard's
    occurrences file is a row group per range, whose footer every range job reads)."""
    return fewest_partitions(
        lambda p: planned_range_job_mb(input_bytes, p), max_mem_mb, MAX_PARTITIONS
    )


def planned_state_job_mb(input_bytes: int, partitions: int) -> int:
    """The `resources.mem_mb` of a `dedup_state` job (with a fifth to spare, as the rules ask) in
    `partitions` ranges: its share of this corpus's output n-grams, projected from `input_bytes`
    (`STATE_ROWS_PER_TOKEN`)."""
    rows = input_bytes * TOKENS_PER_INPUT_BYTE * STATE_ROWS_PER_TOKEN
    return math.ceil(SPARE * state_part_memory_mb(rows, partitions))


def auto_state_partitions(input_bytes: int, max_mem_mb: int, dedup_partitions: int) -> int:
    """`dedup.state_partitions: auto`: the fewest hash ranges of the state whose jobs each need at
    most `max_mem_mb` (`planned_state_job_mb`); at least `dedup_partitions`, the jobs the range
    family already runs, so that a state that would fit in fewer is not written by fewer, longer
    jobs; at most `MAX_STATE_PARTITIONS`."""
    fewest = fewest_partitions(
        lambda p: planned_state_job_mb(input_bytes, p), max_mem_mb, MAX_STATE_PARTITIONS
    )
    return max(dedup_partitions, fewest)


def largest_shard_bytes(max_mem_mb: int) -> int:
    """`input.shard_mb: auto`: the most gzip'd WARC bytes a shard may have with the job that holds
    the most for its shard within `max_mem_mb` — block dedup's shard job (213 B a token of its
    shard, and the sequential job as much for its largest), at the corpus's projected tokens a
    byte and with a fifth to spare, as the rules ask for it."""
    # whole MB, as the job's are rounded up; the partitioned job's interpreter, the larger
    held_mb = math.floor(max_mem_mb / SPARE) - max(MODULES_MB, PARTITIONED_MODULES_MB)
    tokens = held_mb * 2**20 // LARGEST_SHARD_BYTES_PER_TOKEN
    return int(tokens / TOKENS_PER_INPUT_BYTE)


def auto_dedup_mode(
    input_bytes: int, shards: int, params: DedupParams, max_mem_mb: int
) -> tuple[str, str]:
    """`dedup.mode: auto`: the mode, and why. Sequential keeps the thesis' Algorithm 3.1 and is
    the cheaper below `PARTITIONED_ABOVE_BYTES`; partitioned above it, or where the sequential
    job's projected memory (plus a fifth) passes `max_mem_mb`. A G_out setting only the
    sequential job has (`hash_bits` below 64, the judy backend) keeps it sequential."""
    if params.hash_bits != 64 or params.backend != "sorted-array":
        return "sequential", "dedup.hash_bits or dedup.backend is set, which only it reads"
    tokens = round(input_bytes * TOKENS_PER_INPUT_BYTE)
    need = (
        SPARE
        * dedup_memory_mb(
            round(tokens * DUPLICATE_NGRAMS_PER_TOKEN),
            [tokens // max(shards, 1)] * max(shards, 1),
            params,
        )["total"]
    )
    if need > max_mem_mb:
        return "partitioned", f"the sequential job would need {need:,.0f} MB"
    if input_bytes > PARTITIONED_ABOVE_BYTES:
        return "partitioned", f"{input_bytes / 2**20:,.0f} MB of input"
    return "sequential", f"{input_bytes / 2**20:,.0f} MB of input"
