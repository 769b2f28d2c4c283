# One job for the whole corpus (thesis Algorithm 3.1): one G_out and one global document order;
# its memory (corpusbuilder.dedup.memory: G2+ at the backend's bytes per n-gram, the shards' tokens)
# is computed from its inputs and checked before the pass;
# who sent which n-gram to output is logged to a temporary directory in work/dedup meanwhile.
# It writes the corpus's state (its output n-grams) for a later crawl's dedup.against
# (dedup.write_state).
rule dedup:
    input:
        tokens=expand(FILES.tokens, shard=SHARDS),
        blocks=expand(FILES.blocks, shard=SHARDS),
        duplicates=DUPLICATE_NGRAMS,
        duplicates_stats=rules.dup_ngrams.output.stats,
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
        mem_mb=dedup_mem_mb,
    params:
        shards=SHARDS,
        cfg=config["dedup"],
        extract=config["extract"],
    script:
        "../scripts/dedup.py"
