"""``results/report.html``: one self-contained page showing what the workflow did to a crawl —
its sections (`sections`, the sample of documents in `samples`) in the page shell of
`rendering`, from the measuring rules' files and the page summary (`summary`: the stage tables
summed up a shard at a time), all of them small."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from corpusbuilder.common.io import atomic_path
from corpusbuilder.contracts.reportfiles import read_page_summary
from corpusbuilder.report.joins import existing
from corpusbuilder.report.quality import quality_section
from corpusbuilder.report.rendering import page_html
from corpusbuilder.report.sections import (
    ReportFiles,
    boilerplate_section,
    cards_html,
    duplicates_section,
    funnel_section,
    languages_section,
    sample_section,
    stages_section,
)

log = logging.getLogger("corpusbuilder.report")

NAV = (
    ("funnel", "Funnel"),
    ("languages", "Languages"),
    ("duplicates", "Duplicates"),
    ("boilerplate", "Boilerplate quality"),
    ("stages", "Stages"),
    ("sample", "Sample documents"),
    ("quality", "Quality signals"),
)


def render_report(
    files: ReportFiles, sample_size: int = 10, title: str = "corpusbuilder report"
) -> str:
    """The whole page as a string: the headline cards, then one section per entry of `NAV`,
    those without data left out."""
    summary = json.loads(Path(files.summary).read_text()) if existing(files.summary) else {}
    page_summary = existing(files.page_summary)
    page = read_page_summary(page_summary) if page_summary else {}
    sections = [
        funnel_section(files),
        languages_section(page),
        duplicates_section(files, summary),
        boilerplate_section(files),
        stages_section(files),
        sample_section(page, sample_size),
        quality_section(page.get("quality")),
    ]
    return page_html(title, NAV, cards_html(summary) + "".join(sections))


def write_report(files: ReportFiles, path: Path | str, sample_size: int = 10) -> None:
    page = render_report(files, sample_size)
    with atomic_path(path) as tmp:
        tmp.write_text(page, encoding="utf-8")
    log.info("report: %s (%d bytes)", path, len(page))
