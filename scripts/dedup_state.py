"""Rule `dedup_state` (dedup.mode partitioned, dedup.write_state): hash range {partition} of every
shard's output n-grams (`state_runs`) and of the earlier corpus's state (`against`, in whatever
ranges it was written) → that part of this corpus's state (`state`), as the sequential job would
write its rows of the range."""

import numpy as np

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.ngramfiles import dedup_state_metadata, partition_hash_range
from corpusbuilder.contracts.tables import collected_files
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.dedup.partitioned import read_array
from corpusbuilder.dedup.state import merge_state_runs, state_settings, write_state_rows

log = setup_logging(snakemake.log[0])
params = DedupParams.from_config(snakemake.params.cfg)
against = list(snakemake.input.against)
first = dedup_state_metadata(against).get("next_rank", 0) if against else 0
documents = int(np.sum(read_array(snakemake.input.documents)))
write_state_rows(
    snakemake.output.state,
    merge_state_runs(
        [*against, *collected_files(snakemake.input.state_runs, "state_runs")],
        partition_hash_range(int(snakemake.wildcards.partition), snakemake.params.partitions),
    ),
    {**state_settings(params), "next_rank": first + documents},
)
log.info("state part %s of %d written", snakemake.wildcards.partition, snakemake.params.partitions)
