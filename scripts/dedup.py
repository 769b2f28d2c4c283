"""Rule `dedup`: every shard's tokens + blocks and G₂₊ → per-shard
override tables (corpusbuilder.dedup).

One job for the whole corpus: Algorithm 3.1 needs one G_out and one global processing order.
Inputs are lists in shard order (`tokens`, `blocks`; params.shards their names), plus `duplicates`
(G₂₊ in hash ranges, work/ngrams/dup{n}/{partition}.npy, in partition order) and
`duplicates_stats` (each part's counts, summed into the log); outputs
`dedup`, the folder of the shards' tables (files.dedup_table), and `stats` (the pass's
counts); `against` (empty, or the parts of an earlier corpus's state) and `state` (empty, or
the one part of this corpus's). Its memory is checked before
the pass (corpusbuilder.dedup.memory).
"""

import sys
from pathlib import Path

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.files import dedup_table
from corpusbuilder.dedup.corpus import Shard, dedup_corpus
from corpusbuilder.dedup.memory import DedupMemoryError, check_dedup_memory
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.extraction.extract import ExtractParams
from corpusbuilder.extraction.justext import reclassifier
from corpusbuilder.ngrams.stage import duplicate_ngrams_stats

log = setup_logging(snakemake.log[0])
g2 = duplicate_ngrams_stats(snakemake.input.duplicates_stats)
log.info(
    "G2+: %d n-grams seen twice or more (%d occurrences) of %d distinct, in %d hash ranges",
    g2["duplicate_types"],
    g2["duplicate_instances"],
    g2["distinct_ngrams"],
    g2["partitions"],
)
params = DedupParams.from_config(snakemake.params.cfg)
try:
    check_dedup_memory(
        snakemake.input.duplicates, snakemake.input.tokens, params, snakemake.resources.mem_mb
    )
except DedupMemoryError as error:
    log.error("%s", error)
    sys.exit(1)
Path(snakemake.output.dedup).mkdir(parents=True, exist_ok=True)
shards = [
    Shard(name, Path(tokens), Path(blocks), Path(dedup_table(name, snakemake.output.dedup)))
    for name, tokens, blocks in zip(
        snakemake.params.shards, snakemake.input.tokens, snakemake.input.blocks, strict=True
    )
]
dedup_corpus(
    shards,
    list(snakemake.input.duplicates),
    Path(snakemake.output.stats),
    params,
    reclassifier(ExtractParams.from_config(snakemake.params.extract).justext),
    against=list(snakemake.input.against) or None,
    state_path=Path(snakemake.output.state[0]) if snakemake.output.state else None,
)
