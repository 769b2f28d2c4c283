"""Rule `funnel_shard`: one shard's part of the funnel (corpusbuilder.funnel.count_shard) →
work/funnel/{shard}.json, which rule funnel adds up.

Inputs: the shard's `docs`, `blocks`, `language`, `exact`, `quality` and, when block
de-duplication ran, `dedup` (the sequential job's folder of tables, or this shard's table).
"""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.tables import ShardTables
from corpusbuilder.funnel import count_shard, write_counts

setup_logging(snakemake.log[0])
tables = ShardTables.from_inputs(snakemake.input, snakemake.wildcards.shard)
write_counts(count_shard(tables), snakemake.output.counts)
