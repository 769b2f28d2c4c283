rule download:
    output:
        warc="data/warc/{shard}.warc.gz",
        meta="data/warc/{shard}.json",
    params:
        source=lambda wildcards: SOURCES[wildcards.shard],
        retries=config["download"]["retries"],
        backoff=config["download"]["backoff"],
        timeout=config["download"]["timeout"],
        copy_local=config["download"]["copy_local"],
    log:
        "logs/download/{shard}.log",
    threads: 1
    resources:
        mem_mb=200,
    conda:
        "../envs/download.yaml"
    script:
        "../scripts/download.py"
