#!/usr/bin/env python3
"""Every rule's largest job for a crawl of 10^11 and 10^12 words of original text, with the
defaults as shipped: its memory, its hours, how many jobs of the rule there are, and the build's
wall hours on the cores given — against the targets of issue 59 (no job over 8 GB; 10^11 words
in 6 h on 64 cores; 10^12 in 12 h on 512):

    python bench/project_scale.py [--job-overhead-s 10] [--shard-words N]
    # → bench/results/projection.json

Nothing is typed in. Each run re-reads:

- bench/results/scale_local_defaults.json (bench/scale.py --shipped-defaults --cores 1, every
  job on a core of its own: dedup.mode auto, partitioned at its size, and results/report.html, so
  every rule of the build ran; the first 16 shards of the 32-shard crawl of
  scale_slurm_defaults.json, `crawl.args.first`): per rule, the CPU seconds of its jobs
  (`--basis cpu`: jobs are single-threaded, and on the shared 2-core machine a job's wall seconds
  also count waiting for a core) per word of original text of the shards built, its peak RSS, the
  tokens and documents reaching dedup, the words a gzip'd byte;
- bench/results/retimed.json: rules run again in that build's directory after a change to them
  (`snakemake <their outputs> --forcerun RULE --allowed-rules RULE`), their jobs' CPU seconds and
  peaks from the jobs' `resources:` log lines, in place of the run's row for those rules; it must
  name the scale run's build (retimed_scale5.json is the one of scale_slurm_defaults.json's);
- bench/results/scale_slurm.json (the same through SLURM with shards of another size): whether a
  per-shard rule's peak grows with its shard (more than `GROWS` times the extra words' share) or
  stays (it streams);
- bench/results/report_jobs.json (bench/bench_report_jobs.py, `merges`): what one more shard
  costs each corpus-wide job that reads a small file a shard (funnel, the report's merges,
  dedup_merge, dedup_documents) in memory and CPU time, added to its peak and its time in the
  scale run; the page summaries' merge jobs (`report.summary.merge_tree`: 64 files at most a
  job, past 64 shards a tree of them) pay it for each file they read;
- bench/results/part_reads.json (bench/bench_part_reads.py): the CPU ms to read one part of a
  file of P parts (a hash range of a shard's file, a shard's of a range's), which a job that reads
  a part of every shard's (or every range's) file pays N (or P) times: counted beyond what the
  scale run's jobs paid at its few shards and ranges;
- bench/results/planning.json (bench/bench_planning.py, series `PLANNING_SERIES`): Snakemake's
  plan (`snakemake -n` on Common Crawl listings) in CPU seconds and peak RSS against its jobs, a
  line through the measured points: the plan comes before any job, on the host that submits;
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
the corpus's for a single job — or, for a job that reads a small file a shard (or a merge of the
page summaries' tree), the scale run's job's seconds plus what each file more costs it (its share
of them, where it reads fewer files; once, for the report's page). A job's memory is
the library's function where there is one; else the measured peak, above the interpreter's
`memory.MODULES_MB`, scaled by what the job holds: a shard (when the two scale runs show it
growing), the corpus over the partitions, or a configured budget; a job that reads a small file a
shard: its peak plus what each shard more costs it. The build runs in phases, each waiting for
every job of the one before (where the workflow waits for every shard); a phase takes at most its
jobs' core-seconds over the cores plus its longest job (list scheduling's bound, Graham 1966), a
shard's jobs of a phase counting as one chain. Every SLURM submission (grouped per-shard rules
share one, as the profile groups them) costs `--job-overhead-s` of a core. Disk and network are as
in the scale run.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from corpusbuilder.common.sizing import (
    AUTO,
    REMOTE_WARC_BYTES,
    planned_partitions,
    planned_parts,
    report_count_ranges,
)
from corpusbuilder.config import validate_config
from corpusbuilder.dedup.memory import (
    MODULES_MB,
    STATE_ROWS_PER_TOKEN,
    dedup_memory_mb,
    largest_shard_bytes,
    partitioned_memory_mb,
    state_part_memory_mb,
)
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.exact_dedup import AUTO_BYTES_PER_PARTITION as EXACT_AUTO_BYTES
from corpusbuilder.exact_dedup import AUTO_MAX_PARTITIONS as EXACT_AUTO_MAX
from corpusbuilder.ngrams.runs import MERGE_FAN_IN
from corpusbuilder.ngrams.stage import AUTO_BYTES_PER_PARTITION as NGRAM_AUTO_BYTES
from corpusbuilder.ngrams.stage import AUTO_MAX_PARTITIONS as NGRAM_AUTO_MAX
from corpusbuilder.report.summary import SUMMARIES_PER_MERGE, merge_tree

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from scale_rules import MODEL, Rule, workflow_rules  # noqa: E402

REPO = HERE.parent
RESULTS = HERE / "results"
SCALE = RESULTS / "scale_local_defaults.json"
RETIMED = RESULTS / "retimed.json"
REPORT_JOBS = RESULTS / "report_jobs.json"
PART_READS = RESULTS / "part_reads.json"
PLANNING = RESULTS / "planning.json"
# bench_planning.py's series of the workflow as it plans now (the fans collected, issue 59)
PLANNING_SERIES = "issue59_collected_de4ca4a"
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


def library(module: str, name: str) -> Any:
    """A sizing decision of the library, or None in a checkout that predates it (#59 item 3
    adds `auto_dedup_mode`, `auto_dedup_partitions`, `partition_job_mb`, `fewest_partitions`)."""
    return getattr(importlib.import_module(module), name, None)


def measured(scale: dict, evidence: dict, download: dict, basis: str) -> dict:
    """Per rule of the scale run: CPU (or wall) seconds per word of original text, peak RSS, and
    whether the peak grows with the shard (from the other run's shard size)."""
    words = scale["words_original"]
    shards = len(scale["crawl"]["shards"])
    crawl_args = scale["crawl"]["args"]
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
        # a run of the first shards of a crawl (scale.py --first-shards): its rates are per word
        # of the shards it built
        "shards_of_crawl": crawl_args["shards"],
        "first_shards_only": crawl_args.get("first") is not None,
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
    auto_state = library("corpusbuilder.dedup.memory", "auto_state_partitions")
    if auto_state is not None:
        state = auto_state(input_bytes, max_mem_mb, dedup)
        decided["state"] = "auto_state_partitions"
    else:
        state = dedup
        decided["state"] = "the dedup ranges (no dedup.state_partitions in this checkout)"
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
        "state": state,
        "report": report_count_ranges(None, shards),
        # the page summaries' merge tree: its levels' files, the shards' first
        "summary_tree": (tree := merge_tree(shards)),
        "summary_merges": sum(tree[1:]),
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
    if local(name):
        return {"mb": None, "source": "in Snakemake's own process (the plan's row)"}
    shard_tokens = shard_words * rates["tokens_per_word"]
    documents = round(size["documents"])
    kind = rule.memory
    if name == "dedup":
        mb = sequential_memory_mb(size["tokens"], size["shards"], rates)
        return {"mb": mb, "source": "memory.dedup_memory_mb"}
    if name == "dedup_state":  # its range of the state, every shard's output n-grams
        mb = state_part_memory_mb(size["tokens"] * STATE_ROWS_PER_TOKEN, size["state"])
        return {"mb": mb, "source": "memory.state_part_memory_mb"}
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
    if kind in ("shards", "fixed"):
        per_shard = rates["per_shard_mb"][rule.measured_as or name] if kind == "shards" else 0.0
        more = max(files_read(rule, size) - rates["shards"], 0) if kind == "shards" else 0
        return {
            "mb": math.ceil(row["max_rss_mb"] + per_shard * more),
            "source": "measured peak"
            + (f" + {per_shard * 1024:,.1f} KB a file more" if kind == "shards" else ""),
        }
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
    above = max(row["max_rss_mb"] - MODULES_MB, 0)
    return {"mb": math.ceil(MODULES_MB + above * scaled), "source": how}


def files_read(rule: Rule, size: dict) -> int:
    """The small files a job that reads one a shard reads (`Rule.reads`): every shard's, a merge
    job's of the page summaries' tree, or the tree's top level's (the last merge's)."""
    return {
        "shards": size["shards"],
        "merge": min(size["shards"], SUMMARIES_PER_MERGE),
        "top": size["summary_tree"][-1],
    }[rule.reads]


def job_seconds(name: str, rule: Rule, size: dict, rates: dict, shard_words: float) -> float | None:
    """The largest job's CPU seconds (None: not measured)."""
    if name == "download":  # a WARC's bytes, whatever shards it makes
        warc_words = shard_words * rates["parts_per_warc"]
        return warc_words / rates["words_per_gzip_byte"] / rates["download_bytes_per_s"]
    if rule.jobs == "local":  # a hard link a file
        return size[rule.links] * rule.link_kinds * rates["link_s"]
    row = rates["rules"].get(rule.measured_as or name)
    if row is None:
        return None
    words = size["tokens"] / rates["tokens_per_word"]
    if rule.per == "shards":
        # the run's job and what a file more costs it (its merges); one that reads fewer files
        # than the run's job (the last merge of a tree), its share of the run's job
        files, measured_s = files_read(rule, size), row["s_per_word"] * rates["words"]
        if files < rates["shards"]:
            return measured_s * files / rates["shards"]
        return measured_s + rates["per_shard_s"][rule.measured_as or name] * (
            files - rates["shards"]
        )
    if rule.jobs == "shard":
        return row["s_per_word"] * shard_words
    if rule.jobs == "warc":
        return row["s_per_word"] * shard_words * rates["parts_per_warc"]
    if rule.jobs == "single":
        return row["s_per_word"] * (words if rule.per == "words" else rates["words"])
    seconds = row["s_per_word"] * words / size[rule.jobs]
    return seconds * merge_passes(size["warc"]) if name == "dup_ngram_part" else seconds


def opening_seconds(rule: Rule, size: dict, rates: dict) -> float:
    """A job's seconds reading one part of each file it opens (`Rule.opens`), at the parts
    those files hold at this size, beyond what the scale run's jobs spent on it."""

    def reads(files: str, parts: str, at: dict) -> float:
        return at[files] * part_read_ms(rates["part_reads"], at[parts]) / 1000

    measured = {"shards": rates["shards"], **rates["partitions"]}
    return sum(reads(*pair, size) - reads(*pair, measured) for pair in rule.opens)


def link_seconds(files: int = 2000) -> float:
    """CPU seconds of one hard link (and its removal with the folder), as the collecting rules
    make one a file (contracts.tables.collect_files): measured here, in a temporary folder."""
    with tempfile.TemporaryDirectory() as folder:
        sources = [Path(folder) / f"{i}.src" for i in range(files)]
        for path in sources:
            path.touch()
        start = time.process_time()
        for path in sources:
            os.link(path, path.with_suffix(".link"))
        for path in sources:
            path.with_suffix(".link").unlink()
        return (time.process_time() - start) / files


def planning_rates(series: dict) -> dict:
    """Snakemake's plan against its jobs: CPU seconds and peak MB, each a line (per job and
    fixed) through bench_planning.py's points."""
    points = sorted(
        (p["jobs"], p["dry_run_cpu_s"], p["dry_run_peak_rss_mb"]) for p in series["points"].values()
    )
    jobs = np.array([p[0] for p in points], float)
    cpu = np.polyfit(jobs, [p[1] for p in points], 1)
    mb = np.polyfit(jobs, [p[2] for p in points], 1)
    return {"cpu_s": [float(v) for v in cpu], "peak_mb": [float(v) for v in mb]}


def plan(jobs: int, rates: dict) -> dict:
    """The plan of a build of `jobs` jobs: Snakemake's CPU seconds and peak memory."""
    (cpu_slope, cpu_fixed), (mb_slope, mb_fixed) = rates["planning"].values()
    return {
        "jobs": jobs,
        "hours": (cpu_fixed + cpu_slope * jobs) / 3600,
        "peak_mb": math.ceil(mb_fixed + mb_slope * jobs),
    }


def part_reads(measured: dict) -> list[tuple[int, float]]:
    """(parts in the file, CPU ms to read one part) of the format in use, the slowest kind of
    file at each count (bench/results/part_reads.json)."""
    slowest: dict[int, float] = {}
    for kind in measured["kinds"].values():
        for parts, row in kind["parts"].items():
            slowest[int(parts)] = max(slowest.get(int(parts), 0.0), row["ms_per_read"])
    return sorted(slowest.items())


def part_read_ms(part_reads: list[tuple[int, float]], parts: float) -> float:
    """The CPU ms to read one part of a file of `parts` parts: the line through the measured
    points (bench/results/part_reads.json, the format in use) by least squares."""
    xs = np.array([p for p, _ in part_reads], float)
    ys = np.array([ms for _, ms in part_reads], float)
    slope, intercept = np.polyfit(xs, ys, 1)
    return max(float(intercept + slope * parts), 0.0)


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


def local(name: str) -> bool:
    """Whether the rule runs where Snakemake runs (the workflow's localrules): no submission."""
    return name == "download" or MODEL[name].jobs == "local"


def submissions(groups: dict, names: list[str]) -> int:
    """SLURM submissions a shard's jobs of a phase make: the profile's groups share one; a local
    rule makes none."""
    return len({groups.get(name, name) for name in names if not local(name)})


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
        jobs = {"shard": size["shards"], "single": 1, "local": 1}.get(rule.jobs) or size[rule.jobs]
        if not jobs:
            rows[name] = {"jobs": 0, "why": f"no {rule.jobs} at {size['shards']:,} shards"}
            continue
        opening = opening_seconds(rule, size, rates)
        rows[name] = {
            "jobs": jobs,
            # jobs one after another (the merge tree's levels), on the phase's longest path
            "in_sequence": len(size["summary_tree"]) - 1 if rule.jobs == "summary_merges" else 1,
            "scales": rule.holds
            or {"shard": "a shard", "single": "the corpus", "warc": "a WARC"}.get(
                rule.jobs, f"the corpus / {rule.jobs} partitions"
            ),
            "memory": job_memory(name, rule, size, rates, defaults, shard_words),
            "hours": (lambda s: None if s is None else (s + opening) / 3600)(
                job_seconds(name, rule, size, rates, shard_words)
            ),
            "of_which_opening_hours": opening / 3600,
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
            + sum(rows[n]["jobs"] for n in names if MODEL[n].jobs != "shard" and not local(n))
        )
        chain = sum(seconds[n] + overhead * (not local(n)) for n in warc_rules)
        chain += sum(seconds[n] for n in shard_rules) + overhead * per_shard
        on_chains = {*shard_rules, *warc_rules}
        longest = max(
            [
                chain,
                *(
                    (seconds[n] + overhead * (not local(n))) * rows[n]["in_sequence"]
                    for n in names
                    if n not in on_chains
                ),
            ]
        )
        wall_s += work / cores + (1 - 1 / cores) * longest
    planned = plan(sum(row["jobs"] for row in rows.values()), rates)
    wall_s += planned["hours"] * 3600
    return {
        "plan": planned,
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
            n for n, r in rows.items() if r["jobs"] and r["memory"]["mb"] is None and not local(n)
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
        mb, hours, opening = r["memory"]["mb"], r["hours"], r["of_which_opening_hours"]
        lines.append(
            f"| `{name}` | {r['jobs']:,} | {r['scales']} | "
            f"{'—' if mb is None else f'{mb / 1024:,.1f} GB'} | {r['memory']['source']} | "
            f"{'not measured' if hours is None else f'{hours:,.2f}'}"
            + (f" ({r['of_which_opening_hours']:,.2f} opening files)" if opening >= 0.005 else "")
            + " |"
        )
    planned = row["plan"]
    lines.append(
        f"| (Snakemake's plan, on the submitting host) | {planned['jobs']:,} jobs | the DAG | "
        f"{planned['peak_mb'] / 1024:,.1f} GB | bench_planning.py | {planned['hours']:,.2f} |"
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
    parser.add_argument("--retimed", type=Path, default=RETIMED)
    parser.add_argument("--shard-evidence", type=Path, default=SHARD_EVIDENCE)
    parser.add_argument("--download", type=Path, default=DOWNLOAD)
    parser.add_argument("--warc-parts", type=Path, default=WARC_PARTS)
    parser.add_argument("--report-jobs", type=Path, default=REPORT_JOBS)
    parser.add_argument("--part-reads", type=Path, default=PART_READS)
    parser.add_argument("--planning", type=Path, default=PLANNING)
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
    retimed = json.loads(args.retimed.read_text())
    if retimed["build"] != scale["dir"]:
        parser.error(f"{args.retimed} re-timed rules in {retimed['build']}, not {scale['dir']}")
    scale["rules"].update(retimed["rules"])
    rates = measured(
        scale,
        json.loads(args.shard_evidence.read_text()),
        json.loads(args.download.read_text()),
        args.basis,
    )
    rates["duplicate_ngrams_per_token"] = scale["dedup_duplicate_ngrams"] / scale["dedup_tokens"]
    rates["rules"]["warc_parts"] = warc_parts_rates(json.loads(args.warc_parts.read_text()), rates)
    rates["partitions"] = {
        family: scale["rules"][rule]["jobs"]
        for family, rule in (
            ("dedup", "dedup_counts"),
            ("state", "dedup_state"),
            ("report", "corpus_stats_range"),
            ("exact", "exact_partition"),
        )
    }
    rates["part_reads"] = part_reads(json.loads(args.part_reads.read_text()))
    rates["link_s"] = link_seconds()
    rates["planning"] = planning_rates(json.loads(args.planning.read_text())[PLANNING_SERIES])
    merges = json.loads(args.report_jobs.read_text())["merges"]["steps"]
    rates["per_shard_mb"] = {name: step["per_shard_mb"] for name, step in merges.items()}
    rates["per_shard_s"] = {name: step["per_shard_s"] for name, step in merges.items()}
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
        f"rates: {args.scale} ({rates['words']:,} words, {rates['shards']} shards"
        + (f" (the first of {rates['shards_of_crawl']})" if rates["first_shards_only"] else "")
        + " of "
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
