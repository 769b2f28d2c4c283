"""Rules `report_summary_group` and `report_summary`: page summaries merged into one
(corpusbuilder.report.summary.merge_summaries), reading one at a time → a level of the merge
tree's file (work/report/summary_tree/{level}/{group}.json) or the corpus's
(work/report/summary.json).

Inputs: `summaries`, in shard order: the shards' (rule report_shard) or a level's of the tree.
Params: `sample_size`, as rule report_shard's.
"""

import logging

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.reportfiles import read_page_summary, write_page_summary
from corpusbuilder.report.summary import SummaryParams, merge_summaries

setup_logging(snakemake.log[0])
params = SummaryParams(sample_size=snakemake.params.sample_size)
merged = merge_summaries(map(read_page_summary, snakemake.input.summaries), params)
logging.getLogger("corpusbuilder.report").info(
    "%d summaries: %d sample candidates, %d quality documents sampled",
    len(snakemake.input.summaries),
    len(merged["candidates"]),
    len((merged["quality"] or {"sample": {"key": []}})["sample"]["key"]),
)
write_page_summary(merged, snakemake.output.summary)
