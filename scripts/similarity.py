"""Rule `similarity`: every pair partition's similar pairs → the near-duplicate document pairs of
the whole exported corpus (Spasojević & Poncin), results/stats/similar_pairs.parquet (id_a, id_b,
resemblance, cluster), as one job pairing every signature would write them."""

import pyarrow as pa

from corpusbuilder.common.io import write_table
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.similarity.partitioned import merge_partition_pairs

setup_logging(snakemake.log[0])
pairs = merge_partition_pairs(snakemake.input.pairs, snakemake.input.signatures)
write_table(pa.Table.from_pandas(pairs, preserve_index=False), snakemake.output.pairs)
