# Input kind `text`: each directory in config input.text_dirs is one shard of plain-text files
# (named after the directory); frequent-lines boilerplate removal (Kaser & Lemire) stands in for
# extract and writes the same docs/blocks tables, so language → exact dedup → n-grams → dedup
# → export run unchanged.
import re

TEXT_SOURCES = {
    re.sub(r"[^A-Za-z0-9._-]", "_", Path(d).name): d
    for d in config["input"].get("text_dirs", [])
}


rule text_input:
    input:
        lambda wildcards: sorted(Path(TEXT_SOURCES[wildcards.shard]).glob("*.txt")),
    output:
        docs="work/extract/{shard}.docs.parquet",
        blocks="work/extract/{shard}.blocks.parquet",
    wildcard_constraints:
        shard="|".join(map(re.escape, TEXT_SOURCES)) or "(?!)",
    log:
        "logs/text_input/{shard}.log",
    threads: 1
    resources:
        mem_mb=2000,
    params:
        in_dir=lambda wildcards: TEXT_SOURCES[wildcards.shard],
        cfg=config.get("frequent_lines", {}),
    script:
        "../scripts/frequent_lines.py"


ruleorder: text_input > extract
