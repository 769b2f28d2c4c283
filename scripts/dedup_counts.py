"""Rule `dedup_counts` (dedup.mode partitioned): hash range {partition} of every shard's
occurrences (`occurrences`, crawl order) and of G₂₊ (`duplicates`, its parts), each collected in a
folder (tables.collected_files) → the duplicate n-grams in that range of each document that has
any, a row group per shard (`counts`). A shard's occurrences are read and filtered one at a time:
only the duplicate ones are held."""

from corpusbuilder.common.lazy_pandas import without_pandas
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.ngramfiles import (
    COUNT_SCHEMA,
    partition_hash_range,
    read_duplicate_ngram_range,
    read_occurrences,
    write_pairs,
)
from corpusbuilder.contracts.tables import collected_files
from corpusbuilder.dedup.partitioned import OCCURRENCE, duplicate_counts, in_duplicates

log = setup_logging(snakemake.log[0])
without_pandas("dedup_counts")
p = int(snakemake.wildcards.partition)
duplicates = read_duplicate_ngram_range(
    collected_files(snakemake.input.duplicates, "duplicates"),
    *partition_hash_range(p, snakemake.params.partitions),
)
counts = [
    duplicate_counts(in_duplicates(read_occurrences(path, p, OCCURRENCE), duplicates))
    for path in collected_files(snakemake.input.occurrences, "occurrences")
]
write_pairs(counts, COUNT_SCHEMA, snakemake.output.counts)
log.info(
    "range %d: %d duplicate n-grams in %d documents",
    p,
    sum(int(count.sum()) for _, count in counts),
    sum(len(doc) for doc, _ in counts),
)
