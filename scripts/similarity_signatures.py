"""Rule `similarity_signatures`: one shard's exported documents → their min-hash signatures
(corpusbuilder.similarity.minhash.corpus_signatures), the part of the stage linear in the words."""

from pathlib import Path

from corpusbuilder.common.lazy_pandas import without_pandas
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.corpus import read_corpus
from corpusbuilder.similarity.minhash import MinHashParams, corpus_signatures
from corpusbuilder.similarity.partitioned import write_signatures

log = setup_logging(snakemake.log[0])
without_pandas("similarity_signatures")
ids, signatures = corpus_signatures(
    read_corpus(Path(snakemake.input.corpus)), MinHashParams.from_config(snakemake.params.cfg)
)
write_signatures(ids, signatures, snakemake.output.signatures)
log.info("%d signatures", len(ids))
