"""Where the workflow keeps each file between stages: `FILES`, the one spelling of every path
pattern the rules use (per shard, per hash range, and the whole corpus's under ``results/``), and
the one way to name a shard's block dedup table, whichever job wrote it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Files:
    """Per-shard file patterns of the workflow (``{shard}`` is one input), relative to its
    working directory."""

    # a shard's WARCs (input.warcs_per_shard of them), each {warc}.warc.gz with its {warc}.json
    # sidecar (download.warc_file, warc_sidecar); {shard} is the name of its first WARC
    warcs: str = "data/warc/{shard}"
    # where a shard's WARCs wait until every one of them is complete (download.fetch_shard)
    warcs_staging: str = "data/warc/.partial"
    # where each part of a WARC read as several shards begins (contracts.warcparts); {shard} is
    # the WARC's download group
    warc_parts: str = "work/extract/parts/{shard}.json"
    docs: str = "work/extract/{shard}.docs.parquet"
    blocks: str = "work/extract/{shard}.blocks.parquet"
    language: str = "work/language/{shard}.parquet"
    # a shard's hashes, a part per hash partition (an Arrow IPC file: common.io.write_parts)
    exact_hashes: str = "work/exact/{shard}.hashes.arrow"
    # one hash range of every shard's exact_hashes, decided (its rows sorted by shard): exact_dedup
    # reads its shard's rows of each
    exact_partition: str = "work/exact/partitions/{partition}.parquet"
    # every shard's exact_hashes file in crawl order, one a line: the partition jobs' one input
    exact_manifest: str = "work/exact/hashes.txt"
    # every partition's decisions, collected for the exact_dedup jobs (as dedup_collected_*)
    exact_collected_partitions: str = "work/exact/collected_partitions"
    exact: str = "work/exact_dedup/{shard}.parquet"
    tokens: str = "work/tokens/{shard}.npz"
    ngram_runs: str = "work/ngrams/runs/{shard}.parquet"
    # every run, collected for the G₂₊ part jobs (as dedup_collected_*)
    ngram_collected_runs: str = "work/ngrams/collected_runs"
    # G₂₊ of n-grams, for the whole corpus, in `ngrams.partitions` hash ranges; and its stats
    duplicate_ngrams: str = "work/ngrams/dup{n}/{partition}.npy"
    duplicate_ngrams_part_stats: str = "work/ngrams/dup{n}/{partition}.stats.json"
    # one folder, the dedup job's one output: listing the N tables as its outputs would have
    # Snakemake scan that list for each of the N files export asks for (N²)
    dedup_tables: str = "work/dedup/shards"
    dedup: str = "work/dedup/shards/{shard}.parquet"
    dedup_stats: str = "work/dedup/stats.json"
    # dedup.mode partitioned (corpusbuilder.dedup.partitioned): a shard's n-gram occurrences, a
    # part per hash range; per range, the duplicate n-grams of each document that has any, a part
    # per shard; per shard, those documents' processing-order keys, a part per range; each
    # shard's document count; per range, the occurrences already seen, a part per shard; per
    # shard, its counts and its output n-grams. The files of parts are Arrow IPC files
    # (common.io.write_parts), of which a job reads one part without reading every part's footer
    dedup_occurrences: str = "work/dedup/occurrences/{shard}.arrow"
    dedup_counts: str = "work/dedup/counts/{partition}.arrow"
    dedup_order: str = "work/dedup/order/{shard}.arrow"
    dedup_documents: str = "work/dedup/documents.npy"
    dedup_seen: str = "work/dedup/seen/{partition}.arrow"
    dedup_shard_stats: str = "work/dedup/stats/{shard}.json"
    # per shard, its output n-grams (a sorted run of the state), a part per hash range of the
    # state's (dedup.state_partitions), each read by that range's job
    dedup_state_run: str = "work/dedup/state_runs/{shard}.arrow"
    # Every shard's (or range's) file of a kind that the jobs of the other family read, collected
    # by one job into a folder (tables.collect_files), their one input (rules/common.smk,
    # collected): the occurrences with the token files, G₂₊'s parts, the counts, the order keys,
    # the seen occurrences, the output n-grams
    dedup_collected_occurrences: str = "work/dedup/collected/occurrences"
    dedup_collected_duplicates: str = "work/dedup/collected/duplicates"
    dedup_collected_counts: str = "work/dedup/collected/counts"
    dedup_collected_order: str = "work/dedup/collected/order"
    dedup_collected_seen: str = "work/dedup/collected/seen"
    dedup_collected_state_runs: str = "work/dedup/collected/state_runs"
    # similarity: a shard's exported documents' min-hash signatures; a band job's candidate
    # pairs; a pair partition's similar pairs (corpusbuilder.similarity.partitioned)
    signatures: str = "work/similarity/{shard}.parquet"
    similarity_candidates: str = "work/similarity/candidates/{band_job}.parquet"
    similarity_pairs: str = "work/similarity/pairs/{partition}.parquet"
    # the corpus's output n-grams, for a later crawl's `dedup.against`: kept with the corpus (and
    # out of work/dedup/, whose shards/ folder holds the per-shard tables), a part per hash range
    # (ngramfiles.dedup_state_parts: the sequential job writes 0-of-1)
    dedup_state_folder: str = "results/dedup_state"
    dedup_state: str = "results/dedup_state/{partition}-of-{partitions}.parquet"
    # the quality signals and rule verdicts of each document that survives block dedup
    quality: str = "work/quality/{shard}.parquet"
    corpus_jsonl: str = "results/corpus/{shard}.jsonl.gz"
    corpus_prevert: str = "results/corpus/{shard}.prevert.gz"
    corpus_vert: str = "results/corpus/{shard}.vert.gz"
    # the whole corpus's account (rule funnel): documents and words after each stage, the
    # documents lost and why, what decided the corpus
    funnel: str = "results/stats/funnel.tsv"
    skipped: str = "results/stats/skipped.tsv"
    provenance: str = "results/stats/provenance.json"
    # a shard's part of the funnel (rule export): its documents and words after each stage
    # and its lost documents by reason, which rule funnel adds up
    funnel_counts: str = "work/funnel/{shard}.json"
    # the report's measurements of a shard (rule corpus_stats_shard): its counts, its 10-gram
    # hashes (a part per hash range, an Arrow IPC file) and its part of the resemblance sample;
    # and one hash range's duplicate 10-gram counts (rule corpus_stats_range)
    report_totals: str = "work/report/totals/{shard}.json"
    report_ngrams: str = "work/report/ngrams/{shard}.arrow"
    report_sample: str = "work/report/sample/{shard}.parquet"
    # every shard's 10-gram hashes, collected for the range jobs (as dedup_collected_*)
    report_collected_ngrams: str = "work/report/collected_ngrams"
    report_range_counts: str = "work/report/ranges/{part}.json"
    # what the report's page shows of a shard's documents (rule report_shard: its languages and
    # lengths, its candidates for the sample, its quality sums and sample), and of the corpus's,
    # the shards' merged (rule report_summary); past report.summary.SUMMARIES_PER_MERGE shards,
    # through a tree of merges (rule report_summary_group: a group of the level below each)
    report_shard_summary: str = "work/report/summary/{shard}.json"
    report_summary_group: str = "work/report/summary_tree/{level}/{group}.json"
    report_summary: str = "work/report/summary.json"
    # the thesis' measurements (rule corpus_stats) and the report (rule report)
    funnel_full: str = "results/stats/funnel_full.tsv"
    duplicates: str = "results/stats/duplicates.tsv"
    stage_times: str = "results/stats/stage_times.tsv"
    summary: str = "results/stats/summary.json"
    report: str = "results/report.html"
    similar_pairs: str = "results/stats/similar_pairs.parquet"
    # the gold-set evaluation (rules evaluate_boilerplate, evaluate_site_boilerplate, sweep)
    boilerplate: str = "results/stats/boilerplate.tsv"
    boilerplate_languages: str = "results/stats/boilerplate_languages.tsv"
    fragmentation: str = "results/stats/fragmentation.tsv"
    site_boilerplate: str = "results/stats/site_boilerplate.tsv"
    sweep: str = "results/stats/sweep.tsv"
    sweep_png: str = "results/stats/sweep.png"
    # the `best` preset's training (rules training_blocks, train, train_held_out, adapt,
    # adapt_held_out, distil_sample): a gold set's labelled blocks and pages, the models held out
    # from a gold source (adapted to it, too), the model adapted to this crawl, and the blocks of
    # a shard's pages drawn for self-training or for the teacher's labels
    train_blocks: str = "results/train/blocks/{dataset}.npz"
    train_pages: str = "results/train/pages/{dataset}.npz"
    held_out_model: str = "results/model/held_out/{source}.npz"
    adapted_held_out_model: str = "results/model/adapted_held_out/{source}.npz"
    adapted_model: str = "results/model/adapted.npz"
    adapt_sample: str = "results/adapt/sample/{shard}.npz"
    distil_sample: str = "results/distil/sample/{shard}.npz"


FILES = Files()


def dedup_table(shard: str, folder: Path | str = FILES.dedup_tables) -> str:
    """Block de-duplication's table of ``shard`` (`FILES.dedup`), whichever job wrote it: a file
    of the sequential job's folder (``folder``, as a rule hands it over), or the partitioned
    mode's per-shard job output."""
    return str(Path(folder) / Path(FILES.dedup.format(shard=shard)).name)


def dedup_tables_of(inputs: Mapping[str, Any], shards: Sequence[str]) -> list[str | None]:
    """Each shard's block dedup table from what a job was given (``dedup``: the sequential job's
    one folder of every shard's tables, or each of ``shards``' table in order; none when block
    dedup did not run). Taken from the job's inputs, never from the working directory: under a
    default storage provider (docs/cluster.md) they are local copies of the bucket's files."""
    given = inputs.get("dedup") or []
    given = [given] if isinstance(given, str) else list(given)
    if not given:
        return [None] * len(shards)
    if len(given) == 1 and Path(given[0]).is_dir():
        return [dedup_table(shard, given[0]) for shard in shards]
    if len(given) != len(shards):
        raise ValueError(f"{len(given)} dedup tables for {len(shards)} shards")
    return [str(path) for path in given]
