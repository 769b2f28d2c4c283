"""Rule `tokenise`: the kept text of one shard → work/tokens/{shard}.npz (corpusbuilder.tokenise)."""

import pandas as pd

from corpusbuilder.logs import setup_logging
from corpusbuilder.tokenise import TokeniseParams, tokenise_shard, write_token_stream

setup_logging(snakemake.log[0])
docs = pd.read_parquet(snakemake.input.docs, columns=["doc_id", "record_index"])
blocks = pd.read_parquet(
    snakemake.input.blocks,
    columns=["doc_id", "block_index", "text", "final_class"],
    filters=[("final_class", "==", "good")],
)
language = pd.read_parquet(snakemake.input.language, columns=["doc_id", "language", "kept", "dropped_blocks"])
exact = pd.read_parquet(snakemake.input.exact, columns=["doc_id", "kept"])
stream = tokenise_shard(docs, blocks, language, exact, TokeniseParams.from_config(snakemake.params.cfg))
write_token_stream(stream, snakemake.output.tokens)
