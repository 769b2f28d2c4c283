"""Rule `text_input`: a directory of .txt files → docs and blocks tables as extract writes them,
with preambles and epilogues found by frequent lines (corpusbuilder.extraction.frequent_lines)."""

from pathlib import Path

import pyarrow as pa

from corpusbuilder.common.io import write_table
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.tables import BLOCKS_SCHEMA, DOCS_SCHEMA
from corpusbuilder.extraction.frequent_lines import FrequentLinesParams, text_collection_tables

setup_logging(snakemake.log[0])
docs, blocks = text_collection_tables(
    Path(snakemake.params.in_dir),
    snakemake.wildcards.shard,
    FrequentLinesParams.from_config(snakemake.params.cfg),
    stoplist_fallback=snakemake.params.stoplist_fallback,
)
write_table(pa.Table.from_pylist(docs, schema=DOCS_SCHEMA), snakemake.output.docs)
write_table(pa.Table.from_pylist(blocks, schema=BLOCKS_SCHEMA), snakemake.output.blocks)
