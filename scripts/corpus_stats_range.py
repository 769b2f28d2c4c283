"""Rule `corpus_stats_range`: one hash range of every shard's 10-gram hashes counted, before and
after block de-duplication (corpusbuilder.report.ngram_counts.duplicate_counts).

Inputs: `ngrams`, every shard's hashes (rule corpus_stats_shard; collected in a folder,
tables.collected_files). Params: `ranges`
(report.count_ranges as planned); the wildcard `part` is the range.
"""

from dataclasses import asdict

from corpusbuilder.common.lazy_pandas import without_pandas
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.reportfiles import read_ngram_range, write_range_counts
from corpusbuilder.contracts.tables import collected_files
from corpusbuilder.report.ngram_counts import duplicate_counts

setup_logging(snakemake.log[0])
without_pandas("corpus_stats_range")
part, ranges = int(snakemake.wildcards.part), snakemake.params.ranges
paths = collected_files(snakemake.input.ngrams, "ngrams")
# the shards' hashes before block dedup are counted first and let go, then those after it
before = duplicate_counts([read_ngram_range(path, part, ranges)[0] for path in paths])
after = duplicate_counts([read_ngram_range(path, part, ranges)[1] for path in paths])
write_range_counts(asdict(before), asdict(after), snakemake.output.counts)
