rule tokenise:
    input:
        docs=FILES.docs,
        blocks=FILES.blocks,
        language=FILES.language,
        exact=FILES.exact,
    output:
        tokens=FILES.tokens,
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
