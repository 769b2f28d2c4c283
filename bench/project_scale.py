#!/usr/bin/env python3
"""Every rule's largest job for a crawl of 10^11 and 10^12 words of original text, with the
defaults as shipped: its memory, its hours, how many jobs of the rule there are, and the build's
wall hours on the cores given — against the targets of issue 59 (no job over 8 GB; 10^11 words
in 6 h on 64 cores; 10^12 in 12 h on 512):

    python bench/project_scale.py [--job-overhead-s 10] [--shard-words N]
    # → bench/results/projection.json

Nothing is typed in. Each run re-reads:

- bench/results/scale_slurm_partitioned.json (bench/scale.py through profiles/slurm, dedup.mode
  partitioned): per rule, the CPU seconds of its jobs (`--basis cpu`: jobs are single-threaded,
  and on the shared 2-core machine a job's wall seconds also count waiting for a core) per word of
  original text, its peak RSS, the tokens and documents reaching dedup, the words a gzip'd byte;
- bench/results/scale_slurm.json (the same through SLURM with shards of another size): whether a
  per-shard rule's peak grows with its shard (more than `GROWS` times the extra words' share) or
  stays (it streams);
- bench/results/download.json: the download rule's MB/s (from a local server: a lower bound);
- bench/results/warc_parts.json (bench/bench_warc_parts.py): the warc_parts job's CPU seconds a
  gzip'd byte and its peak, for a WARC split into several shards;
- the library's own sizing: `dedup.memory` (every dedup job's memory, the sequential job's),
  `common.sizing.planned_partitions` and the families' auto constants (exact dedup, n-grams), the
  config schema's defaults (`input.warcs_per_shard`, `input.shard_mb` with
  `dedup.memory.largest_shard_bytes` and `sizing.planned_parts`, `ngrams.mem_mb`, ...), and where
  this checkout has them (#59 item 3) `auto_dedup_mode`, `auto_dedup_partitions`,
  `exact_dedup.partition_job_mb` and `resources.max_mem_mb` — the stand-ins used before they
  exist are named in the output;
- the workflow's rules (Snakefile, rules/*.smk) and the groups of profiles/slurm: a rule with no
  model here is an error.

The model: a shard is `input.warcs_per_shard` Common Crawl WARCs (`sizing.REMOTE_WARC_BYTES`
each), or, one WARC a shard, the part of one that `input.shard_mb` makes (a WARC read as
`planned_parts` shards, after its warc_parts job), at the scale run's words per gzip'd byte
(`--shard-words` sets another). A job's CPU
seconds are its rule's measured rate times the words it handles: a shard's, the corpus's over its
family's partitions (the G₂₊ merge once per merge pass, `runs.MERGE_FAN_IN` runs at a time), or
the corpus's for a single job. A job's memory is the library's function where there is one;
else the measured peak, above the interpreter's `memory.MODULES_MB`, scaled by what the job holds:
a shard (when the two scale runs show it growing), the corpus over the partitions, or a
configured budget. The build runs in phases, each waiting for every job of the one before
(where the workflow waits for every shard); a phase takes at most its jobs' core-seconds over
the cores plus its longest job (list scheduling's bound, Graham 1966), a shard's jobs of a phase
counting as one chain. Every SLURM submission (grouped per-shard rules share one, as the
profile groups them) costs `--job-overhead-s` of a core. Disk and network are as in the scale run.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import math
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from corpusbuilder.common.sizing import (
    AUTO,
    REMOTE_WARC_BYTES,
    SHARDS_PER_REPORT_RANGE,
    planned_partitions,
    planned_parts,
    report_count_ranges,
)
from corpusbuilder.config import validate_config
from corpusbuilder.dedup.memory import (
    MODULES_MB,
    dedup_memory_mb,
    largest_shard_bytes,
    partitioned_memory_mb,
)
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.exact_dedup import AUTO_BYTES_PER_PARTITION as EXACT_AUTO_BYTES
from corpusbuilder.exact_dedup import AUTO_MAX_PARTITIONS as EXACT_AUTO_MAX
from corpusbuilder.ngrams.runs import MERGE_FAN_IN
from corpusbuilder.ngrams.stage import AUTO_BYTES_PER_PARTITION as NGRAM_AUTO_BYTES
from corpusbuilder.ngrams.stage import AUTO_MAX_PARTITIONS as NGRAM_AUTO_MAX

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
SCALE = RESULTS / "scale_slurm_partitioned.json"
SHARD_EVIDENCE = RESULTS / "scale_slurm.json"
DOWNLOAD = RESULTS / "download.json"
WARC_PARTS = RESULTS / "warc_parts.json"
PROFILE = REPO / "profiles" / "slurm" / "config.yaml"
OUT = RESULTS / "projection.json"

# (words of original text, cores, hours at most): issue 59's targets
TARGETS = ((10**11, 64, 6.0), (10**12, 512, 12.0))
# a per-shard rule's peak above the interpreter "grows with its shard" when it grew by more than
# this share of the extra words between the two scale runs' shard sizes
GROWS = 0.5
DEDUP_FAMILY_MAX = 4096  # dedup.partitions' maximum (config/schema.yaml)
MB = 2**20


@dataclass(frozen=True)
class Rule:
    """How one rule's jobs scale. ``jobs``: "shard" (one a shard), "warc" (one a WARC, which
    may be read as several shards), a partition family ("exact", "ngrams", "dedup", "report": one
    a partition), "single", or "none" (not in this build: ``why``).
    ``memory``: "library" (a function of the library's, `job_memory`), "shard" (the measured peak
    scaled by the shard when it grows with it), "range" (scaled by the corpus over the
    partitions), "corpus" (scaled by the corpus), "budget" (`ngrams.mem_mb`), or None (not
    measured). ``measured_as``: the scale run's rule whose figures it has, when not its own."""

    jobs: str
    phase: int = 0
    memory: str | None = None
    timed: bool = True  # its CPU seconds are measured
    why: str = ""
    measured_as: str = ""
    holds: str = (
        ""  # what a job holds, where not its share of the corpus (a single job's: small files)
    )


