"""Rule `sweep`: jusText precision/recall over one threshold at a time → sweep.tsv and sweep.png;
pages read with the extract stage's settings (`reading`)."""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.evaluation.gold import iter_dataset
from corpusbuilder.evaluation.scores import (
    SWEEP_COLUMNS,
    EvaluateConfig,
    plot_sweep,
    sweep,
    write_tsv,
)
from corpusbuilder.extraction.extract import ExtractParams

log = setup_logging(snakemake.log[0])
config = EvaluateConfig.from_config(snakemake.params.cfg)
pages = list(iter_dataset(config.sweep_dataset, config.gold_dir, config.max_pages))
log.info("sweep on %s: %d pages", config.sweep_dataset, len(pages))
rows = sweep(pages, params=ExtractParams(**snakemake.params.reading))
write_tsv(rows, SWEEP_COLUMNS, snakemake.output.tsv)
plot_sweep(rows, snakemake.output.png)
