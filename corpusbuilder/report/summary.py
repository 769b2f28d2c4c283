"""What ``results/report.html`` shows of the corpus's documents, summed up a shard at a time so that
no job holds more than a shard: its languages and document lengths (`joins.shard_languages`), its
candidates for the sample of documents (`samples.shard_sample`) and its quality figures
(`quality.shard_quality`). A shard's summary and the corpus's are the same plain data
(`contracts.reportfiles.write_page_summary`), and two add up to one no larger (`add_summaries`),
so a merge holds two at a time whatever the shards. The adding is associative (each part of a
summary is a sum, the first items in shard order, or the lowest-ranked of a fixed order), so the
shards' summaries are merged in a tree, `SUMMARIES_PER_MERGE` at a time (`merge_tree`): no job
reads more, whatever the corpus, and the result is the one merge's in shard order but for the
last bits of the quality sums (floats added in another order).

Every figure of the merged summary is the one-job figure but the quality percentiles, which come
from a sample of ``quality_sample`` documents once the corpus holds more (their error is on the
page: `quality.distribution_note`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from corpusbuilder.contracts.tables import ShardTables
from corpusbuilder.report.joins import add_languages, shard_languages
from corpusbuilder.report.quality import add_quality, shard_quality
from corpusbuilder.report.samples import (
    CANDIDATE_COLUMNS,
    document_record,
    merge_candidates,
    shard_sample,
)

# Summaries a merge job reads at most (rules report_summary_group and report_summary). Reading
# one and adding it costs 0.12 CPU s (bench/results/report_jobs.json: 45 ms of it JSON decoding),
# so a job of 64 takes ~8 s beside its ~3 s start: long enough that a submission's overhead
# (~10 s) is not most of it, short against the shard jobs before it. 10^11 words (~2,900 shards)
# make 46 merge jobs, then the last reads 46 files; 10^12 (29,333) make 459, then 8, then the
# last reads 8.
SUMMARIES_PER_MERGE = 64


@dataclass(frozen=True)
class SummaryParams:
    sample_size: int = 10  # documents in the sample section
    examples: int = 3  # failing documents shown per rule set
    # documents whose signals the percentiles are taken over: their error is ± 1.36 percentile
    # points at 95 % (`quality.percentile_error`), and two summaries' samples held by the merge
    # are 2 MB
    quality_sample: int = 10_000


def summarise_shard(shard: ShardTables, params: SummaryParams = SummaryParams()) -> dict:
    """One shard's summary."""
    languages, lengths = shard_languages(shard)
    candidates, documents = shard_sample(shard, params.sample_size)
    return {
        "languages": languages,
        "lengths": lengths,
        "candidates": candidates.to_dict("records"),
        "documents": [document_record(document) for document in documents],
        "quality": shard_quality(shard, params.examples, params.quality_sample),
    }


def add_summaries(first: dict, second: dict, params: SummaryParams = SummaryParams()) -> dict:
    """Two summaries as one (``second`` the later in shard order: the quality examples are the
    first in crawl order)."""
    import pandas as pd

    candidates, documents = merge_candidates(
        (pd.DataFrame(first["candidates"], columns=CANDIDATE_COLUMNS), first["documents"]),
        (pd.DataFrame(second["candidates"], columns=CANDIDATE_COLUMNS), second["documents"]),
        params.sample_size,
    )
    return {
        "languages": add_languages(first["languages"], second["languages"]),
        "lengths": {
            "documents": first["lengths"]["documents"] + second["lengths"]["documents"],
            "bins": [
                a + b
                for a, b in zip(first["lengths"]["bins"], second["lengths"]["bins"], strict=True)
            ],
        },
        "candidates": candidates.to_dict("records"),
        "documents": documents,
        "quality": add_quality(
            first["quality"], second["quality"], params.examples, params.quality_sample
        ),
    }


def merge_summaries(summaries: Iterable[dict], params: SummaryParams = SummaryParams()) -> dict:
    """The corpus's summary from its shards', in shard order, read one at a time."""
    merged: dict | None = None
    for summary in summaries:
        merged = summary if merged is None else add_summaries(merged, summary, params)
    if merged is None:
        raise ValueError("no shard summary to merge")
    return merged


def merge_tree(summaries: int, per_merge: int = SUMMARIES_PER_MERGE) -> list[int]:
    """The files of each level of the tree that merges ``summaries`` files in shard order, the
    shards' first: a level above has a merge job (and its file) for each ``per_merge`` of the
    level below (`merge_group`), until at most ``per_merge`` are left for the last merge. The
    shards' alone where there are no more than ``per_merge`` (one job merges them)."""
    if per_merge < 2:
        raise ValueError(f"a merge reads at least 2 summaries, not {per_merge}")
    levels = [summaries]
    while levels[-1] > per_merge:
        levels.append(math.ceil(levels[-1] / per_merge))
    return levels


def merge_group(group: int, below: int, per_merge: int = SUMMARIES_PER_MERGE) -> range:
    """The files of the level below (of ``below`` files) that merge job ``group`` reads, in
    order."""
    return range(group * per_merge, min((group + 1) * per_merge, below))
