"""``results/report.html``: one self-contained page showing what the workflow did to a crawl.

Everything is inline — CSS in a ``<style>`` element, charts as base64 PNGs drawn with matplotlib's
Agg backend — so the file can be mailed or opened from anywhere without its neighbours. Sections:

1. headline numbers (``summary.json``);
2. the funnel (``funnel_full.tsv``, thesis Tables 3.8/3.9) as a bar chart and a table, with the
   reasons documents were lost (``skipped.tsv``);
3. duplicate content before and after block de-duplication (``duplicates.tsv``, Table 3.4);
4. boilerplate quality on the gold sets (``boilerplate.tsv``, ``fragmentation.tsv``,
   ``sweep.png``) — each only if the file exists, since the gold sets may be absent;
5. time and memory per stage (``stage_times.tsv``, Table 3.7);
6. a sample of documents with every block in page order, coloured by what happened to it:
   kept, boilerplate (the extract preset: jusText or best), duplicate (block de-duplication; its ``title`` names the document
   it copies), removed beside duplicates (the context-sensitive pass after de-duplication) and
   dropped by the block-level language filter; whole-document verdicts (exact duplicate,
   language) in each document's header.

Every input but the four corpus-stats files is optional: a missing one leaves its section out
(or says that it is missing), so the page always renders.
"""

from __future__ import annotations

import base64
import html
import io
import json
import logging
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from corpusbuilder.common.io import atomic_path
from corpusbuilder.report.quality import quality_section
from corpusbuilder.tables import (
    REMOVED_PARTS,
    ShardTables,
    dropped_block_mask,
    read_survivors,
    read_table,
)
from corpusbuilder.tokenise import kept_chunks

log = logging.getLogger("corpusbuilder.report")

STAGE_LABELS = {
    "records": "WARC records",
    "html_documents": "HTML documents (original size)",
    "good_text": "after removing boilerplate",
    "language_kept": "after language filtering",
    "exact_dedup_kept": "after removing exact duplicates",
    "block_dedup_kept": "after block-level de-duplication",
}
CHIP_LABELS = {
    "good": "kept",
    "bad": "boilerplate",
    "dup": "duplicate",
    "ctx": "context",
    "lang": "language",
}
BLOCK_KINDS = {  # css class → legend label
    "good": "kept text",
    "bad": "boilerplate (extract)",
    "dup": "duplicate block (block de-duplication)",
    "ctx": "removed beside duplicates (context pass)",
    "lang": "dropped by the language filter",
}
MAX_BLOCKS_SHOWN = 150
MAX_BLOCK_CHARS = 420


# --- inputs ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportFiles:
    funnel_full: Path
    duplicates: Path
    stage_times: Path
    summary: Path
    shards: Sequence[ShardTables] = ()
    skipped: Path | None = None
    boilerplate: Path | None = None
    boilerplate_languages: Path | None = None
    fragmentation: Path | None = None
    sweep_png: Path | None = None
    site_boilerplate: Path | None = None


def _exists(path: Path | str | None) -> Path | None:
    return Path(path) if path is not None and Path(path).is_file() else None


def _read_tsv(path: Path | str | None) -> pd.DataFrame | None:
    path = _exists(path)
    if path is None:
        return None
    return pd.read_csv(path, sep="\t", keep_default_na=True)


# --- formatting --------------------------------------------------------------------------------


def _esc(value) -> str:
    return html.escape(str(value), quote=True)


def format_number(value, digits: int = 2) -> str:
    """Integers with thousands separators, floats with ``digits`` decimals, missing as a dash."""
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
    if column.kind == "text":
        missing = value is None or (isinstance(value, float) and math.isnan(value))
        return f"<td>{'' if missing else _esc(value)}</td>"
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
        f'<th class="{"num" if c.kind != "text" else ""}">{_esc(c.label)}</th>' for c in columns
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
    cap = f"<caption>{_esc(caption)}</caption>" if caption else ""
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


def _img(uri: str, alt: str) -> str:
    return f'<figure><img src="{uri}" alt="{_esc(alt)}"></figure>'


def funnel_chart(funnel: pd.DataFrame) -> str:
    """Words (left) and documents (right) after each step, as horizontal bars, % of previous."""
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


CORPUS_LABELS = {
    "before_block_dedup": "before block dedup",
    "after_block_dedup": "after block dedup",
    "after_resemblance_dedup": "after resemblance dedup",
}


def duplicates_chart(duplicates: pd.DataFrame) -> str:
    """10-gram occurrences before/after block (and resemblance) de-duplication, duplicate and unique."""
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


# --- languages and lengths of the corpus ------------------------------------------------------

LENGTH_BINS = (1, 50, 100, 200, 500, 1000, 2000, 5000, 10_000)
LANGUAGE_COLUMNS = [
    Column("language", "language"),
    Column("identified", "documents identified", "int"),
    Column("kept_by_filter", "kept by the language filter", "int"),
    Column("in_corpus", "documents in the corpus", "int"),
    Column("words", "words in the corpus", "int"),
]


