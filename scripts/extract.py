"""Rule `extract`: one WARC shard → docs and blocks tables (corpusbuilder.extract)."""

from pathlib import Path

from corpusbuilder.extract import ExtractParams, extract_shard
from corpusbuilder.logs import setup_logging

setup_logging(snakemake.log[0])
extract_shard(
    Path(snakemake.input.warc),
    snakemake.wildcards.shard,
    Path(snakemake.output.docs),
    Path(snakemake.output.blocks),
    ExtractParams.from_config(snakemake.params.cfg),
)
