"""Rule `report_shard`: what the report's page shows of one shard's documents
(corpusbuilder.report.summary.summarise_shard) → work/report/summary/{shard}.json.

Inputs: the shard's `docs`, `blocks`, `language`, `exact`, `quality` and, when block
de-duplication ran, `dedup` (the sequential job's folder of tables, or this shard's table).
Params: `sample_size` (documents in the sample section).
"""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.reportfiles import write_page_summary
from corpusbuilder.contracts.tables import ShardTables
from corpusbuilder.report.summary import SummaryParams, summarise_shard

setup_logging(snakemake.log[0])
tables = ShardTables.from_inputs(snakemake.input, snakemake.wildcards.shard)
params = SummaryParams(sample_size=snakemake.params.sample_size)
write_page_summary(summarise_shard(tables, params), snakemake.output.summary)
