"""Rule `export`: the kept documents of one shard →
corpus/{shard}.jsonl.gz, .prevert.gz and .vert.gz."""

import logging

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.corpus import EXPORT_COLUMNS, kept_documents
from corpusbuilder.contracts.tables import ShardTables, dedup_table, read_survivors, read_table
from corpusbuilder.export import write_corpus

setup_logging(snakemake.log[0])
shard = snakemake.wildcards.shard
# block dedup's input is the folder of every shard's tables: this shard's is one of them
dedup = {"dedup": dedup_table(shard)} if "dedup" in snakemake.input.keys() else {}
tables = ShardTables(**{**dict(snakemake.input.items()), **dedup})
documents = kept_documents(read_survivors(tables, EXPORT_COLUMNS), read_table(tables.quality))
count = write_corpus(
    documents, snakemake.output.jsonl, snakemake.output.prevert, snakemake.output.vert
)
logging.getLogger("corpusbuilder.export").info("%s: %d documents exported", shard, count)
