"""Rule `training_blocks`: one gold set → its blocks' features (as the `best` preset cuts them),
labels (-1 where the gold says nothing of a block), word counts and pages, and every block of its
pages unlabelled; with extract.peers, each block's coverage by the peers too. Pages are read
(decoded, language guessed, stop list picked) with the extract stage's settings (`reading`)."""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.evaluation.gold import iter_dataset
from corpusbuilder.evaluation.training import (
    training_pages,
    unlabelled_blocks,
    write_training_blocks,
)
from corpusbuilder.extraction.extract import ExtractParams

setup_logging(snakemake.log[0])
dataset = snakemake.wildcards.dataset
pages = training_pages(
    iter_dataset(
        dataset,
        snakemake.params.gold_dir,
        snakemake.params.cfg["max_pages"],
        snakemake.params.comments,
    ),
    ExtractParams(
        **snakemake.params.reading,
        comments=snakemake.params.comments,
        peers=snakemake.params.peers,
    ),
)
write_training_blocks(pages, dataset, snakemake.output.blocks)
unlabelled_blocks(pages).save(snakemake.output.pages)
