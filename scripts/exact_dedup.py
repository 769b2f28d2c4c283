"""Rule `exact_dedup`: one shard's exact-duplicate decisions, from a k-way merge of its sorted MD5
list with those of the shards before it in crawl order (corpusbuilder.exact_dedup, thesis 3.6.1)."""

from pathlib import Path

from corpusbuilder.exact_dedup import exact_dedup
from corpusbuilder.logs import setup_logging

setup_logging(snakemake.log[0])
shards = list(snakemake.params.shards)
if len(shards) != len(snakemake.input.hashes):
    raise ValueError("exact_dedup: params.shards must name the shards of input.hashes, in crawl order")
output = Path(snakemake.output.decisions)
output.parent.mkdir(parents=True, exist_ok=True)
# the earlier shards' decisions are their own jobs' outputs: here they are only merged through
exact_dedup(list(snakemake.input.hashes), [None] * (len(shards) - 1) + [output], shards)
