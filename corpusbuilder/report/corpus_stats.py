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
  more duplicate content than block de-duplication does.
- **stage times** (Table 3.7): Snakemake's ``benchmark:`` files summed per rule — wall seconds and
  CPU seconds added over the rule's jobs (one per shard for per-shard rules), peak memory the
  largest ``max_rss`` of any of its jobs.

Scale: the duplicate count needs every 10-gram hash of the corpus; they are spilled to disk by
hash range and counted one range at a time (`ngram_counts.RangeCounts`), so the job holds one
shard and one range of the corpus' hashes (16 B per token on disk, before and after).
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
from corpusbuilder.contracts.tables import good_after_dedup, read_table
from corpusbuilder.contracts.text import document_texts
from corpusbuilder.contracts.tokenfile import kept_tokens, read_tokens, tokenised_blocks
from corpusbuilder.funnel import BLOCK_STAGE
from corpusbuilder.report.ngram_counts import (
    MEASURE_N,
    DuplicateCounts,
    RangeCounts,
    block_ngrams,
)
from corpusbuilder.similarity.minhash import (
    MinHashParams,
    document_signatures,
    resemblance_dedup,
    similar_pairs,
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
    "dedup_order": "block level de-duplication (order)",
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


@dataclass(frozen=True)
class Resemblance:
    """The resemblance de-duplication row: its threshold and the min-hash
    settings (config `similarity`)."""

    threshold: float = 0.9
    minhash: MinHashParams = MinHashParams()


def after_resemblance_dedup(
    shards: Sequence[ShardFiles], removed: set[str], n: int
) -> tuple[DuplicateCounts, dict]:
    """Duplicate n-grams of the corpus without the `removed` documents;
    its documents, blocks, tokens."""
    totals = {"documents": 0, "blocks": 0, "tokens": 0}
    with RangeCounts() as counts:
        for shard in shards:
            tokens = read_tokens(shard.tokens)
            table = tokenised_blocks(tokens)
            kept = ~table["doc_id"].isin(removed).to_numpy()
            totals["documents"] += int(table.loc[kept, "doc_id"].nunique())
            totals["blocks"] += int(kept.sum())
            totals["tokens"] += int(table.loc[kept, "tokens"].sum())
            counts.add(block_ngrams(tokens, np.repeat(kept, table["tokens"].to_numpy()), n))
        return counts.counts(), totals


def measure_corpus(
    funnel: pd.DataFrame,
    shards: Iterable[ShardFiles],
    n: int = MEASURE_N,
    resemblance: Resemblance | None = None,
) -> CorpusMeasures:
    """The extended funnel and the duplicate-content table.

    ``funnel`` is ``results/stats/funnel.tsv`` (stage, documents, words, pct columns); each shard
    is read once, one shard at a time, its n-gram hashes spilled by range for the final count —
    and once more when ``resemblance`` asks for its row, after the clusters are known.
    """
    shards = list(shards)
    doc_ids, signatures = [], []
    totals = {
        key: 0
        for key in (
            "documents_before",
            "documents_after",
            "blocks_before",
            "blocks_after",
            "tokens_before",
            "tokens_after",
            "words_before",
            "words_after",
        )
    }
    dedup_ran = False
    with RangeCounts() as before_counts, RangeCounts() as after_counts:
        for shard in shards:
            tokens = read_tokens(shard.tokens)
            columns = ["doc_id", "block_index", "n_words"] + (["text"] if resemblance else [])
            table = tokenised_blocks(tokens, read_table(shard.blocks, columns))
            dedup = None
            if shard.dedup is not None:
                dedup_ran = True
                dedup = read_table(
                    shard.dedup,
                    ["doc_id", "block_index", "final_class"],
                    optional=["removed_starts", "removed_ends"],
                )
            kept = good_after_dedup(table, dedup)
            kept_tokens_after = kept_tokens(tokens, dedup)
            n_words = table["n_words"].fillna(0).to_numpy(np.int64)
            totals["documents_before"] += int(table["doc_id"].nunique())
            totals["documents_after"] += int(table.loc[kept, "doc_id"].nunique())
            totals["blocks_before"] += len(table)
            totals["blocks_after"] += int(kept.sum())
            totals["tokens_before"] += int(table["tokens"].sum())
            totals["tokens_after"] += int(kept_tokens_after.sum())
            totals["words_before"] += int(n_words.sum())
            totals["words_after"] += int(n_words[kept].sum())
            before_counts.add(block_ngrams(tokens, None, n))
            after_counts.add(block_ngrams(tokens, kept_tokens_after, n))
            if resemblance:
                # a tokenised block without a blocks.parquet row has no text
                texts = document_texts(table.assign(text=table["text"].fillna("")))
                doc_ids += texts.index.tolist()
                signatures.append(document_signatures(texts.tolist(), resemblance.minhash))
        before, after = before_counts.counts(), after_counts.counts()
    measured = [
        (
            "before_block_dedup",
            before,
            totals["documents_before"],
            totals["blocks_before"],
            totals["tokens_before"],
        ),
        (
            "after_block_dedup",
            after,
            totals["documents_after"],
            totals["blocks_after"],
            totals["tokens_after"],
        ),
    ]
    if resemblance:
        pairs = similar_pairs(np.vstack(signatures), resemblance.threshold, resemblance.minhash)
        removed = set(resemblance_dedup(doc_ids, pairs, resemblance.threshold))
        counts, kept_totals = after_resemblance_dedup(shards, removed, n)
        measured.append(
            (
                RESEMBLANCE_ROW,
                counts,
                kept_totals["documents"],
                kept_totals["blocks"],
                kept_totals["tokens"],
            )
        )
        log.info(
            "resemblance > %.2f: %d pairs, %d of %d documents removed",
            resemblance.threshold,
            len(pairs),
            len(removed),
            len(doc_ids),
        )

    funnel = extended_funnel(funnel, totals, dedup_ran)
    duplicates = duplicates_table(measured, before)
    extra = {
        "n": n,
        "dedup_ran": dedup_ran,
        "blocks_per_document_before": round(totals["blocks_before"] / totals["documents_before"], 2)
        if totals["documents_before"]
        else None,
        "blocks_per_document_after": round(totals["blocks_after"] / totals["documents_after"], 2)
        if totals["documents_after"]
        else None,
    }
    return CorpusMeasures(funnel, duplicates, extra)


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