# Every rule of the workflow (a rule missing here is an error: tests/test_project_scale.py).
# Phases: the workflow waits for every shard before exact_manifest, dup_ngram_part, dedup_counts,
# dedup_state, funnel and the report's ranges; a phase's rules run side by side.
MODEL: dict[str, Rule] = {
    "download": Rule("warc", 1, None, why="fetches its shard's WARCs (a local rule)"),
    # a WARC read whole before its parts' extract jobs (bench/bench_warc_parts.py)
    "warc_parts": Rule("warc", 1, "shard"),
    "extract": Rule("shard", 1, "shard"),
    "language": Rule("shard", 1, "shard"),
    "exact_hashes": Rule("shard", 1, "shard"),
    "exact_manifest": Rule("single", 2, "corpus"),
    "exact_partition": Rule("exact", 3, "library"),
    "exact_collect_partitions": Rule(
        "single",
        3,
        None,
        timed=False,
        why="links every partition's file into one folder (a local rule)",
    ),
    "exact_dedup": Rule("shard", 4, "shard"),
    "tokenise": Rule("shard", 4, "shard"),
    # one run a WARC, of its shards' tokens
    "ngram_runs": Rule("warc", 4, "budget"),
    "ngram_collect_runs": Rule(
        "single",
        5,
        None,
        timed=False,
        why="links every WARC's run file into one folder (a local rule)",
    ),
    "dup_ngram_part": Rule("ngrams", 5, "budget"),
    # (it reads its shard's tokens alone: it runs beside ngram_runs, in their group)
    "dedup_occurrences": Rule("shard", 4, "library"),
    "dedup_collect_occurrences": Rule(
        "single",
        7,
        None,
        timed=False,
        why="links every shard's occurrences and token file into one folder (a local rule)",
    ),
    "dedup_collect_duplicates": Rule(
        "single",
        7,
        None,
        timed=False,
        why="links every G2+ part's file into one folder (a local rule)",
    ),
    "dedup_counts": Rule("dedup", 7, "library"),
    "dedup_collect_counts": Rule(
        "single",
        8,
        None,
        timed=False,
        why="links every range's counts file into one folder (a local rule)",
    ),
    "dedup_documents": Rule(
        "single", 7, "library", timed=False, why="each shard's document count, from its header"
    ),
    # a job per shard since it keys its own documents only: its rate is the one job's that
    # ranked every document, per word
    "dedup_order": Rule("shard", 8, "library"),
    "dedup_collect_order": Rule(
        "single",
        9,
        None,
        timed=False,
        why="links every shard's order file into one folder (a local rule)",
    ),
    "dedup_seen": Rule("dedup", 9, "library"),
    "dedup_collect_seen": Rule(
        "single",
        11,
        None,
        timed=False,
        why="links every range's seen file into one folder (a local rule)",
    ),
    # (quality and export read its table of their shard: one chain, one group)
    "dedup_shard": Rule("shard", 11, "library"),
    "quality": Rule("shard", 11, "shard"),
    "export": Rule("shard", 11, "shard"),
    # dedup.write_state a part per hash range (#59 item 1): the range's share of the CPU and the
    # peak the one state-merging job had (dedup_merge, with the state, in the scale run)
    "dedup_collect_state_runs": Rule(
        "single",
        12,
        None,
        timed=False,
        why="links every shard's state run file into one folder (a local rule)",
    ),
    "dedup_state": Rule("dedup", 12, "range", measured_as="dedup_merge"),
    # (with the state out of it, it sums the shards' stats: its measured run merged the state)
    "dedup_merge": Rule("single", 12, None, timed=False, why="the shards' stats"),
    "corpus_stats_shard": Rule("shard", 11, None, timed=False, why="a shard's report counts"),
    "funnel_shard": Rule("shard", 11, None, timed=False, why="a shard's funnel counts"),
    "report_shard": Rule("shard", 11, None, timed=False, why="a shard's page summary"),
    "funnel": Rule(
        "single",
        12,
        None,
        timed=False,
        why="adds up the shards' counts, names every stage file's writer",
        holds="a small file a shard (the counts, a file's footer)",
    ),
    "report_summary": Rule(
        "single",
        12,
        None,
        timed=False,
        why="merges the shards' page summaries, two at a time",
        holds="two page summaries (sample candidates, 10,000 documents' signals)",
    ),
    "report_collect_ngrams": Rule(
        "single",
        12,
        None,
        timed=False,
        why="links every shard's 10-gram hash file into one folder (a local rule)",
    ),
    "corpus_stats_range": Rule(
        "report", 12, None, timed=False, why=f"{SHARDS_PER_REPORT_RANGE} shards' 10-gram hashes"
    ),
    "corpus_stats": Rule(
        "single",
        13,
        None,
        timed=False,
        why="merges the shards' small tables",
        holds="the resemblance sample, a small file a shard and a range",
    ),
    "report": Rule(
        "single",
        14,
        None,
        timed=False,
        why="the page from small files",
        holds="small files: the measurements and the page summary",
    ),
    "dedup": Rule("single", 6, "library", why="the sequential mode's one job"),
    "text_input": Rule("none", why="input.text_dirs only; WARCs are the input"),
    "similarity_signatures": Rule("none", why="similarity.enabled is off by default"),
    "similarity_candidates": Rule("none", why="similarity.enabled is off by default"),
    "similarity_score": Rule("none", why="similarity.enabled is off by default"),
    "similarity": Rule("none", why="similarity.enabled is off by default"),
    "evaluate_boilerplate": Rule("none", why="the gold sets: the same job whatever the crawl"),
    "evaluate_site_boilerplate": Rule("none", why="the gold sets: the same job whatever the crawl"),
    "sweep": Rule("none", why="the gold sets: the same job whatever the crawl"),
    "evaluate": Rule("none", why="the gold sets: the same job whatever the crawl"),
    "training_blocks": Rule("none", why="`snakemake train` only"),
    "train": Rule("none", why="`snakemake train` only"),
    "adapt_sample": Rule("none", why="adapt.enabled is off by default"),
    "adapt": Rule("none", why="adapt.enabled is off by default"),
    "all": Rule("none", why="the default target: no job"),
}


