"""Rule `report_summary`: the shards' page summaries merged into the corpus's
(corpusbuilder.report.summary.merge_summaries), reading one at a time →
work/report/summary.json.

Inputs: `summaries`, every shard's (rule report_shard), in shard order. Params: `sample_size`,
as rule report_shard's.
"""

import logging

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.reportfiles import read_page_summary, write_page_summary
from corpusbuilder.report.summary import SummaryParams, merge_summaries

setup_logging(snakemake.log[0])
params = SummaryParams(sample_size=snakemake.params.sample_size)
merged = merge_summaries(map(read_page_summary, snakemake.input.summaries), params)
logging.getLogger("corpusbuilder.report").info(
    "%d shards: %d sample candidates, %d quality documents sampled",
    len(snakemake.input.summaries),
    len(merged["candidates"]),
    len((merged["quality"] or {"sample": {"key": []}})["sample"]["key"]),
)
write_page_summary(merged, snakemake.output.summary)
