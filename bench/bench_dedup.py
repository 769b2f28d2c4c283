"""Benchmarks of block de-duplication (corpusbuilder.dedup, thesis §3.5–3.6).

    python bench/bench_dedup.py crawl   [--stage DIR | --stage '' --warcs DIR] [--n 5 7 10] \\
        [--orders ...]                                               # §3.6.4
    python bench/bench_dedup.py memory  [--max 30000000]             # Figure 3.4 in small
    python bench/bench_dedup.py speed                                # tokens/s of the dedup pass
    python bench/bench_dedup.py levels-speed [--stage DIR] [--rounds 5]  # CPU per level, same input
    python bench/bench_dedup.py job-memory [--stage DIR]             # the dedup job's memory terms

crawl: by default reads the real stage outputs of a workflow run (--stage, its `work` directory:
tokens/*.npz, extract/*.blocks.parquet, ngrams/dup{n}/*.npy), i.e. exactly what the dedup rule sees
(pages after the language filter and exact dedup, the tokenise stage's tokens). With --stage '' it
extracts each WARC (`corpusbuilder extract`) into --work and tokenises every page's jusText-good
blocks with a regex stand-in: no language filter, no exact dedup, the input the onion reference
figures were measured on. G₂₊ is the stage's dup{n}/*.npy when present, else counted in numpy. It
runs the dedup stage and reports the thesis' metric: instances of 10-grams (all tokens) seen 2+
times in the corpus before and after, and the share of distinct 10-grams kept, with and without
the stubs the context-sensitive pass took next to duplicates counted back. With --stage it also
counts the duplicate 10-grams of the language-filtered text before exact dedup (the tokenise stage
run with every language-kept page), so the share the whole de-duplication removes is reported too.

memory: bytes per stored hash of each backend and width, each point measured as the RSS delta of
a fresh subprocess (Judy's own MemUsed alongside): with G₂₊ full, with every hash in G_out, the
peak of that, and the owner table `duplicate_of` is resolved with after the pass.
job-memory: the terms of the dedup job's memory (corpusbuilder.dedup.memory) on a workflow run's
shards, in a fresh subprocess: the resident set once the job's modules are imported, per token of
each shard the peak while it is hashed and located (`shard_ngrams`), and per token of the corpus
what pass 1 keeps in memory once every shard is prepared and spilled (the plan) and what it
spills to disk; then the whole job, in a fresh subprocess per `--bucket-tokens`, its peak
resident set and seconds (pass 2 maps the spilled shards a bucket touches).

Results go to bench/results/dedup.json.
"""

from __future__ import annotations

import argparse
import ctypes
import itertools
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from corpusbuilder import tokenise
from corpusbuilder.common.stoplists import load_stoplist
from corpusbuilder.contracts.ngramfiles import read_duplicate_ngrams
from corpusbuilder.contracts.survivors import read_survivors
from corpusbuilder.contracts.tables import ShardTables
from corpusbuilder.contracts.tokenfile import (
    TokenStream,
    kept_tokens,
    read_tokens,
    write_token_stream,
)
from corpusbuilder.dedup.corpus import BLOCK_COLUMNS, Shard, dedup_corpus
from corpusbuilder.dedup.params import LEVELS, MODES, PART_LEVELS, DedupParams
from corpusbuilder.dedup.partitioned import dedup_partitioned, sum_stats, write_dedup_table
from corpusbuilder.dedup.store import duplicate_ngram_store
from corpusbuilder.extraction.justext import PRESETS, reclassifier
from corpusbuilder.ngrams.hashing import kind_mask, ngram_hashes, select_tokens
from corpusbuilder.report.ngram_counts import RangeCounts, block_ngrams
from corpusbuilder.tokenise import block_sentences, word_hashes

RESULTS = Path(__file__).parent / "results" / "dedup.json"
TOKEN = r"\w+|[^\w\s]"  # the raw layout's stand-in tokeniser: words and punctuation marks

# jusText's pass of the default preset, as the dedup rules hand it over
JUSTEXT = reclassifier(PRESETS["default"])


def save(section: str, value) -> None:
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results[section] = value
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")


# --- crawl: the §3.6.4 metric --------------------------------------------------------------------


