"""Rule `similarity_score`: one pair partition's candidates of every band job, scored against the
signatures of their documents (corpusbuilder.similarity.partitioned.score_partition)."""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.similarity.minhash import MinHashParams
from corpusbuilder.similarity.partitioned import score_partition, write_partition_pairs

log = setup_logging(snakemake.log[0])
section = snakemake.params.cfg
pairs = score_partition(
    snakemake.input.candidates,
    snakemake.input.signatures,
    int(snakemake.wildcards.partition),
    section["threshold"],
    MinHashParams.from_config(section),
)
write_partition_pairs(pairs, snakemake.output.pairs)
log.info("%d similar pairs", len(pairs))
