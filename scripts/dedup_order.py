"""Rule `dedup_order` (dedup.mode partitioned): one shard's occurrences (`occurrences`: each
document's n-grams) and its row group of every range's counts (`counts`) → the processing-order
key of its documents that each range meets, a row group per range (`order`)."""

from corpusbuilder.common.lazy_pandas import without_pandas
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.ngramfiles import (
    COUNT_SCHEMA,
    KEY_SCHEMA,
    read_occurrence_docs,
    read_pairs,
    write_pairs,
)
from corpusbuilder.contracts.tables import collected_files
from corpusbuilder.contracts.tokenfile import document_count
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.dedup.partitioned import document_ngrams, shard_keys

log = setup_logging(snakemake.log[0])
without_pandas("dedup_order")
params = DedupParams.from_config(snakemake.params.cfg)
ngrams = document_ngrams(
    read_occurrence_docs(snakemake.input.occurrences), document_count(snakemake.input.tokens)
)
counts = read_pairs(
    collected_files(snakemake.input.counts, "counts"), snakemake.params.shard_rank, COUNT_SCHEMA
)
keys = shard_keys(ngrams, counts, params.order)
write_pairs([(doc, key) for (doc, _), key in zip(counts, keys)], KEY_SCHEMA, snakemake.output.order)
log.info(
    "%d documents keyed (%s), %d keys handed to ranges",
    len(ngrams),
    params.order,
    sum(map(len, keys)),
)
