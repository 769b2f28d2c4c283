"""Stage `export`: the corpus a user takes away, in two formats that carry the same documents.

- `{shard}.jsonl.gz`, one JSON object per kept document (the architecture's contract):
  ``{"id": "{shard}:{record index}", "url": ..., "language": ..., "paragraphs": [...]}``
- `{shard}.prevert.gz`, the prevertical format Sketch Engine and CWB compile: ``<doc id url
  language>``, one ``<p>`` per kept block (``heading="1"`` on headings), the text XML-escaped.

A document is exported when extract cleaned it, it has at least one good block, and each later
stage that ran (language filter, exact de-duplication) kept it; a block when its final class
(after block de-duplication, when that ran) is `good`. Both files are written with a fixed gzip
timestamp, so the same corpus always has the same bytes.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import pandas as pd

from corpusbuilder.io import atomic_path
from corpusbuilder.language import good_blocks, kept_blocks


@dataclass
class ExportDocument:
    id: str
    url: str
    language: str
    paragraphs: list[str]
    headings: list[bool]


def kept_documents(
    docs: pd.DataFrame,
    blocks: pd.DataFrame,
    language: pd.DataFrame | None = None,
    exact: pd.DataFrame | None = None,
    block_classes: pd.DataFrame | None = None,
) -> Iterator[ExportDocument]:
    """The documents and good blocks that survive every stage that ran, in crawl order.

    `language`: doc_id, language, kept (and dropped_blocks when block-level filtering ran);
    `exact`: doc_id, kept; `block_classes`: doc_id, block_index, final_class — block
    de-duplication's verdict on each block, which overrides extract's jusText class.
    """
    kept = docs[docs["outcome"] == "ok"][["doc_id", "record_index", "uri", "page_language"]]
    kept = kept.rename(columns={"page_language": "language"})
    classes = blocks[["doc_id", "block_index", "text", "heading", "final_class"]]
    if block_classes is not None:
        override = block_classes[["doc_id", "block_index", "final_class"]]
        classes = classes.drop(columns="final_class").merge(override, on=["doc_id", "block_index"])
    if language is not None:
        verdict = language[language["kept"]][["doc_id", "language"]]
        kept = kept.drop(columns="language").merge(verdict, on="doc_id")
        if "dropped_blocks" not in language:
            language = language.assign(dropped_blocks=[[] for _ in range(len(language))])
        good = kept_blocks(classes, language)
    else:
        good = good_blocks(classes)
    if exact is not None:
        kept = kept[kept["doc_id"].isin(exact.loc[exact["kept"], "doc_id"])]
    by_doc = {doc_id: group for doc_id, group in good.groupby("doc_id", sort=False)}
    for row in kept.sort_values("record_index").itertuples(index=False):
        group = by_doc.get(row.doc_id)
        if group is None:
            continue
        yield ExportDocument(
            id=row.doc_id,
            url=row.uri,
            language=row.language or "",
            paragraphs=group["text"].tolist(),
            headings=group["heading"].tolist(),
        )


def to_json_line(doc: ExportDocument) -> str:
    record = {"id": doc.id, "url": doc.url, "language": doc.language, "paragraphs": doc.paragraphs}
    return json.dumps(record, ensure_ascii=False) + "\n"


def to_prevertical(doc: ExportDocument) -> str:
    lines = [f"<doc id={quoteattr(doc.id)} url={quoteattr(doc.url)} language={quoteattr(doc.language)}>"]
    for text, heading in zip(doc.paragraphs, doc.headings):
        lines.append('<p heading="1">' if heading else "<p>")
        lines.append(escape(text))
        lines.append("</p>")
    lines.append("</doc>")
    return "\n".join(lines) + "\n"


def _write_gzip_text(path: Path, chunks: Iterable[str]) -> None:
    with atomic_path(path) as tmp, open(tmp, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
            with io.TextIOWrapper(gz, encoding="utf-8", newline="\n") as text:
                for chunk in chunks:
                    text.write(chunk)


def write_corpus(documents: Iterable[ExportDocument], jsonl_path: Path, prevert_path: Path) -> int:
    """Write both formats; returns the number of documents."""
    documents = list(documents)
    _write_gzip_text(Path(jsonl_path), map(to_json_line, documents))
    _write_gzip_text(Path(prevert_path), map(to_prevertical, documents))
    return len(documents)


def read_corpus(path: Path) -> Iterator[dict]:
    """Read an exported `.jsonl.gz` (or plain `.jsonl`) corpus back, one dict per document."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)