def workflow_rules(repo: Path = REPO) -> list[str]:
    """The names of every rule the Snakefile and rules/*.smk define, whatever the config (the
    dedup modes' rules are defined under an `if`)."""
    names = []
    for path in [repo / "Snakefile", *sorted((repo / "rules").glob("*.smk"))]:
        names += re.findall(r"^\s*(?:rule|checkpoint)\s+(\w+)\s*:", path.read_text(), re.M)
        # the rules of rules/collect.smk, named where their files are registered
        names += re.findall(r"^\s*collection\(\s*\"(\w+)\"", path.read_text(), re.M)
    return names


def library(module: str, name: str) -> Any:
    """A sizing decision of the library, or None in a checkout that predates it (#59 item 3
    adds `auto_dedup_mode`, `auto_dedup_partitions`, `partition_job_mb`, `fewest_partitions`)."""
    return getattr(importlib.import_module(module), name, None)


def measured(scale: dict, evidence: dict, download: dict, basis: str) -> dict:
    """Per rule of the scale run: CPU (or wall) seconds per word of original text, peak RSS, and
    whether the peak grows with the shard (from the other run's shard size)."""
    words = scale["words_original"]
    shards = len(scale["crawl"]["shards"])
    other_shard_words = evidence["words_original"] / len(evidence["crawl"]["shards"])
    column = {"cpu": "cpu_time", "wall": "s"}[basis]
    rules = {}
    for name, rule in scale["rules"].items():
        row = {
            "s_per_word": rule[column] / words,
            "max_rss_mb": rule["max_rss_mb"],
            "jobs": rule["jobs"],
        }
        before = evidence.get("rules", {}).get(name)
        if before is not None:
            extra = (words / shards) / other_shard_words - 1
            growth = (rule["max_rss_mb"] - MODULES_MB) / max(before["max_rss_mb"] - MODULES_MB, 1)
            row["grows_with_shard"] = growth - 1 > GROWS * extra
            row["evidence"] = (
                f"{before['max_rss_mb']:.0f} MB at {other_shard_words / 1e6:.1f} M words a shard"
            )
        else:
            row["grows_with_shard"] = True  # one size measured: taken to grow (the larger figure)
        rules[name] = row
    return {
        "rules": rules,
        "words": words,
        "shards": shards,
        "shard_words": words / shards,
        "words_per_gzip_byte": words / scale["crawl"]["file_bytes"],
        "tokens": scale["dedup_tokens"],
        "tokens_per_word": scale["dedup_tokens"] / words,
        "tokens_per_document": scale["dedup_tokens"]
        / scale["funnel"]["exact_dedup_kept"]["documents"],
        "download_bytes_per_s": download["mb_per_s"]["http_fetch"] * 1e6,
        "basis": basis,
    }


