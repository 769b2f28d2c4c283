"""Rule `tokenise`: the kept text of one shard →
work/tokens/{shard}.npz (corpusbuilder.tokenise)."""

from corpusbuilder.common.lazy_pandas import without_pandas
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.survivors import read_survivors
from corpusbuilder.contracts.tables import ShardTables
from corpusbuilder.contracts.tokenfile import write_token_stream
from corpusbuilder.tokenise import TokeniseParams, tokenise_shard

setup_logging(snakemake.log[0])
without_pandas("tokenise")
kept = read_survivors(ShardTables(**dict(snakemake.input.items())))
write_token_stream(
    tokenise_shard(kept, TokeniseParams.from_config(snakemake.params.cfg)), snakemake.output.tokens
)
