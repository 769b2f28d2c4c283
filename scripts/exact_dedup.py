"""Rule `exact_dedup`: one shard's exact-duplicate decisions, its rows of every hash partition's
decisions (corpusbuilder.exact_dedup, thesis §3.6.1)."""

import logging

from corpusbuilder.common.io import write_table
from corpusbuilder.common.lazy_pandas import without_pandas
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.tables import collected_files
from corpusbuilder.exact_dedup import decision_counts, shard_decisions

setup_logging(snakemake.log[0])
without_pandas("exact_dedup")
decisions = shard_decisions(
    collected_files(snakemake.input.partitions, "partitions"),
    snakemake.input.hashes,
    snakemake.params.shard_rank,
)
write_table(decisions, snakemake.output.decisions)
logging.getLogger("corpusbuilder.exact_dedup").info(
    "exact dedup, %s: %s", snakemake.wildcards.shard, decision_counts(decisions)
)
