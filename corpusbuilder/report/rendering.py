"""How ``results/report.html`` looks: the HTML and figure helpers its sections are written with,
and the page shell around them.

Everything is inline — CSS in a ``<style>`` element, charts as base64 PNGs drawn with matplotlib's
Agg backend — so the file can be mailed or opened from anywhere without its neighbours.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

STAGE_LABELS = {
    "records": "WARC records",
    "html_documents": "HTML documents (original size)",
    "good_text": "after removing boilerplate",
    "language_kept": "after language filtering",
    "exact_dedup_kept": "after removing exact duplicates",
    "block_dedup_kept": "after block-level de-duplication",
}
CORPUS_LABELS = {
    "before_block_dedup": "before block dedup",
    "after_block_dedup": "after block dedup",
    "after_resemblance_dedup": "after resemblance dedup",
}
LENGTH_BINS = (1, 50, 100, 200, 500, 1000, 2000, 5000, 10_000)  # words; the last bin ≥ 10,000


# --- formatting --------------------------------------------------------------------------------


def esc(value) -> str:
    return html.escape(str(value), quote=True)


def format_number(value, digits: int = 2) -> str:
    """Integers with thousands separators, floats with ``digits`` decimals, missing as a dash."""
    import pandas as pd

    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return "–"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        if float(value).is_integer() and digits == 0:
            return f"{int(value):,}"
        return f"{float(value):,.{digits}f}"
    return str(value)


@dataclass
class Column:
    key: str
    label: str
    kind: str = "text"  # text | int | float | pct | score | seconds
    digits: int = 2


def _cell(value, column: Column) -> str:
    import pandas as pd

    if column.kind == "text":
        missing = value is None or (isinstance(value, float) and math.isnan(value))
        return f"<td>{'' if missing else esc(value)}</td>"
    if column.kind == "int":
        text = format_number(None if pd.isna(value) else int(value))
    elif column.kind == "pct":
        text = "–" if pd.isna(value) else f"{float(value):.{column.digits}f} %"
    elif column.kind == "score":
        text = format_number(None if pd.isna(value) else float(value), 3)
    else:
        text = format_number(None if pd.isna(value) else float(value), column.digits)
    return f'<td class="num">{text}</td>'


def html_table(
    table: pd.DataFrame,
    columns: Sequence[Column],
    caption: str | None = None,
    row_classes: Sequence[str] | None = None,
    bold: set[tuple[int, str]] | None = None,
) -> str:
    """A table with numbers right-aligned in tabular figures; missing columns are left out."""
    columns = [c for c in columns if c.key in table.columns]
    head = "".join(
        f'<th class="{"num" if c.kind != "text" else ""}">{esc(c.label)}</th>' for c in columns
    )
    rows = []
    for i, (_, row) in enumerate(table.iterrows()):
        cells = []
        for c in columns:
            cell = _cell(row[c.key], c)
            if bold and (i, c.key) in bold:
                cell = cell.replace(">", "><strong>", 1).replace("</td>", "</strong></td>")
            cells.append(cell)
        cls = f' class="{row_classes[i]}"' if row_classes and row_classes[i] else ""
        rows.append(f"<tr{cls}>{''.join(cells)}</tr>")
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


# --- charts ------------------------------------------------------------------------------------


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "font.size": 9,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "font.family": "DejaVu Sans",
        }
    )
    return plt


def png_data_uri(figure) -> str:
    """A matplotlib figure as a ``data:image/png;base64,…`` URI (and the figure closed)."""
    plt = _pyplot()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def file_data_uri(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(Path(path).read_bytes()).decode("ascii")


def figure_html(uri: str, alt: str) -> str:
    return f'<figure><img src="{uri}" alt="{esc(alt)}"></figure>'


def funnel_chart(funnel: pd.DataFrame) -> str:
    """Words (left) and documents (right) after each step, as horizontal bars, % of previous."""
    import pandas as pd

    plt = _pyplot()
    labels = [STAGE_LABELS.get(s, s) for s in funnel["stage"]]
    figure, axes = plt.subplots(1, 2, figsize=(10, 0.45 * len(funnel) + 1.0), sharey=True)
    colours = ["#9aa5b1"] * 2 + ["#2f6db5"] * (len(funnel) - 2)
    for axis, key, pct, title in (
        (axes[0], "words", "pct_of_previous_words", "words"),
        (axes[1], "documents", "pct_of_previous_documents", "documents"),
    ):
        values = funnel[key].astype(float).to_numpy()
        y = np.arange(len(values))
        axis.barh(y, values, color=colours[: len(values)], height=0.65)
        top = values.max() if len(values) and values.max() > 0 else 1
        for yi, value, share in zip(y, values, funnel[pct]):
            note = f"{int(value):,}" + ("" if pd.isna(share) else f"  ({share:.1f} %)")
            axis.text(value + top * 0.01, yi, note, va="center", fontsize=8)
        axis.set_xlim(0, top * 1.45)
        axis.set_title(title, fontsize=10, loc="left")
        axis.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{int(v):,}"))
        axis.grid(axis="x", alpha=0.25)
    axes[0].set_yticks(np.arange(len(labels)), labels)
    axes[0].invert_yaxis()  # the axes share y: inverting one inverts both
    figure.tight_layout()
    return png_data_uri(figure)


def duplicates_chart(duplicates: pd.DataFrame) -> str:
    """10-gram occurrences before/after block (and resemblance) de-duplication, duplicate and
    unique."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(7, 2.2))
    labels = [CORPUS_LABELS.get(str(c), str(c)) for c in duplicates["corpus"]]
    dup = duplicates["duplicate_instances"].astype(float).to_numpy()
    unique = duplicates["ngram_instances"].astype(float).to_numpy() - dup
    y = np.arange(len(labels))
    axis.barh(y, unique, color="#2f6db5", height=0.6, label="10-grams occurring once")
    axis.barh(y, dup, left=unique, color="#e8912d", height=0.6, label="10-grams occurring 2+ times")
    for yi, u, d in zip(y, unique, dup):
        axis.text(
            u + d + max(unique + dup) * 0.01, yi, f"{int(d):,} duplicate", va="center", fontsize=8
        )
    axis.set_yticks(y, labels)
    axis.invert_yaxis()
    axis.set_xlim(0, max(unique + dup) * 1.3 if len(dup) else 1)
    axis.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{int(v):,}"))
    axis.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=2, frameon=False)
    axis.set_xlabel("10-gram occurrences (all tokens)")
    figure.tight_layout()
    return png_data_uri(figure)


