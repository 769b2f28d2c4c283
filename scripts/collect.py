"""The rules of rules/collect.smk: each named input, every shard's (or range's) file of a kind,
linked into the output folder with its list (contracts.tables.collect_files), the one input of
the jobs that read them all."""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.tables import collect_files

log = setup_logging(snakemake.log[0])
kinds = {kind: list(snakemake.input[kind]) for kind in snakemake.input.keys()}
collect_files(kinds, snakemake.output.folder)
log.info("collected %s", ", ".join(f"{len(files)} {kind}" for kind, files in kinds.items()))
