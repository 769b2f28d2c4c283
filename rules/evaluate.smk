# Boilerplate-quality evaluation on the shared gold sets (thesis §2.9); needs no corpus.


rule evaluate_boilerplate:
    input:
        gold=gold_sets(config["evaluate"]["datasets"]),
        held_out=held_out_models("best"),
        adapted=held_out_models("best-adapted"),
    output:
        boilerplate=FILES.boilerplate,
        languages=FILES.boilerplate_languages,
        fragmentation=FILES.fragmentation,
    log:
        "logs/evaluate/boilerplate.log",
    benchmark:
        "benchmarks/evaluate/boilerplate.tsv"
    conda:
        "../envs/evaluate.yaml"
    threads: 1
    resources:
        mem_mb=2000,
    params:
        cfg=config["evaluate"],
        comments=config["extract"]["comments"],
        reading=READING_CFG,
    script:
        "../scripts/evaluate_boilerplate.py"


# Site-level boilerplate (Ikeda et al.) with and without jusText, gold pages grouped by host.
rule evaluate_site_boilerplate:
    input:
        gold=gold_sets(config["evaluate"]["datasets"]),
    output:
        tsv=FILES.site_boilerplate,
    log:
        "logs/evaluate/site_boilerplate.log",
    benchmark:
        "benchmarks/evaluate/site_boilerplate.tsv"
    conda:
        "../envs/evaluate.yaml"
    threads: 1
    resources:
        mem_mb=2000,
    params:
        cfg=config["evaluate"],
        extract=config["extract"],
    script:
        "../scripts/evaluate_site_boilerplate.py"


rule sweep:
    input:
        gold=gold_sets([config["evaluate"]["sweep_dataset"]]),
    output:
        tsv=FILES.sweep,
        png=FILES.sweep_png,
    log:
        "logs/evaluate/sweep.log",
    benchmark:
        "benchmarks/evaluate/sweep.tsv"
    conda:
        "../envs/evaluate.yaml"
    threads: 1
    resources:
        mem_mb=1500,
    params:
        cfg=config["evaluate"],
        reading=READING_CFG,
    script:
        "../scripts/sweep.py"


# `snakemake evaluate`: the thesis' measurements of the extractor (gold sets) and of the corpus.
rule evaluate:
    default_target: False
    input:
        rules.evaluate_boilerplate.output,
        rules.evaluate_site_boilerplate.output,
        rules.sweep.output,
        rules.funnel.output,
        rules.report.output,
