"""Rule `dup_ngram_part`: hash range {partition} of every shard's run, in crawl order (and of an
earlier corpus's dedup state, which is a run too) → that part of G₂₊,
work/ngrams/dup{n}/{partition}.npy + stats."""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.tables import collected_files
from corpusbuilder.ngrams.stage import write_duplicate_ngrams

setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
write_duplicate_ngrams(
    collected_files(snakemake.input.runs, "runs") + list(snakemake.input.against),
    snakemake.output.dup,
    snakemake.output.stats,
    cfg["mem_mb"],
    cfg["min_count"],
    int(snakemake.wildcards.partition),
    snakemake.params.partitions,
)
