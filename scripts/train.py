"""Rules `train` and `train_held_out`: gold sets' blocks → the `best` preset's block classifier,
trained on every configured gold source or on all but the one named by the `source` wildcard."""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.evaluation.training import TrainParams, fit, read_training_table

setup_logging(snakemake.log[0])
table = read_training_table(snakemake.input.blocks, snakemake.params.comments)
fit(
    table, TrainParams.from_config(snakemake.params.cfg), without=snakemake.wildcards.get("source")
).save(snakemake.output.model)
