"""Rule `export`: the kept documents of one shard →
corpus/{shard}.jsonl.gz, .prevert.gz and .vert.gz."""

import logging

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.dedup.verdict_files import shard_verdicts
from corpusbuilder.export import EXPORT_COLUMNS, kept_documents, write_corpus
from corpusbuilder.tables import ShardTables, read_survivors, read_table

setup_logging(snakemake.log[0])
shard = snakemake.wildcards.shard
# block dedup's input: this shard's table, or the sequential job's folder of every shard's
dedup = (
    {"dedup": shard_verdicts([snakemake.input.dedup], [shard])[0]}
    if "dedup" in snakemake.input.keys()
    else {}
)
tables = ShardTables(**{**dict(snakemake.input.items()), **dedup})
documents = kept_documents(read_survivors(tables, EXPORT_COLUMNS), read_table(tables.quality))
count = write_corpus(
    documents, snakemake.output.jsonl, snakemake.output.prevert, snakemake.output.vert
)
logging.getLogger("corpusbuilder.export").info("%s: %d documents exported", shard, count)
