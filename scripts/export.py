"""Rule `export`: the kept documents of one shard →
corpus/{shard}.jsonl.gz, .prevert.gz and .vert.gz."""

import logging

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.corpus import EXPORT_COLUMNS, kept_documents
from corpusbuilder.contracts.tables import ShardTables, read_survivors, read_table
from corpusbuilder.export import write_corpus

setup_logging(snakemake.log[0])
shard = snakemake.wildcards.shard
tables = ShardTables.from_inputs(snakemake.input, shard)
documents = kept_documents(read_survivors(tables, EXPORT_COLUMNS), read_table(tables.quality))
count = write_corpus(
    documents, snakemake.output.jsonl, snakemake.output.prevert, snakemake.output.vert
)
logging.getLogger("corpusbuilder.export").info("%s: %d documents exported", shard, count)