def pattern_suffix(pattern: str) -> str:
    """Results of another tokenisation go to their own section, beside the default's."""
    return "" if pattern == TOKEN else f" (tokens {pattern})"


def regex_tokenise_shard(
    blocks_path: Path, tokens_path: Path, stoplist: frozenset[str], pattern: str = TOKEN
) -> None:
    """A stand-in for the tokenise stage: the final-good blocks' regex tokens in its npz layout,
    with the sentence starts of the tokeniser's sentences (`tokenise.block_sentences`)."""
    blocks = pd.read_parquet(blocks_path, columns=["doc_id", "block_index", "text", "final_class"])
    good = blocks[blocks.final_class == "good"]
    sentences = [
        [re.findall(pattern, sentence) for sentence in block_sentences(text)] for text in good.text
    ]
    tokens = [[w for sentence in block for w in sentence] for block in sentences]
    words = np.array([w for block in tokens for w in block], dtype=object)
    doc_ids = pd.unique(good.doc_id)  # crawl order
    block_doc = pd.Index(doc_ids).get_indexer(good.doc_id)
    write_token_stream(
        TokenStream(
            token_hash=word_hashes(words),
            is_punct=np.array([not w[0].isalnum() and w[0] != "_" for w in words], bool),
            is_stop=np.array([w.lower() in stoplist for w in words], bool),
            block_offsets=np.concatenate(([0], np.cumsum([len(t) for t in tokens]))).astype(
                np.int64
            ),
            block_doc=block_doc.astype(np.int32),
            block_index=good.block_index.to_numpy(np.int32),
            doc_ids=np.array(doc_ids, dtype=str),
            sentence_start=np.array(
                [i == 0 for block in sentences for sentence in block for i in range(len(sentence))],
                bool,
            ),
        ),
        tokens_path,
    )


def tokens_before_exact_dedup(stage: Path, name: str, tokens_path: Path) -> Path:
    """The tokenise stage's tokens of one shard as if exact dedup had kept every page the
    language filter kept: the text the whole de-duplication (exact, then block) starts from."""
    tables = ShardTables(
        stage / "extract" / f"{name}.docs.parquet",
        stage / "extract" / f"{name}.blocks.parquet",
        stage / "language" / f"{name}.parquet",
    )
    write_token_stream(
        tokenise.tokenise_shard(read_survivors(tables), tokenise.TokeniseParams()), tokens_path
    )
    return tokens_path


def load_words(tokens_path: Path, kind: str) -> tuple[np.ndarray, np.ndarray]:
    t = read_tokens(tokens_path, ("token_hash", "is_punct", "is_stop", "block_offsets"))
    keep = kind_mask(kind, t.is_punct, t.is_stop)
    words, offsets, _ = select_tokens(t.token_hash, t.block_offsets, keep)
    return words, offsets


def duplicate_ngrams(tokens_paths: list[Path], n: int, kind: str) -> np.ndarray:
    """G₂₊ by counting: every n-gram hash seen twice or more over all shards."""
    hashes = np.concatenate([ngram_hashes(*load_words(p, kind), n)[0] for p in tokens_paths])
    unique, counts = np.unique(hashes, return_counts=True)
    return unique[counts >= 2]


def tengram_metric(tokens_paths: list[Path], kept: list[np.ndarray] | None) -> dict:
    """Instances of 10-grams (all tokens) seen 2+ times, and distinct 10-grams, over the tokens
    in `kept` (a bool per token of each shard; None = all): the report's count
    (`ngram_counts.block_ngrams`, counted by hash range as the report does), which takes only
    10-grams of the original text, never one bridging a removed block or sentence."""
    with RangeCounts() as counter:
        for i, path in enumerate(tokens_paths):
            counter.add(block_ngrams(read_tokens(path), None if kept is None else kept[i], 10))
        counts = counter.counts()
    return {
        "duplicate_10gram_instances": counts.duplicate_instances,
        "distinct_10grams": counts.distinct_ngrams,
        "10gram_instances": counts.ngram_instances,
    }


