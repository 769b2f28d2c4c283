"""Rule `exact_partition`: the exact-duplicate decisions on one hash partition of every shard, the
first copy in crawl order kept (corpusbuilder.exact_dedup, thesis §3.6.1)."""

import logging

from corpusbuilder.common.io import write_table
from corpusbuilder.common.lazy_pandas import without_pandas
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.tables import read_manifest
from corpusbuilder.exact_dedup import decide_partition, decision_counts

# Rows per row group of the output: each shard's exact_dedup job reads the row groups that hold
# its rows, found by their statistics, so smaller groups mean less read for more footer.
ROW_GROUP_ROWS = 65536

setup_logging(snakemake.log[0])
without_pandas("exact_partition")
partition = int(snakemake.wildcards.partition)
decisions = decide_partition(
    read_manifest(snakemake.input.manifest), partition, snakemake.params.partitions
)
write_table(decisions, snakemake.output.decisions, row_group_size=ROW_GROUP_ROWS)
logging.getLogger("corpusbuilder.exact_dedup").info(
    "exact dedup, partition %d of %d: %s",
    partition,
    snakemake.params.partitions,
    decision_counts(decisions),
)
