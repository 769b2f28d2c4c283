rule extract:
    input:
        unpack(extract_inputs),
    output:
        docs=FILES.docs,
        blocks=FILES.blocks,
    log:
        "logs/extract/{shard}.log",
    benchmark:
        "benchmarks/extract/{shard}.tsv"
    conda:
        "../envs/extract.yaml"
    threads: 1
    resources:
        mem_mb=2000,
    params:
        **INSTALLED_MODEL_DIGEST,
        warcs=lambda wildcards: list(SOURCES[WARC_SHARDS[wildcards.shard][0]]),
        # the part of a split WARC (input.shard_mb), or None: the whole group
        part=lambda wildcards: (
            WARC_SHARDS[wildcards.shard][1]
            if WARC_SHARDS[wildcards.shard][2] > 1
            else None
        ),
        cfg=EXTRACT_CFG,
    script:
        "../scripts/extract.py"


# A WARC read as several shards: one reading of it whole (no HTML work) finds where each part's
# reading begins and with which record index (corpusbuilder.extraction.warc_parts).
rule warc_parts:
    input:
        warcs=FILES.warcs,
    output:
        starts=FILES.warc_parts,
    log:
        "logs/warc_parts/{shard}.log",
    benchmark:
        "benchmarks/warc_parts/{shard}.tsv"
    conda:
        "../envs/extract.yaml"
    threads: 1
    resources:
        mem_mb=500,
    params:
        warc=lambda wildcards: next(iter(SOURCES[wildcards.shard])),
        parts=lambda wildcards: SPLIT[wildcards.shard],
        cfg={key: config["extract"][key] for key in RECORD_LIMITS},
    script:
        "../scripts/warc_parts.py"