def kept_after(tokens_path: Path, output: Path, stubs_back: bool = False) -> np.ndarray:
    """Per token: kept by the dedup stage (`tables.kept_tokens`); with `stubs_back`, the blocks the
    context-sensitive pass took next to duplicates count as kept too."""
    table = pd.read_parquet(output)
    if stubs_back:
        table = table.assign(
            final_class=table.final_class.where(table.final_class == "duplicate", "good")
        )
    return kept_tokens(read_tokens(tokens_path), table)


def crawl(args) -> None:
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if args.stage:
        stage = Path(args.stage)
        names = sorted(p.name.removesuffix(".npz") for p in (stage / "tokens").glob("*.npz"))
        tokens = [stage / "tokens" / f"{name}.npz" for name in names]
        blocks = [stage / "extract" / f"{name}.blocks.parquet" for name in names]
    else:
        stoplist = load_stoplist("English")
        names = sorted(p.name.removesuffix(".warc.gz") for p in Path(args.warcs).glob("*.warc.gz"))
        for name in names:
            if not (work / f"{name}.blocks.parquet").exists():
                # jusText's text, as the thesis and the onion reference
                # measure (not the `best` preset)
                subprocess.run(
                    [
                        "corpusbuilder",
                        "extract",
                        str(Path(args.warcs) / f"{name}.warc.gz"),
                        str(work / name),
                        "--shard",
                        name,
                        "--preset",
                        "default",
                    ],
                    check=True,
                )
            if not (work / f"{name}.npz").exists():
                regex_tokenise_shard(
                    work / f"{name}.blocks.parquet",
                    work / f"{name}.npz",
                    stoplist,
                    args.token_pattern,
                )
        tokens = [work / f"{name}.npz" for name in names]
        blocks = [work / f"{name}.blocks.parquet" for name in names]
    before = tengram_metric(tokens, None)
    print("before", before)
    before_exact = None
    if args.stage:
        before_exact = tengram_metric(
            [
                tokens_before_exact_dedup(stage, name, work / f"{name}.before-exact.npz")
                for name in names
            ],
            None,
        )
        print("before exact dedup", before_exact)
    rows = []
    for kind in args.kinds:
        for n in args.n:
            # G₂₊ depends on the n-grams only, not on the threshold or the order
            staged = staged_duplicates(Path(args.stage or work), n)
            if args.stage and kind == "all" and staged:
                np.save(work / "dup.npy", read_duplicate_ngrams(staged))
            else:
                np.save(work / "dup.npy", duplicate_ngrams(tokens, n, kind))
            for threshold, order, level in itertools.product(
                args.thresholds, args.orders, args.levels
            ):
                shards = [
                    Shard(name, t, b, work / "dedup" / f"{name}.parquet")
                    for name, t, b in zip(names, tokens, blocks)
                ]
                band = (
                    dict(zip(("partial_low", "partial_high"), args.partial_band))
                    if level in PART_LEVELS
                    else {}
                )
                if level == "span":
                    band["span_repeat_ratio"] = args.span_repeat_ratio
                params = DedupParams(
                    n=n, kind=kind, threshold=threshold, order=order, level=level, **band
                )
                for mode in args.modes:
                    rows.append(
                        crawl_run(args, mode, shards, work, params, before, before_exact, band)
                    )
    # two inputs, two sections: the workflow's (after language and exact dedup) and jusText's
    # clean text of every page (the input the onion reference figures were measured on)
    section = args.section or (
        "crawl" if args.stage else "crawl_justext_only" + pattern_suffix(args.token_pattern)
    )
    save(
        section,
        {
            "stage": str(args.stage),
            "warcs": str(args.warcs),
            "before": before,
            **({"before_exact_dedup": before_exact} if before_exact else {}),
            "runs": merged_runs(section, before, rows),
        },
    )


def run_partitioned(shards, work: Path, params: DedupParams, partitions: int):
    """The partitioned mode's jobs in one process (`partitioned.dedup_partitioned`), each shard's
    table written where the sequential job writes it; the stats summed as rule dedup_merge does."""
    started = time.perf_counter()
    results = dedup_partitioned(
        shards,
        np.load(work / "dup.npy"),
        params,
        partitions,
        JUSTEXT,
        lambda shard: read_tokens(shard.tokens),
        lambda shard: pd.read_parquet(shard.blocks, columns=BLOCK_COLUMNS),
    )
    for shard, (table, _) in zip(shards, results):
        write_dedup_table(table, shard.output)
    stats = sum_stats([stats for _, stats in results])
    stats.duplicate_ngrams = len(np.load(work / "dup.npy", mmap_mode="r"))
    stats.seconds["total"] = round(time.perf_counter() - started, 3)
    return stats