def corpus_languages(shards: Sequence[ShardTables]) -> tuple[pd.DataFrame, np.ndarray]:
    """Per language: documents the language stage identified as it, kept, and in the corpus, with
    their words; and the words of every document in the corpus (for the length histogram)."""
    identified, kept, in_corpus, words, lengths = Counter(), Counter(), Counter(), Counter(), []
    for shard in shards:
        if not (_exists(shard.language) and _exists(shard.docs) and _exists(shard.blocks)):
            continue
        language = read_table(shard.language, ["language", "kept"]).fillna(
            {"language": "unidentified"}
        )
        identified.update(language["language"])
        kept.update(language.loc[language["kept"], "language"])
        corpus = read_survivors(
            replace(shard, dedup=shard.dedup if _exists(shard.dedup) else None), ("n_words",)
        )
        per_doc = corpus.blocks.groupby("doc_id", sort=False)["n_words"].sum()
        codes = corpus.documents.set_index("doc_id")["language"].fillna("unidentified")
        in_corpus.update(codes)
        for doc_id, n in per_doc.items():
            words[codes[doc_id]] += int(n)
        lengths.append(per_doc.to_numpy(np.int64))
    table = pd.DataFrame(
        [
            {
                "language": code,
                "identified": identified[code],
                "kept_by_filter": kept[code],
                "in_corpus": in_corpus[code],
                "words": words[code],
            }
            for code in identified
        ]
    )
    if len(table):
        table = table.sort_values(
            ["words", "identified", "language"], ascending=[False, False, True]
        )
    return table.reset_index(drop=True), np.concatenate(lengths) if lengths else np.empty(
        0, np.int64
    )


def length_chart(lengths: np.ndarray) -> str:
    plt = _pyplot()
    edges = np.array([*LENGTH_BINS, max(int(lengths.max(initial=0)) + 1, LENGTH_BINS[-1] + 1)])
    counts, _ = np.histogram(lengths, bins=edges)
    labels = [f"{lo:,}–{hi - 1:,}" for lo, hi in zip(edges[:-2], edges[1:-1])] + [
        f"≥ {edges[-2]:,}"
    ]
    figure, axis = plt.subplots(figsize=(7, 2.6))
    axis.bar(np.arange(len(counts)), counts, color="#5b8c5a")
    axis.set_xticks(np.arange(len(counts)), labels, rotation=30, fontsize=8)
    axis.set_xlabel("words per document in the corpus")
    axis.set_ylabel("documents")
    figure.tight_layout()
    return png_data_uri(figure)


# --- the document sample -----------------------------------------------------------------------


@dataclass
class SampleBlock:
    text: str
    kind: str  # a BLOCK_KINDS key
    heading: bool = False
    title: str = ""


@dataclass
class SampleDocument:
    doc_id: str
    url: str
    verdict: str  # why it was picked / what happened to the whole document
    removed: bool  # the whole document is out of the corpus
    blocks: list[SampleBlock] = field(default_factory=list)
    hidden_blocks: int = 0

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(BLOCK_KINDS, 0)
        for block in self.blocks:
            counts[block.kind] += 1
        return counts


def _shard_overview(shard: ShardTables) -> pd.DataFrame:
    """Per cleaned document of a shard: block counts by display kind and the document's verdict."""
    docs = read_table(shard.docs, ["doc_id", "record_index", "uri", "outcome"])
    docs = docs[docs["outcome"] == "ok"]
    blocks = _block_kinds(shard, read_table(shard.blocks, ["doc_id", "block_index", "final_class"]))
    counts = pd.crosstab(blocks["doc_id"], blocks["kind"]).reindex(
        columns=list(BLOCK_KINDS), fill_value=0
    )
    overview = docs.merge(counts, left_on="doc_id", right_index=True, how="inner")
    overview["shard"] = shard.name
    overview["verdict"] = "kept"
    overview["removed"] = False
    if _exists(shard.language):
        language = read_table(shard.language, ["doc_id", "kept", "reason"]).set_index("doc_id")
        lost = overview["doc_id"].map(~language["kept"]).fillna(False).astype(bool)
        overview.loc[lost, "verdict"] = "dropped by the language filter: " + overview.loc[
            lost, "doc_id"
        ].map(language["reason"])
        overview.loc[lost, "removed"] = True
    if _exists(shard.exact):
        exact = read_table(shard.exact, ["doc_id", "kept", "duplicate_of"]).set_index("doc_id")
        copy = overview["doc_id"].map(~exact["kept"]).fillna(False).astype(bool)
        overview.loc[copy, "verdict"] = "exact duplicate of " + overview.loc[copy, "doc_id"].map(
            exact["duplicate_of"]
        ).astype(str)
        overview.loc[copy, "removed"] = True
    emptied = ~overview["removed"] & (overview["good"] == 0)
    overview.loc[emptied, "verdict"] = np.where(
        overview.loc[emptied, "dup"] > 0,
        "removed: every kept block was a duplicate",
        "no block left",
    )
    overview.loc[emptied, "removed"] = True
    return overview


