# Near-duplicate pairs over the whole exported corpus (min-hash; corpusbuilder.similarity.minhash).
rule similarity:
    input:
        corpus=expand(FILES.corpus_jsonl, shard=SHARDS),
    output:
        pairs="results/stats/similar_pairs.parquet",
    log:
        "logs/similarity/similarity.log",
    conda:
        "../envs/dedup.yaml"
    threads: 1
    resources:
        mem_mb=4000,
    params:
        cfg=config["similarity"],
    script:
        "../scripts/similarity.py"
