"""Rule `extract`: a shard's WARCs (input.warcs, params.warcs their names in crawl order) → docs
and blocks tables (corpusbuilder.extraction.extract)."""

from pathlib import Path

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.download.sources import warc_file
from corpusbuilder.extraction.extract import ExtractParams, extract_shard

setup_logging(snakemake.log[0])
extract_shard(
    [(warc, warc_file(snakemake.input.warcs, warc)) for warc in snakemake.params.warcs],
    snakemake.wildcards.shard,
    Path(snakemake.output.docs),
    Path(snakemake.output.blocks),
    ExtractParams.from_config(snakemake.params.cfg),
)