def warc_parts_rates(warc_parts: dict, rates: dict) -> dict:
    """The warc_parts job's row, as a measured rule's: its CPU seconds a word of text (from a
    gzip'd byte's, at the scale run's words a byte) and its peak, which does not grow with the
    WARC (it streams; a few bytes a record)."""
    return {
        "s_per_word": warc_parts["s_per_gzip_byte"] / rates["words_per_gzip_byte"],
        "max_rss_mb": warc_parts["max_rss_mb"],
        "jobs": len(warc_parts["warcs"]),
        "grows_with_shard": False,
        "evidence": f"{warc_parts['gzip_bytes'] / 1e6:.0f} MB of WARCs, bench_warc_parts.py",
    }


def partitions(words: int, rates: dict, defaults: dict, max_mem_mb: int) -> dict:
    """Each partition family's count at this size, as the workflow plans it from the input's
    bytes (and the dedup mode auto picks), and which library function decided."""
    input_bytes = round(words / rates["words_per_gzip_byte"])
    tokens = words * rates["tokens_per_word"]
    documents = tokens / rates["tokens_per_document"]
    shards = math.ceil(words / rates["projected_shard_words"])
    warcs = math.ceil(shards / rates["parts_per_warc"])
    decided = {}
    job_mb = library("corpusbuilder.exact_dedup", "partition_job_mb")
    fewest = library("corpusbuilder.common.sizing", "fewest_partitions")
    if job_mb is not None and fewest is not None:
        hashes_mb = hashes_file_mb(input_bytes)
        most = library("corpusbuilder.exact_dedup", "MAX_PARTITIONS")
        plan: Any = planned_partitions  # its memory bound comes with #59 item 3
        exact = plan(
            defaults["exact_dedup"]["partitions"],
            input_bytes,
            EXACT_AUTO_BYTES,
            EXACT_AUTO_MAX,
            fewest(lambda p: job_mb(hashes_mb, p), max_mem_mb, most),
        )
        decided["exact"] = "planned_partitions with partition_job_mb"
    else:
        exact = planned_partitions(
            defaults["exact_dedup"]["partitions"], input_bytes, EXACT_AUTO_BYTES, EXACT_AUTO_MAX
        )
        decided["exact"] = "planned_partitions (auto; no memory bound in this checkout)"
    ngrams = planned_partitions(
        defaults["ngrams"]["partitions"], input_bytes, NGRAM_AUTO_BYTES, NGRAM_AUTO_MAX
    )
    decided["ngrams"] = "planned_partitions (auto)"
    auto_mode = library("corpusbuilder.dedup.memory", "auto_dedup_mode")
    if auto_mode is not None:
        mode, why = auto_mode(input_bytes, shards, DedupParams(), max_mem_mb)
        decided["mode"] = f"auto_dedup_mode: {why}"
    else:  # stand-in: partitioned where the sequential job would pass max_mem_mb
        need = sequential_memory_mb(tokens, shards, rates)
        mode = "partitioned" if need > max_mem_mb else "sequential"
        decided["mode"] = f"stand-in for auto_dedup_mode: the sequential job needs {need:,} MB"
    auto_ranges = library("corpusbuilder.dedup.memory", "auto_dedup_partitions")
    if auto_ranges is not None:
        dedup = auto_ranges(input_bytes, max_mem_mb)
        decided["dedup"] = "auto_dedup_partitions"
    else:  # stand-in: the fewest ranges (a power of two) whose range jobs fit max_mem_mb
        dedup = 1
        while dedup < DEDUP_FAMILY_MAX and any(
            partitioned_memory_mb(job, round(tokens), round(documents), dedup) > max_mem_mb
            for job in ("counts", "seen")
        ):
            dedup *= 2
        decided["dedup"] = "stand-in for auto_dedup_partitions (powers of two)"
    return {
        "shards": shards,
        "warc": warcs,
        "input_bytes": input_bytes,
        "tokens": tokens,
        "documents": documents,
        "mode": mode,
        "exact": exact,
        "ngrams": ngrams,
        "dedup": dedup,
        "report": report_count_ranges(None, shards),
        "decided_by": decided,
    }


