"""Measurements of the built corpus, as the thesis reports its corpora (§3.6, Tables 3.4, 3.7–3.9).

Three tables and a summary, from files the workflow already wrote:

- **funnel** (Tables 3.8/3.9): the funnel stage's ``results/stats/funnel.tsv`` (records → HTML
  documents → good text → language filter → exact dedup) extended with the row the thesis ends on,
  ``block_dedup_kept``: the documents with at least one block whose final class after block
  de-duplication is ``good``, and those blocks' words (``blocks.parquet`` ``n_words``). A
  ``tokens`` column gives the token counts the thesis can give only after tokenisation (the rows
  ``exact_dedup_kept`` and ``block_dedup_kept``); it is empty for the earlier rows.
- **duplicates** (Table 3.4's last columns, Table 3.9's last rows): 10-grams built on *all* tokens
  (whatever ``dedup.kind`` the de-duplication used), never across a block boundary, counted in the
  corpus before block de-duplication (every tokenised block: the exactly de-duplicated corpus) and
  after it (only the blocks whose final class in ``work/dedup/shards/{shard}.parquet`` is ``good``).
  A duplicate 10-gram is one occurring twice or more *within that corpus*; as in the thesis,
  ``duplicate_instances`` counts every occurrence of such a 10-gram, ``distinct_duplicates`` the
  10-gram types. The n-gram hashes are the dedup stage's (`ngrams.ngram_hashes`). With
  ``resemblance`` set, a third row measures the thesis' "rsmbl. de-dupl" (§3.6.4, Table 3.4): the
  corpus before block de-duplication with all but one document of every cluster of min-hash
  resemblance > 0.9 (``similarity.resemblance_dedup``) removed — whole documents, so it leaves far
  more duplicate content than block de-duplication does. It is estimated from a sample of
  ``report.resemblance_sample`` 10-gram occurrences (`resemblance_sample`: the error is in the
  summary), exact when the corpus is no larger.
- **stage times** (Table 3.7): Snakemake's ``benchmark:`` files summed per rule — wall seconds and
  CPU seconds added over the rule's jobs (one per shard for per-shard rules), peak memory the
  largest ``max_rss`` of any of its jobs.

Scale: no job holds more than a shard, or a hash range of the corpus' 10-grams. The workflow
measures each shard in a job of its own (`measure_shard`: its counts, its 10-gram hashes written
by hash range, its part of the sample), counts each hash range of every shard's hashes in one
(a duplicate 10-gram has all its occurrences in one range), and merges the shards' counts, the
ranges' counts and the sample (`merge_measures`). `measure_corpus` does the same in one process.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from corpusbuilder.common.io import atomic_path
from corpusbuilder.contracts.survivors import good_after_dedup
from corpusbuilder.contracts.tables import read_table
from corpusbuilder.contracts.tokenfile import kept_tokens, read_tokens, tokenised_blocks
from corpusbuilder.funnel import BLOCK_STAGE
from corpusbuilder.ngrams.hashing import shard_ngram_hashes
from corpusbuilder.report.ngram_counts import (
    MEASURE_N,
    DuplicateCounts,
    RangeCounts,
    block_ngrams,
)
from corpusbuilder.report.resemblance_sample import (
    Resemblance,
    estimate_row,
    sampled_fraction,
    shard_sample,
)

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger("corpusbuilder.corpus_stats")

RESEMBLANCE_ROW = "after_resemblance_dedup"
FUNNEL_COLUMNS = (
    "stage",
    "documents",
    "words",
    "tokens",
    "pct_of_previous_documents",
    "pct_of_previous_words",
)
DUPLICATES_COLUMNS = (
    "corpus",
    "documents",
    "blocks",
    "tokens",
    "ngram_instances",
    "distinct_ngrams",
    "duplicate_instances",
    "distinct_duplicates",
    "pct_duplicate_instances",
    "pct_of_before",
)
STAGE_COLUMNS = (
    "rule",
    "phase",
    "jobs",
    "seconds",
    "cpu_seconds",
    "max_rss_mb",
    "pct_of_total_seconds",
)

# Rules in pipeline order, with the phase names of thesis Table 3.7 where it has one.
PHASES = {
    "download": "download",
    "extract": "removing boilerplate (extract)",
    "text_input": "removing boilerplate (frequent lines)",
    "language": "language filtering",
    "exact_hashes": "removing exact duplicates (hashing)",
    "exact_dedup": "removing exact duplicates",
    "tokenise": "tokenisation",
    "ngram_runs": "duplicate n-grams extraction (runs)",
    "dup_ngram_part": "duplicate n-grams extraction (merge, a hash range each)",
    "dup_ngrams": "duplicate n-grams extraction (G2+ stats)",
    "dedup": "block level de-duplication",
    # dedup.mode partitioned: the same stage as jobs per shard and per hash range
    "dedup_occurrences": "block level de-duplication (occurrences, a shard each)",
    "dedup_counts": "block level de-duplication (counts, a hash range each)",
    "dedup_order": "block level de-duplication (order, a shard each)",
    "dedup_seen": "block level de-duplication (seen, a hash range each)",
    "dedup_shard": "block level de-duplication (verdicts, a shard each)",
    "dedup_merge": "block level de-duplication (stats and state)",
    "export": "export",
    "funnel": "funnel",
    "similarity_signatures": "near-duplicate pairs (signatures, a shard each)",
    "similarity_candidates": "near-duplicate pairs (candidates, a band job each)",
    "similarity_score": "near-duplicate pairs (scoring, a pair partition each)",
    "similarity": "near-duplicate pairs (merge)",
    "evaluate_boilerplate": "evaluation on gold sets",
    "evaluate_site_boilerplate": "evaluation of site-level boilerplate",
    "sweep": "parameter sweep",
}


# --- inputs ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShardFiles:
    """One shard's files the measurements read: tokens, extract's blocks, block dedup's verdicts
    (``None`` when block de-duplication did not run: the corpus after it is the corpus before)."""

    tokens: Path
    blocks: Path
    dedup: Path | None = None


# --- the measurements --------------------------------------------------------------------------


@dataclass
class CorpusMeasures:
    funnel: pd.DataFrame
    duplicates: pd.DataFrame
    extra: dict = field(default_factory=dict)  # for the summary


def _percent(values: Sequence[float]) -> list[float]:
    out = [math.nan]
    for previous, value in zip(values[:-1], values[1:]):
        out.append(round(100 * value / previous, 2) if previous else math.nan)
    return out


TOTALS = (
    "documents_before",
    "documents_after",
    "blocks_before",
    "blocks_after",
    "tokens_before",
    "tokens_after",
    "words_before",
    "words_after",
    "dedup_ran",
)


@dataclass
class ShardMeasure:
    """What one shard contributes (rule corpus_stats_shard): its counts (`TOTALS`), the hashes of
    its 10-grams before and after block dedup, and its part of the resemblance sample."""

    totals: dict[str, int]
    before: np.ndarray
    after: np.ndarray
    sample: pd.DataFrame | None = None


def corpus_words(funnel: pd.DataFrame) -> int:
    """Words of the corpus the report measures: the exactly de-duplicated one (funnel.tsv)."""
    return int(funnel.loc[funnel["stage"] == "exact_dedup_kept", "words"].sum())


def measure_shard(
    shard: ShardFiles,
    n: int = MEASURE_N,
    resemblance: Resemblance | None = None,
    q: float = 1.0,
) -> ShardMeasure:
    """One shard's counts, 10-gram hashes and (with ``resemblance``) its part of the sample drawn
    at rate ``q`` (`resemblance_sample.sampled_fraction`)."""
    tokens = read_tokens(shard.tokens)
    columns = ["doc_id", "block_index", "n_words"] + (["text"] if resemblance else [])
    table = tokenised_blocks(tokens, read_table(shard.blocks, columns))
    dedup = None
    if shard.dedup is not None:
        dedup = read_table(
            shard.dedup,
            ["doc_id", "block_index", "final_class"],
            optional=["removed_starts", "removed_ends"],
        )
    kept = good_after_dedup(table, dedup)
    kept_tokens_after = kept_tokens(tokens, dedup)
    n_words = table["n_words"].fillna(0).to_numpy(np.int64)
    totals = {
        "documents_before": int(table["doc_id"].nunique()),
        "documents_after": int(table.loc[kept, "doc_id"].nunique()),
        "blocks_before": len(table),
        "blocks_after": int(kept.sum()),
        "tokens_before": int(table["tokens"].sum()),
        "tokens_after": int(kept_tokens_after.sum()),
        "words_before": int(n_words.sum()),
        "words_after": int(n_words[kept].sum()),
        "dedup_ran": int(dedup is not None),
    }
    ngrams = shard_ngram_hashes(tokens, "all", n)
    sample = shard_sample(table, ngrams, q, resemblance) if resemblance else None
    return ShardMeasure(totals, ngrams.hashes, block_ngrams(tokens, kept_tokens_after, n), sample)


def merge_measures(
    funnel: pd.DataFrame,
    totals: Iterable[Mapping[str, int]],
    before: DuplicateCounts,
    after: DuplicateCounts,
    sample: pd.DataFrame | None = None,
    n: int = MEASURE_N,
    resemblance: Resemblance | None = None,
) -> CorpusMeasures:
    """The extended funnel and the duplicate-content table from the shards' counts, the hash
    ranges' duplicate counts summed (``before``, ``after``) and, with ``resemblance``, every
    shard's part of its sample concatenated in corpus order (`resemblance_sample.shard_sample`)."""
    summed = dict.fromkeys(TOTALS, 0)
    for shard in totals:
        for key in TOTALS:
            summed[key] += int(shard[key])
    dedup_ran = bool(summed.pop("dedup_ran"))
    measured = [
        (
            "before_block_dedup",
            before,
            summed["documents_before"],
            summed["blocks_before"],
            summed["tokens_before"],
        ),
        (
            "after_block_dedup",
            after,
            summed["documents_after"],
            summed["blocks_after"],
            summed["tokens_after"],
        ),
    ]
    extra: dict = {"n": n, "dedup_ran": dedup_ran}
    if resemblance and sample is not None:
        q = sampled_fraction(resemblance.sample_size, corpus_words(funnel))
        row = estimate_row(sample, before, summed, q, resemblance)
        measured.append((RESEMBLANCE_ROW, row.counts, row.documents, row.blocks, row.tokens))
        extra["resemblance_sample"] = {
            "share_of_10gram_types": row.q,
            "sampled_types": row.sampled_types,
            "sampled_documents": row.sampled_documents,
            "removed_sampled_documents": row.removed_documents,
            "pct_duplicate_ngrams_left": round(row.pct_left, 2),
            "standard_error_points": round(row.pct_left_error, 2),
            # of the row's documents, blocks and tokens (each an estimate of those removed)
            "standard_errors": {key: round(value) for key, value in row.removed_errors.items()},
        }
        log.info(
            "resemblance > %.2f on %d sampled documents (q = %.3g): %d removed, %.2f %% ± %.2f",
            resemblance.threshold,
            row.sampled_documents,
            row.q,
            row.removed_documents,
            row.pct_left,
            row.pct_left_error,
        )
    for stage in ("before", "after"):
        documents = summed[f"documents_{stage}"]
        extra[f"blocks_per_document_{stage}"] = (
            round(summed[f"blocks_{stage}"] / documents, 2) if documents else None
        )
    return CorpusMeasures(
        extended_funnel(funnel, summed, dedup_ran), duplicates_table(measured, before), extra
    )


