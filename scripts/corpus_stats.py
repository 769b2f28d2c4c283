"""Rule `corpus_stats`: the thesis' corpus measurements (corpusbuilder.report.corpus_stats) →
results/stats/funnel_full.tsv, duplicates.tsv, stage_times.tsv, summary.json.

Inputs: `funnel` (results/stats/funnel.tsv), lists in shard order `tokens` and `blocks`, and —
when block de-duplication ran — `dedup` (the folder of its tables) and `dedup_stats`.
Params: `shards` (in that order), `benchmarks` (rule → benchmark pattern; globbed at run
time), `similarity` (config section: min-hash settings and dedup_threshold of the
resemblance row); the input `provenance` (results/stats/provenance.json) is copied into the
summary.
"""

from pathlib import Path

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.common.provenance import read_provenance
from corpusbuilder.dedup.verdict_files import shard_verdicts
from corpusbuilder.report.corpus_stats import (
    Resemblance,
    ShardFiles,
    benchmark_files,
    write_corpus_stats,
)
from corpusbuilder.similarity.minhash import MinHashParams

setup_logging(snakemake.log[0])
inputs = dict(snakemake.input.items())
similarity = snakemake.params.similarity
# block dedup's input: the sequential job's folder of every shard's tables, or a table a shard
names = snakemake.params.shards
dedup = shard_verdicts(inputs["dedup"], names) if "dedup" in inputs else [None] * len(names)
shards = [
    ShardFiles(Path(tokens), Path(blocks), Path(verdicts) if verdicts else None)
    for tokens, blocks, verdicts in zip(
        snakemake.input.tokens, snakemake.input.blocks, dedup, strict=True
    )
]
write_corpus_stats(
    snakemake.input.funnel,
    shards,
    {key: snakemake.output[key] for key in ("funnel_full", "duplicates", "stage_times", "summary")},
    benchmark_files(".", dict(snakemake.params.benchmarks)),
    inputs.get("dedup_stats") or None,
    resemblance=Resemblance(similarity["dedup_threshold"], MinHashParams.from_config(similarity)),
    provenance=read_provenance(snakemake.input.provenance),
)
