# Map (per shard) -> reduce (per hash partition) -> split (per shard): N + 1 + P + N jobs and
# N + P + N·P file edges for N shards and P partitions, so the plan grows linearly with the
# crawl (corpusbuilder.exact_dedup).
rule exact_hashes:
    input:
        docs=FILES.docs,
        blocks=FILES.blocks,
        language=FILES.language,
    output:
        hashes=FILES.exact_hashes,
    log:
        "logs/exact_hashes/{shard}.log",
    benchmark:
        "benchmarks/exact_hashes/{shard}.tsv"
    conda:
        "../envs/dedup.yaml"
    threads: 1
    resources:
        mem_mb=lambda wildcards, input: 1000 + 2 * input.size_mb,
    params:
        cfg=config["exact_dedup"],
        shard_rank=lambda wildcards: SHARD_RANK[wildcards.shard],
        earlier_shards=lambda wildcards: EARLIER_SHARDS[wildcards.shard],
    script:
        "../scripts/exact_hashes.py"


# The partition jobs' one input: were they to list every shard's hashes file, Snakemake would
# scan that list of N for each of the N·P partition files the exact_dedup jobs ask for (N²·P).
# Writing a list of names is no work for a cluster job: it runs where Snakemake runs.
localrules:
    exact_manifest,


rule exact_manifest:
    input:
        hashes=EXACT_HASHES,
    output:
        manifest=FILES.exact_manifest,
    log:
        "logs/exact_manifest.log",
    benchmark:
        "benchmarks/exact_manifest.tsv"
    conda:
        "../envs/dedup.yaml"
    threads: 1
    resources:
        mem_mb=200,
    script:
        "../scripts/exact_manifest.py"


# One job per hash partition: equal texts share a partition, so each job decides first-wins in
# crawl order over its partition of every shard (the manifest's files). It holds one partition
# of the crawl's hashes in memory; exact_dedup.partitions sets how many.
# Under a default storage provider (docs/cluster.md) a job sees only the files it names: there
# the hashes files are its inputs too, retrieved to the local paths the manifest lists.
rule exact_partition:
    input:
        manifest=FILES.exact_manifest,
        hashes=(
            EXACT_HASHES
            if workflow.storage_settings.default_storage_provider is not None
            else []
        ),
    output:
        decisions=FILES.exact_partition,
    log:
        "logs/exact_partition/{partition}.log",
    benchmark:
        "benchmarks/exact_partition/{partition}.tsv"
    conda:
        "../envs/dedup.yaml"
    threads: 1
    resources:
        mem_mb=lambda wildcards: partition_job_mb(
            files_mb(EXACT_HASHES), EXACT_PARTITIONS
        ),
    params:
        partitions=EXACT_PARTITIONS,
    script:
        "../scripts/exact_partition.py"


# One job per shard. The first copy in crawl order wins, so adding a shard at the end changes no
# old shard's decisions, although every partition is decided again: the partitions are ancient()
# here, so that their new files start no old shard's exact_dedup (nor its tokenise and
# ngram_runs). What does change an old shard's decisions re-hashes it, and its own hashes
# file starts it: its text or the exact_dedup settings (through its exact_hashes job), or the
# shards before it (their sources are a param of its exact_hashes job). The partitions are
# collected in one folder (rules/collect.smk; kept, so that it stands for them between runs): N
# shards and P partitions are N + P edges.
collection(
    "exact_collect_partitions",
    FILES.exact_collected_partitions,
    kept=True,
    partitions=expand(FILES.exact_partition, partition=range(EXACT_PARTITIONS)),
)


rule exact_dedup:
    input:
        hashes=FILES.exact_hashes,
        partitions=ancient(collected("exact_collect_partitions", "partitions")),
    output:
        decisions=FILES.exact,
    log:
        "logs/exact_dedup/{shard}.log",
    benchmark:
        "benchmarks/exact_dedup/{shard}.tsv"
    conda:
        "../envs/dedup.yaml"
    threads: 1
    resources:
        # its rows only, about as many as its hashes file holds
        mem_mb=lambda wildcards, input: 1000 + 16 * files_mb([input.hashes]),
    params:
        shard_rank=lambda wildcards: SHARD_RANK[wildcards.shard],
    script:
        "../scripts/exact_dedup.py"
