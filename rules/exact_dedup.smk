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
        shard_rank=lambda wildcards: SHARDS.index(wildcards.shard),
    script:
        "../scripts/exact_hashes.py"


# One job per shard: the first copy in crawl order wins, so a shard's decisions depend only on
# its own hashes and those of the shards before it; adding a shard at the end leaves the old
# shards' decisions (and their tokenise and ngram_runs) untouched.
rule exact_dedup:
    input:
        hashes=lambda wildcards: expand(
            FILES.exact_hashes, shard=shards_through(wildcards.shard)
        ),
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
        mem_mb=2000,
    params:
        shards=lambda wildcards: shards_through(wildcards.shard),
    script:
        "../scripts/exact_dedup.py"
