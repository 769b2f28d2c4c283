"""Rule `similarity_candidates`: one band job's candidate pairs, from its bands' columns of every
shard's signatures, a band and a range of keys at a time
(corpusbuilder.similarity.partitioned.write_band_candidates)."""

from corpusbuilder.common.lazy_pandas import without_pandas
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.similarity.minhash import MinHashParams
from corpusbuilder.similarity.partitioned import write_band_candidates

log = setup_logging(snakemake.log[0])
without_pandas("similarity_candidates")
written = write_band_candidates(
    snakemake.input.signatures,
    int(snakemake.wildcards.band_job),
    snakemake.params.band_jobs,
    snakemake.params.partitions,
    MinHashParams.from_config(snakemake.params.cfg),
    snakemake.output.candidates,
    snakemake.params.cfg["key_passes"],
)
log.info("%d candidate pairs", written)
