"""Rule `language`: identify the language of each cleaned document of one
shard (corpusbuilder.language)."""

from corpusbuilder.common.io import write_table
from corpusbuilder.common.lazy_pandas import without_pandas
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.tables import ShardTables
from corpusbuilder.language import LanguageParams, identify_shard

setup_logging(snakemake.log[0])
without_pandas("language")
tables = ShardTables(snakemake.input.docs, snakemake.input.blocks)
write_table(
    identify_shard(tables, LanguageParams.from_config(snakemake.params.cfg)), snakemake.output.table
)