def hashes_file_mb(input_bytes: int) -> float:
    """Every shard's exact_hashes files, in MB, as the library projects them from the input."""
    per_byte = library("corpusbuilder.exact_dedup", "HASH_FILE_BYTES_PER_INPUT_BYTE")
    return input_bytes * per_byte / MB


def sequential_memory_mb(tokens: float, shards: int, rates: dict) -> int:
    """The sequential dedup job's memory (`dedup_memory_mb`), G₂₊ at the scale run's share."""
    duplicates = rates["duplicate_ngrams_per_token"] * tokens
    return dedup_memory_mb(round(duplicates), [round(tokens / shards)] * shards, DedupParams())[
        "total"
    ]


def merge_passes(runs: int) -> int:
    """Merge passes over the data: runs are merged MERGE_FAN_IN at a time until that many are
    left."""
    passes = 1
    while runs > MERGE_FAN_IN:
        runs = math.ceil(runs / MERGE_FAN_IN)
        passes += 1
    return passes


def job_memory(
    name: str, rule: Rule, size: dict, rates: dict, defaults: dict, shard_words: float
) -> dict:
    """The largest job's memory in MB and where the figure comes from (None: not measured)."""
    shard_tokens = shard_words * rates["tokens_per_word"]
    documents = round(size["documents"])
    kind = rule.memory
    if name == "dedup":
        mb = sequential_memory_mb(size["tokens"], size["shards"], rates)
        return {"mb": mb, "source": "memory.dedup_memory_mb"}
    if kind == "library" and name.startswith("dedup_"):
        tokens = shard_tokens if rule.jobs == "shard" else size["tokens"]
        if rule.jobs == "shard":
            documents = round(documents * shard_tokens / size["tokens"])
        job = name.removeprefix("dedup_")
        mb = partitioned_memory_mb(job, round(tokens), documents, size["dedup"])
        return {"mb": mb, "source": "memory.partitioned_memory_mb"}
    if kind == "library":  # exact_partition
        job_mb = library("corpusbuilder.exact_dedup", "partition_job_mb")
        if job_mb is not None:
            mb = job_mb(hashes_file_mb(size["input_bytes"]), size["exact"])
            return {"mb": mb, "source": "partition_job_mb"}
        kind = "range"  # before #59 item 3: the measured peak, as a range job's
    if kind == "budget":
        return {"mb": defaults["ngrams"]["mem_mb"], "source": "ngrams.mem_mb (its budget)"}
    row = rates["rules"].get(rule.measured_as or name)
    if kind is None or row is None:
        return {"mb": None, "source": f"not measured ({rule.why})" if rule.why else "not measured"}
    if kind == "range":  # its share of the corpus against a measured job's share
        scaled = (size["tokens"] / size[rule.jobs]) / (rates["tokens"] / row["jobs"])
        how = "measured peak x its range"
    elif kind == "corpus":
        scaled = size["tokens"] / rates["tokens"]
        how = "measured peak x the corpus"
    elif row["grows_with_shard"]:
        scaled = shard_words / rates["shard_words"]
        how = "measured peak x the shard"
    else:
        scaled = 1.0
        how = f"measured peak ({row['evidence']})"
    if rule.measured_as:
        how += f" (`{rule.measured_as}`)"
    above = max(row["max_rss_mb"] - MODULES_MB, 0)
    return {"mb": math.ceil(MODULES_MB + above * scaled), "source": how}


