"""Rule `dedup_documents` (dedup.mode partitioned): every shard's token file (its header only) →
each shard's document count (`documents`), where the corpus-wide indices of its documents begin."""

import numpy as np

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.tables import collected_files
from corpusbuilder.contracts.tokenfile import document_count
from corpusbuilder.dedup.partitioned import write_array

log = setup_logging(snakemake.log[0])
documents = np.array(
    [document_count(path) for path in collected_files(snakemake.input.tokens, "tokens")], np.int64
)
write_array(documents, snakemake.output.documents)
log.info("%d documents in %d shards", documents.sum(), len(documents))