def stage_chart(stages: pd.DataFrame) -> str:
    import pandas as pd

    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(7, 0.35 * len(stages) + 0.9))
    y = np.arange(len(stages))
    seconds = stages["seconds"].astype(float).to_numpy()
    axis.barh(y, seconds, color="#5b8c5a", height=0.6)
    for yi, s, rss in zip(y, seconds, stages["max_rss_mb"]):
        note = f"{s:,.1f} s" + ("" if pd.isna(rss) else f", peak {rss:,.0f} MB")
        axis.text(s + max(seconds) * 0.01, yi, note, va="center", fontsize=8)
    axis.set_yticks(y, stages["rule"])
    axis.invert_yaxis()
    axis.set_xlim(0, max(seconds) * 1.45 if len(seconds) and max(seconds) > 0 else 1)
    axis.set_xlabel("wall seconds, summed over the rule's jobs")
    figure.tight_layout()
    return png_data_uri(figure)


def length_chart(counts: Sequence[int]) -> str:
    """Documents per bin of words (`LENGTH_BINS`), as a bar chart."""
    plt = _pyplot()
    labels = [f"{lo:,}–{hi - 1:,}" for lo, hi in zip(LENGTH_BINS, LENGTH_BINS[1:])] + [
        f"≥ {LENGTH_BINS[-1]:,}"
    ]
    figure, axis = plt.subplots(figsize=(7, 2.6))
    axis.bar(np.arange(len(counts)), counts, color="#5b8c5a")
    axis.set_xticks(np.arange(len(counts)), labels, rotation=30, fontsize=8)
    axis.set_xlabel("words per document in the corpus")
    axis.set_ylabel("documents")
    figure.tight_layout()
    return png_data_uri(figure)


# --- the page ----------------------------------------------------------------------------------

