# One job for the whole corpus (thesis Algorithm 3.1): one G_out and one global document order;
# its memory (corpusbuilder.dedup.memory: G2+ at the backend's bytes per n-gram, the shards' tokens)
# is computed from its inputs and checked before the pass;
# who sent which n-gram to output is logged to a temporary directory in work/dedup meanwhile.
# It writes the corpus's state (its output n-grams) for a later crawl's dedup.against
# (dedup.write_state), as one part of every hash. dedup.mode partitioned runs the jobs below
# instead.
if not DEDUP_PARTITIONED:

    rule dedup:
        input:
            tokens=expand(FILES.tokens, shard=SHARDS),
            blocks=expand(FILES.blocks, shard=SHARDS),
            duplicates=DUPLICATE_NGRAMS,
            duplicates_stats=DUPLICATE_NGRAMS_STATS,
            against=AGAINST,
        output:
            dedup=directory(FILES.dedup_tables),
            stats=FILES.dedup_stats,
            state=DEDUP_STATE,
        log:
            "logs/dedup.log",
        benchmark:
            "benchmarks/dedup.tsv"
        conda:
            "../envs/dedup.yaml"
        threads: 1
        resources:
            mem_mb=dedup_mem_mb,
        params:
            shards=SHARDS,
            cfg=config["dedup"],
            extract=config["extract"],
        script:
            "../scripts/dedup.py"


# dedup.mode partitioned (corpusbuilder.dedup.partitioned, docs/dedup-scale.md): an occurrence
# of a duplicate n-gram is already seen when the n-gram occurs earlier in the global order, kept
# or not. Jobs per shard and per hash range (dedup.partitions); none holds more than one shard or
# the duplicate occurrences of one range of every shard, and none a number for every document.
# Where the jobs of one family read every file of a kind that the other writes, they read it
# collected in one folder (rules/collect.smk): the plan is N + P edges, not N·P.
DEDUP_RANGES = range(DEDUP_PARTITIONS)