def measure_corpus(
    funnel: pd.DataFrame,
    shards: Iterable[ShardFiles],
    n: int = MEASURE_N,
    resemblance: Resemblance | None = None,
) -> CorpusMeasures:
    """`merge_measures` of every shard measured in this process, one at a time (the rules run
    the same functions a job per shard and per hash range): the hashes are spilled by range."""
    import pandas as pd

    q = sampled_fraction(resemblance.sample_size, corpus_words(funnel)) if resemblance else 1.0
    totals, samples = [], []
    with RangeCounts() as before_counts, RangeCounts() as after_counts:
        for shard in shards:
            measure = measure_shard(shard, n, resemblance, q)
            totals.append(measure.totals)
            before_counts.add(measure.before)
            after_counts.add(measure.after)
            if measure.sample is not None:
                samples.append(measure.sample)
        before, after = before_counts.counts(), after_counts.counts()
    sample = pd.concat(samples, ignore_index=True) if resemblance else None
    return merge_measures(funnel, totals, before, after, sample, n, resemblance)


def extended_funnel(funnel: pd.DataFrame, totals: dict[str, int], dedup_ran: bool) -> pd.DataFrame:
    """funnel.tsv with tokens and, when block de-duplication ran, its row (thesis Table 3.9)."""
    import pandas as pd

    funnel = funnel[["stage", "documents", "words"]].copy()
    # the thesis' rows: the quality filter's (after block dedup, counted in exact dedup's words)
    # is funnel.tsv's and the quality section's
    funnel = funnel[~funnel["stage"].isin([BLOCK_STAGE, "quality_kept"])]
    exact_words = int(funnel.loc[funnel["stage"] == "exact_dedup_kept", "words"].sum())
    if exact_words != totals["words_before"]:
        log.warning(
            "the tokenised blocks hold %d words, the funnel's exact_dedup_kept row %d",
            totals["words_before"],
            exact_words,
        )
    funnel["tokens"] = pd.array([pd.NA] * len(funnel), dtype="Int64")
    funnel.loc[funnel["stage"] == "exact_dedup_kept", "tokens"] = totals["tokens_before"]
    if dedup_ran:
        row = {
            "stage": BLOCK_STAGE,
            "documents": totals["documents_after"],
            "words": totals["words_after"],
            "tokens": totals["tokens_after"],
        }
        funnel = pd.concat(
            [funnel, pd.DataFrame([row]).astype({"tokens": "Int64"})], ignore_index=True
        )
    funnel["pct_of_previous_documents"] = _percent(funnel["documents"].tolist())
    funnel["pct_of_previous_words"] = _percent(funnel["words"].tolist())
    funnel = funnel[list(FUNNEL_COLUMNS)].reset_index(drop=True)

    return funnel


