"""Rule `train`: gold sets → the `best` preset's block classifier (results/model/best.npz) and,
with `train.cross_validate`, its held-out-dataset scores (results/stats/train_cv.tsv)."""

from corpusbuilder.evaluation.gold import iter_dataset
from corpusbuilder.evaluation.scores import BOILERPLATE_COLUMNS, boilerplate_rows, write_tsv
from corpusbuilder.logs import setup_logging
from corpusbuilder.evaluation.training import TrainParams, cross_validate, fit, training_pages, training_table

setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
params = TrainParams.from_config(cfg)
pages = [page for dataset in cfg["datasets"]
         for page in training_pages(iter_dataset(dataset, snakemake.params.gold_dir, cfg["max_pages"]))]
fit(training_table(pages), params).save(snakemake.output.model)
held_out = cross_validate(pages, params) if cfg["cross_validate"] else {}
rows = boilerplate_rows({dataset: {"best (held out)": tally} for dataset, tally in held_out.items()})
write_tsv(rows, BOILERPLATE_COLUMNS, snakemake.output.cv)
