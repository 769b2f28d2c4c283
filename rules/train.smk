# The `best` preset's learned block classifier, rebuilt from the gold sets (seeded, so the same
# gold data gives the same model) for the scope of extract.comments: labelled as that scope reads
# them (evaluation.training.weighted_table; L3S-GN1's gold is the scope's), reading the peers of
# extract.peers. Copy results/model/best.npz to corpusbuilder/models/ to ship it under the name
# ExtractParams.model_file gives the config (best-article.npz for comments: false,
# best-peers-{peers}[-article].npz with peers), or point extract.model at it. The evaluation
# scores `best` on each gold set with a model trained without that set's source
# (results/model/held_out/{source}.npz): leave-one-source-out.


# Each gold set is segmented and labelled once, whichever models are trained from it; `pages`
# keeps every block unlabelled, for the held-out model to adapt to (rules/adapt.smk). With
# extract.peers the blocks also carry the peers' coverage, so every model below reads them.
rule training_blocks:
    input:
        gold=lambda wildcards: gold_sets([wildcards.dataset])(wildcards),
    output:
        blocks=FILES.train_blocks,
        pages=FILES.train_pages,
    log:
        "logs/train/blocks/{dataset}.log",
    benchmark:
        "benchmarks/train/blocks/{dataset}.tsv"
    conda:
        "../envs/train.yaml"
    threads: 1
    resources:
        mem_mb=2000,
    params:
        cfg=config["train"],
        gold_dir=config["evaluate"]["gold_dir"],
        comments=config["extract"]["comments"],
        peers=config["extract"]["peers"],
        reading=READING_CFG,
    script:
        "../scripts/training_blocks.py"


# With train.distil, the stacked model also labels pages drawn from the crawl (rule distil_sample)
# and the model is fitted on those labels too (evaluation.distil); held-out models are not.
rule train:
    input:
        blocks=training_blocks(),
        teacher=DISTIL_TEACHER,
        target=DISTIL_SAMPLES,
    output:
        model=TRAINED_MODEL,
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
        comments=config["extract"]["comments"],
    script:
        "../scripts/train.py"


use rule train as train_held_out with:
    input:
        blocks=training_blocks_without,
        teacher=[],
        target=[],
    output:
        model=FILES.held_out_model,
    log:
        "logs/train/held_out/{source}.log",
    benchmark:
        "benchmarks/train/held_out/{source}.tsv"
