"""The rules' model of bench/project_scale.py: how each rule of the workflow scales — one job a
shard, a WARC or a partition, or one for the corpus; what its largest job's memory follows; which
phase of the build it runs in. A rule of the workflow missing here is an error."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Rule:
    """How one rule's jobs scale. ``jobs``: "shard" (one a shard), "warc" (one a WARC, which
    may be read as several shards), a partition family ("exact", "ngrams", "dedup", "state",
    "report": one a partition), "summary_merges" (the page summaries' merge tree,
    `report.summary.merge_tree`: its levels' jobs, a level after the one below), "single",
    "local" (one, run by Snakemake itself: a folder of links), or "none" (not in this build:
    ``why``).
    ``memory``: "library" (a function of the library's, `job_memory`), "shard" (the measured peak
    scaled by the shard when it grows with it), "range" (scaled by the corpus over the
    partitions), "corpus" (scaled by the corpus), "shards" (the measured peak and what one more
    shard costs the job, bench_report_jobs.py's `merges`), "fixed" (the measured peak),
    "budget" (`ngrams.mem_mb`), or None (not measured)."""

    jobs: str
    phase: int = 0
    memory: str | None = None
    # a single job's work: "words" (the corpus's), "shards" (a small file a shard) or "once"
    per: str = "words"
    # the small files a "shards" job reads: "shards" (every shard's), "merge" (a merge job's of
    # the summaries' tree: report.summary.SUMMARIES_PER_MERGE) or "top" (the tree's top level's)
    reads: str = "shards"
    # the rule whose scale-run job measures this one's, where the scale run had none of its own
    # (its shards too few for a merge tree)
    measured_as: str = ""
    # files it reads a part of, each (files, parts): every file of a family ("shards", or a
    # partition family), each holding a part per member of another; reading a part costs
    # more with the parts a file holds (bench/bench_part_reads.py), which the scale run's
    # few shards and ranges do not show
    opens: tuple[tuple[str, str], ...] = ()
    # a "local" job (rules/collect.smk, in Snakemake's own process): it hard-links a file of each
    # member of a family ("shards", "warc" or a partition family), `link_kinds` files each
    links: str = ""
    link_kinds: int = 1
    why: str = ""
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
    "exact_partition": Rule("exact", 3, "library", opens=(("shards", "exact"),)),
    "exact_collect_partitions": Rule("local", 3, links="exact"),
    "exact_dedup": Rule("shard", 4, "shard"),
    "tokenise": Rule("shard", 4, "shard"),
    # one run a WARC, of its shards' tokens
    "ngram_runs": Rule("warc", 4, "budget"),
    "ngram_collect_runs": Rule("local", 5, links="warc"),
    "dup_ngram_part": Rule("ngrams", 5, "budget"),
    # (it reads its shard's tokens alone: it runs beside ngram_runs, in their group)
    "dedup_occurrences": Rule("shard", 4, "library"),
    "dedup_collect_occurrences": Rule("local", 7, links="shards", link_kinds=2),
    "dedup_collect_duplicates": Rule("local", 7, links="ngrams"),
    "dedup_counts": Rule("dedup", 7, "library", opens=(("shards", "dedup"),)),
    "dedup_collect_counts": Rule("local", 8, links="dedup"),
    "dedup_documents": Rule(
        "single", 7, "shards", per="shards", holds="a shard's document count (its header)"
    ),
    # a job per shard since it keys its own documents only: its rate is the one job's that
    # ranked every document, per word
    "dedup_order": Rule("shard", 8, "library", opens=(("dedup", "shards"),)),
    "dedup_collect_order": Rule("local", 9, links="shards"),
    # (the occurrences and the order's keys of every shard)
    "dedup_seen": Rule("dedup", 9, "library", opens=(("shards", "dedup"), ("shards", "dedup"))),
    # (quality and export read its table of their shard: one chain, one group)
    "dedup_collect_seen": Rule("local", 11, links="dedup"),
    "dedup_shard": Rule("shard", 11, "library", opens=(("dedup", "shards"),)),
    "quality": Rule("shard", 11, "shard"),
    "export": Rule("shard", 11, "shard"),
    # dedup.write_state, a part per hash range of the state's own (dedup.state_partitions)
    "dedup_collect_state_runs": Rule("local", 12, links="shards"),
    "dedup_state": Rule("state", 12, "library", opens=(("shards", "state"),)),
    "dedup_merge": Rule("single", 12, "shards", per="shards", holds="a shard's dedup counts"),
    "corpus_stats_shard": Rule("shard", 11, "shard"),
    # export counts its shard for the funnel now; the runs measured before had a job for it
    "funnel_shard": Rule("shard", 11, "shard"),
    "report_shard": Rule("shard", 11, "shard"),
    "funnel": Rule(
        "single",
        12,
        "shards",
        per="shards",
        holds="a shard's counts and its stage files' writers (a file's footer each)",
    ),
    # the page summaries' merge tree: a job of 64 summaries, the levels one after the other
    "report_summary_group": Rule(
        "summary_merges",
        12,
        "shards",
        per="shards",
        reads="merge",
        measured_as="report_summary",
        holds="two page summaries at a time, of the 64 it reads",
    ),
    "report_summary": Rule(
        "single",
        13,
        "shards",
        per="shards",
        reads="top",
        holds="two page summaries at a time, of the merge tree's top level (at most 64)",
    ),
    # (sizing.SHARDS_PER_REPORT_RANGE shards' 10-gram hashes a range)
    "report_collect_ngrams": Rule("local", 12, links="shards"),
    "corpus_stats_range": Rule("report", 12, "range", opens=(("shards", "report"),)),
    "corpus_stats": Rule(
        "single",
        13,
        "shards",
        per="shards",
        holds="a shard's totals and a range's counts; the resemblance sample (a fixed size)",
    ),
    "report": Rule(
        "single",
        14,
        "fixed",
        per="once",
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


def workflow_rules(repo: Path = REPO, *files: str) -> list[str]:
    """The names of every rule the Snakefile and rules/*.smk define (or those of `files`, paths
    in the repository), whatever the config (the dedup modes' rules are defined under an `if`)."""
    names = []
    paths = [repo / f for f in files] or [
        repo / "Snakefile",
        *sorted((repo / "rules").glob("*.smk")),
    ]
    for path in paths:
        names += re.findall(r"^\s*(?:rule|checkpoint)\s+(\w+)\s*:", path.read_text(), re.M)
        # the rules of rules/collect.smk, named where their files are registered
        names += re.findall(r"^\s*collection\(\s*\"(\w+)\"", path.read_text(), re.M)
    return names
