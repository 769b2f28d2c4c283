"""Rule `training_blocks`: one gold set → its blocks' features (as the `best` preset cuts them),
labels and word counts (the labelled ones), and every block of its pages unlabelled."""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.evaluation.gold import iter_dataset
from corpusbuilder.evaluation.training import (
    training_pages,
    unlabelled_blocks,
    write_training_blocks,
)

setup_logging(snakemake.log[0])
dataset = snakemake.wildcards.dataset
pages = training_pages(
    iter_dataset(
        dataset,
        snakemake.params.gold_dir,
        snakemake.params.cfg["max_pages"],
        snakemake.params.comments,
    )
)
write_training_blocks(pages, dataset, snakemake.output.blocks)
unlabelled_blocks(pages).save(snakemake.output.pages)
