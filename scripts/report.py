"""Rule `report`: results/report.html, one self-contained page (corpusbuilder.evaluation.html_report).

Inputs: funnel_full, duplicates, stage_times, summary, skipped; per-shard lists in shard order
`docs`, `blocks`, `language`, `exact` and (when block de-duplication ran) `dedup`; and, when the gold
sets exist, boilerplate, fragmentation, sweep, site_boilerplate. Params: `shards`, `sample_size`, `evaluation` (the
evaluation files by name: read if present even when not an input, so an earlier `evaluate` shows).
"""

from pathlib import Path

from corpusbuilder.evaluation.html_report import ReportFiles, ShardTables, write_report
from corpusbuilder.logs import setup_logging

setup_logging(snakemake.log[0])
inputs = dict(snakemake.input.items())
evaluation = {**dict(snakemake.params.evaluation), **{k: inputs[k] for k in snakemake.params.evaluation if k in inputs}}
dedup = list(inputs.get("dedup") or []) or [None] * len(snakemake.params.shards)
shards = [
    ShardTables(name, Path(docs), Path(blocks), Path(language), Path(exact), Path(verdicts) if verdicts else None)
    for name, docs, blocks, language, exact, verdicts in zip(
        snakemake.params.shards, inputs["docs"], inputs["blocks"], inputs["language"], inputs["exact"], dedup,
        strict=True,
    )
]
files = ReportFiles(
    funnel_full=Path(inputs["funnel_full"]),
    duplicates=Path(inputs["duplicates"]),
    stage_times=Path(inputs["stage_times"]),
    summary=Path(inputs["summary"]),
    skipped=Path(inputs["skipped"]),
    boilerplate=Path(evaluation["boilerplate"]),
    fragmentation=Path(evaluation["fragmentation"]),
    sweep_png=Path(evaluation["sweep"]),
    site_boilerplate=Path(evaluation["site_boilerplate"]),
    shards=shards,
)
write_report(files, snakemake.output.html, sample_size=snakemake.params.sample_size)
