# Input kind `text`: each directory in config input.text_dirs is one shard of plain-text files;
# frequent-lines boilerplate removal (Kaser & Lemire) stands in for extract and writes the same
# docs/blocks tables, so language → exact dedup → n-grams → dedup → export run unchanged.
import re


rule text_input:
    input:
        lambda wildcards: sorted(Path(TEXT_SOURCES[wildcards.shard]).glob("*.txt")),
    output:
        docs=FILES.docs,
        blocks=FILES.blocks,
    log:
        "logs/text_input/{shard}.log",
    wildcard_constraints:
        shard="|".join(map(re.escape, TEXT_SOURCES)) or "(?!)",
    conda:
        "../envs/extract.yaml"
    threads: 1
    resources:
        mem_mb=2000,
    params:
        in_dir=lambda wildcards: TEXT_SOURCES[wildcards.shard],
        cfg=config["frequent_lines"],
        stoplist_fallback=config["extract"]["stoplist_fallback"],
    script:
        "../scripts/text_input.py"


ruleorder: text_input > extract
