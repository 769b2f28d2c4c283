rule export:
    input:
        unpack(export_inputs),
    output:
        jsonl="results/corpus/{shard}.jsonl.gz",
        prevert="results/corpus/{shard}.prevert.gz",
    log:
        "logs/export/{shard}.log",
    benchmark:
        "benchmarks/export/{shard}.tsv"
    conda:
        "../envs/export.yaml"
    threads: 1
    resources:
        mem_mb=lambda wildcards, input: 1000 + 3 * input.size_mb,
    script:
        "../scripts/export.py"


rule funnel:
    input:
        docs=expand("work/extract/{shard}.docs.parquet", shard=SHARDS),
        blocks=expand("work/extract/{shard}.blocks.parquet", shard=SHARDS),
        language=expand("work/language/{shard}.parquet", shard=SHARDS),
        exact=expand("work/exact_dedup/{shard}.parquet", shard=SHARDS),
    output:
        funnel="results/stats/funnel.tsv",
        skipped="results/stats/skipped.tsv",
    log:
        "logs/funnel.log",
    conda:
        "../envs/export.yaml"
    threads: 1
    resources:
        mem_mb=2000,
    script:
        "../scripts/funnel.py"
