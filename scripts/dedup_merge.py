"""Rule `dedup_merge` (dedup.mode partitioned): every shard's counts → the stats file the report
reads (`stats`); with dedup.write_state, the shards' output n-gram runs and the earlier corpus's
state (`against`) → this corpus's state (`state`), as the sequential job writes it."""

import json
from dataclasses import asdict

import numpy as np

from corpusbuilder.common.io import atomic_path
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.ngramfiles import dedup_state_metadata, duplicate_ngram_count
from corpusbuilder.dedup.corpus import DedupStats
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.dedup.partitioned import read_array, sum_stats
from corpusbuilder.dedup.state import merge_state_runs, state_settings, write_state_rows

log = setup_logging(snakemake.log[0])
params = DedupParams.from_config(snakemake.params.cfg)
stats = sum_stats([DedupStats(**json.loads(open(path).read())) for path in snakemake.input.stats])
stats.duplicate_ngrams = duplicate_ngram_count(snakemake.input.duplicates)
with atomic_path(snakemake.output.stats) as tmp:
    tmp.write_text(json.dumps({"params": asdict(params), **asdict(stats)}, indent=1) + "\n")
if snakemake.output.state:
    against = list(snakemake.input.against)
    first = dedup_state_metadata(against[0]).get("next_rank", 0) if against else 0
    documents = int(np.sum(read_array(snakemake.input.documents)))
    write_state_rows(
        snakemake.output.state[0],
        merge_state_runs([*against, *snakemake.input.state_runs]),
        {**state_settings(params), "next_rank": first + documents},
    )
log.info("dedup: %d documents, blocks %s", stats.documents, stats.blocks)
