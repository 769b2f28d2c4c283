"""Rule `quality`: the surviving documents of one shard → their quality signals and failed rules
(corpusbuilder.quality) → work/quality/{shard}.parquet."""

from corpusbuilder.common.io import write_table
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.tables import ShardTables, dedup_table
from corpusbuilder.quality import QualityParams, score_shard

setup_logging(snakemake.log[0])
shard = snakemake.wildcards.shard
# block dedup's input is the folder of every shard's tables: this shard's is one of them
dedup = {"dedup": dedup_table(shard)} if "dedup" in snakemake.input.keys() else {}
tables = ShardTables(**{**dict(snakemake.input.items()), **dedup}, name=shard)
write_table(
    score_shard(tables, QualityParams.from_config(snakemake.params.cfg)), snakemake.output.table
)