def _block_kinds(shard: ShardTables, blocks: pd.DataFrame) -> pd.DataFrame:
    """``blocks`` with columns kind, duplicate_of, dup_share: the block's display kind."""
    kind = np.where(blocks["final_class"] == "good", "good", "bad").astype(object)
    blocks = blocks.assign(
        duplicate_of=None,
        dup_share=np.nan,
        removed_starts=None,
        removed_ends=None,
        removed_duplicate_of=None,
    )
    if shard.dedup is not None and _exists(shard.dedup):
        dedup = read_table(
            shard.dedup,
            ["doc_id", "block_index", "final_class", "duplicate_of", "dup_share"],
            optional=[*REMOVED_PARTS, "removed_duplicate_of"],
        )
        merged = blocks[["doc_id", "block_index", "final_class"]].merge(
            dedup.rename(columns={"final_class": "after"}),
            on=["doc_id", "block_index"],
            how="left",
            sort=False,
        )
        after = merged["after"].to_numpy(dtype=object)
        kind = np.where(after == "duplicate", "dup", kind)
        kind = np.where(
            (after == "bad") & (merged["final_class"].to_numpy(dtype=object) == "good"), "ctx", kind
        )
        blocks["duplicate_of"] = merged["duplicate_of"].to_numpy(dtype=object)
        blocks["dup_share"] = merged["dup_share"].to_numpy()
        for column in (*REMOVED_PARTS, "removed_duplicate_of"):  # sentence and span modes
            if column in merged:
                blocks[column] = merged[column].to_numpy(dtype=object)
    if shard.language is not None and _exists(shard.language):
        language = read_table(shard.language, ["doc_id", "dropped_blocks"])
        kind = np.where(dropped_block_mask(blocks, language) & (kind == "good"), "lang", kind)
    return blocks.assign(kind=kind)


