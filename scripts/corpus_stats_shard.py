"""Rule `corpus_stats_shard`: one shard's measurements (corpusbuilder.report.corpus_stats.
measure_shard) → its counts, its 10-gram hashes by hash range, its part of the resemblance sample.

Inputs: `funnel` (results/stats/funnel.tsv: its words set the sample's rate), the shard's
`tokens` and `blocks`, and — when block de-duplication ran — `dedup` (the sequential job's folder
of tables, or this shard's table). Params: `ranges` (report.count_ranges as planned),
`similarity` (the min-hash settings and dedup_threshold), `sample_size`
(report.resemblance_sample).
"""

from pathlib import Path

import pandas as pd

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.files import dedup_tables_of
from corpusbuilder.contracts.reportfiles import write_ngram_ranges, write_sample, write_shard_totals
from corpusbuilder.report.corpus_stats import ShardFiles, corpus_words, measure_shard
from corpusbuilder.report.ngram_counts import by_range
from corpusbuilder.report.resemblance_sample import Resemblance, sampled_fraction
from corpusbuilder.similarity.minhash import MinHashParams

setup_logging(snakemake.log[0])
similarity, ranges = snakemake.params.similarity, snakemake.params.ranges
resemblance = Resemblance(
    similarity["dedup_threshold"],
    MinHashParams.from_config(similarity),
    snakemake.params.sample_size,
)
(dedup,) = dedup_tables_of(dict(snakemake.input.items()), [snakemake.wildcards.shard])
shard = ShardFiles(
    Path(snakemake.input.tokens), Path(snakemake.input.blocks), Path(dedup) if dedup else None
)
funnel = pd.read_csv(snakemake.input.funnel, sep="\t")
measure = measure_shard(
    shard,
    resemblance=resemblance,
    q=sampled_fraction(resemblance.sample_size, corpus_words(funnel)),
)
write_shard_totals(measure.totals, snakemake.output.totals)
write_ngram_ranges(
    by_range(measure.before, ranges), by_range(measure.after, ranges), snakemake.output.ngrams
)
write_sample(measure.sample, resemblance.minhash.k, snakemake.output.sample)
