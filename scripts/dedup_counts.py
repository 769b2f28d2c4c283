"""Rule `dedup_counts` (dedup.mode partitioned): hash range {partition} of every shard's
occurrences (`occurrences`, crawl order) and of G₂₊ (`duplicates`, its parts) → each document's
n-grams and duplicate n-grams in that range (`counts`); `documents`: each shard's documents."""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.ngramfiles import (
    partition_hash_range,
    read_duplicate_ngram_range,
    read_occurrences,
)
from corpusbuilder.contracts.tokenfile import document_count
from corpusbuilder.dedup.partitioned import OCCURRENCE, duplicate_counts, write_array

log = setup_logging(snakemake.log[0])
p = int(snakemake.wildcards.partition)
low, high = partition_hash_range(p, snakemake.params.partitions)
counts = duplicate_counts(
    [read_occurrences(path, p, OCCURRENCE) for path in snakemake.input.occurrences],
    read_duplicate_ngram_range(snakemake.input.duplicates, low, high),
    [document_count(path) for path in snakemake.input.tokens],
)
write_array(counts, snakemake.output.counts)
log.info("range %d: %d n-grams, %d duplicate", p, counts[0].sum(), counts[1].sum())
