"""Rule `dedup_occurrences` (dedup.mode partitioned): one shard's token file → its n-gram
occurrences, a row group per hash range (corpusbuilder.dedup.partitioned.shard_occurrences)."""

from corpusbuilder.common.lazy_pandas import without_pandas
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.ngramfiles import write_occurrences
from corpusbuilder.contracts.tokenfile import read_tokens
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.dedup.partitioned import shard_occurrences

log = setup_logging(snakemake.log[0])
without_pandas("dedup_occurrences")
params = DedupParams.from_config(snakemake.params.cfg)
parts = shard_occurrences(read_tokens(snakemake.input.tokens), params, snakemake.params.partitions)
write_occurrences(parts, snakemake.output.occurrences)
log.info("%d n-gram occurrences in %d hash ranges", sum(map(len, parts)), len(parts))
