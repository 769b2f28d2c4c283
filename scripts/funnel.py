"""Rule `funnel`: documents and words after each step, and why documents were lost
(corpusbuilder.funnel) → results/stats/funnel.tsv and skipped.tsv.
Inputs are lists, one per shard."""

import logging

from corpusbuilder.common.io import atomic_path
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.funnel import FunnelCounts, count_shard, funnel_tables
from corpusbuilder.tables import ShardTables

setup_logging(snakemake.log[0])
total = FunnelCounts()
inputs = snakemake.input
for *files, quality in zip(
    inputs.docs, inputs.blocks, inputs.language, inputs.exact, inputs.quality, strict=True
):
    total += count_shard(ShardTables(*files, quality=quality))
funnel, skipped = funnel_tables(total)
for table, path in ((funnel, snakemake.output.funnel), (skipped, snakemake.output.skipped)):
    with atomic_path(path) as tmp:
        table.to_csv(tmp, sep="\t", index=False)
logging.getLogger("corpusbuilder.funnel").info("funnel:\n%s", funnel.to_string(index=False))
