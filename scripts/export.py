"""Rule `export`: the kept documents of one shard → corpus/{shard}.jsonl.gz, .prevert.gz and .vert.gz."""

import logging

from corpusbuilder.export import EXPORT_COLUMNS, kept_documents, write_corpus
from corpusbuilder.logs import setup_logging
from corpusbuilder.tables import ShardTables, read_survivors

setup_logging(snakemake.log[0])
tables = ShardTables(**dict(snakemake.input.items()))
documents = kept_documents(read_survivors(tables, EXPORT_COLUMNS))
count = write_corpus(documents, snakemake.output.jsonl, snakemake.output.prevert, snakemake.output.vert)
logging.getLogger("corpusbuilder.export").info("%s: %d documents exported", snakemake.wildcards.shard, count)
