# Downloads run where Snakemake runs: cluster compute nodes often have no way out to the web.
localrules:
    download,


# One job per shard, fetching its WARCs one after the other (input.warcs_per_shard of them).
rule download:
    output:
        warcs=directory(FILES.warcs),
    log:
        "logs/download/{shard}.log",
    conda:
        "../envs/download.yaml"
    threads: 1
    resources:
        mem_mb=200,
    params:
        sources=lambda wildcards: SOURCES[wildcards.shard],
        staging=FILES.warcs_staging,
        retries=config["download"]["retries"],
        backoff=config["download"]["backoff"],
        timeout=config["download"]["timeout"],
        copy_local=config["download"]["copy_local"],
        s3=config["download"]["s3"],
    script:
        "../scripts/download.py"
