"""Rule `dedup_shard` (dedup.mode partitioned): one shard's tokens and blocks, and its seen
occurrences of every range (`seen`) → its dedup table (files.dedup_table), its counts
(`stats`) and, with dedup.write_state, its output n-grams (`state_run`)."""

import json
from dataclasses import asdict

import numpy as np

from corpusbuilder.common.io import atomic_path
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.ngramfiles import dedup_state_metadata, read_seen
from corpusbuilder.contracts.tables import collected_files, read_table
from corpusbuilder.contracts.tokenfile import read_tokens
from corpusbuilder.dedup.corpus import BLOCK_COLUMNS
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.dedup.partitioned import (
    judge_shard,
    read_array,
    shard_state_run,
    write_dedup_table,
)
from corpusbuilder.extraction.justext import JustextParams, reclassifier

log = setup_logging(snakemake.log[0])
params = DedupParams.from_config(snakemake.params.cfg)
index = snakemake.params.shard_rank
extract = snakemake.params.extract
tokens = read_tokens(snakemake.input.tokens)
table, stats = judge_shard(
    tokens,
    read_table(snakemake.input.blocks, BLOCK_COLUMNS),
    read_seen(collected_files(snakemake.input.seen, "seen"), index),
    params,
    # the extract section's thresholds, without the extraction stage's imports (warcio's, ...)
    reclassifier(JustextParams.of_preset(extract["preset"], extract.get("justext", {}))),
)
write_dedup_table(table, snakemake.output.dedup)
if snakemake.output.state_run:
    first_rank = (
        dedup_state_metadata(list(snakemake.input.against)).get("next_rank", 0)
        if snakemake.input.against
        else 0
    )
    documents = read_array(snakemake.input.documents)
    shard_state_run(
        tokens,
        table,
        params,
        first_rank + int(np.sum(documents[:index])),
        snakemake.params.state_partitions,
        snakemake.output.state_run[0],
    )
with atomic_path(snakemake.output.stats) as tmp:
    tmp.write_text(json.dumps(asdict(stats)) + "\n")
log.info("%d documents, blocks %s", stats.documents, stats.blocks)