def duplicates_table(measured: list, before: DuplicateCounts) -> pd.DataFrame:
    """duplicates.tsv: per corpus (name, counts, documents, blocks, tokens), its duplicate
    n-grams and their share of those before block de-duplication (thesis Table 3.4)."""
    import pandas as pd

    rows = []
    for name, counts, docs, blocks, tokens_ in measured:
        rows.append(
            {
                "corpus": name,
                "documents": docs,
                "blocks": blocks,
                "tokens": tokens_,
                "ngram_instances": counts.ngram_instances,
                "distinct_ngrams": counts.distinct_ngrams,
                "duplicate_instances": counts.duplicate_instances,
                "distinct_duplicates": counts.distinct_duplicates,
                "pct_duplicate_instances": round(
                    100 * counts.duplicate_instances / counts.ngram_instances, 2
                )
                if counts.ngram_instances
                else math.nan,
                "pct_of_before": round(
                    100 * counts.duplicate_instances / before.duplicate_instances, 2
                )
                if before.duplicate_instances
                else math.nan,
            }
        )
    return pd.DataFrame(rows, columns=list(DUPLICATES_COLUMNS))


# --- stage times (Table 3.7) -------------------------------------------------------------------


def _pattern_glob(pattern: str) -> str:
    """A benchmark pattern with wildcards (``benchmarks/extract/{shard}.tsv``) as a glob."""
    return re.sub(r"\{[^{}]*\}", "*", str(pattern))


