rule tokenise:
    input:
        docs="work/extract/{shard}.docs.parquet",
        blocks="work/extract/{shard}.blocks.parquet",
        language="work/language/{shard}.parquet",
        exact="work/exact_dedup/{shard}.parquet",
    output:
        tokens="work/tokens/{shard}.npz",
    log:
        "logs/tokenise/{shard}.log",
    benchmark:
        "benchmarks/tokenise/{shard}.tsv"
    conda:
        "../envs/dedup.yaml"
    threads: 1
    resources:
        mem_mb=lambda wildcards, input: 1000 + 4 * input.size_mb,
    params:
        cfg=config["tokenise"],
    script:
        "../scripts/tokenise.py"