def crawl_run(args, mode, shards, work, params, before, before_exact, band) -> dict:
    tokens = [shard.tokens for shard in shards]
    if mode == "partitioned":
        stats = run_partitioned(shards, work, params, args.partitions)
    else:
        stats = dedup_corpus(shards, work / "dup.npy", None, params, JUSTEXT)
    after = tengram_metric(tokens, [kept_after(shard.tokens, shard.output) for shard in shards])
    # the same run with the stubs the context-sensitive pass took counted back as kept
    alone = tengram_metric(
        tokens, [kept_after(shard.tokens, shard.output, True) for shard in shards]
    )
    row = {
        "mode": mode + (f" P={args.partitions}" if mode == "partitioned" else ""),
        "kind": params.kind,
        "n": params.n,
        "threshold": params.threshold,
        "order": params.order,
        "level": params.level
        + (" ({partial_low}, {partial_high}]".format(**band) if band else "")
        + (" ratio {span_repeat_ratio}".format(**band) if params.level == "span" else ""),
        "partly_kept_blocks": stats.partly_kept_blocks,
        "removed_parts": stats.removed_parts,
        "duplicate_ngrams": stats.duplicate_ngrams,
        "removed_duplicate_10gram_instances": round(
            1 - after["duplicate_10gram_instances"] / before["duplicate_10gram_instances"],
            4,
        ),
        "kept_distinct_10grams": round(after["distinct_10grams"] / before["distinct_10grams"], 4),
        "kept_tokens": round(after["10gram_instances"] / before["10gram_instances"], 4),
        "stubs_counted_back": {
            "removed_duplicate_10gram_instances": round(
                1 - alone["duplicate_10gram_instances"] / before["duplicate_10gram_instances"],
                4,
            ),
            "kept_distinct_10grams": round(
                alone["distinct_10grams"] / before["distinct_10grams"], 4
            ),
        },
        # exact and block dedup together, from the language-filtered text
        **(
            {
                "pipeline_removed_duplicate_10gram_instances": round(
                    1
                    - after["duplicate_10gram_instances"]
                    / before_exact["duplicate_10gram_instances"],
                    4,
                )
            }
            if before_exact
            else {}
        ),
        "store_bytes_per_duplicate_ngram": round(
            stats.store_bytes / max(stats.duplicate_ngrams, 1), 2
        ),
        "tokens": stats.tokens,
        "seconds": stats.seconds,
        "tokens_per_second": round(stats.tokens / stats.seconds["total"]),
    }
    print(row)
    return row


def merged_runs(section: str, before: dict, rows: list[dict]) -> list[dict]:
    """A run with other settings (a threshold sweep, one n) adds its rows to those already saved
    for the same input, replacing only the rows of the same settings."""
    saved = json.loads(RESULTS.read_text()).get(section, {}) if RESULTS.exists() else {}
    settings = ("kind", "n", "threshold", "order", "level", "mode")
    defaults = {"mode": "sequential"}
    by_setting = {
        tuple(row.get(k, defaults.get(k, "block")) for k in settings): row
        for row in (saved.get("runs", []) if saved.get("before") == before else [])
    }
    by_setting.update((tuple(row[k] for k in settings), row) for row in rows)
    return [by_setting[key] for key in sorted(by_setting)]


# --- memory: Figure 3.4 in small ------------------------------------------------------------------


def _rss() -> int:
    ctypes.CDLL("libc.so.6").malloc_trim(0)  # return freed heap pages, so the delta is the store's
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()


def random_hashes(path: Path, count: int) -> Path:
    """`count` random 64-bit hashes, sorted, as dup{n}.npy would hold them (written once)."""
    if not path.exists():
        keys = np.random.default_rng(count).integers(
            0, np.iinfo(np.uint64).max, size=count, dtype=np.uint64
        )
        keys.sort()
        np.save(path, keys)
    return path


