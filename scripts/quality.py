"""Rule `quality`: the surviving documents of one shard → their quality signals and failed rules
(corpusbuilder.quality) → work/quality/{shard}.parquet."""

from corpusbuilder.common.io import write_table
from corpusbuilder.common.lazy_pandas import without_pandas
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.tables import ShardTables
from corpusbuilder.quality import QualityParams, score_shard

setup_logging(snakemake.log[0])
without_pandas("quality")
tables = ShardTables.from_inputs(snakemake.input, snakemake.wildcards.shard)
write_table(
    score_shard(tables, QualityParams.from_config(snakemake.params.cfg)), snakemake.output.table
)
