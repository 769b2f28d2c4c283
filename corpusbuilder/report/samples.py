"""The sample of ``results/report.html``: a few documents that show the stages at work, every
block in page order, coloured by what happened to it: kept, boilerplate (the extract preset:
jusText or best), duplicate (block de-duplication; its ``title`` names the document it copies),
removed beside duplicates (the context-sensitive pass after de-duplication) and dropped by the
block-level language filter; whole-document verdicts (exact duplicate, language) in each
document's header."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from corpusbuilder.contracts.corpus import kept_text
from corpusbuilder.contracts.tables import ShardTables
from corpusbuilder.contracts.verdicts import read_block_verdicts
from corpusbuilder.report.joins import BLOCK_KINDS, block_kinds, shard_overview, stages_that_ran
from corpusbuilder.report.rendering import esc

if TYPE_CHECKING:
    import pandas as pd

CHIP_LABELS = {
    "good": "kept",
    "bad": "boilerplate",
    "dup": "duplicate",
    "ctx": "context",
    "lang": "language",
}
MAX_BLOCKS_SHOWN = 150
MAX_BLOCK_CHARS = 420


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


def sample_block(block) -> SampleBlock:
    """A row of `verdicts.block_verdicts` with its ``kind`` as shown: its title says why."""
    import pandas as pd

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
    if block.kind == "good" and isinstance(block.removed_starts, (list, np.ndarray)):
        # a block partly kept (sentence and span modes): the text the corpus keeps
        text = kept_text(text, block.removed_chunk_starts, block.removed_chunk_ends)
        title = (
            f"{len(block.removed_starts)} part(s) removed as duplicates of "
            f"{', '.join(dict.fromkeys(block.removed_duplicate_of))}"
        )
    return SampleBlock(text, block.kind, bool(block.heading), title)


def sample_documents(shards: Sequence[ShardTables], size: int = 10) -> list[SampleDocument]:
    """The picked documents with all their blocks, in page order, by display kind."""
    import pandas as pd

    overviews = [shard_overview(shard) for shard in shards]
    overviews = [o for o in overviews if len(o)]
    if not overviews:
        return []
    picked = pick_sample(pd.concat(overviews, ignore_index=True), size)
    by_shard = {shard.name: shard for shard in shards}
    documents: dict[str, SampleDocument] = {}
    for shard_name, rows in picked.groupby("shard", sort=False):
        shard = by_shard[shard_name]
        wanted = set(rows["doc_id"])
        blocks = read_block_verdicts(stages_that_ran(shard), ["text", "heading"], sorted(wanted))
        blocks = blocks.assign(kind=block_kinds(blocks)).sort_values(
            ["doc_id", "block_index"], kind="stable"
        )
        grouped = dict(tuple(blocks.groupby("doc_id", sort=False)))
        for row in rows.itertuples(index=False):
            document = SampleDocument(row.doc_id, row.uri or "", row.verdict, bool(row.removed))
            page = grouped.get(row.doc_id)
            if page is not None:
                document.blocks = [
                    sample_block(block)
                    for block in page.head(MAX_BLOCKS_SHOWN).itertuples(index=False)
                ]
                document.hidden_blocks = max(0, len(page) - MAX_BLOCKS_SHOWN)
            documents[row.doc_id] = document
    return [documents[d] for d in picked["doc_id"] if d in documents]


BOILERPLATE_RUN = 3  # this many consecutive boilerplate blocks are shown on one line


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + " …"


def _block_html(block: SampleBlock) -> str:
    title = f' title="{esc(block.title)}"' if block.title else ""
    tag = ""
    if block.kind == "dup":
        of = block.title.split(" (")[0].removeprefix("duplicate of ")
        tag = f'<span class="of">duplicate of {esc(of)}</span>'
    heading = " heading" if block.heading else ""
    text = esc(_short(block.text, MAX_BLOCK_CHARS))
    return f'<p class="blk {block.kind}{heading}"{title}>{tag}{text}</p>'


def document_html(document: SampleDocument) -> str:
    counts = document.counts()
    tally = " · ".join(
        f'<span class="chip {k}">{counts[k]} {CHIP_LABELS[k]}</span>'
        for k in BLOCK_KINDS
        if counts[k]
    )
    verdict_class = "removed" if document.removed else "kept"
    parts = [
        f'<article class="doc" id="{esc(document.doc_id)}">',
        f'<header><span class="docid">{esc(document.doc_id)}</span> '
        f'<span class="verdict {verdict_class}">{esc(document.verdict)}</span>'
        f'<div class="url">{esc(document.url)}</div><div class="tally">{tally}</div></header>',
        '<div class="blocks">',
    ]
    run: list[SampleBlock] = []

    def flush() -> None:
        # consecutive boilerplate blocks share one compact line, each still its own span + title
        if len(run) >= BOILERPLATE_RUN:
            spans = '<span class="sep"> | </span>'.join(
                f'<span title="{esc(b.title)}">{esc(_short(b.text, 120))}</span>' for b in run
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
