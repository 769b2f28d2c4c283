rule language:
    input:
        docs="work/extract/{shard}.docs.parquet",
        blocks="work/extract/{shard}.blocks.parquet",
    output:
        table="work/language/{shard}.parquet",
    log:
        "logs/language/{shard}.log",
    benchmark:
        "benchmarks/language/{shard}.tsv"
    conda:
        "../envs/language.yaml"
    threads: 1
    resources:
        mem_mb=lambda wildcards, input: 1000 + 2 * input.size_mb,
    params:
        cfg=config["language"],
    script:
        "../scripts/language.py"
