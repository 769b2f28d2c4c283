# After block de-duplication, one job a shard: each surviving document's quality signals and the
# Gopher, C4 and FineWeb rules it fails (corpusbuilder.quality); the sets in quality.filter drop.
rule quality:
    input:
        unpack(survivor_inputs),
    output:
        table=FILES.quality,
    log:
        "logs/quality/{shard}.log",
    benchmark:
        "benchmarks/quality/{shard}.tsv"
    conda:
        "../envs/export.yaml"
    threads: 1
    resources:
        mem_mb=lambda wildcards, input: 1000 + 3 * input.size_mb,
    params:
        cfg=config["quality"],
    script:
        "../scripts/quality.py"
