"""Rule `evaluate_boilerplate`: extractors × gold sets → boilerplate.tsv and fragmentation.tsv."""

from corpusbuilder.evaluation.scores import (
    BOILERPLATE_COLUMNS,
    FRAGMENTATION_COLUMNS,
    EvaluateConfig,
    boilerplate_rows,
    evaluate,
    fragmentation_rows,
    with_overall,
    write_tsv,
)
from corpusbuilder.logs import setup_logging

setup_logging(snakemake.log[0])
results = with_overall(evaluate(EvaluateConfig.from_config(snakemake.params.cfg)))
write_tsv(boilerplate_rows(results), BOILERPLATE_COLUMNS, snakemake.output.boilerplate)
write_tsv(fragmentation_rows(results), FRAGMENTATION_COLUMNS, snakemake.output.fragmentation)
