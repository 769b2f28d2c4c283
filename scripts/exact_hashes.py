"""Rule `exact_hashes`: MD5 of the clean text of each kept document of one shard, sorted by hash
(corpusbuilder.exact_dedup, thesis §3.6.1)."""

import logging

import pandas as pd

from corpusbuilder.exact_dedup import ExactDedupParams, exact_hashes
from corpusbuilder.io import write_table
from corpusbuilder.logs import setup_logging

setup_logging(snakemake.log[0])
blocks = pd.read_parquet(
    snakemake.input.blocks,
    columns=["doc_id", "block_index", "text", "n_words", "final_class"],
    filters=[("final_class", "==", "good")],
)
language = pd.read_parquet(snakemake.input.language, columns=["doc_id", "kept", "dropped_blocks"])
table = exact_hashes(blocks, language, snakemake.params.shard_rank, ExactDedupParams.from_config(snakemake.params.cfg))
write_table(table, snakemake.output.hashes)
logging.getLogger("corpusbuilder.exact_dedup").info("%d documents hashed", table.num_rows)
