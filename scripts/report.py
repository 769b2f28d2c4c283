"""Rule `report`: results/report.html, one self-contained page (corpusbuilder.report.html_report),
from small files only.

Inputs: funnel_full, duplicates, stage_times, summary (rule corpus_stats), skipped, `page` (the
corpus's page summary: rule report_summary); and, when the gold sets exist, boilerplate,
fragmentation, sweep, site_boilerplate (without them the report has no evaluation sections).
Params: `sample_size`.
"""

from pathlib import Path

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.report.html_report import ReportFiles, write_report

setup_logging(snakemake.log[0])
inputs = dict(snakemake.input.items())


def evaluation(name):
    return Path(inputs[name]) if name in inputs else None


files = ReportFiles(
    funnel_full=Path(inputs["funnel_full"]),
    duplicates=Path(inputs["duplicates"]),
    stage_times=Path(inputs["stage_times"]),
    summary=Path(inputs["summary"]),
    page_summary=Path(inputs["page"]),
    skipped=Path(inputs["skipped"]),
    boilerplate=evaluation("boilerplate"),
    boilerplate_languages=evaluation("boilerplate_languages"),
    fragmentation=evaluation("fragmentation"),
    sweep_png=evaluation("sweep"),
    site_boilerplate=evaluation("site_boilerplate"),
)
write_report(files, snakemake.output.html, sample_size=snakemake.params.sample_size)
