"""Rule `dedup_seen` (dedup.mode partitioned): hash range {partition} of every shard's
occurrences, of G₂₊ and of an earlier corpus's state (`against`), with each shard's keys of the
documents met in the range (`order`) → the occurrences already seen, a row group per shard, each
naming its n-gram's first holder. A shard's occurrences are read and filtered one at a time: only
the duplicate ones are held."""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.ngramfiles import (
    KEY_SCHEMA,
    partition_hash_range,
    read_duplicate_ngram_range,
    read_occurrences,
    read_pairs,
    write_seen,
)
from corpusbuilder.contracts.tables import collected_files
from corpusbuilder.contracts.tokenfile import read_tokens
from corpusbuilder.dedup.partitioned import (
    OCCURRENCE,
    earlier_in_range,
    in_duplicates,
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
duplicates = read_duplicate_ngram_range(
    collected_files(snakemake.input.duplicates, "duplicates"), *bounds
)
seen = seen_occurrences(
    [
        in_duplicates(read_occurrences(path, p, OCCURRENCE), duplicates)
        for path in collected_files(snakemake.input.occurrences, "occurrences")
    ],
    read_pairs(collected_files(snakemake.input.order, "order"), p, KEY_SCHEMA),
    documents,
    None if earlier is None else earlier[:2],
)
tokens = collected_files(snakemake.input.tokens, "tokens")
seen = name_owners(
    seen,
    documents,
    lambda s: read_tokens(tokens[s], ("doc_ids",)).doc_ids,
    None if earlier is None else earlier[2],
)
write_seen(seen, snakemake.output.seen)
log.info("range %d: %d occurrences seen", p, sum(map(len, seen)))
