"""Rule `similarity`: near-duplicate document pairs of the whole exported corpus (min-hash,
Spasojević & Poncin) → results/stats/similar_pairs.parquet (id_a, id_b, resemblance, cluster)."""

from pathlib import Path

import pyarrow as pa

from corpusbuilder.common.io import write_table
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.export import read_corpus
from corpusbuilder.similarity.minhash import MinHashParams, corpus_similar_pairs

setup_logging(snakemake.log[0])
section = snakemake.params.cfg
documents = (doc for path in snakemake.input.corpus for doc in read_corpus(Path(path)))
pairs = corpus_similar_pairs(documents, section["threshold"], MinHashParams.from_config(section))
write_table(pa.Table.from_pandas(pairs, preserve_index=False), snakemake.output.pairs)
