"""Rule `evaluate_boilerplate`: extractors × gold sets → boilerplate.tsv, boilerplate_languages.tsv
and fragmentation.tsv; `best` on each set is the model trained without that set's source, and
`best-adapted` that model self-trained on the set's pages. Pages are read (decoded, language
guessed, stop list picked) with the extract stage's settings (`reading`)."""

from pathlib import Path

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.evaluation.scores import (
    BOILERPLATE_COLUMNS,
    FRAGMENTATION_COLUMNS,
    LANGUAGE_COLUMNS,
    EvaluateConfig,
    boilerplate_rows,
    evaluate,
    fragmentation_rows,
    language_rows,
    with_overall,
    write_tsv,
)
from corpusbuilder.extraction.extract import ExtractParams
from corpusbuilder.extraction.model import BlockModel

setup_logging(snakemake.log[0])
held_out = {
    name: {Path(path).stem: BlockModel.load(path) for path in paths}
    for name, paths in (
        ("best", snakemake.input.held_out),
        ("best-adapted", snakemake.input.adapted),
    )
}
comments = snakemake.params.comments
evaluation = evaluate(
    EvaluateConfig.from_config(snakemake.params.cfg),
    held_out,
    comments,
    ExtractParams(**snakemake.params.reading, comments=comments),
)
results = with_overall(evaluation.results)
write_tsv(boilerplate_rows(results), BOILERPLATE_COLUMNS, snakemake.output.boilerplate)
write_tsv(language_rows(evaluation.by_language), LANGUAGE_COLUMNS, snakemake.output.languages)
write_tsv(fragmentation_rows(results), FRAGMENTATION_COLUMNS, snakemake.output.fragmentation)