def memory_point(backend: str, keys_path: Path, bits: int) -> dict:
    """One point, in this (fresh) process, loading G₂₊ as the stage does: memory with G₂₊ full
    (start), with every hash sent to G_out (end), the peak of that pass, and the table of who
    sent what that `duplicate_of` is resolved with once the sets are
    given up, all per stored hash."""
    baseline = _rss()
    store = duplicate_ngram_store(np.load(keys_path), DedupParams(backend=backend, hash_bits=bits))
    stored = len(store)
    point = {
        "backend": backend,
        "bits": bits,
        "hashes": stored,
        "start_bytes_per_hash": round((_rss() - baseline) / stored, 2),
    }
    if backend == "judy":
        import judy

        point["judy1_memused_per_hash"] = round(store.g2.__sizeof__() / stored, 2)
        # the peak of loading and building (the end state below is built in bulk, with a copy)
        point["peak_bytes_per_hash"] = round(
            (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - baseline) / stored, 2
        )
        # every duplicate n-gram sent to output: G_out full, G₂₊ empty
        keys = store.g2.ToArray()
        store.g2.clear()
        store.g_out = judy.JudyIntSet.FromArray(keys)
        del keys
    else:
        # every duplicate n-gram sent to output, a document's worth at a time as the pass does
        for start in range(0, stored, 4096):
            store.send(np.arange(start, min(start + 4096, stored)))
        # the peak while the sets live: loading, building and the pass
        point["peak_bytes_per_hash"] = round(
            (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - baseline) / stored, 2
        )
    point["end_bytes_per_hash"] = round((_rss() - baseline) / stored, 2)
    if backend == "judy":
        keys = store.g_out.ToArray()
        owners = store.owner_table()
        owners.owner = judy.JudyIntIntMap.FromArray(
            keys, np.arange(stored, dtype=np.uint64) % 1_000_003
        )
        del keys
        point["owners_judyl_memused_per_hash"] = round(owners.owner.__sizeof__() / stored, 2)
    else:
        owners = store.owner_table()
        owners.record(np.arange(stored), np.arange(stored, dtype=np.int32) % 1_000_003)
        point["owners_bytes_per_hash"] = round((_rss() - baseline) / stored, 2)
    return point


