"""Rule `language`: identify the language of each cleaned document of one shard (corpusbuilder.language)."""

import pandas as pd

from corpusbuilder.io import write_table
from corpusbuilder.language import LanguageParams, identify_documents
from corpusbuilder.logs import setup_logging

setup_logging(snakemake.log[0])
docs = pd.read_parquet(snakemake.input.docs, columns=["doc_id", "record_index", "outcome"])
blocks = pd.read_parquet(
    snakemake.input.blocks,
    columns=["doc_id", "block_index", "text", "n_words", "final_class"],
    filters=[("final_class", "==", "good")],  # only clean text is identified
)
table = identify_documents(docs, blocks, LanguageParams.from_config(snakemake.params.cfg))
write_table(table, snakemake.output.table)