def benchmark_files(
    root: Path | str = ".", patterns: dict[str, str] | None = None, directory: str = "benchmarks"
) -> dict[str, list[Path]]:
    """Benchmark files by rule. With ``patterns`` (rule → its ``benchmark:`` pattern, as the
    workflow knows them) each pattern is globbed; without, every ``{directory}/**/*.tsv`` is
    attributed by path: ``benchmarks/<rule>.tsv`` or ``benchmarks/<rule>/<anything>.tsv``."""
    root = Path(root)
    found: dict[str, list[Path]] = {}
    if patterns is not None:
        for rule, pattern in patterns.items():
            files = sorted(root.glob(_pattern_glob(pattern)))
            if files:
                found[rule] = files
        return found
    for path in sorted((root / directory).glob("**/*.tsv")):
        parts = path.relative_to(root / directory).parts
        rule = path.stem if len(parts) == 1 else parts[0]
        found.setdefault(rule, []).append(path)
    return found


def read_benchmark(path: Path | str) -> dict[str, float]:
    """One benchmark file: its wall seconds, CPU seconds and max RSS (MB); repeats averaged."""
    import pandas as pd

    table = pd.read_csv(path, sep="\t")

    def mean(column: str) -> float:
        if column not in table:
            return math.nan
        values = pd.to_numeric(table[column], errors="coerce")
        return float(values.mean()) if values.notna().any() else math.nan

    return {"seconds": mean("s"), "cpu_seconds": mean("cpu_time"), "max_rss_mb": mean("max_rss")}