def pick_sample(overview: pd.DataFrame, size: int = 10) -> pd.DataFrame:
    """About ``size`` documents that show the stages at work: most duplicate blocks first (half),
    then an exact duplicate, a language drop and one emptied page if there are any, then the
    kept pages mixing the most text with the most boilerplate. Deterministic."""
    if overview.empty or size <= 0:
        return overview.iloc[0:0]
    overview = overview.sort_values(["shard", "record_index"], kind="stable").reset_index(drop=True)
    chosen: list[int] = []

    def take(candidates: pd.DataFrame, count: int) -> None:
        for index in candidates.index:
            if count <= 0 or len(chosen) >= size:
                return
            if index not in chosen:
                chosen.append(index)
                count -= 1

    with_dup = overview[overview["dup"] + overview["ctx"] > 0]
    take(with_dup.sort_values(["dup", "ctx"], ascending=False, kind="stable"), max(1, size // 2))
    take(overview[overview["verdict"].str.startswith("exact duplicate")], 1)
    take(overview[overview["verdict"].str.startswith("dropped by the language")], 1)
    take(overview[overview["lang"] > 0], 1)
    take(overview[overview["verdict"].str.startswith(("no block", "removed:"))], 1)
    mixed = overview[~overview["removed"]].assign(mix=lambda t: np.minimum(t["good"], t["bad"]))
    take(mixed.sort_values("mix", ascending=False, kind="stable"), size)
    take(overview, size)
    return overview.loc[chosen]


def sample_documents(shards: Sequence[ShardTables], size: int = 10) -> list[SampleDocument]:
    """The picked documents with all their blocks, in page order, by display kind."""
    overviews = [_shard_overview(shard) for shard in shards]
    overviews = [o for o in overviews if len(o)]
    if not overviews:
        return []
    picked = pick_sample(pd.concat(overviews, ignore_index=True), size)
    by_shard = {shard.name: shard for shard in shards}
    documents: dict[str, SampleDocument] = {}
    for shard_name, rows in picked.groupby("shard", sort=False):
        shard = by_shard[shard_name]
        wanted = set(rows["doc_id"])
        blocks = read_table(
            shard.blocks,
            ["doc_id", "block_index", "text", "heading", "final_class"],
            doc_ids=wanted,
        )
        blocks = _block_kinds(shard, blocks).sort_values(["doc_id", "block_index"], kind="stable")
        grouped = dict(tuple(blocks.groupby("doc_id", sort=False)))
        for row in rows.itertuples(index=False):
            document = SampleDocument(row.doc_id, row.uri or "", row.verdict, bool(row.removed))
            page = grouped.get(row.doc_id)
            if page is not None:
                for block in page.head(MAX_BLOCKS_SHOWN).itertuples(index=False):
                    title = ""
                    if block.kind == "dup":
                        title = f"duplicate of {block.duplicate_of}"
                        if not pd.isna(block.dup_share):
                            title += f" ({100 * block.dup_share:.0f} % of its words covered by duplicate 10-grams)"
                    elif block.kind == "ctx":
                        title = "bad after de-duplication: between removed duplicates (context-sensitive pass)"
                    elif block.kind == "lang":
                        title = "dropped by the block-level language filter"
                    elif block.kind == "bad":
                        title = "boilerplate: the extract stage classified it bad"
                    text = str(block.text)
                    if block.kind == "good" and isinstance(
                        block.removed_starts, (list, np.ndarray)
                    ):
                        # a block partly kept (sentence and span modes): the text the corpus keeps
                        text = kept_chunks(text, block.removed_starts, block.removed_ends)
                        title = (
                            f"{len(block.removed_starts)} part(s) removed as duplicates of "
                            f"{', '.join(dict.fromkeys(block.removed_duplicate_of))}"
                        )
                    document.blocks.append(
                        SampleBlock(text, block.kind, bool(block.heading), title)
                    )
                document.hidden_blocks = max(0, len(page) - MAX_BLOCKS_SHOWN)
            documents[row.doc_id] = document
    return [documents[d] for d in picked["doc_id"] if d in documents]


BOILERPLATE_RUN = 3  # this many consecutive boilerplate blocks are shown on one line


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + " …"


def _block_html(block: SampleBlock) -> str:
    title = f' title="{_esc(block.title)}"' if block.title else ""
    tag = ""
    if block.kind == "dup":
        of = block.title.split(" (")[0].removeprefix("duplicate of ")
        tag = f'<span class="of">duplicate of {_esc(of)}</span>'
    heading = " heading" if block.heading else ""
    return f'<p class="blk {block.kind}{heading}"{title}>{tag}{_esc(_short(block.text, MAX_BLOCK_CHARS))}</p>'


def _document_html(document: SampleDocument) -> str:
    counts = document.counts()
    tally = " · ".join(
        f'<span class="chip {k}">{counts[k]} {CHIP_LABELS[k]}</span>'
        for k in BLOCK_KINDS
        if counts[k]
    )
    verdict_class = "removed" if document.removed else "kept"
    parts = [
        f'<article class="doc" id="{_esc(document.doc_id)}">',
        f'<header><span class="docid">{_esc(document.doc_id)}</span> '
        f'<span class="verdict {verdict_class}">{_esc(document.verdict)}</span>'
        f'<div class="url">{_esc(document.url)}</div><div class="tally">{tally}</div></header>',
        '<div class="blocks">',
    ]
    run: list[SampleBlock] = []

    def flush() -> None:
        # consecutive boilerplate blocks share one compact line, each still its own span + title
        if len(run) >= BOILERPLATE_RUN:
            spans = '<span class="sep"> | </span>'.join(
                f'<span title="{_esc(b.title)}">{_esc(_short(b.text, 120))}</span>' for b in run
            )
            parts.append(f'<p class="blk bad run">{spans}</p>')
        else:
            parts.extend(_block_html(b) for b in run)
        run.clear()

    for block in document.blocks:
        if block.kind == "bad":
            run.append(block)
            continue
        flush()
        parts.append(_block_html(block))
    flush()
    if document.hidden_blocks:
        parts.append(f'<p class="more">… {document.hidden_blocks} more blocks not shown</p>')
    parts.append("</div></article>")
    return "".join(parts)


# --- the page ----------------------------------------------------------------------------------

CSS = """
:root { --ink:#1f2933; --muted:#616e7c; --line:#d9e2ec; --bg:#f7f9fb; --accent:#2f6db5;
        --bad:#eceff3; --bad-ink:#7b8794; --dup:#fde2c4; --dup-line:#e8912d; --ctx:#fff3b0;
        --ctx-line:#d6b300; --lang:#e9dcf7; --lang-line:#8e5cc4; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
       font: 15px/1.55 -apple-system, "Segoe UI", "Helvetica Neue", "DejaVu Sans", Arial, sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 28px 32px 60px; background: #fff;
       box-shadow: 0 0 0 1px var(--line); min-height: 100vh; }
h1 { font-size: 26px; margin: 0 0 4px; letter-spacing: -0.01em; }
h2 { font-size: 19px; margin: 38px 0 10px; padding-bottom: 6px; border-bottom: 2px solid var(--line); }
h3 { font-size: 15px; margin: 22px 0 8px; color: var(--muted); text-transform: uppercase; letter-spacing: 0.04em; }
p.lead, p.note { color: var(--muted); margin: 4px 0 12px; max-width: 80ch; }
nav { margin: 10px 0 4px; font-size: 14px; }
nav a { color: var(--accent); text-decoration: none; margin-right: 14px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(190px, 1fr)); gap: 12px; margin: 18px 0 6px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; background: var(--bg); }
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
.legend { display: flex; flex-wrap: wrap; gap: 8px 18px; margin: 6px 0 16px; font-size: 13px; position: sticky;
          top: 0; background: #fff; padding: 8px 0; border-bottom: 1px solid var(--line); z-index: 1; }
.legend span.sw { display: inline-block; width: 14px; height: 14px; border-radius: 3px; vertical-align: -2px;
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
p.blk { margin: 4px 0; padding: 3px 8px; border-left: 4px solid transparent; border-radius: 2px; font-size: 14px; }
p.blk.heading { font-weight: 600; }
p.blk.run { font-size: 12.5px !important; line-height: 1.6; }
p.blk.run .sep { color: #b8c2cc; }
p.blk.run span[title] { cursor: help; }
.good { border-left-color: #5b8c5a !important; }
.sw.good, .chip.good { background: #dcefdc; }
.bad { background: var(--bad); color: var(--bad-ink); border-left-color: #b8c2cc !important; font-size: 13px !important; }
.sw.bad, .chip.bad { background: var(--bad); color: var(--bad-ink); }
.dup { background: var(--dup); border-left-color: var(--dup-line) !important; }
.ctx { background: var(--ctx); border-left-color: var(--ctx-line) !important; }
.lang { background: var(--lang); border-left-color: var(--lang-line) !important; }
p.blk[title] { cursor: help; }
.of { float: right; font-size: 11.5px; color: #8a4b0f; background: #fff7ee; border: 1px solid var(--dup-line);
      border-radius: 4px; padding: 0 5px; margin-left: 8px; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
p.more { color: var(--muted); font-style: italic; font-size: 13px; }
footer { margin-top: 40px; color: var(--muted); font-size: 12.5px; }
"""

FUNNEL_COLUMNS = [
    Column("label", "stage"),
    Column("documents", "documents", "int"),
    Column("pct_of_previous_documents", "% of previous", "pct", 1),
    Column("words", "words", "int"),
    Column("pct_of_previous_words", "% of previous", "pct", 1),
    Column("tokens", "tokens", "int"),
]
CAPTION = (
    '10-gram occurrences; "duplicate": occurrences of the 10-grams seen 2+ times, "distinct duplicate": '
    "those 10-gram types"
)
DUPLICATE_COLUMNS = [
    Column("label", "corpus"),
    Column("documents", "documents", "int"),
    Column("blocks", "blocks", "int"),
    Column("tokens", "tokens", "int"),
    Column("ngram_instances", "10-grams", "int"),
    Column("distinct_ngrams", "distinct 10-grams", "int"),
    Column("duplicate_instances", "duplicate", "int"),
    Column("distinct_duplicates", "distinct duplicate", "int"),
    Column("pct_duplicate_instances", "duplicate %", "pct"),
    Column("pct_of_before", "dup. % of before", "pct"),
]
BOILERPLATE_COLUMNS = [
    Column("extractor", "extractor"),
    Column("dataset", "dataset"),
    Column("pages", "pages", "int"),
    Column("word_precision", "word P", "score"),
    Column("word_recall", "word R", "score"),
    Column("word_f1", "word F1", "score"),
    Column("word_f05", "word F0.5", "score"),
    Column("bow_precision", "BoW P", "score"),
    Column("bow_recall", "BoW R", "score"),
    Column("bow_f1", "BoW F1", "score"),
    Column("bow_f05", "BoW F0.5", "score"),
    Column("snippet_precision", "snippet P", "score"),
    Column("snippet_recall", "snippet R", "score"),
    Column("snippet_f1", "snippet F1", "score"),
    Column("pages_per_second", "pages/s", "float", 1),
]
FRAGMENTATION_COLUMNS = [
    Column("extractor", "extractor"),
    Column("dataset", "dataset"),
    Column("documents", "documents", "int"),
    Column("fragments", "fragments", "int"),
    Column("mean_fragment_chars", "mean chars", "float", 1),
    Column("median_fragment_chars", "median chars", "float", 1),
    Column("fragments_per_document", "fragments / document", "float"),
]
SITE_COLUMNS = [
    Column("dataset", "dataset"),
    Column("scope", "pages"),
    Column("variant", "blocks kept"),
    Column("pages", "pages", "int"),
    Column("hosts", "hosts", "int"),
    Column("marked_blocks", "marked", "int"),
    Column("word_precision", "word P", "score"),
    Column("word_recall", "word R", "score"),
    Column("word_f1", "word F1", "score"),
    Column("bow_f1", "BoW F1", "score"),
    Column("snippet_f1", "snippet F1", "score"),
]
STAGE_COLUMNS = [
    Column("rule", "rule"),
    Column("phase", "phase (thesis Table 3.7)"),
    Column("jobs", "jobs", "int"),
    Column("seconds", "wall s", "float", 1),
    Column("cpu_seconds", "CPU s", "float", 1),
    Column("max_rss_mb", "peak RSS MB", "float", 0),
    Column("pct_of_total_seconds", "% of time", "pct", 1),
]


def _with_main_f1(scores: pd.DataFrame) -> pd.DataFrame:
    """The rows with column ``f1``: bag-of-words F1, or snippet F1 where the set lists snippets."""
    return scores.assign(f1=scores["bow_f1"].fillna(scores["snippet_f1"]))


def main_content_overview(boilerplate: pd.DataFrame) -> pd.DataFrame:
    """One row per extractor: its main-content F1 on each gold set (bag of words, or snippets where
    the set has snippets), their mean over the sets, and pages/s over all of them; best mean first."""
    per_set = _with_main_f1(boilerplate[boilerplate["dataset"] != "all"])
    table = per_set.pivot(index="extractor", columns="dataset", values="f1")
    table["mean"] = table.mean(axis=1, skipna=False)
    seconds = per_set.groupby("extractor")[["pages", "seconds"]].sum()
    table["pages/s"] = seconds["pages"] / seconds["seconds"]
    return table.sort_values("mean", ascending=False).reset_index()


def main_content_by_language(languages: pd.DataFrame) -> pd.DataFrame:
    """Per gold set that holds pages of several languages, one row per (set, page language): its
    pages and each extractor's main-content F1 on them, extractors in the order of their mean."""
    languages = _with_main_f1(languages)
    multilingual = languages.groupby("dataset")["language"].nunique()
    languages = languages[languages["dataset"].isin(multilingual[multilingual > 1].index)]
    table = languages.pivot_table(index=["dataset", "language"], columns="extractor", values="f1")
    table = table[table.mean().sort_values(ascending=False).index]
    pages = languages.groupby(["dataset", "language"])["pages"].max().rename("pages")
    return (
        pd.concat([pages, table], axis=1)
        .reset_index()
        .sort_values(["dataset", "pages"], ascending=[True, False])
    )


def _cards(summary: dict) -> str:
    items = []

    def card(value, label):
        items.append(
            f'<div class="card"><div class="value">{value}</div><div class="label">{_esc(label)}</div></div>'
        )

    card(format_number(summary.get("records")), "WARC records read")
    card(format_number(summary.get("html_documents")), "HTML pages cleaned")
    card(format_number(summary.get("documents_final")), "documents in the corpus")
    card(format_number(summary.get("words_final")), "words in the corpus")
    if summary.get("pct_words_kept_of_original") is not None:
        card(f"{summary['pct_words_kept_of_original']:.1f} %", "of the original words kept")
    if summary.get("pct_boilerplate_words") is not None:
        card(f"{summary['pct_boilerplate_words']:.1f} %", "of the words were boilerplate")
    if summary.get("pct_duplicate_ngrams_left") is not None:
        card(
            f"{summary['pct_duplicate_ngrams_left']:.1f} %",
            "of duplicate 10-grams left after block dedup",
        )
    if summary.get("wall_seconds_total") is not None:
        card(f"{summary['wall_seconds_total']:,.1f} s", "summed wall time of the measured stages")
    return f'<div class="cards">{"".join(items)}</div>'


def _section(anchor: str, title: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{_esc(title)}</h2>{body}</section>'


def _best_per_dataset(table: pd.DataFrame, column: str) -> set[tuple[int, str]]:
    if column not in table or table[column].isna().all():
        return set()
    best = set()
    for _, group in table.reset_index(drop=True).groupby("dataset"):
        values = pd.to_numeric(group[column], errors="coerce")
        if values.notna().any():
            best.add((int(values.idxmax()), column))
    return best


def funnel_section(files: ReportFiles) -> str:
    """The funnel: documents and words after each step, and why documents were lost."""
    funnel = _read_tsv(files.funnel_full)
    if funnel is None or not len(funnel):
        return ""
    funnel = funnel.assign(label=[STAGE_LABELS.get(s, s) for s in funnel["stage"]])
    classes = ["final" if i == len(funnel) - 1 else "" for i in range(len(funnel))]
    body = (
        '<p class="lead">Documents and words left after each step, as thesis Tables 3.8/3.9 '
        "report a corpus; each percentage is of the row before. Words are whitespace-separated "
        "strings; tokens are counted once the text is tokenised.</p>"
    )
    body += (
        '<p class="note">What to look for: the step that loses the most. A big loss to '
        '"html documents" is the crawl (non-HTML, errors — see why below); to "good text", pages '
        "whose language has no stop list or extractor settings too strict; to exact dedup, a crawl "
        "with many mirrors.</p>"
    )
    body += _img(funnel_chart(funnel), "funnel chart") + html_table(
        funnel, FUNNEL_COLUMNS, row_classes=classes
    )
    skipped = _read_tsv(files.skipped)
    if skipped is not None and len(skipped):
        skipped = skipped.assign(stage=[STAGE_LABELS.get(s, s) for s in skipped["stage"]])
        body += "<h3>Why documents were lost</h3>" + html_table(
            skipped,
            [
                Column("stage", "lost at the step to"),
                Column("reason", "reason"),
                Column("count", "documents", "int"),
            ],
        )
    return _section("funnel", "Funnel", body)


def duplicates_section(files: ReportFiles, summary: dict) -> str:
    """Duplicate content before and after de-duplication (thesis Table 3.4) and the facts of the pass."""
    duplicates = _read_tsv(files.duplicates)
    if duplicates is None or not len(duplicates):
        return ""
    duplicates = duplicates.assign(label=[CORPUS_LABELS.get(c, c) for c in duplicates["corpus"]])
    n = summary["measure_ngram"]
    body = (
        f'<p class="lead">Duplicate content measured as in thesis Table 3.4: {n}-grams of all tokens '
        "within blocks; a duplicate n-gram occurs twice or more in that corpus, and each of its "
        'occurrences is counted. "Before" is the exactly de-duplicated corpus (every tokenised '
        'block), "after block dedup" only the blocks kept by block de-duplication, "after '
        'resemblance dedup" the thesis\' document-level comparison ("rsmbl. de-dupl"): one document '
        "kept per cluster of min-hash resemblance above similarity.dedup_threshold (thesis: 0.9), all of "
        "its blocks.</p>"
    )
    body += (
        '<p class="note">What to look for: the bar after block dedup should be a small fraction '
        "of the one before; if resemblance dedup leaves much more, the duplicates are parts of "
        "pages (quotes, boilerplate) that whole-document comparison cannot remove.</p>"
    )
    body += _img(duplicates_chart(duplicates), "duplicate 10-grams chart")
    body += (
        f'<div class="scroll">{html_table(duplicates, DUPLICATE_COLUMNS, caption=CAPTION)}</div>'
    )
    dedup = summary.get("dedup") or {}
    facts = []
    if dedup.get("duplicate_ngrams_used") is not None:
        params = dedup.get("params") or {}
        facts.append(
            f"{format_number(dedup['duplicate_ngrams_used'])} distinct duplicate "
            f"{params.get('n', '')}-grams ({_esc(params.get('kind', ''))} tokens) were used for "
            f"de-duplication, stored in {format_number(dedup.get('store_bytes'))} bytes; threshold "
            f"{params.get('threshold', '')}, order {_esc(params.get('order', ''))}."
        )
    if summary.get("blocks_per_document_before") is not None:
        facts.append(
            f"Fragmentation: {summary['blocks_per_document_before']:.2f} text blocks per document "
            f"before block de-duplication, {summary.get('blocks_per_document_after') or 0:.2f} after "
            "(thesis: 3.56 → 3.85)."
        )
    body += "".join(f'<p class="note">{fact}</p>' for fact in facts)
    return _section("duplicates", "Duplicate content", body)


def boilerplate_section(files: ReportFiles) -> str:
    """The gold-set evaluation: scores, fragmentation, site-level boilerplate, the sweep."""
    boilerplate, fragmentation = _read_tsv(files.boilerplate), _read_tsv(files.fragmentation)
    sweep = _exists(files.sweep_png)
    body = (
        '<p class="lead">jusText and the baselines on the human-annotated gold sets (thesis §2.9): '
        "word-level precision, recall and F-scores on aligned text, bag-of-words scores, and snippet "
        "scores where the gold set lists snippets. Best word F1 per dataset in bold.</p>"
    )
    if boilerplate is not None and len(boilerplate):
        shown = [
            c
            for c in BOILERPLATE_COLUMNS
            if c.kind == "text" or c.key not in boilerplate or boilerplate[c.key].notna().any()
        ]
        overview = main_content_overview(boilerplate)
        columns = [
            Column("extractor", "extractor"),
            *(Column(c, c, "score") for c in overview.columns if c not in ("extractor", "pages/s")),
            Column("pages/s", "pages/s", "float", 1),
        ]
        body += (
            '<h3>Main-content F1 by gold set</h3><p class="note">Bag-of-words F1 over lower-cased '
            "whitespace tokens (snippet F1 where the set lists snippets), micro-averaged over each set's "
            'pages. "best", the learned preset, is scored leave-one-source-out: on each set by a model '
            "trained without that set's source (CleanEval dev + final and msv-big9 + msv-chaos count as "
            "one source each), so its row says what to expect on pages of a site it never saw. "
            '"best-adapted" is that held-out model after self-training on the set\'s own pages (its '
            "confident labels of them, never their gold labels), as adapt.enabled does to a crawl. Look "
            "at the mean, and at the sets where a peer beats it.</p>"
            f'<div class="scroll">{html_table(overview, columns)}</div>'
        )
        body += _languages_table(_read_tsv(files.boilerplate_languages))
        body += "<h3>All measures</h3>"
        body += f'<div class="scroll">{html_table(boilerplate, shown, bold=_best_per_dataset(boilerplate, "word_f1"))}</div>'
    else:
        body += '<p class="missing">No gold-set evaluation in this run (results/stats/boilerplate.tsv is absent).</p>'
    if fragmentation is not None and len(fragmentation):
        body += "<h3>Fragmentation (thesis Table 2.11)</h3>" + html_table(
            fragmentation, FRAGMENTATION_COLUMNS
        )
    site = _read_tsv(files.site_boilerplate)
    if site is not None and len(site):
        shown = [c for c in SITE_COLUMNS if c.kind == "text" or site[c.key].notna().any()]
        body += (
            "<h3>Site-level boilerplate (Ikeda et al.) with jusText</h3>"
            '<p class="note">Gold pages grouped by host; blocks mostly covered by the n-grams frequent '
            "across a host's pages are marked. justext+site: marked blocks enter the context-sensitive "
            "pass as bad (mode combine); justext-minus-site: removed after it; site-only: every block "
            'but the marked ones. "multi-page hosts": the pages the marks can change.</p>'
            f'<div class="scroll">{html_table(site, shown)}</div>'
        )
    if sweep is not None:
        body += (
            "<h3>Parameter sweep (thesis Fig. 2.7 in small)</h3>"
            '<p class="note">Word-level precision and recall as one jusText threshold at a time moves '
            "away from the default (grey line).</p>" + _img(file_data_uri(sweep), "parameter sweep")
        )
    return _section("boilerplate", "Boilerplate removal quality", body)


def _languages_table(languages: pd.DataFrame | None) -> str:
    if languages is None or not len(languages):
        return ""
    table = main_content_by_language(languages)
    if not len(table):
        return ""
    columns = [
        Column("dataset", "gold set"),
        Column("language", "page language"),
        Column("pages", "pages", "int"),
        *(
            Column(c, c, "score")
            for c in table.columns
            if c not in ("dataset", "language", "pages")
        ),
    ]
    return (
        '<h3>Main-content F1 by page language</h3><p class="note">The multilingual gold sets split by '
        "the language the extract stage guesses for each page (it picks the stop list). Look for a "
        "language where an extractor falls well below its own mean: few pages make a noisy cell.</p>"
        f'<div class="scroll">{html_table(table, columns)}</div>'
    )


def stages_section(files: ReportFiles) -> str:
    """Time and memory per rule, from Snakemake's benchmark files (thesis Table 3.7)."""
    stages = _read_tsv(files.stage_times)
    if stages is not None and len(stages):
        total = pd.DataFrame(
            [
                {
                    "rule": "total",
                    "phase": "",
                    "jobs": stages["jobs"].sum(),
                    "seconds": stages["seconds"].sum(),
                    "cpu_seconds": stages["cpu_seconds"].sum(),
                    "max_rss_mb": stages["max_rss_mb"].max(),
                    "pct_of_total_seconds": 100.0,
                }
            ]
        )
        body = (
            "<p class=\"lead\">Wall and CPU time from Snakemake's benchmark files, summed over each rule's "
            "jobs (per-shard rules run one job per shard, in parallel); peak memory is the largest "
            "resident set of any one job (thesis Table 3.7).</p>"
        )
        body += (
            '<p class="note">What to look for: the rule that dominates wall time is the one to give '
            "more cores (per-shard rules) or a bigger node (dedup holds the duplicate n-grams); a peak "
            "memory near a rule's mem_mb is a job a larger crawl will run out of memory in.</p>"
        )
        body += _img(stage_chart(stages), "stage times chart")
        body += html_table(
            pd.concat([stages, total], ignore_index=True),
            STAGE_COLUMNS,
            row_classes=[""] * len(stages) + ["total"],
        )
        return _section("stages", "Time and memory per stage", body)
    return _section(
        "stages",
        "Time and memory per stage",
        '<p class="missing">No benchmark files were found.</p>',
    )


def languages_section(files: ReportFiles) -> str:
    """Documents and words per language through the language filter into the corpus, and how long
    the corpus's documents are."""
    table, lengths = corpus_languages(files.shards)
    if not len(table):
        return ""
    body = (
        '<p class="lead">Documents per language as the language stage identified them, kept by its '
        "filter, and left in the corpus after de-duplication, with their words.</p>"
        f'<div class="scroll">{html_table(table, LANGUAGE_COLUMNS)}</div>'
    )
    if len(lengths):
        body += (
            '<h3>Document lengths</h3><p class="note">What to look for: a corpus of articles has most '
            "documents between 100 and 2,000 words; a tall first bar means many pages kept only a "
            "stub — look at them in the sample below before building on them.</p>"
            + _img(length_chart(lengths), "document length histogram")
        )
    return _section("languages", "Languages and lengths", body)


def sample_section(files: ReportFiles, sample_size: int) -> str:
    """A few documents, every block coloured by what happened to it."""
    documents = sample_documents(files.shards, sample_size) if files.shards else []
    legend = "".join(
        f'<span><span class="sw {k}"></span>{_esc(label)}</span>'
        for k, label in BLOCK_KINDS.items()
    )
    body = (
        '<p class="lead">Every block of a few documents, in page order, coloured by what happened to it. '
        "Hover over a removed block for the reason; a duplicate block names the kept document whose "
        "text it copies.</p>"
    )
    body += f'<div class="legend">{legend}</div>'
    body += (
        "".join(_document_html(d) for d in documents)
        or '<p class="missing">No cleaned documents.</p>'
    )
    return _section("sample", "Sample documents", body)


def render_report(
    files: ReportFiles, sample_size: int = 10, title: str = "corpusbuilder report"
) -> str:
    """The whole page as a string: one section per function above, those without data left out."""
    summary = json.loads(Path(files.summary).read_text()) if _exists(files.summary) else {}
    sections = [
        funnel_section(files),
        languages_section(files),
        duplicates_section(files, summary),
        boilerplate_section(files),
        stages_section(files),
        sample_section(files, sample_size),
        quality_section(files.shards),
    ]
    nav = "".join(
        f'<a href="#{a}">{t}</a>'
        for a, t in (
            ("funnel", "Funnel"),
            ("languages", "Languages"),
            ("duplicates", "Duplicates"),
            ("boilerplate", "Boilerplate quality"),
            ("stages", "Stages"),
            ("sample", "Sample documents"),
        )
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_esc(title)}</title><style>{CSS}</style></head><body><main>"
        f'<h1>{_esc(title)}</h1><p class="lead">What the workflow did to the crawl: boilerplate removal '
        "(jusText), language filtering, exact and block-level de-duplication (Pomikálek 2011, §3.6).</p>"
        f"<nav>{nav}</nav>{_cards(summary)}{''.join(sections)}"
        "<footer>Generated by corpusbuilder (rule <code>report</code>) from results/stats and the work/ tables."
        "</footer></main></body></html>\n"
    )


def write_report(files: ReportFiles, path: Path | str, sample_size: int = 10) -> None:
    page = render_report(files, sample_size)
    with atomic_path(path) as tmp:
        tmp.write_text(page, encoding="utf-8")
    log.info("report: %s (%d bytes)", path, len(page))