if DEDUP_PARTITIONED:
    collection(
        "dedup_collect_occurrences",
        FILES.dedup_collected_occurrences,
        occurrences=expand(FILES.dedup_occurrences, shard=SHARDS),
        tokens=TOKENS,
    )
    collection(
        "dedup_collect_duplicates",
        FILES.dedup_collected_duplicates,
        duplicates=DUPLICATE_NGRAMS,
    )
    collection(
        "dedup_collect_counts",
        FILES.dedup_collected_counts,
        counts=expand(FILES.dedup_counts, partition=DEDUP_RANGES),
    )
    collection(
        "dedup_collect_order",
        FILES.dedup_collected_order,
        order=expand(FILES.dedup_order, shard=SHARDS),
    )
    collection(
        "dedup_collect_seen",
        FILES.dedup_collected_seen,
        seen=expand(FILES.dedup_seen, partition=DEDUP_RANGES),
    )
    collection(
        "dedup_collect_state_runs",
        FILES.dedup_collected_state_runs,
        state_runs=expand(FILES.dedup_state_run, shard=SHARDS),
    )

    # Per shard: every n-gram occurrence, a row group per hash range.
    rule dedup_occurrences:
        input:
            tokens=FILES.tokens,
        output:
            occurrences=temp(FILES.dedup_occurrences),
        log:
            "logs/dedup_occurrences/{shard}.log",
        benchmark:
            "benchmarks/dedup_occurrences/{shard}.tsv"
        conda:
            "../envs/dedup.yaml"
        threads: 1
        resources:
            mem_mb=partitioned_mem_mb("occurrences"),
        params:
            cfg=config["dedup"],
            partitions=DEDUP_PARTITIONS,
        script:
            "../scripts/dedup_occurrences.py"

    # Per range: the duplicate n-grams in it of each document that has any, a row group per shard.
    rule dedup_counts:
        input:
            occurrences=collected("dedup_collect_occurrences", "occurrences"),
            tokens=collected("dedup_collect_occurrences", "tokens"),
            duplicates=collected("dedup_collect_duplicates", "duplicates"),
        output:
            counts=temp(FILES.dedup_counts),
        log:
            "logs/dedup_counts/{partition}.log",
        benchmark:
            "benchmarks/dedup_counts/{partition}.tsv"
        conda:
            "../envs/dedup.yaml"
        threads: 1
        resources:
            mem_mb=partitioned_mem_mb("counts"),
        params:
            partitions=DEDUP_PARTITIONS,
        script:
            "../scripts/dedup_counts.py"

    # Per shard: its documents' places in the processing order (their dup-share, §3.5), handed
    # to the ranges that meet them.
    rule dedup_order:
        input:
            occurrences=FILES.dedup_occurrences,
            counts=collected("dedup_collect_counts", "counts"),
            tokens=FILES.tokens,
        output:
            order=temp(FILES.dedup_order),
        log:
            "logs/dedup_order/{shard}.log",
        benchmark:
            "benchmarks/dedup_order/{shard}.tsv"
        conda:
            "../envs/dedup.yaml"
        threads: 1
        resources:
            mem_mb=partitioned_mem_mb("order"),
        params:
            cfg=config["dedup"],
            shard_rank=lambda wildcards: SHARD_RANK[wildcards.shard],
        script:
            "../scripts/dedup_order.py"

    # Each shard's document count: where its documents' corpus-wide indices begin.
    rule dedup_documents:
        input:
            tokens=collected("dedup_collect_occurrences", "tokens"),
        output:
            documents=FILES.dedup_documents,
        log:
            "logs/dedup_documents.log",
        conda:
            "../envs/dedup.yaml"
        threads: 1
        resources:
            mem_mb=partitioned_mem_mb("documents"),
        script:
            "../scripts/dedup_documents.py"

    # Per range: the occurrences already seen, each naming its n-gram's first holder.
    rule dedup_seen:
        input:
            occurrences=collected("dedup_collect_occurrences", "occurrences"),
            tokens=collected("dedup_collect_occurrences", "tokens"),
            duplicates=collected("dedup_collect_duplicates", "duplicates"),
            order=collected("dedup_collect_order", "order"),
            documents=FILES.dedup_documents,
            against=AGAINST,
        output:
            seen=temp(FILES.dedup_seen),
        log:
            "logs/dedup_seen/{partition}.log",
        benchmark:
            "benchmarks/dedup_seen/{partition}.tsv"
        conda:
            "../envs/dedup.yaml"
        threads: 1
        resources:
            mem_mb=partitioned_mem_mb("seen"),
        params:
            partitions=DEDUP_PARTITIONS,
        script:
            "../scripts/dedup_seen.py"

    # Per shard: its documents judged, its table written.
    rule dedup_shard:
        input:
            tokens=FILES.tokens,
            blocks=FILES.blocks,
            seen=collected("dedup_collect_seen", "seen"),
            documents=FILES.dedup_documents,
            against=AGAINST,
        output:
            dedup=FILES.dedup,
            stats=FILES.dedup_shard_stats,
            state_run=[temp(FILES.dedup_state_run)] if DEDUP_STATE else [],
        log:
            "logs/dedup_shard/{shard}.log",
        benchmark:
            "benchmarks/dedup_shard/{shard}.tsv"
        conda:
            "../envs/dedup.yaml"
        threads: 1
        resources:
            mem_mb=partitioned_mem_mb("shard"),
        params:
            cfg=config["dedup"],
            extract=config["extract"],
            shard_rank=lambda wildcards: SHARD_RANK[wildcards.shard],
            state_partitions=DEDUP_STATE_PARTS if DEDUP_STATE else None,
        script:
            "../scripts/dedup_shard.py"

    # Per range of the state's own (dedup.state_partitions, as many as its share of the state
    # needs to fit a job): that part of the corpus's state (dedup.write_state), the range's part
    # of every shard's output n-grams and the earlier corpus's state's rows in it, merged.
    rule dedup_state:
        input:
            state_runs=collected("dedup_collect_state_runs", "state_runs"),
            documents=FILES.dedup_documents,
            against=AGAINST,
        output:
            state=FILES.dedup_state.replace("{partitions}", str(DEDUP_STATE_PARTS)),
        log:
            "logs/dedup_state/{partition}.log",
        benchmark:
            "benchmarks/dedup_state/{partition}.tsv"
        conda:
            "../envs/dedup.yaml"
        threads: 1
        resources:
            mem_mb=state_part_mem_mb,
        params:
            cfg=config["dedup"],
            partitions=DEDUP_STATE_PARTS,
        script:
            "../scripts/dedup_state.py"

    # The stats file, from the shards' counts.
    rule dedup_merge:
        input:
            stats=expand(FILES.dedup_shard_stats, shard=SHARDS),
            duplicates=DUPLICATE_NGRAMS,
        output:
            stats=FILES.dedup_stats,
        log:
            "logs/dedup_merge.log",
        benchmark:
            "benchmarks/dedup_merge.tsv"
        conda:
            "../envs/dedup.yaml"
        threads: 1
        resources:
            mem_mb=1000,
        params:
            cfg=config["dedup"],
        script:
            "../scripts/dedup_merge.py"