# a line ending in a backslash goes on in the next: the page keeps its lines, the source its width
CSS = """
:root { --ink:#1f2933; --muted:#616e7c; --line:#d9e2ec; --bg:#f7f9fb; --accent:#2f6db5;
        --bad:#eceff3; --bad-ink:#7b8794; --dup:#fde2c4; --dup-line:#e8912d; --ctx:#fff3b0;
        --ctx-line:#d6b300; --lang:#e9dcf7; --lang-line:#8e5cc4; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
       font: 15px/1.55 -apple-system, "Segoe UI", "Helvetica Neue", "DejaVu Sans", Arial, \
sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 28px 32px 60px; background: #fff;
       box-shadow: 0 0 0 1px var(--line); min-height: 100vh; }
h1 { font-size: 26px; margin: 0 0 4px; letter-spacing: -0.01em; }
h2 { font-size: 19px; margin: 38px 0 10px; padding-bottom: 6px; border-bottom: 2px solid \
var(--line); }
h3 { font-size: 15px; margin: 22px 0 8px; color: var(--muted); text-transform: uppercase; \
letter-spacing: 0.04em; }
p.lead, p.note { color: var(--muted); margin: 4px 0 12px; max-width: 80ch; }
p.note.warn { color: #9a4d00; }
nav { margin: 10px 0 4px; font-size: 14px; }
nav a { color: var(--accent); text-decoration: none; margin-right: 14px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(190px, 1fr)); gap: 12px; \
margin: 18px 0 6px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; background: \
var(--bg); }
.card .value { font-size: 22px; font-weight: 600; font-variant-numeric: tabular-nums; }
.card .label { font-size: 12.5px; color: var(--muted); }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13.5px; }
caption { text-align: left; color: var(--muted); font-size: 13px; padding-bottom: 4px; }
th, td { padding: 5px 12px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { text-align: left; background: var(--bg); font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tbody tr:nth-child(even) { background: #fbfcfd; }
tr.total td { font-weight: 600; border-top: 2px solid var(--line); }
tr.final td { background: #eaf2fb; font-weight: 600; }
.scroll { overflow-x: auto; }
figure { margin: 10px 0 16px; }
figure img { max-width: 100%; height: auto; display: block; }
.missing { color: var(--muted); font-style: italic; }
.legend { display: flex; flex-wrap: wrap; gap: 8px 18px; margin: 6px 0 16px; font-size: 13px; \
position: sticky;
          top: 0; background: #fff; padding: 8px 0; border-bottom: 1px solid var(--line); \
z-index: 1; }
.legend span.sw { display: inline-block; width: 14px; height: 14px; border-radius: 3px; \
vertical-align: -2px;
                  margin-right: 6px; border-left: 4px solid transparent; }
.doc { border: 1px solid var(--line); border-radius: 8px; margin: 16px 0; overflow: hidden; }
.doc header { background: var(--bg); padding: 10px 14px; border-bottom: 1px solid var(--line); }
.docid { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-weight: 600; }
.verdict { font-size: 12.5px; padding: 1px 8px; border-radius: 10px; margin-left: 6px; }
.verdict.kept { background: #dcefdc; color: #2d5f2d; }
.verdict.removed { background: #f8d7d3; color: #8a2c20; }
.url { font-size: 12.5px; color: var(--muted); word-break: break-all; }
.tally { margin-top: 4px; font-size: 12px; }
.chip { display: inline-block; padding: 0 6px; border-radius: 4px; margin-right: 2px; }
.blocks { padding: 8px 14px 10px; }
p.blk { margin: 4px 0; padding: 3px 8px; border-left: 4px solid transparent; border-radius: 2px; \
font-size: 14px; }
p.blk.heading { font-weight: 600; }
p.blk.run { font-size: 12.5px !important; line-height: 1.6; }
p.blk.run .sep { color: #b8c2cc; }
p.blk.run span[title] { cursor: help; }
.good { border-left-color: #5b8c5a !important; }
.sw.good, .chip.good { background: #dcefdc; }
.bad { background: var(--bad); color: var(--bad-ink); border-left-color: #b8c2cc !important; \
font-size: 13px !important; }
.sw.bad, .chip.bad { background: var(--bad); color: var(--bad-ink); }
.dup { background: var(--dup); border-left-color: var(--dup-line) !important; }
.ctx { background: var(--ctx); border-left-color: var(--ctx-line) !important; }
.lang { background: var(--lang); border-left-color: var(--lang-line) !important; }
p.blk[title] { cursor: help; }
.of { float: right; font-size: 11.5px; color: #8a4b0f; background: #fff7ee; border: 1px solid \
var(--dup-line);
      border-radius: 4px; padding: 0 5px; margin-left: 8px; font-family: ui-monospace, "DejaVu \
Sans Mono", monospace; }
p.more { color: var(--muted); font-style: italic; font-size: 13px; }
footer { margin-top: 40px; color: var(--muted); font-size: 12.5px; }
"""


def section_html(anchor: str, title: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{esc(title)}</h2>{body}</section>'


def page_html(title: str, nav: Sequence[tuple[str, str]], body: str) -> str:
    """The whole page: ``title``, links to the sections ``nav`` names (anchor, label), ``body``."""
    links = "".join(f'<a href="#{anchor}">{label}</a>' for anchor, label in nav)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body><main>"
        f'<h1>{esc(title)}</h1><p class="lead">What the workflow did to the crawl: boilerplate '
        "removal (jusText), language filtering, exact and block-level de-duplication (Pomikálek "
        f"2011, §3.6).</p><nav>{links}</nav>{body}"
        "<footer>Generated by corpusbuilder (rule <code>report</code>) from results/stats and the "
        "work/ tables.</footer></main></body></html>\n"
    )
