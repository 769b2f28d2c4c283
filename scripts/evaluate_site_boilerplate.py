"""Rule `evaluate_site_boilerplate`: jusText with and without Ikeda et al.'s site-level marks on the
gold sets, pages grouped by host → results/stats/site_boilerplate.tsv
(corpusbuilder.evaluation.site)."""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.evaluation.scores import EvaluateConfig, write_tsv
from corpusbuilder.evaluation.site import SITE_COLUMNS, evaluate_gold_sets
from corpusbuilder.extraction.extract import ExtractParams

setup_logging(snakemake.log[0])
rows = evaluate_gold_sets(
    EvaluateConfig.from_config(snakemake.params.cfg),
    ExtractParams.from_config(snakemake.params.extract),
)
write_tsv(rows, SITE_COLUMNS, snakemake.output.tsv)
