# Downloads run where Snakemake runs: cluster compute nodes often have no way out to the web.
localrules:
    download,


rule download:
    output:
        warc=FILES.warc,
        meta=FILES.warc_meta,
    log:
        "logs/download/{shard}.log",
    conda:
        "../envs/download.yaml"
    threads: 1
    resources:
        mem_mb=200,
    params:
        source=lambda wildcards: SOURCES[wildcards.shard],
        retries=config["download"]["retries"],
        backoff=config["download"]["backoff"],
        timeout=config["download"]["timeout"],
        copy_local=config["download"]["copy_local"],
        s3=config["download"]["s3"],
    script:
        "../scripts/download.py"
