rule export:
    input:
        unpack(export_inputs),
    output:
        jsonl=FILES.corpus_jsonl,
        prevert=FILES.corpus_prevert,
        vert=FILES.corpus_vert,
    log:
        "logs/export/{shard}.log",
    benchmark:
        "benchmarks/export/{shard}.tsv"
    conda:
        "../envs/export.yaml"
    threads: 1
    resources:
        mem_mb=lambda wildcards, input: 1000 + 3 * input.size_mb,
    script:
        "../scripts/export.py"


rule funnel:
    input:
        docs=expand(FILES.docs, shard=SHARDS),
        blocks=expand(FILES.blocks, shard=SHARDS),
        language=expand(FILES.language, shard=SHARDS),
        exact=expand(FILES.exact, shard=SHARDS),
        quality=expand(FILES.quality, shard=SHARDS),
    output:
        funnel="results/stats/funnel.tsv",
        skipped="results/stats/skipped.tsv",
    log:
        "logs/funnel.log",
    conda:
        "../envs/export.yaml"
    threads: 1
    resources:
        mem_mb=2000,
    script:
        "../scripts/funnel.py"


# What decided the corpus: versions, the model's hash, the effective config. Cheap, so part of the
# default build. It waits for the corpus, so that it describes a finished one, and is written
# again whenever the corpus is. In the env that holds every library it records; a record of a few
# kilobytes is no work for a cluster job: it runs where Snakemake runs.
localrules:
    provenance,


rule provenance:
    input:
        model=EXTRACT_MODEL,
        files=stage_file_inputs(),
        corpus=corpus_files(),
        funnel="results/stats/funnel.tsv",
    output:
        record="results/stats/provenance.json",
    log:
        "logs/provenance.log",
    conda:
        "../envs/dedup.yaml"
    threads: 1
    resources:
        mem_mb=500,
    params:
        config=config,
        files=stage_files(),
    script:
        "../scripts/provenance.py"
