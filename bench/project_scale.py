#!/usr/bin/env python3
"""What a crawl of 10^9 to 10^12 words of original text needs — jobs, hours on N cores,
the dedup jobs' memory — computed from measured rates, never typed in, for both dedup modes:

    python bench/project_scale.py [--cores 2 64 512] [--shard-words N]  # → results/projection.json

Sources, each re-read on every run (so a new scale run gives a new table):

- bench/results/scale.json (bench/scale.py): per stage, core-seconds per original word (with
  --basis cpu, the default, each job's CPU seconds: jobs are single-threaded, and on this shared
  2-core machine a job's wall seconds also count the time it waited for a core; --basis wall
  counts those), the words of its shards (the shard size projected, unless --shard-words), the
  funnel's share of words that reaches dedup, and the SLURM submissions per shard;
- bench/results/ngrams.json `partitioned_merge` (bench/bench_ngrams.py --partitions): the merge's
  share of the duplicate n-gram stage, when scale.json predates the merge's own rule figures;
- corpusbuilder.dedup.memory: the dedup job's memory, the function the job checks itself with;
- bench/results/dedup.json `job_memory` (bench/bench_dedup.py job-memory): the bytes per token
  dedup spills to disk between its passes;
- dedup.mode partitioned (docs/dedup-scale.md): per rule, job-seconds per original word from a
  scale run in that mode (`--scale-partitioned`, bench/scale.py --dedup-mode partitioned), else
  the sequential rate times the ratio of the two modes' CPU seconds on the dev crawl through the
  workflow (bench/results/dedup_modes_dev_jobs.json, each job's start-up taken out); each
  job's memory from `memory.partitioned_memory_mb`, with the fewest hash ranges that keep a
  range job under `--max-job-gb`.

The model: every per-shard job (download, extract, language, exact_hashes, exact_dedup, tokenise,
ngram_runs, export) and the exact-dedup partitions run in parallel on all cores; the merge runs as P
= min(cores, 4096) range jobs, its work times the merge passes its runs need (`runs.MERGE_FAN_IN` at
a time), plus what each part reads at its range's edges of each run; dedup is one sequential job at
its measured rate, linear in the words (as in the thesis' Table 3.7); wall = parallel work / cores +
merge + dedup. In the partitioned mode the dedup jobs per shard and per range join the parallel
work, `dedup_order` and `dedup_merge` stay single jobs, and each dedup job pays a scheduler overhead
(`--job-overhead-s`, assumed, not measured), and so does every job of the other stages (every SLURM
submission of the scale run, grouped rules sharing one). Disk and network are taken as what the
scale run had (local disk, no network: WARCs read locally); the occurrences the partitioned mode
writes (12.4 B per token) are read twice, at the scale run's disk speed. G₂₊ is the duplicate
10-gram types per token, 0.028 as on the dev crawl or 0.072 as on ClueWeb09 (thesis Table 3.4). What
the model leaves out is printed under the table.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from corpusbuilder.dedup.memory import dedup_memory_mb, partitioned_memory_mb
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.ngrams.runs import MERGE_FAN_IN

HERE = Path(__file__).resolve().parent

SCALE = HERE / "results" / "scale.json"
NGRAMS = HERE / "results" / "ngrams.json"
DEDUP = HERE / "results" / "dedup.json"
RESULTS = HERE / "results" / "projection.json"

WORDS = (10**9, 10**10, 10**11, 10**12)
SCALE_PARTITIONED = HERE / "results" / "scale_slurm_partitioned.json"
DEDUP_JOBS = HERE / "results" / "dedup_modes_dev_jobs.json"
PARTITIONED_PER_SHARD = ("dedup_occurrences", "dedup_shard")
PARTITIONED_PER_RANGE = ("dedup_counts", "dedup_seen")
DOCUMENT_TOKENS = 1000  # tokens per document at dedup, for the per-document arrays
# duplicate 10-gram types per token: the dev crawl (bench/results/dedup.json crawl: 77,945 of
# 2,736,468 tokens) and ClueWeb09 (thesis Table 3.4)
DUPLICATE_RATES = {"dev crawl": 0.028, "ClueWeb09": 0.072}
# tokens per word of the text dedup reads, on the dev crawl (work/dedup/stats.json tokens over
# funnel.tsv exact_dedup_kept words: 2,985,071 / 2,548,065), for a
# scale.json that does not count them
DEV_TOKENS_PER_WORD = 1.1715
# which benchmark column a rate counts: (a stage's, a rule's)
BASIS = {"cpu": ("cpu_time_s", "cpu_time"), "wall": ("job_s", "s")}
EXACT_PARTITIONS = 16  # exact_dedup.partitions' default
MAX_PARTITIONS = 4096  # ngrams.partitions' maximum


def measured_rates(scale: dict, ngrams: dict, basis: str = "cpu") -> dict:
    """Core-seconds per original word: parallel (per-shard stages), merge, dedup; and the words a
    gzip'd WARC byte holds, the tokens dedup reads per original word. ``basis`` "cpu" counts each
    job's CPU seconds, "wall" its wall seconds (on a loaded machine, also the time it waited for a
    core)."""
    words = scale["words_original"]
    stages = scale["stages"]
    rules = scale.get("rules", {})
    stage_s, rule_s = BASIS[basis]
    if "dup_ngram_part" in rules:
        merge_s = rules["dup_ngram_part"][rule_s] + rules.get("dup_ngrams", {}).get(rule_s, 0)
        merge_source = "scale.json rules dup_ngram_part + dup_ngrams"
    else:
        # the old single merge job was summed with the shard runs: split
        # the stage by the bench's ratio
        bench = ngrams["partitioned_merge"]
        one = next(row for row in bench["merges"] if row["partitions"] == 1)
        share = one["core_seconds"] / (one["core_seconds"] + bench["shard_run_cpu_seconds"])
        merge_s = stages["dup n-grams"][stage_s] * share
        merge_source = (
            f"scale.json stage 'dup n-grams' x {share:.3f}, the merge's share of it in "
            f"bench_ngrams --partitions ({bench['size']} tokens, {bench['runs']} runs)"
        )
    parallel_s = sum(stage[stage_s] for name, stage in stages.items() if name != "dedup") - merge_s
    # jobs that pay the scheduler's overhead: SLURM submissions (grouped rules share one) less
    # the dedup stage's, which its own model counts, or else every job
    dedup_jobs = stages["dedup"]["jobs"]
    scheduled_jobs = (
        scale["slurm_submissions"] - dedup_jobs
        if "slurm_submissions" in scale
        else sum(stage["jobs"] for name, stage in stages.items() if name != "dedup")
    )
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
        # the sequential job's own figure when the run has one (a rule's is not rounded)
        "dedup_s_per_word": (
            rules["dedup"][rule_s] if "dedup" in rules else stages["dedup"][stage_s]
        )
        / words,
        "basis": basis,
        "scheduled_jobs_per_shard": scheduled_jobs / len(scale["crawl"]["shards"]),
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


def project(
    rates: dict, words: int, cores: int, shard_words: float, job_overhead_s: float = 0.0
) -> dict:
    """The sequential mode; every job of the parallel stages pays ``job_overhead_s`` of
    scheduling on a core (submit, start, stage in)."""
    shards = math.ceil(words / shard_words)
    per_shard_jobs = round(shards * rates["scheduled_jobs_per_shard"])
    partitions = min(cores, MAX_PARTITIONS)
    # the scale run merged its runs in one pass
    merge_s = (
        rates["merge_s_per_word"] * words * merge_passes(shards)
        + rates["merge_s_per_part_and_run"] * partitions * shards
    )
    dedup_s = rates["dedup_s_per_word"] * words
    parallel_s = rates["parallel_s_per_word"] * words + job_overhead_s * per_shard_jobs
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
            "per_shard": per_shard_jobs,
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


def partitioned_rates(rates: dict, scale_partitioned: dict | None, dedup: dict) -> dict:
    """Job-seconds per original word of the partitioned mode's rules: per shard, per range,
    single; from its own scale run when there is one, else scaled from the sequential job."""
    if scale_partitioned is not None and "dedup_shard" in scale_partitioned.get("rules", {}):
        rules, words = scale_partitioned["rules"], scale_partitioned["words_original"]

        rule_s = BASIS[rates["basis"]][1]

        def rate(names):
            return sum(rules.get(name, {}).get(rule_s, 0.0) for name in names) / words

        return {
            "per_shard_s_per_word": rate(PARTITIONED_PER_SHARD),
            "per_range_s_per_word": rate(PARTITIONED_PER_RANGE),
            # the model's dedup.write_state is off, so dedup_merge only sums the shards' stats;
            # what it cost the run merging the state is kept beside, not projected
            "single_s_per_word": rate(("dedup_order",)),
            "state_merge_s_per_word": rate(("dedup_merge",)),
            "max_rss_mb": {
                name: rules[name]["max_rss_mb"] for name in rules if name.startswith("dedup")
            },
            "source": (
                f"{scale_partitioned['dir']} ({words:,} words, {scale_partitioned['executor']})"
            ),
        }
    jobs = json.loads(DEDUP_JOBS.read_text())
    seq, par = jobs["sequential"]["dedup"], jobs["partitioned"]
    # a job's start-up (interpreter, modules) is what the order job costs: taken out of each job
    start = par["dedup_order"]["cpu_time"] / par["dedup_order"]["jobs"]
    sequential = seq["cpu_time"] - start

    def ratio(names):
        work = sum(par[name]["cpu_time"] - start * par[name]["jobs"] for name in names)
        return max(work, 0.0) / sequential

    per_shard, per_range = ratio(PARTITIONED_PER_SHARD), ratio(PARTITIONED_PER_RANGE)
    return {
        "per_shard_s_per_word": rates["dedup_s_per_word"] * per_shard,
        "per_range_s_per_word": rates["dedup_s_per_word"] * per_range,
        # dedup_order sums a few numbers per document; dedup_merge with dedup.write_state off
        # only sums the shards' stats (with it on, it merges the whole state in one job: below)
        "single_s_per_word": 0.0,
        "source": (
            f"the sequential job's rate x {per_shard:.2f} (per-shard jobs) and x {per_range:.2f} "
            f"(range jobs): the modes' CPU seconds on the dev crawl through the workflow, "
            f"{start:.2f} s of start-up taken out of each job ({DEDUP_JOBS.name})"
        ),
    }


def range_partitions(tokens: float, max_job_gb: float) -> int:
    """The fewest hash ranges (a power of two) that keep a range job under `max_job_gb`."""
    partitions = 1
    while (
        partitioned_memory_mb("seen", round(tokens), round(tokens / DOCUMENT_TOKENS), partitions)
        > max_job_gb * 1024
        and partitions < MAX_PARTITIONS
    ):
        partitions *= 2
    return partitions


def project_partitioned(
    rates: dict, prates: dict, words: int, cores: int, shard_words: float, args
) -> dict:
    """The partitioned mode: dedup's per-shard and per-range jobs run with the other parallel
    work; its two single jobs after them."""
    row = project(rates, words, cores, shard_words, args.job_overhead_s)
    tokens = words * rates["tokens_per_word"]
    shards, documents = row["shards"], round(tokens / DOCUMENT_TOKENS)
    partitions = max(range_partitions(tokens, args.max_job_gb), min(cores, MAX_PARTITIONS))
    jobs = 2 * shards + 2 * partitions + 2
    work = (prates["per_shard_s_per_word"] + prates["per_range_s_per_word"]) * words
    overhead = args.job_overhead_s * jobs
    row["mode"] = "partitioned"
    row["partitions"] = partitions
    row["jobs"]["dedup"] = jobs
    row["hours"]["dedup"] = (work + overhead) / cores / 3600 + prates[
        "single_s_per_word"
    ] * words / 3600
    row["dedup_memory_mb"] = {
        job: partitioned_memory_mb(
            job,
            round(tokens / shards if job in ("occurrences", "shard") else tokens),
            documents,
            partitions,
        )
        for job in ("occurrences", "counts", "order", "seen", "shard")
    }
    return row


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


def partitioned_table(rows: list[dict]) -> str:
    lines = [
        "| words | cores | hash ranges | dedup jobs | per-shard h | merge h | dedup h | total h | "
        "largest dedup job |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        hours, memory = row["hours"], row["dedup_memory_mb"]
        largest = max(memory, key=memory.get)
        lines.append(
            f"| 10^{round(math.log10(row['words']))} | {row['cores']} | {row['partitions']} | "
            f"{row['jobs']['dedup']:,} | {hours['parallel']:,.1f} | {hours['merge']:,.2f} | "
            f"{hours['dedup']:,.1f} | {sum(hours.values()):,.1f} | {largest} "
            f"{memory[largest] / 1024:,.1f} GB |"
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
    parser.add_argument("--scale-partitioned", type=Path, default=SCALE_PARTITIONED)
    parser.add_argument(
        "--max-job-gb", type=float, default=6.0, help="partitioned: a range job's memory at most"
    )
    parser.add_argument(
        "--job-overhead-s",
        type=float,
        default=5.0,
        help="partitioned: scheduler seconds per job (an assumption: submit, start, stage in)",
    )
    parser.add_argument(
        "--basis",
        choices=tuple(BASIS),
        default="cpu",
        help="cpu: a job's CPU seconds are the core time it needs (jobs are single-threaded); "
        "wall: its wall seconds, which on a shared machine include waiting for a core",
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    scale = json.loads(args.scale.read_text())
    rates = measured_rates(scale, json.loads(args.ngrams.read_text()), args.basis)
    shard_words = args.shard_words or rates["shard_words"]
    rows = [
        project(rates, words, cores, shard_words, args.job_overhead_s)
        for words in WORDS
        for cores in args.cores
    ]
    print(table(rows))
    scale_partitioned = (
        json.loads(args.scale_partitioned.read_text()) if args.scale_partitioned.exists() else None
    )
    prates = partitioned_rates(rates, scale_partitioned, json.loads(args.dedup.read_text()))
    # the partitioned mode's own scale run measures the per-shard stages too: its rates, and its
    # shards, when it has them
    own = scale_partitioned is not None and "stages" in scale_partitioned
    part_rates = (
        measured_rates(scale_partitioned, json.loads(args.ngrams.read_text()), args.basis)
        if own
        else rates
    )
    part_shard_words = args.shard_words or part_rates["shard_words"]
    partitioned = [
        project_partitioned(part_rates, prates, words, cores, part_shard_words, args)
        for words in WORDS
        for cores in args.cores
    ]
    print(
        f"\ndedup.mode partitioned (dedup rates: {prates['source']}; per-shard stages "
        f"{part_rates['parallel_s_per_word'] * 1e9 / 3600:.2f} core-h per 10^9 words and "
        f"{part_rates['scheduled_jobs_per_shard']:.2f} scheduled jobs per shard, shards of "
        f"{part_shard_words / 1e6:.1f} M words, from "
        f"{args.scale_partitioned if own else args.scale})\n"
    )
    print(partitioned_table(partitioned))
    largest = rows[-1]["dedup_memory_mb"]["ClueWeb09"]
    exponent = round(math.log10(WORDS[-1]))
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
        f"sequential dedup memory at 10^{exponent} words, ClueWeb09 rate: {largest}. Left out: "
        f"dedup's pass 1 spills the prepared shards to disk ({spilled / 1e9:,.0f} GB) and pass 2 "
        "reads them in processing order; its hours here are the rate measured with them in the "
        "page cache, a lower bound once they outgrow it."
    )
    args.out.write_text(
        json.dumps(
            {
                "rates": rates,
                "shard_words": shard_words,
                "duplicate_rates": DUPLICATE_RATES,
                "rows": rows,
                "partitioned_rates": prates,
                "partitioned_stage_rates": part_rates,
                "partitioned_rows": partitioned,
                "assumptions": {
                    "job_overhead_s": args.job_overhead_s,
                    "basis": args.basis,
                    "max_job_gb": args.max_job_gb,
                    "tokens_per_document": DOCUMENT_TOKENS,
                },
            },
            indent=1,
        )
        + "\n"
    )
    print(f"\n{args.out} written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
