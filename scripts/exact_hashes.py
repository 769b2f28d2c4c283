"""Rule `exact_hashes`: MD5 of the clean text of each kept document of one shard, sorted by hash,
one row group per hash partition (corpusbuilder.exact_dedup, thesis §3.6.1)."""

import logging

from corpusbuilder.common.lazy_pandas import without_pandas
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.survivors import read_survivors
from corpusbuilder.contracts.tables import ShardTables, write_hash_partitions
from corpusbuilder.exact_dedup import (
    HASHED_COLUMNS,
    ExactDedupParams,
    exact_hashes,
    hash_partitions,
)

setup_logging(snakemake.log[0])
without_pandas("exact_hashes")
params = ExactDedupParams.from_config(snakemake.params.cfg)
kept = read_survivors(ShardTables(**dict(snakemake.input.items())), HASHED_COLUMNS)
table = exact_hashes(kept, snakemake.params.shard_rank, params)
write_hash_partitions(hash_partitions(table, int(params.partitions)), snakemake.output.hashes)
logging.getLogger("corpusbuilder.exact_dedup").info("%d documents hashed", table.num_rows)
