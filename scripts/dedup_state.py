"""Rule `dedup_state` (dedup.mode partitioned, dedup.write_state): hash range {partition} of the
state's (dedup.state_partitions) — that part of every shard's output n-grams (`state_runs`) and
the earlier corpus's state's rows in it (`against`, in whatever ranges it was written) → that part
of this corpus's state (`state`), as the sequential job would write its rows of the range."""

import numpy as np

from corpusbuilder.common.lazy_pandas import without_pandas
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.ngramfiles import dedup_state_metadata
from corpusbuilder.contracts.tables import collected_files
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.dedup.partitioned import read_array
from corpusbuilder.dedup.state import state_settings, write_state_part

log = setup_logging(snakemake.log[0])
without_pandas("dedup_state")
params = DedupParams.from_config(snakemake.params.cfg)
partition, partitions = int(snakemake.wildcards.partition), snakemake.params.partitions
against = list(snakemake.input.against)
first = dedup_state_metadata(against).get("next_rank", 0) if against else 0
documents = int(np.sum(read_array(snakemake.input.documents)))
runs = collected_files(snakemake.input.state_runs, "state_runs")
write_state_part(
    snakemake.output.state,
    runs,
    against,
    partition,
    partitions,
    {**state_settings(params), "next_rank": first + documents},
)
log.info("state part %d of %d written, from %d shards' runs", partition, partitions, len(runs))
