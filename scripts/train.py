"""Rules `train` and `train_held_out`: gold sets' blocks → the `best` preset's block classifier,
trained on every configured gold source or on all but the one named by the `source` wildcard;
with train.distil (rule train only), on the teacher's labels of the crawl's pages too."""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.evaluation.distil import DistilParams, distil
from corpusbuilder.evaluation.training import TrainParams, fit, read_training_table
from corpusbuilder.extraction.adapt import UnlabelledBlocks
from corpusbuilder.extraction.model import BlockModel

setup_logging(snakemake.log[0])
table = read_training_table(snakemake.input.blocks, snakemake.params.comments)
params = TrainParams.from_config(snakemake.params.cfg)
if snakemake.input.teacher:
    distil(
        table,
        UnlabelledBlocks.joined([UnlabelledBlocks.load(path) for path in snakemake.input.target]),
        BlockModel.load(snakemake.input.teacher[0]),
        params,
        DistilParams.from_config(snakemake.params.cfg.get("distil", {})).weight,
    ).save(snakemake.output.model)
else:
    fit(table, params, without=snakemake.wildcards.get("source")).save(snakemake.output.model)
