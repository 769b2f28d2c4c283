"""Rules `adapt` and `adapt_held_out`: gold blocks + the target pages' blocks + a model → the
model self-trained on the target pages (corpusbuilder.evaluation.training.self_train)."""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.evaluation.training import (
    AdaptParams,
    TrainParams,
    UnlabelledBlocks,
    read_training_table,
    self_train,
)
from corpusbuilder.extraction.model import BlockModel

setup_logging(snakemake.log[0])
target = UnlabelledBlocks.joined([UnlabelledBlocks.load(path) for path in snakemake.input.target])
self_train(
    read_training_table(snakemake.input.blocks, snakemake.params.comments),
    target,
    BlockModel.load(snakemake.input.model),
    TrainParams.from_config(snakemake.params.train),
    AdaptParams.from_config(snakemake.params.adapt),
    target_name=snakemake.wildcards.get("source", "crawl"),
).save(snakemake.output.model)
