# One job for the whole corpus (thesis Algorithm 3.1): one G_out and one global document order;
# it holds one shard's tokens at a time (bucketed dup-share order) and 8⅛ B per duplicate n-gram;
# who sent which n-gram to output is logged to a temporary directory in work/dedup meanwhile.
# It writes the corpus's state (its output n-grams) for a later crawl's dedup.against
# (dedup.write_state).
rule dedup:
    input:
        tokens=expand(FILES.tokens, shard=SHARDS),
        blocks=expand(FILES.blocks, shard=SHARDS),
        duplicates=rules.dup_ngrams.output.dup,
        against=AGAINST,
    output:
        dedup=directory(FILES.dedup_tables),
        stats=FILES.dedup_stats,
        state=DEDUP_STATE,
    log:
        "logs/dedup.log",
    benchmark:
        "benchmarks/dedup.tsv"
    conda:
        "../envs/dedup.yaml"
    threads: 1
    resources:
        mem_mb=4000,
    params:
        shards=SHARDS,
        cfg=config["dedup"],
        extract=config["extract"],
    script:
        "../scripts/dedup.py"
