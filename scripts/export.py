"""Rule `export`: the kept documents of one shard → corpus/{shard}.jsonl.gz and .prevert.gz."""

import logging

import pandas as pd

from corpusbuilder.export import kept_documents, write_corpus
from corpusbuilder.logs import setup_logging

setup_logging(snakemake.log[0])


def optional_table(name):
    return pd.read_parquet(snakemake.input[name]) if name in snakemake.input.keys() else None


documents = kept_documents(
    pd.read_parquet(snakemake.input.docs),
    pd.read_parquet(snakemake.input.blocks),
    language=optional_table("language"),
    exact=optional_table("exact"),
    block_classes=optional_table("block_classes"),
)
count = write_corpus(documents, snakemake.output.jsonl, snakemake.output.prevert)
logging.getLogger("corpusbuilder.export").info("%s: %d documents exported", snakemake.wildcards.shard, count)
