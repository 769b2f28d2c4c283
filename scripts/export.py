"""Rule `export`: the kept documents of one shard, and their tokens from the token file →
corpus/{shard}.jsonl.gz, .prevert.gz and .vert.gz; then the shard's part of the funnel
(corpusbuilder.funnel.count_shard) → work/funnel/{shard}.json, which rule funnel adds up."""

import logging

from corpusbuilder.common.lazy_pandas import without_pandas
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.corpus import EXPORT_COLUMNS, kept_documents
from corpusbuilder.contracts.survivors import read_survivors
from corpusbuilder.contracts.tables import ShardTables, read_columns
from corpusbuilder.contracts.tokenfile import read_tokens
from corpusbuilder.export import TOKEN_FIELDS, vertical_paragraphs, write_corpus
from corpusbuilder.funnel import count_shard, write_counts

setup_logging(snakemake.log[0])
without_pandas("export")
shard = snakemake.wildcards.shard
tables = ShardTables.from_inputs(snakemake.input, shard)
kept = read_survivors(tables, EXPORT_COLUMNS)
count = write_corpus(
    kept_documents(kept, read_columns(tables.quality)),
    snakemake.output.jsonl,
    snakemake.output.prevert,
    snakemake.output.vert,
    vertical_paragraphs(kept, read_tokens(snakemake.input.tokens, TOKEN_FIELDS)),
)
logging.getLogger("corpusbuilder.export").info("%s: %d documents exported", shard, count)
del kept  # the count reads the tables again, a column set at a time
write_counts(count_shard(tables), snakemake.output.counts)