def memory(args) -> None:
    counts = [
        c for c in (1_000_000, 3_000_000, 10_000_000, 30_000_000, 100_000_000) if c <= args.max
    ]
    Path(args.work).mkdir(parents=True, exist_ok=True)
    points = []
    for count in counts:
        keys = random_hashes(Path(args.work) / f"keys-{count}.npy", count)
        for backend in ("sorted-array", "judy"):
            for bits in (56, 60, 64):
                out = subprocess.run(
                    [sys.executable, __file__, "memory-point", backend, str(keys), str(bits)],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                points.append(json.loads(out))
                print(points[-1], flush=True)
        keys.unlink()
    save("memory", points)


def staged_duplicates(stage: Path, n: int) -> list[Path]:
    """G₂₊ of a workflow run's work directory: its parts
    (ngrams/dup{n}/{partition}.npy) in order."""
    return sorted((stage / "ngrams" / f"dup{n}").glob("*.npy"), key=lambda path: int(path.stem))


def job_memory_point(stage: Path) -> dict:
    """In this (fresh) process: the resident set with the dedup job's modules imported, then per
    shard the peak and the kept bytes per token of reading and preparing it (`shard_ngrams`),
    as tracemalloc counts them (numpy's and Python's allocations: the resident set's deltas are
    blurred by the allocator's reuse); G₂₊'s store is built first, so neither counts it."""
    import tracemalloc

    import corpusbuilder.extraction.extract  # noqa: F401  (the rule script imports it: its modules count too)
    from corpusbuilder.dedup.corpus import DedupStats, context_blocks, plan_documents, shard_ngrams

    point = {"stage": str(stage), "modules_mb": round(_rss() / 2**20, 1), "shards": []}
    params = DedupParams()
    store = duplicate_ngram_store(read_duplicate_ngrams(staged_duplicates(stage, params.n)), params)
    shards = []
    for path in sorted((stage / "tokens").glob("*.npz")):
        name = path.name.removesuffix(".npz")
        shards.append(Shard(name, path, stage / "extract" / f"{name}.blocks.parquet", path))
        tracemalloc.start()
        tokens = read_tokens(path)
        count = len(tokens.token_hash)
        shard_ngrams(tokens, params, store, context_blocks(shards[-1], params))
        del tokens
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        point["shards"].append(
            {
                "shard": name,
                "tokens": count,
                "token_file_bytes": path.stat().st_size,
                "peak_bytes_per_token": round(peak / count, 1),
            }
        )
    with tempfile.TemporaryDirectory() as scratch:
        stats = DedupStats()
        tracemalloc.start()
        plan = plan_documents(shards, store, params, stats, Path(scratch))
        held, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        plan.prepared.cleanup()
    point["plan_bytes_per_token"] = round(held / stats.tokens, 2)
    point["spilled_bytes_per_token"] = round(stats.spilled_bytes / stats.tokens, 2)
    return point


def job_run_point(stage: Path, work: Path, bucket_tokens: int = DedupParams.bucket_tokens) -> dict:
    """In this (fresh) process: the whole dedup job on the stage's shards, as the rule runs it
    (its state written too), its peak resident set and its seconds."""
    import corpusbuilder.extraction.extract  # noqa: F401

    modules = _rss()
    names = sorted(path.name.removesuffix(".npz") for path in (stage / "tokens").glob("*.npz"))
    shards = [
        Shard(
            name,
            stage / "tokens" / f"{name}.npz",
            stage / "extract" / f"{name}.blocks.parquet",
            work / f"{name}.parquet",
        )
        for name in names
    ]
    resource_peak_reset()
    stats = dedup_corpus(
        shards,
        staged_duplicates(stage, DedupParams.n),
        None,
        DedupParams(bucket_tokens=bucket_tokens),
        JUSTEXT,
        state_path=work / "state.parquet",
    )
    return {
        "modules_mb": round(modules / 2**20, 1),
        "duplicate_ngrams": stats.duplicate_ngrams,
        "tokens": stats.tokens,
        "bucket_tokens": bucket_tokens,
        "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "seconds": stats.seconds,
    }


def resource_peak_reset() -> None:
    """Reset this process's peak resident set (Linux ≥ 4.0), so
    ru_maxrss is the next step's peak."""
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")


def job_memory(args) -> None:
    """The terms per shard, then the whole job; what the terms leave of its peak is charged to the
    largest shard per token (pass 3 and the state hold one shard's tokens and tables too)."""
    from corpusbuilder.dedup.memory import BYTES_PER_DUPLICATE_NGRAM

    def fresh(*command: str) -> dict:
        return json.loads(
            subprocess.run(
                [sys.executable, __file__, *command], check=True, capture_output=True, text=True
            ).stdout
        )

    point = fresh("job-memory-point", args.stage)
    Path(args.work).mkdir(parents=True, exist_ok=True)
    point["jobs"] = [
        fresh("job-run-point", args.stage, str(Path(args.work) / "job"), str(bucket))
        for bucket in args.bucket_tokens
    ]
    point["max_peak_bytes_per_token"] = max(s["peak_bytes_per_token"] for s in point["shards"])
    job, largest = point["jobs"][0], max(s["tokens"] for s in point["shards"])
    rest = (
        job["peak_mb"] * 2**20
        - job["modules_mb"] * 2**20
        - job["duplicate_ngrams"] * BYTES_PER_DUPLICATE_NGRAM["sorted-array"]
        - job["tokens"] * point["plan_bytes_per_token"]
    )
    point["job_largest_shard_bytes_per_token"] = round(rest / largest, 1)
    print(point)
    save("job_memory", point)


# --- speed: tokens/s of the dedup pass ----------------------------------------------------------


def speed(args) -> None:
    """Synthetic crawl: Zipf words, pages of fresh and copied paragraphs; tokens/s end to end and
    of Algorithm 3.1 alone, per backend."""
    rng = np.random.default_rng(0)
    work = Path(args.work) / "speed"
    work.mkdir(parents=True, exist_ok=True)
    names, pool = [], []
    for s in range(args.shards):
        words, offsets, block_doc, block_index, rows = [], [0], [], [], []
        for d in range(args.docs):
            for b in range(int(rng.integers(3, 15))):
                if pool and rng.random() < 0.3:
                    para = pool[rng.integers(len(pool))]
                else:
                    para = (rng.zipf(1.3, size=int(rng.integers(10, 120))) % 200_000).astype(
                        np.uint64
                    )
                    if rng.random() < 0.05:
                        pool.append(para)
                words.append(para)
                offsets.append(offsets[-1] + len(para))
                block_doc.append(d)
                block_index.append(b)
                rows.append(
                    {
                        "doc_id": f"s{s}:{d}",
                        "block_index": b,
                        "heading": False,
                        "n_chars": 6 * len(para),
                        "n_words": len(para),
                        "cf_class": "good",
                        "final_class": "good",
                    }
                )
        token_hash = word_hashes(np.concatenate(words).astype(str).astype(object))
        name = f"s{s}"
        np.savez(
            work / f"{name}.npz",
            token_hash=token_hash,
            is_punct=np.zeros(len(token_hash), bool),
            is_stop=np.zeros(len(token_hash), bool),
            block_offsets=np.array(offsets, np.int64),
            block_doc=np.array(block_doc, np.int32),
            block_index=np.array(block_index, np.int32),
            doc_ids=np.array([f"s{s}:{d}" for d in range(args.docs)]),
        )
        pd.DataFrame(rows).astype({"block_index": "int32"}).to_parquet(
            work / f"{name}.blocks.parquet"
        )
        names.append(name)
    tokens = [work / f"{name}.npz" for name in names]
    results = []
    for backend in ("sorted-array", "judy"):
        np.save(work / "dup.npy", duplicate_ngrams(tokens, 10, "all"))
        shards = [
            Shard(n, work / f"{n}.npz", work / f"{n}.blocks.parquet", work / "out" / f"{n}.parquet")
            for n in names
        ]
        stats = dedup_corpus(shards, work / "dup.npy", None, DedupParams(backend=backend), JUSTEXT)
        row = {
            "backend": backend,
            "tokens": stats.tokens,
            "duplicate_ngrams": stats.duplicate_ngrams,
            "documents_processed": stats.documents_processed,
            "seconds": stats.seconds,
            "tokens_per_second_total": round(stats.tokens / stats.seconds["total"]),
            "tokens_per_second_order_and_dedup": round(
                stats.tokens / (stats.seconds["order"] + stats.seconds["dedup"])
            ),
            "store_bytes_per_duplicate_ngram": round(stats.store_bytes / stats.duplicate_ngrams, 2),
        }
        print(row, flush=True)
        results.append(row)
    save("speed", results)


def levels_speed(args) -> None:
    """CPU seconds of the dedup stage on a workflow run's own inputs, one level after the other
    in each round (the load of a shared machine falls on all alike), the median of the rounds."""
    stage = Path(args.stage)
    names = sorted(p.name.removesuffix(".npz") for p in (stage / "tokens").glob("*.npz"))
    work = Path(args.work) / "levels"
    shards = [
        Shard(
            name,
            stage / "tokens" / f"{name}.npz",
            stage / "extract" / f"{name}.blocks.parquet",
            work / f"{name}.parquet",
        )
        for name in names
    ]
    seconds = {level: [] for level in args.levels}
    for _ in range(args.rounds):
        for level in args.levels:
            started = time.process_time()
            stats = dedup_corpus(
                shards,
                staged_duplicates(stage, args.n),
                None,
                DedupParams(n=args.n, level=level),
                JUSTEXT,
            )
            seconds[level].append(time.process_time() - started)
    base = float(np.median(seconds[args.levels[0]]))
    rows = [
        {
            "level": level,
            "cpu_seconds": [round(x, 3) for x in times],
            "median": round(float(np.median(times)), 3),
            "tokens_per_cpu_second": round(stats.tokens / float(np.median(times))),
            f"ratio_to_{args.levels[0]}": round(float(np.median(times)) / base, 3),
        }
        for level, times in seconds.items()
    ]
    for row in rows:
        print(row, flush=True)
    save(
        "levels_speed",
        {
            "stage": str(stage),
            "n": args.n,
            "tokens": stats.tokens,
            "rounds": args.rounds,
            "runs": rows,
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("crawl")
    c.add_argument(
        "--stage",
        default="work",
        help="a workflow run's work directory (default: ./work); '' to extract and tokenise "
        "--warcs here",
    )
    c.add_argument(
        "--warcs",
        default=str(Path(__file__).resolve().parents[2] / "shared" / "datasets" / "crawl" / "dev"),
    )
    c.add_argument("--work", default="bench/results/tmp/dedup")
    c.add_argument("--n", type=int, nargs="+", default=[5, 7, 10])
    c.add_argument("--kinds", nargs="+", default=["all"])
    c.add_argument("--thresholds", type=float, nargs="+", default=[0.5])
    c.add_argument("--orders", nargs="+", default=["dup-share"], choices=["dup-share", "input"])
    c.add_argument("--levels", nargs="+", default=["block", "sentence", "span"], choices=LEVELS)
    c.add_argument("--modes", nargs="+", default=["sequential"], choices=MODES)
    c.add_argument("--partitions", type=int, default=8, help="mode partitioned: hash ranges")
    c.add_argument(
        "--partial-band",
        type=float,
        nargs=2,
        default=[DedupParams.partial_low, DedupParams.partial_high],
        metavar=("LOW", "HIGH"),
        help="levels sentence and span: blocks with a share in (LOW, HIGH] are judged by their "
        "parts",
    )
    c.add_argument(
        "--section",
        help="results/dedup.json section (default: crawl, or crawl_justext_only with --stage '')",
    )
    c.add_argument(
        "--span-repeat-ratio",
        type=float,
        default=DedupParams.span_repeat_ratio,
        help="level span: a kept run goes when its output n-grams outnumber its fresh ones by more "
        "than this",
    )
    c.add_argument(
        "--token-pattern",
        default=TOKEN,
        help="with --stage '': the regex that tokenises the blocks (e.g. '\\S+' for whitespace "
        "tokens); a new --work dir per pattern",
    )
    m = sub.add_parser("memory")
    m.add_argument("--max", type=int, default=30_000_000)
    m.add_argument("--work", default="bench/results/tmp/dedup")
    p = sub.add_parser("memory-point")
    p.add_argument("backend")
    p.add_argument("keys", type=Path)
    p.add_argument("bits", type=int)
    s = sub.add_parser("speed")
    s.add_argument("--work", default="bench/results/tmp/dedup")
    s.add_argument("--shards", type=int, default=2)
    s.add_argument("--docs", type=int, default=3000)
    v = sub.add_parser("levels-speed")
    v.add_argument("--stage", default="work")
    v.add_argument("--work", default="bench/results/tmp/dedup")
    v.add_argument("--levels", nargs="+", default=["block", "sentence", "span"], choices=LEVELS)
    v.add_argument("--n", type=int, default=10)
    v.add_argument("--rounds", type=int, default=5)
    j = sub.add_parser("job-memory")
    j.add_argument("--stage", default="work")
    j.add_argument("--work", default="bench/results/tmp/dedup")
    j.add_argument(
        "--bucket-tokens",
        type=int,
        nargs="+",
        default=[DedupParams.bucket_tokens, 500_000, 100_000],
        help="dedup.bucket_tokens of each whole-job run; the first is the one the terms are fitted "
        "to",
    )
    sub.add_parser("job-memory-point").add_argument("stage", type=Path)
    r = sub.add_parser("job-run-point")
    r.add_argument("stage", type=Path)
    r.add_argument("work", type=Path)
    r.add_argument("bucket_tokens", type=int, nargs="?", default=DedupParams.bucket_tokens)
    args = parser.parse_args()
    if args.command == "memory-point":
        print(json.dumps(memory_point(args.backend, args.keys, args.bits)))
    elif args.command == "job-memory-point":
        print(json.dumps(job_memory_point(args.stage)))
    elif args.command == "job-run-point":
        print(json.dumps(job_run_point(args.stage, args.work, args.bucket_tokens)))
    else:
        {
            "crawl": crawl,
            "memory": memory,
            "speed": speed,
            "levels-speed": levels_speed,
            "job-memory": job_memory,
        }[args.command](args)


if __name__ == "__main__":
    main()