def stage_times(files_by_rule: Mapping[str, Sequence[Path]]) -> pd.DataFrame:
    """Per rule: jobs, summed wall and CPU seconds, the largest max_rss of any job, and its share
    of the summed wall time — pipeline order first, then other rules by name."""
    import pandas as pd

    rows = []
    for rule, files in files_by_rule.items():
        measured = [read_benchmark(path) for path in files]
        rss = [m["max_rss_mb"] for m in measured if not math.isnan(m["max_rss_mb"])]
        rows.append(
            {
                "rule": rule,
                "phase": PHASES.get(rule, rule),
                "jobs": len(measured),
                "seconds": round(float(np.nansum([m["seconds"] for m in measured])), 2),
                "cpu_seconds": round(float(np.nansum([m["cpu_seconds"] for m in measured])), 2),
                "max_rss_mb": round(max(rss), 2) if rss else math.nan,
            }
        )
    order = list(PHASES)
    rows.sort(
        key=lambda row: (
            order.index(row["rule"]) if row["rule"] in order else len(order),
            row["rule"],
        )
    )
    table = pd.DataFrame(rows, columns=[c for c in STAGE_COLUMNS if c != "pct_of_total_seconds"])
    total = table["seconds"].sum()
    table["pct_of_total_seconds"] = (100 * table["seconds"] / total).round(2) if total else math.nan
    return table


# --- the summary and the files -----------------------------------------------------------------


def _int(value) -> int | None:
    import pandas as pd

    return None if value is None or pd.isna(value) else int(value)


