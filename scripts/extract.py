"""Rule `extract`: a shard's WARCs (input.warcs, params.warcs their names in crawl order) → docs
and blocks tables (corpusbuilder.extraction.extract); for part params.part of a split WARC, its
records from where input.starts says the part begins (corpusbuilder.extraction.warc_parts)."""

from functools import partial
from pathlib import Path

from corpusbuilder.common.lazy_pandas import without_pandas
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.warcparts import read_part_starts
from corpusbuilder.download.sources import warc_file
from corpusbuilder.extraction.extract import ExtractParams, extract_shard
from corpusbuilder.extraction.warc import iter_warc_records
from corpusbuilder.extraction.warc_parts import read_part

setup_logging(snakemake.log[0])
params = ExtractParams.from_config(snakemake.params.cfg)
if params.site_boilerplate.mode == "off":  # the site-level pass joins its tables in pandas
    without_pandas("extract")
warcs = [(warc, warc_file(snakemake.input.warcs, warc)) for warc in snakemake.params.warcs]
part = snakemake.params.part
read = (
    iter_warc_records
    if part is None
    else partial(
        read_part,
        starts=read_part_starts(snakemake.input.starts, warcs[0][1].stat().st_size),
        part=part,
    )
)
extract_shard(
    warcs,
    snakemake.wildcards.shard,
    Path(snakemake.output.docs),
    Path(snakemake.output.blocks),
    params,
    read=read,
)
