"""Rule `similarity`: every shard's min-hash signatures (`signatures`, corpus order) → the
near-duplicate document pairs of the whole exported corpus (Spasojević & Poncin),
results/stats/similar_pairs.parquet (id_a, id_b, resemblance, cluster)."""

import pyarrow as pa

from corpusbuilder.common.io import write_table
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.similarity.minhash import (
    MinHashParams,
    read_signatures,
    signature_similar_pairs,
)

setup_logging(snakemake.log[0])
section = snakemake.params.cfg
params = MinHashParams.from_config(section)
ids, signatures = read_signatures(snakemake.input.signatures, params.k)
pairs = signature_similar_pairs(ids, signatures, section["threshold"], params)
write_table(pa.Table.from_pandas(pairs, preserve_index=False), snakemake.output.pairs)
