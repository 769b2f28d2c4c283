rule export:
    input:
        docs="work/extract/{shard}.docs.parquet",
        blocks="work/extract/{shard}.blocks.parquet",
    output:
        jsonl="results/corpus/{shard}.jsonl.gz",
        prevert="results/corpus/{shard}.prevert.gz",
    log:
        "logs/export/{shard}.log",
    conda:
        "../envs/export.yaml"
    threads: 1
    resources:
        mem_mb=2000,
    script:
        "../scripts/export.py"
