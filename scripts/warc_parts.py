"""Rule `warc_parts`: a WARC split into params.parts shards (input.shard_mb; input.warcs, its
download folder, params.warc its name) → output.starts, where each part's reading begins
(corpusbuilder.extraction.warc_parts), read by each part's extract job."""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.warcparts import write_part_starts
from corpusbuilder.download.sources import warc_file
from corpusbuilder.extraction.extract import ExtractParams
from corpusbuilder.extraction.warc_parts import index_parts

setup_logging(snakemake.log[0])
path = warc_file(snakemake.input.warcs, snakemake.params.warc)
starts = index_parts(path, ExtractParams.from_config(snakemake.params.cfg), snakemake.params.parts)
write_part_starts(snakemake.output.starts, snakemake.params.warc, path.stat().st_size, starts)
