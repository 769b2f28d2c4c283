"""Rule `exact_dedup`: merge the shards' sorted MD5 lists; the first copy in crawl order is kept
(corpusbuilder.exact_dedup, thesis §3.6.1). Inputs and outputs are in crawl order, one per shard."""

from corpusbuilder.exact_dedup import exact_dedup
from corpusbuilder.logs import setup_logging

setup_logging(snakemake.log[0])
if len(snakemake.params.shards) != len(snakemake.input.hashes):
    raise ValueError("exact_dedup: params.shards must name the shards of input.hashes, in crawl order")
exact_dedup(list(snakemake.input.hashes), list(snakemake.output.decisions), list(snakemake.params.shards))