def job_seconds(name: str, rule: Rule, size: dict, rates: dict, shard_words: float) -> float | None:
    """The largest job's CPU seconds (None: not measured)."""
    if name == "download":  # a WARC's bytes, whatever shards it makes
        warc_words = shard_words * rates["parts_per_warc"]
        return warc_words / rates["words_per_gzip_byte"] / rates["download_bytes_per_s"]
    row = rates["rules"].get(rule.measured_as or name)
    if not rule.timed or row is None:
        return None
    words = size["tokens"] / rates["tokens_per_word"]
    if rule.jobs == "shard":
        return row["s_per_word"] * shard_words
    if rule.jobs == "warc":
        return row["s_per_word"] * shard_words * rates["parts_per_warc"]
    if rule.jobs == "single":
        return row["s_per_word"] * words
    seconds = row["s_per_word"] * words / size[rule.jobs]
    return seconds * merge_passes(size["warc"]) if name == "dup_ngram_part" else seconds


def largest_shard(size: dict, rates: dict, defaults: dict, max_mem_mb: int) -> dict:
    """Per per-shard rule, the most words a shard may have with its job within `max_mem_mb`
    (its memory grows with the shard: found by bisection over the shard's words)."""
    fits = {}
    for name, rule in MODEL.items():
        if rule.jobs != "shard" or rule.memory is None:
            continue

        def mb(words: float, name: str = name, rule: Rule = rule) -> float:
            return job_memory(name, rule, size, rates, defaults, words)["mb"] or 0

        low, high = 0.0, 1e12
        if mb(high) <= max_mem_mb:
            continue  # does not grow with the shard
        for _ in range(60):
            middle = (low + high) / 2
            low, high = (middle, high) if mb(middle) <= max_mem_mb else (low, middle)
        fits[name] = low
    return fits


# rules that run where Snakemake runs (the workflow's localrules): no submission
LOCAL = ("download", *(name for name in MODEL if "_collect_" in name))


def submissions(groups: dict, names: list[str]) -> int:
    """SLURM submissions a shard's jobs of a phase make: the profile's groups share one; a local
    rule makes none."""
    return len({groups.get(name, name) for name in names if name not in LOCAL})


def project(words: int, cores: int, rates: dict, defaults: dict, args, groups: dict) -> dict:
    size = partitions(words, rates, defaults, args.max_mem_mb)
    shard_words = rates["projected_shard_words"]
    rows: dict[str, dict[str, Any]] = {}
    phases: dict[int, list[str]] = {}
    for name, rule in MODEL.items():
        other_mode = name.startswith("dedup") and (name == "dedup") != (
            size["mode"] == "sequential"
        )
        whole = name == "warc_parts" and rates["parts_per_warc"] == 1
        if rule.jobs == "none" or other_mode or whole:
            reason = f"dedup.mode is {size['mode']} at this size" if other_mode else rule.why
            rows[name] = {"jobs": 0, "why": "no WARC is split" if whole else reason}
            continue
        jobs = {"shard": size["shards"], "single": 1}.get(rule.jobs) or size[rule.jobs]
        rows[name] = {
            "jobs": jobs,
            "scales": rule.holds
            or {"shard": "a shard", "single": "the corpus", "warc": "a WARC"}.get(
                rule.jobs, f"the corpus / {rule.jobs} partitions"
            ),
            "memory": job_memory(name, rule, size, rates, defaults, shard_words),
            "hours": (lambda s: None if s is None else s / 3600)(
                job_seconds(name, rule, size, rates, shard_words)
            ),
        }
        phases.setdefault(rule.phase, []).append(name)
    wall_s, unmeasured = 0.0, []
    for _, names in sorted(phases.items()):
        shard_rules = [n for n in names if MODEL[n].jobs == "shard"]
        # a split WARC's job comes before its parts' first: on each of their chains
        warc_rules = [n for n in names if MODEL[n].jobs == "warc"]
        per_shard = submissions(groups, shard_rules)
        seconds = {n: (rows[n]["hours"] or 0.0) * 3600 for n in names}
        unmeasured += [n for n in names if rows[n]["hours"] is None]
        overhead = args.job_overhead_s
        work = sum(seconds[n] * rows[n]["jobs"] for n in names) + overhead * (
            per_shard * size["shards"]
            + sum(rows[n]["jobs"] for n in names if MODEL[n].jobs != "shard" and n not in LOCAL)
        )
        chain = sum(seconds[n] + overhead * (n not in LOCAL) for n in warc_rules)
        chain += sum(seconds[n] for n in shard_rules) + overhead * per_shard
        on_chains = {*shard_rules, *warc_rules}
        longest = max([chain, *(seconds[n] + overhead for n in names if n not in on_chains)])
        wall_s += work / cores + (1 - 1 / cores) * longest
    return {
        "words": words,
        "cores": cores,
        "size": size,
        "rules": rows,
        "wall_hours": wall_s / 3600,
        "core_hours": sum(
            (row.get("hours") or 0) * row["jobs"] for row in rows.values() if row["jobs"]
        ),
        "time_not_measured": unmeasured,
        "largest_shard_words_within_max_mem": largest_shard(size, rates, defaults, args.max_mem_mb),
        "memory_not_measured": [
            n for n, r in rows.items() if r["jobs"] and r["memory"]["mb"] is None
        ],
    }


