"""Rule `dedup_seen` (dedup.mode partitioned): hash range {partition} of every shard's
occurrences, of G₂₊ and of an earlier corpus's state (`against`), with the documents' ranks →
the occurrences already seen, a row group per shard, each naming its n-gram's first holder."""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.ngramfiles import (
    partition_hash_range,
    read_duplicate_ngram_range,
    read_occurrences,
    write_seen,
)
from corpusbuilder.contracts.tokenfile import read_tokens
from corpusbuilder.dedup.partitioned import (
    OCCURRENCE,
    earlier_in_range,
    name_owners,
    read_array,
    seen_occurrences,
)

log = setup_logging(snakemake.log[0])
p = int(snakemake.wildcards.partition)
bounds = partition_hash_range(p, snakemake.params.partitions)
documents = read_array(snakemake.input.documents).tolist()
earlier = (
    earlier_in_range(list(snakemake.input.against), bounds, sum(documents))
    if snakemake.input.against
    else None
)
seen = seen_occurrences(
    [read_occurrences(path, p, OCCURRENCE) for path in snakemake.input.occurrences],
    read_duplicate_ngram_range(snakemake.input.duplicates, *bounds),
    read_array(snakemake.input.order, mapped=True),
    documents,
    None if earlier is None else earlier[:2],
)
tokens = list(snakemake.input.tokens)
seen = name_owners(
    seen,
    documents,
    lambda s: read_tokens(tokens[s], ("doc_ids",)).doc_ids,
    None if earlier is None else earlier[2],
)
write_seen(seen, snakemake.output.seen)
log.info("range %d: %d occurrences seen", p, sum(map(len, seen)))
