"""Rule `ngram_runs`: one shard's tokens → its sorted run of (n-gram hash, count) (thesis §3.4.2);
for a WARC read as several shards, their token files (input.tokens, in crawl order) → one run.

A shard's run never depends on another shard, so adding a shard sorts only that shard.
"""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.ngrams.stage import shard_ngram_run

setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
tokens = snakemake.input.tokens
shard_ngram_run(
    tokens if isinstance(tokens, str) else list(tokens),
    snakemake.output.run,
    cfg["kind"],
    cfg["n"],
    cfg["mem_mb"],
)
