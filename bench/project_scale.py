#!/usr/bin/env python3
"""What a crawl of 10^9, 10^10 and 10^11 words of original text needs — jobs, hours on N cores,
the dedup job's memory — computed from measured rates, never typed in:

    python bench/project_scale.py [--cores 2 64 512] [--shard-words N]  # → results/projection.json

Sources, each re-read on every run (so a new scale run gives a new table):

- bench/results/scale.json (bench/scale.py): per stage, job-seconds per original word, the words
  of its shards (the shard size projected, unless --shard-words), and the funnel's share of words
  that reaches dedup;
- bench/results/ngrams.json `partitioned_merge` (bench/bench_ngrams.py --partitions): the merge's
  share of the duplicate n-gram stage, when scale.json predates the merge's own rule figures;
- corpusbuilder.dedup.memory: the dedup job's memory, the function the job checks itself with;
- bench/results/dedup.json `job_memory` (bench/bench_dedup.py job-memory): the bytes per token
  dedup spills to disk between its passes.

The model: every per-shard job (download, extract, language, exact_hashes, exact_dedup,
tokenise, ngram_runs, export) and the exact-dedup partitions run in parallel on all cores; the
merge runs as P = min(cores, 4096) range jobs, its work times the merge passes its runs need
(`runs.MERGE_FAN_IN` at a time), plus what each part reads at its range's edges of each run;
dedup is one sequential job at its measured rate, linear in the words (as in the thesis' Table
3.7); wall = parallel work / cores + merge + dedup. G₂₊ is the duplicate 10-gram types per
token, 0.028 as on the dev crawl or 0.072 as on ClueWeb09 (thesis Table 3.4). What the model
leaves out is printed under the table.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from corpusbuilder.dedup.memory import dedup_memory_mb
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.ngrams.runs import MERGE_FAN_IN

HERE = Path(__file__).resolve().parent

SCALE = HERE / "results" / "scale.json"
NGRAMS = HERE / "results" / "ngrams.json"
DEDUP = HERE / "results" / "dedup.json"
RESULTS = HERE / "results" / "projection.json"

WORDS = (10**9, 10**10, 10**11)
# duplicate 10-gram types per token: the dev crawl (bench/results/dedup.json crawl: 77,945 of
# 2,736,468 tokens) and ClueWeb09 (thesis Table 3.4)
DUPLICATE_RATES = {"dev crawl": 0.028, "ClueWeb09": 0.072}
# tokens per word of the text dedup reads, on the dev crawl (work/dedup/stats.json tokens over
# funnel.tsv exact_dedup_kept words: 2,985,071 / 2,548,065), for a
# scale.json that does not count them
DEV_TOKENS_PER_WORD = 1.1715
PER_SHARD_RULES = (
    "download",
    "extract",
    "language",
    "exact_hashes",
    "exact_dedup",
    "tokenise",
    "ngram_runs",
    "export",
)
EXACT_PARTITIONS = 16  # exact_dedup.partitions' default
MAX_PARTITIONS = 4096  # ngrams.partitions' maximum


def measured_rates(scale: dict, ngrams: dict) -> dict:
    """Job-seconds per original word: parallel (per-shard stages), merge, dedup; and the words a
    gzip'd WARC byte holds, the tokens dedup reads per original word."""
    words = scale["words_original"]
    stages = scale["stages"]
    rules = scale.get("rules", {})
    if "dup_ngram_part" in rules:
        merge_s = rules["dup_ngram_part"]["s"] + rules.get("dup_ngrams", {}).get("s", 0)
        merge_source = "scale.json rules dup_ngram_part + dup_ngrams"
    else:
        # the old single merge job was summed with the shard runs: split
        # the stage by the bench's ratio
        bench = ngrams["partitioned_merge"]
        one = next(row for row in bench["merges"] if row["partitions"] == 1)
        share = one["core_seconds"] / (one["core_seconds"] + bench["shard_run_cpu_seconds"])
        merge_s = stages["dup n-grams"]["job_s"] * share
        merge_source = (
            f"scale.json stage 'dup n-grams' x {share:.3f}, the merge's share of it in "
            f"bench_ngrams --partitions ({bench['size']} tokens, {bench['runs']} runs)"
        )
    parallel_s = sum(stage["job_s"] for name, stage in stages.items() if name != "dedup") - merge_s
    # a part reads the row groups at its range's edges of every run whole: seconds per (part, run)
    bench = ngrams["partitioned_merge"]
    one, most = bench["merges"][0], bench["merges"][-1]
    edge_s = max(
        0.0,
        (most["core_seconds"] - one["core_seconds"])
        / ((most["partitions"] - one["partitions"]) * bench["runs"]),
    )
    if "dedup_tokens" in scale:
        tokens_per_word = scale["dedup_tokens"] / words
        tokens_source = "scale.json dedup_tokens"
    else:
        kept = scale["funnel"]["exact_dedup_kept"]["words"] / words
        tokens_per_word = kept * DEV_TOKENS_PER_WORD
        tokens_source = (
            f"scale.json funnel exact_dedup_kept / html_documents words ({kept:.3f}) x "
            f"{DEV_TOKENS_PER_WORD} tokens per word (dev crawl)"
        )
    return {
        "parallel_s_per_word": parallel_s / words,
        "merge_s_per_word": merge_s / words,
        "merge_source": merge_source,
        "merge_s_per_part_and_run": edge_s,
        "dedup_s_per_word": stages["dedup"]["job_s"] / words,
        "shard_words": words / len(scale["crawl"]["shards"]),
        "shard_gzip_bytes": scale["crawl"]["file_bytes"] / len(scale["crawl"]["shards"]),
        "tokens_per_word": tokens_per_word,
        "tokens_source": tokens_source,
        "scale_run": {
            "words": words,
            "shards": len(scale["crawl"]["shards"]),
            "cores": scale["cores"],
        },
    }


