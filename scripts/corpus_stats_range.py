"""Rule `corpus_stats_range`: one hash range of every shard's 10-gram hashes counted, before and
after block de-duplication (corpusbuilder.report.ngram_counts.duplicate_counts).

Inputs: `ngrams`, every shard's hashes (rule corpus_stats_shard). Params: `ranges`
(report.count_ranges as planned); the wildcard `part` is the range.
"""

from dataclasses import asdict

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.reportfiles import read_ngram_range, write_range_counts
from corpusbuilder.report.ngram_counts import duplicate_counts

setup_logging(snakemake.log[0])
part, ranges = int(snakemake.wildcards.part), snakemake.params.ranges
# the shards' hashes before block dedup are counted first and let go, then those after it
before = duplicate_counts([read_ngram_range(path, part, ranges)[0] for path in snakemake.input])
after = duplicate_counts([read_ngram_range(path, part, ranges)[1] for path in snakemake.input])
write_range_counts(asdict(before), asdict(after), snakemake.output.counts)
