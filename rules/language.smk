rule language:
    input:
        docs=FILES.docs,
        blocks=FILES.blocks,
    output:
        table=FILES.language,
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