def verdicts(row: dict, hours: float, max_mem_mb: int) -> dict:
    largest = [
        (r["memory"]["mb"], n) for n, r in row["rules"].items() if r["jobs"] and r["memory"]["mb"]
    ]
    over = sorted(((mb, n) for mb, n in largest if mb > max_mem_mb), reverse=True)
    return {
        "memory": {
            "target_mb": max_mem_mb,
            "pass": not over,
            "over": {n: mb for mb, n in over},
            "not_measured": row["memory_not_measured"],
        },
        "time": {
            "target_hours": hours,
            "wall_hours": round(row["wall_hours"], 2),
            "pass": row["wall_hours"] <= hours,
            "not_measured": row["time_not_measured"],
        },
    }


def table(row: dict) -> str:
    lines = [
        f"10^{round(math.log10(row['words']))} words on {row['cores']} cores: "
        f"{row['size']['shards']:,} shards, dedup {row['size']['mode']}, partitions: exact "
        f"{row['size']['exact']}, n-grams {row['size']['ngrams']}, dedup {row['size']['dedup']}, "
        f"report {row['size']['report']}",
        "",
        "| rule | jobs | a job holds | largest job: memory | source | its hours |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in row["rules"].items():
        if not r["jobs"]:
            continue
        mb, hours = r["memory"]["mb"], r["hours"]
        lines.append(
            f"| `{name}` | {r['jobs']:,} | {r['scales']} | "
            f"{'—' if mb is None else f'{mb / 1024:,.1f} GB'} | {r['memory']['source']} | "
            f"{'not measured' if hours is None else f'{hours:,.2f}'} |"
        )
    absent = [f"`{n}` ({r['why']})" for n, r in row["rules"].items() if not r["jobs"]]
    lines += ["", "No job: " + "; ".join(absent) + "."]
    return "\n".join(lines)


def commit() -> str:
    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO
    ).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scale", type=Path, default=SCALE)
    parser.add_argument("--shard-evidence", type=Path, default=SHARD_EVIDENCE)
    parser.add_argument("--download", type=Path, default=DOWNLOAD)
    parser.add_argument("--warc-parts", type=Path, default=WARC_PARTS)
    parser.add_argument(
        "--shard-words",
        type=float,
        help="words of original text a shard (default: input.warcs_per_shard Common Crawl WARCs)",
    )
    defaults = validate_config({})
    parser.add_argument(
        "--max-mem-mb",
        type=int,
        # resources.max_mem_mb once #59 item 3 is in; its default, 8 GB, before
        default=defaults.get("resources", {}).get("max_mem_mb", 8000),
        help="the memory one job may have (the target: no job over it)",
    )
    parser.add_argument(
        "--job-overhead-s",
        type=float,
        default=10.0,
        help="scheduler seconds per SLURM submission (assumed: submit, queue, start, stage in)",
    )
    parser.add_argument("--basis", choices=("cpu", "wall"), default="cpu")
    parser.add_argument(
        "--workflow", type=Path, default=REPO, help="the Snakefile's folder, whose rules to list"
    )
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)

    scale = json.loads(args.scale.read_text())
    rates = measured(
        scale,
        json.loads(args.shard_evidence.read_text()),
        json.loads(args.download.read_text()),
        args.basis,
    )
    rates["duplicate_ngrams_per_token"] = scale["dedup_duplicate_ngrams"] / scale["dedup_tokens"]
    rates["rules"]["warc_parts"] = warc_parts_rates(json.loads(args.warc_parts.read_text()), rates)
    per_shard, shard_mb = defaults["input"]["warcs_per_shard"], defaults["input"]["shard_mb"]
    shard_bytes = (
        largest_shard_bytes(args.max_mem_mb)
        if shard_mb == AUTO
        else shard_mb and round(shard_mb * MB)
    )
    # one WARC a shard is split as input.shard_mb asks; a shard of several is not
    rates["parts_per_warc"] = planned_parts(
        REMOTE_WARC_BYTES if per_shard == 1 else None, shard_bytes
    )
    warc_shard = per_shard * REMOTE_WARC_BYTES / rates["parts_per_warc"]
    rates["projected_shard_words"] = args.shard_words or warc_shard * rates["words_per_gzip_byte"]
    groups = yaml.safe_load(PROFILE.read_text()).get("groups", {})

    missing = sorted(set(workflow_rules(args.workflow)) - set(MODEL))
    if missing:
        parser.error(f"rules with no model in {Path(__file__).name}: {', '.join(missing)}")
    rows, checks = [], []
    for words, cores, hours in TARGETS:
        row = project(words, cores, rates, defaults, args, groups)
        row["targets"] = verdicts(row, hours, args.max_mem_mb)
        rows.append(row)
        print(table(row))
        memory, time = row["targets"]["memory"], row["targets"]["time"]
        unmeasured = ", ".join(time["not_measured"]) or "none"
        print(
            f"\ntargets: no job over {args.max_mem_mb:,} MB: "
            f"{'PASS' if memory['pass'] else 'FAIL'}"
            + "".join(f", {n} {mb / 1024:,.1f} GB" for n, mb in memory["over"].items())
            + f"; wall {time['wall_hours']:,.1f} h <= {hours:g} h: "
            f"{'PASS' if time['pass'] else 'FAIL'} (hours not measured, counted as 0: "
            f"{unmeasured}); {row['core_hours']:,.0f} core-hours\n"
        )
        fits = row["largest_shard_words_within_max_mem"]
        if fits:
            print(
                f"per-shard jobs within {args.max_mem_mb:,} MB up to shards of: "
                + ", ".join(
                    f"{n} {w / 1e6:,.0f} M words ({w / rates['words_per_gzip_byte'] / 1e6:,.0f} MB"
                    " gzip'd)"
                    for n, w in sorted(fits.items(), key=lambda item: item[1])
                )
                + "\n"
            )
        checks.append(memory["pass"] and time["pass"])
    print(
        f"rates: {args.scale} ({rates['words']:,} words, {rates['shards']} shards of "
        f"{rates['shard_words'] / 1e6:.1f} M words, basis {args.basis}); shards projected at "
        f"{rates['projected_shard_words'] / 1e6:.1f} M words ({rates['words_per_gzip_byte']:.3f} "
        f"words a gzip'd byte; {rates['parts_per_warc']} shard(s) a WARC, input.shard_mb "
        f"{defaults['input']['shard_mb']}); {args.job_overhead_s:g} s a submission; decided by: "
        + "; ".join(f"{k} {v}" for k, v in rows[0]["size"]["decided_by"].items())
    )
    args.out.write_text(
        json.dumps(
            {
                "date": datetime.date.today().isoformat(),
                "commit": commit(),
                "how_run": "python bench/project_scale.py " + " ".join(argv or sys.argv[1:]),
                "assumptions": {
                    "job_overhead_s": args.job_overhead_s,
                    "basis": args.basis,
                    "max_mem_mb": args.max_mem_mb,
                    "shard_words": rates["projected_shard_words"],
                },
                "rates": rates,
                "rows": rows,
                "all_targets_pass": all(checks),
            },
            indent=1,
        )
        + "\n"
    )
    print(f"\n{args.out} written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
