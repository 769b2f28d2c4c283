"""Rule `report`: results/report.html, one self-contained page (corpusbuilder.report.html_report).

Inputs: funnel_full, duplicates, stage_times, summary, skipped; per-shard lists in shard order
`docs`, `blocks`, `language`, `exact`, `quality`, and (when block de-duplication ran) `dedup`,
the folder of its tables; and, when the gold
sets exist, boilerplate, fragmentation, sweep, site_boilerplate (without them the report has no
evaluation sections). Params: `shards`, `sample_size`.
"""

from pathlib import Path

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.dedup.verdict_files import shard_verdicts
from corpusbuilder.report.html_report import ReportFiles, write_report
from corpusbuilder.tables import ShardTables

setup_logging(snakemake.log[0])
inputs = dict(snakemake.input.items())
# block dedup's input: the sequential job's folder of every shard's tables, or a table a shard
names = snakemake.params.shards
dedup = shard_verdicts(inputs["dedup"], names) if "dedup" in inputs else [None] * len(names)
shards = [
    ShardTables(docs, blocks, language, exact, verdicts, name, quality)
    for name, docs, blocks, language, exact, verdicts, quality in zip(
        snakemake.params.shards,
        inputs["docs"],
        inputs["blocks"],
        inputs["language"],
        inputs["exact"],
        dedup,
        inputs["quality"],
        strict=True,
    )
]


def evaluation(name):
    return Path(inputs[name]) if name in inputs else None


files = ReportFiles(
    funnel_full=Path(inputs["funnel_full"]),
    duplicates=Path(inputs["duplicates"]),
    stage_times=Path(inputs["stage_times"]),
    summary=Path(inputs["summary"]),
    skipped=Path(inputs["skipped"]),
    boilerplate=evaluation("boilerplate"),
    boilerplate_languages=evaluation("boilerplate_languages"),
    fragmentation=evaluation("fragmentation"),
    sweep_png=evaluation("sweep"),
    site_boilerplate=evaluation("site_boilerplate"),
    shards=shards,
)
write_report(files, snakemake.output.html, sample_size=snakemake.params.sample_size)
