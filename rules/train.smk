# The `best` preset's learned block classifier, rebuilt from the gold sets (seeded, so the same
# gold data gives the same model). Copy results/model/best.npz to corpusbuilder/models/ to ship it,
# or point extract.model at it.


rule train:
    input:
        gold=gold_sets(config["train"]["datasets"]),
    output:
        model="results/model/best.npz",
        cv="results/stats/train_cv.tsv",
    log:
        "logs/train/train.log",
    benchmark:
        "benchmarks/train/train.tsv"
    conda:
        "../envs/train.yaml"
    threads: 2
    resources:
        mem_mb=4000,
    params:
        cfg=config["train"],
        gold_dir=config["evaluate"]["gold_dir"],
    script:
        "../scripts/train.py"
