# Near-duplicate pairs over the whole exported corpus (min-hash; corpusbuilder.similarity), in
# jobs none of which holds every signature (docs/dedup-scale.md): each shard's signatures (the
# work linear in the words, k hashes per shingle); per band job, the candidate pairs of its bands
# from those columns of every signature; per pair partition, its candidates scored against the
# signatures of their documents; then one merge of the pairs found.
SIMILARITY_BAND_JOBS = range(
    band_job_count(
        config["similarity"]["band_jobs"],
        MinHashParams.from_config(config["similarity"]),
    )
)
SIMILARITY_PARTITIONS = range(config["similarity"]["partitions"])
SIGNATURES = expand(FILES.signatures, shard=SHARDS)
SIMILARITY_CANDIDATES = expand(
    FILES.similarity_candidates, band_job=SIMILARITY_BAND_JOBS
)


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


rule similarity_candidates:
    input:
        signatures=SIGNATURES,
    output:
        candidates=temp(FILES.similarity_candidates),
    log:
        "logs/similarity_candidates/{band_job}.log",
    benchmark:
        "benchmarks/similarity_candidates/{band_job}.tsv"
    conda:
        "../envs/dedup.yaml"
    threads: 1
    resources:
        mem_mb=similarity_mem_mb("candidates"),
    params:
        cfg=config["similarity"],
        band_jobs=len(SIMILARITY_BAND_JOBS),
        partitions=len(SIMILARITY_PARTITIONS),
    script:
        "../scripts/similarity_candidates.py"


rule similarity_score:
    input:
        candidates=SIMILARITY_CANDIDATES,
        signatures=SIGNATURES,
    output:
        pairs=temp(FILES.similarity_pairs),
    log:
        "logs/similarity_score/{partition}.log",
    benchmark:
        "benchmarks/similarity_score/{partition}.tsv"
    conda:
        "../envs/dedup.yaml"
    threads: 1
    resources:
        mem_mb=similarity_mem_mb("score"),
    params:
        cfg=config["similarity"],
    script:
        "../scripts/similarity_score.py"


rule similarity:
    input:
        pairs=expand(FILES.similarity_pairs, partition=SIMILARITY_PARTITIONS),
        signatures=SIGNATURES,
    output:
        pairs=FILES.similar_pairs,
    log:
        "logs/similarity/similarity.log",
    benchmark:
        "benchmarks/similarity.tsv"
    conda:
        "../envs/dedup.yaml"
    threads: 1
    resources:
        mem_mb=similarity_mem_mb("merge"),
    script:
        "../scripts/similarity.py"
