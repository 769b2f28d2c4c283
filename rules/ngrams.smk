# Per shard: that shard's sorted run of n-grams with counts. Adding a shard sorts only its run;
# the merge below re-reads every run.
rule ngram_runs:
    input:
        tokens=FILES.tokens,
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


# With dedup.against, the earlier corpus's state is one more run (each of its n-grams once).
rule dup_ngrams:
    input:
        runs=expand(FILES.ngram_runs, shard=SHARDS),
        against=AGAINST,
    output:
        dup=FILES.duplicate_ngrams.format(n=NGRAM_CFG["n"]),
        stats=FILES.duplicate_ngrams_stats.format(n=NGRAM_CFG["n"]),
    log:
        "logs/dup_ngrams.log",
    benchmark:
        "benchmarks/dup_ngrams.tsv"
    conda:
        "../envs/dedup.yaml"
    threads: 1
    resources:
        mem_mb=int(config["ngrams"]["mem_mb"] * 1.2),
    params:
        cfg=NGRAM_CFG,
    script:
        "../scripts/dup_ngrams.py"