def merge_passes(runs: int) -> int:
    """Merge passes over the data: runs are merged MERGE_FAN_IN at a
    time until that many are left."""
    passes = 1
    while runs > MERGE_FAN_IN:
        runs = math.ceil(runs / MERGE_FAN_IN)
        passes += 1
    return passes


def project(rates: dict, words: int, cores: int, shard_words: float) -> dict:
    shards = math.ceil(words / shard_words)
    partitions = min(cores, MAX_PARTITIONS)
    # the scale run merged its runs in one pass
    merge_s = (
        rates["merge_s_per_word"] * words * merge_passes(shards)
        + rates["merge_s_per_part_and_run"] * partitions * shards
    )
    dedup_s = rates["dedup_s_per_word"] * words
    parallel_s = rates["parallel_s_per_word"] * words
    tokens = words * rates["tokens_per_word"]
    shard_tokens = [round(tokens / shards)] * shards
    memory = {
        name: dedup_memory_mb(round(rate * tokens), shard_tokens, DedupParams())
        for name, rate in DUPLICATE_RATES.items()
    }
    return {
        "words": words,
        "cores": cores,
        "shards": shards,
        "jobs": {
            "per_shard": shards * len(PER_SHARD_RULES),
            "exact_partitions": EXACT_PARTITIONS,
            "merge": partitions,
            "dedup": 1,
        },
        "merge_passes": merge_passes(shards),
        "hours": {
            "parallel": parallel_s / cores / 3600,
            "merge": merge_s / partitions * math.ceil(partitions / cores) / 3600,
            "dedup": dedup_s / 3600,
        },
        "dedup_memory_mb": memory,
    }


def table(rows: list[dict]) -> str:
    names = list(DUPLICATE_RATES)
    lines = [
        "| words | shards | jobs: per shard + exact + merge + dedup | cores | per-shard h | merge "
        "h | dedup h | total h | dedup memory "
        + " / ".join(f"{name} ({DUPLICATE_RATES[name]})" for name in names)
        + " |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        hours, jobs = row["hours"], row["jobs"]
        memory = " / ".join(
            f"{row['dedup_memory_mb'][name]['total'] / 1024:,.1f} GB "
            f"(G₂₊ {row['dedup_memory_mb'][name]['duplicate_ngrams'] / 1024:,.1f})"
            for name in names
        )
        lines.append(
            f"| 10^{round(math.log10(row['words']))} | {row['shards']:,} | {jobs['per_shard']:,} + "
            f"{jobs['exact_partitions']} + {jobs['merge']} + 1 | {row['cores']} | "
            f"{hours['parallel']:,.1f} | {hours['merge']:,.2f} | {hours['dedup']:,.1f} | "
            f"{sum(hours.values()):,.1f} | {memory} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cores", type=int, nargs="+", default=[2, 64, 512])
    parser.add_argument(
        "--shard-words",
        type=float,
        help="words of original text per shard (default: the scale run's shards)",
    )
    parser.add_argument("--scale", type=Path, default=SCALE)
    parser.add_argument("--ngrams", type=Path, default=NGRAMS)
    parser.add_argument("--dedup", type=Path, default=DEDUP)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    scale = json.loads(args.scale.read_text())
    rates = measured_rates(scale, json.loads(args.ngrams.read_text()))
    shard_words = args.shard_words or rates["shard_words"]
    rows = [project(rates, words, cores, shard_words) for words in WORDS for cores in args.cores]
    print(table(rows))
    largest = rows[-1]["dedup_memory_mb"]["ClueWeb09"]
    print(
        f"\nrates from {args.scale} ({rates['scale_run']['words']:,} words, "
        f"{rates['scale_run']['shards']} shards): per-shard stages "
        f"{rates['parallel_s_per_word'] * 1e9 / 3600:.2f} job-h per 10^9 words, merge "
        f"{rates['merge_s_per_word'] * 1e9 / 3600:.3f} ({rates['merge_source']}) + "
        f"{rates['merge_s_per_part_and_run'] * 1e3:.1f} ms per part and run, dedup "
        f"{rates['dedup_s_per_word'] * 1e9 / 3600:.2f} (one job); shards of "
        f"{shard_words / 1e6:.1f} M words (the scale run's: {rates['shard_words'] / 1e6:.1f} M "
        f"words, {rates['shard_gzip_bytes'] / 1e6:.0f} MB gzip'd); {rates['tokens_per_word']:.3f} "
        f"tokens at dedup per original word ({rates['tokens_source']})."
    )
    spilled = (
        json.loads(args.dedup.read_text())["job_memory"]["spilled_bytes_per_token"]
        * WORDS[-1]
        * rates["tokens_per_word"]
    )
    print(
        f"dedup memory at 10^11 words, ClueWeb09 rate: {largest}. Left out: dedup's pass 1 spills "
        f"the prepared shards to disk ({spilled / 1e9:,.0f} GB at 10^11 words) and pass 2 reads "
        "them in processing order; its hours here are the rate measured with them in the page "
        "cache, a lower bound once they outgrow it."
    )
    args.out.write_text(
        json.dumps(
            {
                "rates": rates,
                "shard_words": shard_words,
                "duplicate_rates": DUPLICATE_RATES,
                "rows": rows,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"\n{args.out} written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
