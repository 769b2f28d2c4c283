"""Rule `adapt_sample`: a shard's WARCs → every block of pages drawn from it at random, as the
extract stage segments them (corpusbuilder.extraction.adapt), unlabelled."""

import logging

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.download.sources import warc_file
from corpusbuilder.extraction.adapt import crawl_blocks, sample_pages
from corpusbuilder.extraction.extract import ExtractParams

setup_logging(snakemake.log[0])
params = ExtractParams.from_config(snakemake.params.cfg)
# extract.peers' packages, before any page is read; the model is rule adapt's input, checked there
params.check_peers()
records = sample_pages(
    [warc_file(snakemake.input.warcs, warc) for warc in snakemake.params.warcs],
    snakemake.params.pages,
    snakemake.params.seed,
    params,
)
blocks, skipped = crawl_blocks(records, params)
logging.getLogger("corpusbuilder.extraction.adapt").info(
    "%s: %d target pages, %d blocks; left out: %s",
    snakemake.wildcards.shard,
    blocks.target_pages,
    len(blocks.words),
    ", ".join(f"{reason}={count}" for reason, count in sorted(skipped.items())) or "none",
)
blocks.save(snakemake.output.blocks)
