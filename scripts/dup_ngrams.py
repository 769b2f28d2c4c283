"""Rule `dup_ngrams`: every shard's run, in crawl order (and an earlier corpus's dedup state, which
is a run too) → G₂₊, work/ngrams/dup{n}.npy + stats."""

from corpusbuilder.logs import setup_logging
from corpusbuilder.ngrams.stage import write_duplicate_ngrams

setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
write_duplicate_ngrams(
    list(snakemake.input.runs) + list(snakemake.input.against),
    snakemake.output.dup,
    snakemake.output.stats,
    cfg["mem_mb"],
    cfg["min_count"],
)
