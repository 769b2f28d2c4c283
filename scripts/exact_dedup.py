"""Rule `exact_dedup`: one shard's exact-duplicate decisions, its rows of every hash partition's
decisions (corpusbuilder.exact_dedup, thesis §3.6.1)."""

import logging

from corpusbuilder.exact_dedup import decision_counts, shard_decisions
from corpusbuilder.io import write_table
from corpusbuilder.logs import setup_logging

setup_logging(snakemake.log[0])
decisions = shard_decisions(
    list(snakemake.input.partitions), snakemake.input.hashes, snakemake.params.shard_rank
)
write_table(decisions, snakemake.output.decisions)
logging.getLogger("corpusbuilder.exact_dedup").info(
    "exact dedup, %s: %s", snakemake.wildcards.shard, decision_counts(decisions)
)
