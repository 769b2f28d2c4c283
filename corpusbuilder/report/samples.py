"""The sample of ``results/report.html``: a few documents that show the stages at work, every
block in page order, coloured by what happened to it: kept, boilerplate (the extract preset:
jusText or best), duplicate (block de-duplication; its ``title`` names the document it copies),
removed beside duplicates (the context-sensitive pass after de-duplication) and dropped by the
block-level language filter; whole-document verdicts (exact duplicate, language) in each
document's header."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
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


# an overview row as a shard's summary keeps it: what `pick_sample` ranks it by
CANDIDATE_COLUMNS = ("shard", "record_index", "doc_id", "verdict", "removed", *BLOCK_KINDS)


def _ranked(overview: pd.DataFrame, size: int) -> list[tuple[pd.DataFrame, int]]:
    """`pick_sample`'s lists, best first, with how many of each it takes: most duplicate blocks
    first (half), then an exact duplicate, a language drop and one emptied page if there are
    any, then the kept pages mixing the most text with the most boilerplate, then any."""
    with_dup = overview[overview["dup"] + overview["ctx"] > 0]
    mixed = overview[~overview["removed"]].assign(mix=lambda t: np.minimum(t["good"], t["bad"]))
    return [
        (with_dup.sort_values(["dup", "ctx"], ascending=False, kind="stable"), max(1, size // 2)),
        (overview[overview["verdict"].str.startswith("exact duplicate")], 1),
        (overview[overview["verdict"].str.startswith("dropped by the language")], 1),
        (overview[overview["lang"] > 0], 1),
        (overview[overview["verdict"].str.startswith(("no block", "removed:"))], 1),
        (mixed.sort_values("mix", ascending=False, kind="stable"), size),
        (overview, size),
    ]


def _in_order(overview: pd.DataFrame) -> pd.DataFrame:
    return overview.sort_values(["shard", "record_index"], kind="stable").reset_index(drop=True)


def pick_sample(overview: pd.DataFrame, size: int = 10) -> pd.DataFrame:
    """About ``size`` documents that show the stages at work (`_ranked`'s lists, in turn).
    Deterministic: ties go to the first in (shard, record_index) order."""
    if overview.empty or size <= 0:
        return overview.iloc[0:0]
    overview = _in_order(overview)
    chosen: list[int] = []
    for candidates, count in _ranked(overview, size):
        for index in candidates.index:
            if count <= 0 or len(chosen) >= size:
                break
            if index not in chosen:
                chosen.append(index)
                count -= 1
    return overview.loc[chosen]


def sample_candidates(overview: pd.DataFrame, size: int = 10) -> pd.DataFrame:
    """The rows `pick_sample` could take from ``overview`` or from any set of rows holding it:
    the first ``size`` of each of its lists. It looks at no more of a list (each row it looks at
    is one it takes then or took before, and it takes ``size`` in all), and a list's order is
    the same in any set of rows. So the candidates of each shard, and the candidates of
    candidates, hold the pick over every document."""
    if overview.empty or size <= 0:
        return overview.iloc[0:0]
    overview = _in_order(overview)
    rows = {index for candidates, _ in _ranked(overview, size) for index in candidates.index[:size]}
    return overview.loc[sorted(rows)]


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


def shard_sample(shard: ShardTables, size: int = 10) -> tuple[pd.DataFrame, list[SampleDocument]]:
    """A shard's `sample_candidates` (`CANDIDATE_COLUMNS`) and each as the page shows it: its
    blocks in page order, by display kind, their text cut where the page cuts it."""
    overview = shard_overview(shard)
    candidates = sample_candidates(overview, size)
    if candidates.empty:
        return candidates.loc[:, list(CANDIDATE_COLUMNS)], []
    blocks = read_block_verdicts(
        stages_that_ran(shard), ["text", "heading"], sorted(candidates["doc_id"])
    )
    blocks = blocks.assign(kind=block_kinds(blocks)).sort_values(
        ["doc_id", "block_index"], kind="stable"
    )
    pages = dict(tuple(blocks.groupby("doc_id", sort=False)))
    documents = []
    for row in candidates.itertuples(index=False):
        document = SampleDocument(row.doc_id, row.uri or "", row.verdict, bool(row.removed))
        page = pages[row.doc_id]
        document.blocks = [
            sample_block(block) for block in page.head(MAX_BLOCKS_SHOWN).itertuples(index=False)
        ]
        document.hidden_blocks = max(0, len(page) - MAX_BLOCKS_SHOWN)
        documents.append(document)
    return candidates.loc[:, list(CANDIDATE_COLUMNS)], documents


def document_record(document: SampleDocument) -> dict:
    """A sampled document as plain data, each block's text no longer than the page shows."""
    record = asdict(document)
    for block in record["blocks"]:
        block["text"] = block["text"][: MAX_BLOCK_CHARS + 1]  # _short still sees it is cut
    return record


def document_of(record: dict) -> SampleDocument:
    blocks = [SampleBlock(**block) for block in record["blocks"]]
    return SampleDocument(**{**record, "blocks": blocks})


def merge_candidates(
    first: tuple[pd.DataFrame, list[dict]], second: tuple[pd.DataFrame, list[dict]], size: int
) -> tuple[pd.DataFrame, list[dict]]:
    """Two sets of candidates (rows, `document_record`s) as one: the `sample_candidates` of
    both, no more than ``size`` of each list, whatever the shards."""
    import pandas as pd

    frames = [frame for frame, _ in (first, second) if len(frame)]
    if len(frames) < 2:
        return first if len(first[0]) else second
    rows = sample_candidates(pd.concat(frames, ignore_index=True), size)
    records = {record["doc_id"]: record for _, found in (first, second) for record in found}
    return rows, [records[doc_id] for doc_id in rows["doc_id"]]


def sample_documents(
    candidates: pd.DataFrame, records: Sequence[dict], size: int = 10
) -> list[SampleDocument]:
    """The documents `pick_sample` takes of the candidates, in its order."""
    by_id = {record["doc_id"]: record for record in records}
    return [document_of(by_id[doc_id]) for doc_id in pick_sample(candidates, size)["doc_id"]]


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
