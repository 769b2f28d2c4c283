"""Rule `exact_manifest`: every shard's exact_hashes file in crawl order, the list the partition
jobs read (corpusbuilder.exact_dedup)."""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.tables import write_manifest

setup_logging(snakemake.log[0])
write_manifest(list(snakemake.input.hashes), snakemake.output.manifest)
