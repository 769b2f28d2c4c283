# Per shard: that shard's sorted run of n-grams with counts (for a WARC read as several shards,
# one run of them all). Adding a shard sorts only its run; the merge below re-reads every run.
rule ngram_runs:
    input:
        tokens=lambda wildcards: expand(FILES.tokens, shard=RUN_SHARDS[wildcards.shard]),
    output:
        run=FILES.ngram_runs,
    log:
        "logs/ngram_runs/{shard}.log",
    benchmark:
        "benchmarks/ngram_runs/{shard}.tsv"
    conda:
        "../envs/dedup.yaml"
    threads: 1
    resources:
        mem_mb=int(config["ngrams"]["mem_mb"] * 1.2),
    params:
        cfg=NGRAM_CFG,
    script:
        "../scripts/ngram_runs.py"


# One job per hash range (ngrams.partitions): that range of every run (runs are sorted by hash,
# so a contiguous slice of each), merged into that part of G2+. With dedup.against, the earlier
# corpus's state is one more run (each of its n-grams once). The runs are collected in one
# folder (rules/collect.smk): R runs and P parts are R + P edges.
collection(
    "ngram_collect_runs",
    FILES.ngram_collected_runs,
    runs=expand(FILES.ngram_runs, shard=list(RUN_SHARDS)),
)


rule dup_ngram_part:
    input:
        runs=collected("ngram_collect_runs", "runs"),
        against=AGAINST,
    output:
        dup=FILES.duplicate_ngrams.replace("{n}", str(NGRAM_CFG["n"])),
        stats=FILES.duplicate_ngrams_part_stats.replace("{n}", str(NGRAM_CFG["n"])),
    log:
        "logs/dup_ngram_part/{partition}.log",
    benchmark:
        "benchmarks/dup_ngram_part/{partition}.tsv"
    conda:
        "../envs/dedup.yaml"
    threads: 1
    resources:
        mem_mb=int(config["ngrams"]["mem_mb"] * 1.2),
    params:
        cfg=NGRAM_CFG,
        partitions=NGRAM_PARTITIONS,
    script:
        "../scripts/dup_ngram_part.py"
