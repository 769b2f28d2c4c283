"""The corpus document, as every consumer of the exported corpus sees it: what of a shard's
survivors a document carries (`kept_documents`), its kept text (`kept_text`, `block_texts`), its
JSON line (`to_json_line`), and the reader of the JSONL files (`read_corpus`). The export stage
writes the files (`corpusbuilder.export`); the quality stage scores the same documents, and the
report and the similarity stage read them back."""

from __future__ import annotations

import gzip
import json
import math
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from corpusbuilder.common.faults import not_utf8_line
from corpusbuilder.contracts.survivors import Survivors
from corpusbuilder.contracts.tables import (
    METADATA_COLUMNS,
    QUALITY_COUNTS,
    QUALITY_SIGNALS,
    REMOVED_PARTS,
)
from corpusbuilder.contracts.text import one_line, page_text

# the block columns an exported document carries
EXPORT_COLUMNS = ("text", "heading")


@dataclass
class ExportDocument:
    id: str
    url: str
    language: str
    paragraphs: list[str]  # one line each: white space inside a block is one space
    headings: list[bool]
    language_score: float | None = None
    warc_record_id: str | None = None
    date: str | None = None
    source: str | None = None
    offset: int | None = None
    quality: dict[str, float] | None = None
    quality_fails: list[str] | None = None
    # METADATA_COLUMNS, in their order: what the page says about itself, None where it is silent
    metadata: dict[str, str | None] = field(default_factory=lambda: dict.fromkeys(METADATA_COLUMNS))

    @property
    def text(self) -> str:
        return page_text(self.paragraphs)


def _present(value):
    """A table value, or None where it is missing (NaN, None)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def kept_text(text: str, removed_starts, removed_ends) -> str:
    """What a block partly kept by de-duplication keeps of its text: its whitespace chunks less
    the removed ranges [start, end) of them (dedup's ``removed_chunk_starts``/``_ends``), joined
    by one space as export writes a block."""
    chunks = text.split()
    kept = np.ones(len(chunks), bool)
    for start, end in zip(removed_starts, removed_ends):
        if end > len(chunks):
            raise ValueError(
                f"a removed range ends at chunk {end} of a block of {len(chunks)}: the dedup "
                "table and the blocks do not match (re-run tokenise and dedup)"
            )
        kept[start:end] = False
    return " ".join(c for c, k in zip(chunks, kept) if k)


def block_texts(blocks: pa.Table) -> list[str]:
    """Each block's text on one line; of a block partly kept by de-duplication, what it keeps."""
    texts = blocks["text"].to_pylist()
    if REMOVED_PARTS[0] not in blocks.column_names:
        return [one_line(text) for text in texts]
    # a block kept or removed whole has no ranges (a null)
    return [
        kept_text(text, starts, ends) if starts is not None else one_line(text)
        for text, starts, ends in zip(
            texts, blocks[REMOVED_PARTS[0]].to_pylist(), blocks[REMOVED_PARTS[1]].to_pylist()
        )
    ]


def quality_attributes(quality: pa.Table) -> dict[str, tuple[dict[str, float], list[str]]]:
    """doc_id -> (its signals, the rules it fails) of a quality table, as the JSONL carries
    them: counts as integers, ratios to 4 decimals."""
    signals = {
        name: np.round(np.asarray(quality[name], dtype=float), 4).tolist()
        for name in QUALITY_SIGNALS
    }
    rows = [dict(zip(signals, values)) for values in zip(*signals.values())]
    return {
        doc_id: ({k: int(v) if k in QUALITY_COUNTS else v for k, v in values.items()}, fails)
        for doc_id, values, fails in zip(
            quality["doc_id"].to_pylist(), rows, quality["fails"].to_pylist()
        )
    }


def kept_documents(kept: Survivors, quality: pa.Table | None = None) -> Iterator[ExportDocument]:
    """The surviving documents (`survivors.survivors`) with their blocks, in crawl order, and
    their quality attributes when the quality table is given."""
    # the blocks' columns as lists, cut per document (a table per document costs 10x more)
    paragraphs, headings = block_texts(kept.blocks), kept.blocks["heading"].to_pylist()
    rows_of: dict[str, list[int]] = {}
    for row_index, doc_id in enumerate(kept.blocks["doc_id"].to_pylist()):
        rows_of.setdefault(doc_id, []).append(row_index)
    attributes = quality_attributes(quality) if quality is not None else {}
    for row in kept.documents.to_pylist():
        rows = rows_of[row["doc_id"]]
        score, offset = _present(row.get("language_score")), _present(row.get("offset"))
        yield ExportDocument(
            id=row["doc_id"],
            url=row["uri"],
            language=row["language"] or "",
            paragraphs=[paragraphs[i] for i in rows],
            headings=[headings[i] for i in rows],
            language_score=None if score is None else round(float(score), 4),
            warc_record_id=_present(row.get("warc_record_id")),
            date=_present(row.get("date")),
            # the WARC the offset is in (a text input's is its shard)
            source=_present(row.get("warc")) or _present(row.get("shard")),
            offset=None if offset is None else int(offset),
            quality=attributes[row["doc_id"]][0] if row["doc_id"] in attributes else None,
            quality_fails=attributes[row["doc_id"]][1] if row["doc_id"] in attributes else None,
            metadata={name: _present(row.get(name)) for name in METADATA_COLUMNS},
        )


def to_json_line(doc: ExportDocument) -> str:
    record: dict[str, object] = {
        "id": doc.id,
        "text": doc.text,
        "url": doc.url,
        "language": doc.language,
        "language_score": doc.language_score,
        "warc_record_id": doc.warc_record_id,
        "date": doc.date,
        "source": doc.source,
        "offset": doc.offset,
        **doc.metadata,
        "paragraphs": doc.paragraphs,
    }
    if doc.quality is not None:
        record["quality"] = doc.quality
        record["quality_fails"] = doc.quality_fails
    return json.dumps(record, ensure_ascii=False) + "\n"


class CorpusFormatError(ValueError):
    """A file read as a corpus that is not one as `write_corpus` writes it."""


def read_corpus(path: Path) -> Iterator[dict]:
    """Read an exported `.jsonl.gz` (or plain `.jsonl`) corpus back, one dict per document.

    Raises CorpusFormatError, naming the file (and line), for what is not such a corpus: a
    ``.gz`` that is not gzip, cut short or damaged, a line that is not JSON or no document
    (an object with a string ``id`` and a list of ``paragraphs``), a file that is not UTF-8."""
    compressed = str(path).endswith(".gz")
    opener = gzip.open if compressed else open
    try:
        with opener(path, "rt", encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    document = json.loads(line)
                except json.JSONDecodeError as error:
                    raise CorpusFormatError(
                        f"{path}: line {number} is not JSON ({error.msg})"
                    ) from None
                if not (
                    isinstance(document, dict)
                    and isinstance(document.get("id"), str)
                    and isinstance(document.get("paragraphs"), list)
                ):
                    raise CorpusFormatError(
                        f"{path}: line {number} is no document (a JSON object with a string "
                        "id and a list of paragraphs)"
                    )
                yield document
    except gzip.BadGzipFile:
        raise CorpusFormatError(f"{path}: not gzip data") from None
    except EOFError:
        raise CorpusFormatError(f"{path}: cut short (its gzip stream ends early)") from None
    except zlib.error as error:
        raise CorpusFormatError(f"{path}: damaged gzip data ({error})") from None
    except UnicodeDecodeError as error:
        raise CorpusFormatError(not_utf8_line(path, error, compressed)) from None
