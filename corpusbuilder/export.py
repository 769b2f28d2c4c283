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

from corpusbuilder.io import atomic_path
from corpusbuilder.tables import Survivors


# the block columns an exported document carries
EXPORT_COLUMNS = ("text", "heading")


@dataclass
class ExportDocument:
    id: str
    url: str
    language: str
    paragraphs: list[str]
    headings: list[bool]


def kept_documents(kept: Survivors) -> Iterator[ExportDocument]:
    """The surviving documents (`tables.survivors`) with their blocks, in crawl order."""
    by_doc = {doc_id: group for doc_id, group in kept.blocks.groupby("doc_id", sort=False)}
    for row in kept.documents.itertuples(index=False):
        group = by_doc[row.doc_id]
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
