rule export:
    input:
        unpack(export_inputs),
    output:
        jsonl=FILES.corpus_jsonl,
        prevert=FILES.corpus_prevert,
        vert=FILES.corpus_vert,
        # its part of the funnel (corpusbuilder.funnel.count_shard): it holds the shard's tables
        # already, and a job of its own cost a start-up (0.6 CPU s) for 0.1 s of counting
        counts=FILES.funnel_counts,
    log:
        "logs/export/{shard}.log",
    benchmark:
        "benchmarks/export/{shard}.tsv"
    conda:
        "../envs/export.yaml"
    threads: 1
    resources:
        # the funnel's count holds 20 times the tables' size (dev crawl), after export's 3 times
        # its inputs
        mem_mb=lambda wildcards, input: 1000
        + max(3 * input.size_mb, 25 * (input.size_mb - files_mb([input.tokens]))),
    script:
        "../scripts/export.py"


# The finished corpus's account, one job: the funnel (the shards' counts added up: documents and
# words after each stage, and why each lost document was lost) and what decided the corpus
# (versions, the model's hash, the effective config, every stage file's writer, from each file's
# footer). It waits for the corpus, so that it describes a finished one, and is written again
# whenever the corpus is. In the env that holds every library the record names.
rule funnel:
    input:
        counts=expand(FILES.funnel_counts, shard=SHARDS),
        dedup=DEDUP_TABLES,
        model=EXTRACT_MODEL,
        files=stage_file_inputs(),
        corpus=corpus_files(),
    output:
        funnel=FILES.funnel,
        skipped=FILES.skipped,
        record=FILES.provenance,
    log:
        "logs/funnel.log",
    conda:
        "../envs/dedup.yaml"
    threads: 1
    resources:
        mem_mb=2000,
    params:
        # the model extract read, when it is no input (INSTALLED_MODEL)
        **({"installed_model": BASE_MODEL} if INSTALLED_MODEL else {}),
        shards=SHARDS,
        config=config,
        files=stage_files(),
        file_inputs=stage_file_inputs(),
    script:
        "../scripts/funnel.py"
