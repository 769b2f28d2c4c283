rule extract:
    input:
        warcs=FILES.warcs,
        model=EXTRACT_MODEL,
    output:
        docs=FILES.docs,
        blocks=FILES.blocks,
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
        **INSTALLED_MODEL_DIGEST,
        warcs=lambda wildcards: list(SOURCES[wildcards.shard]),
        cfg=EXTRACT_CFG,
    script:
        "../scripts/extract.py"
