# Self-training `best` on the crawl's own pages (config section adapt; corpusbuilder.extraction.adapt):
# pages drawn from every shard, labelled by the model, its confident blocks added to the gold
# blocks, refitted. With adapt.enabled the extract stage runs with results/model/adapted.npz.
# adapt_held_out does the same for the evaluation: the model held out from a gold source adapts
# to that source's pages (never their gold labels) and is scored as `best-adapted`.

# A shard's sampled pages. adapt expands the pattern itself: rules.adapt_sample.output carries
# the default storage provider's flag (--default-storage-provider), which expand() refuses.
ADAPT_SAMPLE = FILES.adapt_sample


rule adapt_sample:
    input:
        warcs=FILES.warcs,
    output:
        blocks=temp(ADAPT_SAMPLE),
    log:
        "logs/adapt/sample/{shard}.log",
    conda:
        "../envs/extract.yaml"
    threads: 1
    resources:
        mem_mb=2000,
    params:
        warcs=lambda wildcards: list(SOURCES[wildcards.shard]),
        cfg=config["extract"],
        pages=math.ceil(config["adapt"]["pages"] / max(1, len(SOURCES))),
        seed=lambda wildcards: [config["train"]["seed"], SHARD_RANK[wildcards.shard]],
    script:
        "../scripts/adapt_sample.py"


# train.distil: pages drawn from every shard as adapt_sample draws them, read with every peer for
# the stacked model to label (rule train).
use rule adapt_sample as distil_sample with:
    output:
        blocks=temp(FILES.distil_sample),
    log:
        "logs/distil/sample/{shard}.log",
    params:
        warcs=lambda wildcards: list(SOURCES[wildcards.shard]),
        cfg={**config["extract"], "peers": "all"},
        pages=math.ceil(config["train"]["distil"]["pages"] / max(1, len(SOURCES))),
        seed=lambda wildcards: [config["train"]["seed"], SHARD_RANK[wildcards.shard]],


rule adapt:
    input:
        blocks=training_blocks(),
        target=expand(ADAPT_SAMPLE, shard=list(SOURCES)),
        model=BASE_MODEL,
    output:
        model=ADAPTED_MODEL,
    log:
        "logs/adapt/adapt.log",
    benchmark:
        "benchmarks/adapt/adapt.tsv"
    conda:
        "../envs/train.yaml"
    threads: 2
    resources:
        mem_mb=4000,
    params:
        train=config["train"],
        adapt=config["adapt"],
        comments=config["extract"]["comments"],
    script:
        "../scripts/adapt.py"


use rule adapt as adapt_held_out with:
    input:
        blocks=training_blocks_without,
        target=source_pages,
        model=FILES.held_out_model,
    output:
        model=FILES.adapted_held_out_model,
    log:
        "logs/adapt/held_out/{source}.log",
    benchmark:
        "benchmarks/adapt/held_out/{source}.tsv"
