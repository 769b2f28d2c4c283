# Near-duplicate pairs over the whole exported corpus (min-hash; corpusbuilder.similarity.minhash):
# each shard's signatures in a job of its own (the work linear in the words, k hashes per
# shingle), then one job pairs them (it holds k x 8 B per document: 0.8 GB per million).
rule similarity_signatures:
    input:
        corpus=FILES.corpus_jsonl,
    output:
        signatures=temp(FILES.signatures),
    log:
        "logs/similarity_signatures/{shard}.log",
    benchmark:
        "benchmarks/similarity_signatures/{shard}.tsv"
    conda:
        "../envs/dedup.yaml"
    threads: 1
    resources:
        mem_mb=lambda wildcards, input: 1000 + 3 * input.size_mb,
    params:
        cfg=config["similarity"],
    script:
        "../scripts/similarity_signatures.py"


rule similarity:
    input:
        signatures=expand(FILES.signatures, shard=SHARDS),
    output:
        pairs="results/stats/similar_pairs.parquet",
    log:
        "logs/similarity/similarity.log",
    benchmark:
        "benchmarks/similarity.tsv"
    conda:
        "../envs/dedup.yaml"
    threads: 1
    resources:
        mem_mb=lambda wildcards, input: 1000 + 4 * input.size_mb,
    params:
        cfg=config["similarity"],
    script:
        "../scripts/similarity.py"