def summary(
    measures: CorpusMeasures, stages: pd.DataFrame, dedup_stats: dict | None = None
) -> dict:
    """The headline numbers (results/stats/summary.json)."""
    import pandas as pd

    funnel = measures.funnel.set_index("stage")
    words = {stage: int(funnel.at[stage, "words"]) for stage in funnel.index}
    documents = {stage: int(funnel.at[stage, "documents"]) for stage in funnel.index}
    final = funnel.index[-1]
    original = words.get("html_documents", 0)
    dup = measures.duplicates.set_index("corpus")
    before, after = dup.loc["before_block_dedup"], dup.loc["after_block_dedup"]
    result = {
        "records": documents.get("records"),
        "html_documents": documents.get("html_documents"),
        "documents_final": documents[final],
        "final_stage": final,
        "words": words,
        "documents": documents,
        "words_final": words[final],
        "pct_words_kept_of_original": round(100 * words[final] / original, 2) if original else None,
        "pct_boilerplate_words": round(100 * (1 - words.get("good_text", 0) / original), 2)
        if original
        else None,
        "tokens_before_block_dedup": _int(before["tokens"]),
        "tokens_after_block_dedup": _int(after["tokens"]),
        "measure_ngram": measures.extra.get("n", MEASURE_N),
        "duplicate_ngram_instances_before": _int(before["duplicate_instances"]),
        "duplicate_ngram_instances_after": _int(after["duplicate_instances"]),
        "pct_duplicate_ngrams_left": None
        if pd.isna(after["pct_of_before"])
        else float(after["pct_of_before"]),
        "distinct_ngrams_after": _int(after["distinct_ngrams"]),
        "pct_duplicate_ngrams_left_resemblance_dedup": float(
            dup.at[RESEMBLANCE_ROW, "pct_of_before"]
        )
        if RESEMBLANCE_ROW in dup.index and pd.notna(dup.at[RESEMBLANCE_ROW, "pct_of_before"])
        else None,
        "blocks_per_document_before": measures.extra.get("blocks_per_document_before"),
        "blocks_per_document_after": measures.extra.get("blocks_per_document_after"),
        "resemblance_sample": measures.extra.get("resemblance_sample"),
        "wall_seconds_total": round(float(stages["seconds"].sum()), 2) if len(stages) else None,
    }
    if len(stages) and stages["max_rss_mb"].notna().any():
        peak = stages.loc[stages["max_rss_mb"].idxmax()]
        result["peak_rss_mb"] = float(peak["max_rss_mb"])
        result["peak_rss_rule"] = str(peak["rule"])
    if dedup_stats:
        result["dedup"] = {
            "params": dedup_stats.get("params"),
            "duplicate_ngrams_used": dedup_stats.get("duplicate_ngrams"),
            "store_bytes": dedup_stats.get("store_bytes"),
            "documents_processed": dedup_stats.get("documents_processed"),
            "blocks": dedup_stats.get("blocks"),
            "words": dedup_stats.get("words"),
        }
    return result


def write_tsv(table: pd.DataFrame, path: Path | str) -> None:
    with atomic_path(path) as tmp:
        table.to_csv(tmp, sep="\t", index=False, na_rep="")


def write_corpus_stats(
    funnel_path: Path | str,
    shards: Sequence[ShardFiles],
    outputs: dict[str, Path | str],
    benchmarks: dict[str, list[Path]],
    dedup_stats_path: Path | str | None = None,
    n: int = MEASURE_N,
    resemblance: Resemblance | None = None,
    provenance: dict | None = None,
) -> dict:
    """The whole measurement: ``outputs`` has keys funnel_full, duplicates, stage_times, summary;
    ``provenance`` (corpusbuilder.common.provenance) is recorded in the summary as it is."""
    import pandas as pd

    measures = measure_corpus(pd.read_csv(funnel_path, sep="\t"), shards, n, resemblance)
    return write_measures(measures, outputs, benchmarks, dedup_stats_path, provenance)


def write_measures(
    measures: CorpusMeasures,
    outputs: dict[str, Path | str],
    benchmarks: dict[str, list[Path]],
    dedup_stats_path: Path | str | None = None,
    provenance: dict | None = None,
) -> dict:
    """Write the measurements and the stage times (``outputs``: funnel_full, duplicates,
    stage_times, summary); ``provenance`` (corpusbuilder.common.provenance) is recorded in the
    summary as it is."""
    stages = stage_times(benchmarks)
    dedup_stats = json.loads(Path(dedup_stats_path).read_text()) if dedup_stats_path else None
    headline = summary(measures, stages, dedup_stats)
    if provenance is not None:
        headline["provenance"] = provenance
    write_tsv(measures.funnel, outputs["funnel_full"])
    write_tsv(measures.duplicates, outputs["duplicates"])
    write_tsv(stages, outputs["stage_times"])
    with atomic_path(outputs["summary"]) as tmp:
        tmp.write_text(json.dumps(headline, indent=1) + "\n")
    log.info("funnel:\n%s", measures.funnel.to_string(index=False))
    log.info("duplicates:\n%s", measures.duplicates.to_string(index=False))
    log.info("stage times:\n%s", stages.to_string(index=False))
    return headline
