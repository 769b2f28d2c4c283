rule exact_hashes:
    input:
        blocks="work/extract/{shard}.blocks.parquet",
        language="work/language/{shard}.parquet",
    output:
        hashes="work/exact/{shard}.hashes.parquet",
    log:
        "logs/exact_hashes/{shard}.log",
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


# One job for the whole corpus: the first copy in crawl order wins across shards; it streams
# a k-way merge of the per-shard sorted hash files, so it holds one batch per shard.
rule exact_dedup:
    input:
        hashes=expand("work/exact/{shard}.hashes.parquet", shard=SHARDS),
    output:
        decisions=expand("work/exact_dedup/{shard}.parquet", shard=SHARDS),
    log:
        "logs/exact_dedup.log",
    benchmark:
        "benchmarks/exact_dedup.tsv"
    conda:
        "../envs/dedup.yaml"
    threads: 1
    resources:
        mem_mb=2000,
    params:
        shards=SHARDS,
    script:
        "../scripts/exact_dedup.py"
