rule extract:
    input:
        warc="data/warc/{shard}.warc.gz",
    output:
        docs="work/extract/{shard}.docs.parquet",
        blocks="work/extract/{shard}.blocks.parquet",
    params:
        cfg=config["extract"],
    log:
        "logs/extract/{shard}.log",
    benchmark:
        "benchmarks/extract/{shard}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
    conda:
        "../envs/extract.yaml"
    script:
        "../scripts/extract.py"
