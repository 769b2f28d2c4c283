"""Rule `dup_ngrams`: the stats of every part of G₂₊, in partition order →
work/ngrams/dup{n}.stats.json."""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.ngrams.stage import write_duplicate_ngrams_stats

setup_logging(snakemake.log[0])
write_duplicate_ngrams_stats(snakemake.input.stats, snakemake.output.stats)
