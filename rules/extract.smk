rule extract:
    input:
        warc="data/warc/{shard}.warc.gz",
        model=EXTRACT_MODEL,
    output:
        docs="work/extract/{shard}.docs.parquet",
        blocks="work/extract/{shard}.blocks.parquet",
    log:
        "logs/extract/{shard}.log",
    benchmark:
        "benchmarks/extract/{shard}.tsv"
    conda:
        "../envs/extract.yaml"
    threads: 1
    resources:
        mem_mb=2000,
    params:
        cfg=config["extract"],
    script:
        "../scripts/extract.py"
