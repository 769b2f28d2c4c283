"""Rule `quality`: the surviving documents of one shard → their quality signals and failed rules
(corpusbuilder.quality) → work/quality/{shard}.parquet."""

from corpusbuilder.common.io import write_table
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.dedup.verdict_files import shard_verdicts
from corpusbuilder.quality import QualityParams, score_shard
from corpusbuilder.tables import ShardTables

setup_logging(snakemake.log[0])
shard = snakemake.wildcards.shard
# block dedup's input: this shard's table, or the sequential job's folder of every shard's
dedup = (
    {"dedup": shard_verdicts([snakemake.input.dedup], [shard])[0]}
    if "dedup" in snakemake.input.keys()
    else {}
)
tables = ShardTables(**{**dict(snakemake.input.items()), **dedup}, name=shard)
write_table(
    score_shard(tables, QualityParams.from_config(snakemake.params.cfg)), snakemake.output.table
)
