"""Rule `corpus_stats`: the thesis' corpus measurements (corpusbuilder.report.corpus_stats),
merged from the shards' and the hash ranges' small files → results/stats/funnel_full.tsv,
duplicates.tsv, stage_times.tsv, summary.json.

Inputs: `funnel` (results/stats/funnel.tsv), per shard in shard order `totals` and `sample`
(rule corpus_stats_shard), per hash range `counts` (rule corpus_stats_range), `dedup_stats` when
block de-duplication ran, and `provenance` (results/stats/provenance.json, copied into the
summary). Params: `benchmarks` (rule → benchmark pattern; globbed at run time), `similarity`
(min-hash settings and dedup_threshold of the resemblance row), `sample_size`
(report.resemblance_sample).
"""

from functools import reduce
from operator import add

import pandas as pd

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.common.provenance import read_provenance
from corpusbuilder.contracts.reportfiles import read_range_counts, read_sample, read_shard_totals
from corpusbuilder.report.corpus_stats import benchmark_files, merge_measures, write_measures
from corpusbuilder.report.ngram_counts import DuplicateCounts
from corpusbuilder.report.resemblance_sample import Resemblance
from corpusbuilder.similarity.minhash import MinHashParams

setup_logging(snakemake.log[0])
inputs = dict(snakemake.input.items())
similarity = snakemake.params.similarity
counts = [
    tuple(DuplicateCounts(**part) for part in read_range_counts(path))
    for path in snakemake.input.counts
]
measures = merge_measures(
    pd.read_csv(snakemake.input.funnel, sep="\t"),
    [read_shard_totals(path) for path in snakemake.input.totals],
    reduce(add, (before for before, _ in counts), DuplicateCounts()),
    reduce(add, (after for _, after in counts), DuplicateCounts()),
    pd.concat([read_sample(path) for path in snakemake.input.sample], ignore_index=True),
    resemblance=Resemblance(
        similarity["dedup_threshold"],
        MinHashParams.from_config(similarity),
        snakemake.params.sample_size,
    ),
)
write_measures(
    measures,
    {key: snakemake.output[key] for key in ("funnel_full", "duplicates", "stage_times", "summary")},
    benchmark_files(".", dict(snakemake.params.benchmarks)),
    inputs.get("dedup_stats") or None,
    read_provenance(snakemake.input.provenance),
)
