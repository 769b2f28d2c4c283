"""Stage `export`: the corpus a user takes away, in three formats that carry the same documents.

- `{shard}.jsonl.gz`, one JSON object per kept document, with the fields the LLM-data tools read
  (Dolma, datatrove, FineWeb): ``text`` (the kept blocks joined by blank lines), ``id``, ``url``,
  ``language``, ``language_score``, ``warc_record_id``, ``date`` (WARC-Date), ``source`` (the
  shard) and ``offset`` (the record's byte offset in its WARC); what the page says about itself
  (`extraction.metadata`, null where it says nothing): ``title``, ``author``, ``published`` (the
  date published, YYYY-MM-DD), ``sitename`` and ``canonical_url``; and ``paragraphs``, the blocks
  one by one, for corpus linguists who work by paragraph; ``quality``, the document's quality
  signals (an object, as Dolma's attributes), and ``quality_fails``, the rules of Gopher, C4 and
  FineWeb it fails (``<set>.<rule>``, empty when none), both from the quality stage
  (`corpusbuilder.quality`).
- `{shard}.prevert.gz`, prevertical text: ``<doc id url language>`` and those of the page's
  title, author, published, sitename and canonical_url it has, one ``<p>`` per kept block
  (``heading="1"`` on headings), the text XML-escaped, one block a line.
- `{shard}.vert.gz`, the vertical format CWB and Sketch Engine encode: the same structure with one
  token a line, the tokens the tokenise stage wrote to its token file (`vertical_paragraphs`), so
  that the text is not tokenised twice.

A document is exported when extract cleaned it, it has at least one good block, and each later
stage that ran (language filter, exact de-duplication, quality filter) kept it; a block when its
final class (after block de-duplication, when that ran) is `good`. White space inside a block is
one space in every format. The three files are written in one pass over the documents, with a
fixed gzip timestamp, so the same corpus always has the same bytes (with the same `isal`: ISA-L's
deflate at its level `ISAL_LEVEL`, not zlib's levels).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape as _xml_escape
from xml.sax.saxutils import quoteattr as _xml_quoteattr

import numpy as np
from isal import igzip

from corpusbuilder.common.io import atomic_path
from corpusbuilder.common.scripts import char_class
from corpusbuilder.contracts.corpus import ExportDocument, to_json_line
from corpusbuilder.contracts.survivors import block_rows
from corpusbuilder.contracts.tables import REMOVED_PARTS
from corpusbuilder.contracts.tokenfile import TokenStream, token_types
from corpusbuilder.tokenise import tokenise

if TYPE_CHECKING:
    from corpusbuilder.contracts.survivors import Survivors

# Deflate of the three files: ISA-L's (isal.igzip; gzip files, which every gzip reader takes) at
# its level 3. On the scale run's corpus (649 MB; bench/bench_export.py, docs/measurements.md) it
# deflates in 0.22x the CPU of zlib's level 4, which had been a third of the stage, into 3 % more
# bytes; ISA-L's level 2 takes 0.14x for 6 % more. zlib's level 4 had been 0.41x level 6's CPU.
ISAL_LEVEL = 3

# XML 1.0 allows no C0 control character but tab, newline and carriage return, no surrogate and
# neither U+FFFE nor U+FFFF (a NUL, an ESC or a U+FFFF in a URL or a page's text would make the
# vertical files ill-formed); they go, as the parsers would, and so do the other Unicode
# non-characters (U+FDD0-U+FDEF, the last two of every plane), which stand for no text.
_XML_FORBIDDEN = re.compile(
    "["
    + char_class(
        [(0, 8), (11, 12), (14, 31), (0xD800, 0xDFFF), (0xFDD0, 0xFDEF)]
        + [(plane + 0xFFFE, plane + 0xFFFF) for plane in range(0, 0x110000, 0x10000)]
    )
    + "]"
)


def _xml_chars(text: str) -> str:
    # A printable text (most) holds none of them: no control character (Cc), surrogate (Cs) or
    # non-character (Cn). Checking that in C costs a tenth of looking for them.
    return text if text.isprintable() else _XML_FORBIDDEN.sub("", text)


def escape(text: str) -> str:
    return _xml_escape(_xml_chars(text))


def quoteattr(text: str) -> str:
    return _xml_quoteattr(_xml_chars(text))


def _doc_tag(doc: ExportDocument) -> str:
    """``<doc>`` with the document's id, url and language, then each metadata attribute the page
    has (one it lacks is left out, which CWB reads as empty)."""
    attributes = {"id": doc.id, "url": doc.url, "language": doc.language, **doc.metadata}
    return (
        "<doc "
        + " ".join(f"{k}={quoteattr(v)}" for k, v in attributes.items() if v is not None)
        + ">"
    )


def to_prevertical(doc: ExportDocument) -> str:
    lines = [_doc_tag(doc)]
    for text, heading in zip(doc.paragraphs, doc.headings):
        lines.append('<p heading="1">' if heading else "<p>")
        lines.append(escape(text))
        lines.append("</p>")
    lines.append("</doc>")
    return "\n".join(lines) + "\n"


def token_lines(text: str) -> str:
    """A paragraph's tokens by the tokeniser, XML-escaped, one a line; a token that escaping
    empties (a control character) is left out."""
    # escaped a paragraph at a time, not a token at a time: no token holds a newline
    return "\n".join(filter(None, escape("\n".join(tokenise(text))).split("\n")))


def to_vertical(doc: ExportDocument, paragraph_tokens: list[str] | None = None) -> str:
    """One token a line inside ``<doc>`` and ``<p heading="0|1">``, XML-escaped: what
    ``cwb-encode -xsB -S doc:0+id+url+language+title+author+published+sitename+canonical_url
    -S p:0+heading`` reads. ``paragraph_tokens``: each paragraph's token lines as `token_lines`
    gives them (`vertical_paragraphs` takes them from the token file); by default the tokeniser
    makes them."""
    if paragraph_tokens is None:
        paragraph_tokens = [token_lines(text) for text in doc.paragraphs]
    lines = [_doc_tag(doc)]
    for tokens, heading in zip(paragraph_tokens, doc.headings):
        lines.append(f'<p heading="{int(heading)}">')
        if tokens:
            lines.append(tokens)
        lines.append("</p>")
    lines.append("</doc>")
    return "\n".join(lines) + "\n"


def kept_spans(
    chunk_start: np.ndarray, chunk_end: np.ndarray, removed_starts, removed_ends
) -> np.ndarray:
    """Per token of a block partly kept by de-duplication: is it in the kept text
    (`corpus.kept_text`)? A token goes with its span of the block's whitespace chunks — from where
    the chunk before its own ends (the block's start for the first) to its `chunk_end` — and
    de-duplication removes whole spans (`dedup.sentences.removed_chunks`), so a span is kept or
    removed whole; one the removed ranges cut means that the dedup table and the token file
    were not made from the same text."""
    end = np.asarray(chunk_end, np.int64)
    opener = np.flatnonzero(chunk_start)
    begin = np.repeat(
        np.concatenate(([0], end[opener[1:] - 1])), np.diff(np.append(opener, len(end)))
    )
    removed = np.zeros(max(int(end.max(initial=0)), *removed_ends, 0) + 1, np.int64)
    for first, last in zip(removed_starts, removed_ends):
        removed[first:last] = 1
    inside = np.concatenate(([0], np.cumsum(removed)))
    gone = inside[end] - inside[begin]
    if ((gone > 0) & (gone < end - begin)).any():
        raise ValueError(
            "a removed range of the dedup table cuts a token's chunks: the dedup table and the "
            "token file do not match (re-run tokenise and dedup)"
        )
    return gone == 0


# what `vertical_paragraphs` reads of a token file
TOKEN_FIELDS = (
    *("block_offsets", "block_doc", "block_index", "doc_ids", "chunk_start", "chunk_end"),
    *("type_id", "types"),
)


def vertical_paragraphs(kept: Survivors, tokens: TokenStream) -> dict[str, list[str]]:
    """Per surviving document (`survivors.survivors`), per block in page order: its tokens from the
    shard's token file (`tokenise.tokenise_shard`, which tokenised these blocks and more), as
    `token_lines` gives them, without its parts de-duplication removed. Each token type is
    escaped once, not each token."""
    blocks = kept.blocks
    doc_ids = np.asarray(tokens.doc_ids).astype(str)
    row = block_rows(
        blocks["doc_id"],
        blocks["block_index"],
        doc_ids[np.asarray(tokens.block_doc, np.int64)] if len(doc_ids) else [],
        tokens.block_index,
    )
    if (row < 0).any():
        missing = int(np.argmax(row < 0))
        raise ValueError(
            f"block {blocks['block_index'][missing].as_py()} of document "
            f"{blocks['doc_id'][missing].as_py()} "
            "is not in the token file: it was made from other tables (re-run tokenise)"
        )
    offsets = np.asarray(tokens.block_offsets, np.int64)
    first, count = offsets[row], offsets[row + 1] - offsets[row]
    block_start = np.cumsum(count) - count  # of each block among the tokens taken
    token = np.repeat(first - block_start, count) + np.arange(int(count.sum()))
    lines = np.array([escape(t) for t in token_types(tokens)], dtype=object)
    type_id = np.asarray(tokens.type_id, np.int64)[token]
    keep = np.array([bool(line) for line in lines], bool)[type_id]
    if REMOVED_PARTS[0] in blocks.column_names:
        for i, (starts, ends) in enumerate(
            zip(blocks[REMOVED_PARTS[0]].to_pylist(), blocks[REMOVED_PARTS[1]].to_pylist())
        ):
            if starts is not None:  # a block kept whole has none (null)
                at = slice(first[i], first[i] + count[i])
                keep[block_start[i] : block_start[i] + count[i]] &= kept_spans(
                    tokens.chunk_start[at], tokens.chunk_end[at], starts, ends
                )
    kept_lines = lines[type_id[keep]].tolist()
    bounds = np.concatenate(([0], np.cumsum(keep)))[np.append(block_start, len(token))]
    by_doc: dict[str, list[str]] = {}
    for doc_id, begin, end in zip(
        blocks["doc_id"].to_pylist(), bounds[:-1].tolist(), bounds[1:].tolist()
    ):
        by_doc.setdefault(doc_id, []).append("\n".join(kept_lines[begin:end]))
    return by_doc


@contextmanager
def _gzip_text(path: Path) -> Iterator[io.TextIOWrapper]:
    with atomic_path(path) as tmp, open(tmp, "wb") as raw:
        with igzip.IGzipFile(
            filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=ISAL_LEVEL
        ) as gz:
            with io.TextIOWrapper(gz, encoding="utf-8", newline="\n") as text:
                yield text


def write_corpus(
    documents: Iterable[ExportDocument],
    jsonl_path: Path,
    prevert_path: Path,
    vert_path: Path | None = None,
    vertical: Mapping[str, list[str]] | None = None,
) -> int:
    """Write the formats in one pass over the documents; returns their number. ``vertical``:
    each document's paragraph tokens (`vertical_paragraphs`); without it, the tokeniser makes
    them."""
    count = 0
    with ExitStack() as files:
        jsonl = files.enter_context(_gzip_text(Path(jsonl_path)))
        prevert = files.enter_context(_gzip_text(Path(prevert_path)))
        vert = files.enter_context(_gzip_text(Path(vert_path))) if vert_path is not None else None
        for doc in documents:
            jsonl.write(to_json_line(doc))
            prevert.write(to_prevertical(doc))
            if vert is not None:
                vert.write(to_vertical(doc, None if vertical is None else vertical[doc.id]))
            count += 1
    return count
