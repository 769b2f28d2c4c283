"""Rule `dedup_order` (dedup.mode partitioned): every range's counts → each document's rank in
the processing order (`order`) and each shard's document count (`documents`)."""

import numpy as np

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.tokenfile import document_count
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.dedup.partitioned import document_order, read_array, write_array

log = setup_logging(snakemake.log[0])
params = DedupParams.from_config(snakemake.params.cfg)
rank = document_order([read_array(path) for path in snakemake.input.counts], params.order)
write_array(rank, snakemake.output.order)
write_array(
    np.array([document_count(path) for path in snakemake.input.tokens], np.int64),
    snakemake.output.documents,
)
log.info("%d documents ranked (%s)", len(rank), params.order)
