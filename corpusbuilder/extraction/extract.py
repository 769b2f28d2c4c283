"""Stage `extract`: WARC records → one document row per record and jusText-classified blocks.

Thesis ch. 2: every HTML page is segmented into blocks and classified by jusText (§2.7). This
module adds what a crawl written by strangers needs around it: only HTTP 200 HTML responses are
cleaned, every other record keeps a row with the reason it was skipped, bodies are read with a
hard size limit (a gzip bomb or a 2 GB "page" is never loaded whole), charsets are decoded
defensively, and a truncated or corrupt gzip member ends the shard's reading with a logged
reason while everything read so far is kept.
"""

from __future__ import annotations

import codecs
import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

import pyarrow as pa
from lxml import etree
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeadersParser

from corpusbuilder.common import stoplists
from corpusbuilder.common.io import ParquetBatchWriter, write_table
from corpusbuilder.config import ConfigError, dataclass_values
from corpusbuilder.download import starts_a_warc_record
from corpusbuilder.extraction.classifier import classify_learned, load_model, page_title
from corpusbuilder.extraction.justext import (
    PRESETS,
    JustextParams,
    classify,
    classify_context_free,
    count_stopwords,
    parse_html,
    segment_blocks,
)
from corpusbuilder.extraction.site_boilerplate import (
    SiteBoilerplateParams,
    mark_blocks,
    recount_good,
)
from corpusbuilder.language import load_identifier
from corpusbuilder.tables import BLOCKS_SCHEMA, DOCS_SCHEMA, read_table

log = logging.getLogger(__name__)

HTML_CONTENT_TYPES = ("text/html", "application/xhtml+xml")
BEST_PRESET = "best"


@dataclass(frozen=True)
class ExtractParams:
    """What the extract stage keeps and how it cleans it (config section `extract`)."""

    min_bytes: int = 64  # bodies shorter than this cannot hold a page worth cleaning
    max_bytes: int = 5_000_000  # bodies longer than this are skipped, never read whole
    html_content_types: tuple[str, ...] = HTML_CONTENT_TYPES
    max_control_share: float = 0.02  # share of C0 control bytes above which a body is binary
    language_sample_chars: int = 2000  # raw page text used to pick the stop list
    # a page cut into more blocks is skipped as too-many-blocks: memory and time grow with the
    # blocks (the learned preset's features most), and no article has this many
    max_blocks: int = 5000
    # a page in a language without a bundled list: "page" (its own most frequent words) or a list name
    stoplist_fallback: str = "page"
    justext: JustextParams = field(default_factory=lambda: PRESETS["default"])
    # "best" (the default preset, as in the schema): the learned block classifier
    # (corpusbuilder.extraction.classifier) decides instead of jusText's thresholds; `model` is a retrained
    # model file (rule `train`), None = the one shipped.
    learned: bool = True
    model: Path | None = None
    site_boilerplate: SiteBoilerplateParams = SiteBoilerplateParams()

    def with_preset(self, preset: str) -> ExtractParams:
        """These settings with another preset: a jusText one (thesis Table 2.7) or "best"."""
        if preset == BEST_PRESET:
            return replace(self, learned=True)
        return replace(self, learned=False, justext=PRESETS[preset])

    @classmethod
    def from_config(cls, section: dict) -> ExtractParams:
        """Build from the validated `extract` config section (preset + per-threshold overrides)."""
        values = dataclass_values(cls, section)
        preset = section.get("preset", BEST_PRESET)
        values["justext"] = replace(
            PRESETS.get(preset, PRESETS["default"]), **values.get("justext", {})
        )
        values["learned"] = preset == BEST_PRESET
        values["site_boilerplate"] = SiteBoilerplateParams.from_config(
            values.get("site_boilerplate", {})
        )
        values["html_content_types"] = tuple(values.get("html_content_types", HTML_CONTENT_TYPES))
        values["model"] = Path(values["model"]) if values.get("model") else None
        return cls(**values)


@dataclass
class WarcRecord:
    """One WARC record as read, before any HTML work; `body` is None when it was not read."""

    record_index: int
    offset: int
    warc_type: str
    uri: str
    record_id: str = ""  # WARC-Record-ID
    date: str = ""  # WARC-Date: when the page was fetched
    status: int | None = None
    content_type: str = ""
    http_charset: str | None = None
    body: bytes | None = None
    reason: str = ""  # set when the record is skipped while reading


# --------------------------------------------------------------------------- WARC reading

_CHARSET_PARAM = re.compile(r"charset\s*=\s*[\"']?([^\"';\s]+)", re.IGNORECASE)


def _charset_of(content_type: str) -> str | None:
    match = _CHARSET_PARAM.search(content_type or "")
    return match.group(1) if match else None


def _read_limited(stream, max_bytes: int) -> bytes | None:
    """Read at most `max_bytes`; None when there is more (the rest is never decompressed here)."""
    data = stream.read(max_bytes + 1)
    return None if len(data) > max_bytes else data


def iter_warc_records(path: Path, params: ExtractParams) -> Iterator[WarcRecord]:
    """Yield every record of a WARC file in order, each with a reason when it is not a page.

    A record that cannot be read (malformed headers, a corrupt gzip member) gets a row of type
    `error` with its index and offset, and reading resumes at the next record that can be found
    (the next gzip member, or the next ``WARC/1.`` line of an uncompressed file); the row says how
    many bytes were skipped. When none follows, the rest of the file is reported as truncated.
    """
    size = Path(path).stat().st_size
    index = -1
    start: int | None = 0
    with open(path, "rb") as stream:
        while start is not None:
            stream.seek(start)
            records = ArchiveIterator(stream, check_digests=False)
            last_start, start = start, None
            try:
                for record in records:
                    index += 1
                    # records.offset is where this record starts; get_record_offset() would consume its body.
                    last_start = records.offset
                    row = _read_record_or_error(record, index, last_start, params)
                    if row.reason.startswith("malformed"):
                        # the reader's state after a malformed record is not to be trusted: go on
                        # from the next record that can be found, whatever this one's length said
                        start = _next_record_start(stream, last_start + 1, size)
                        row.reason = (
                            row.reason
                            + (
                                f"; the next record is {start - last_start} bytes on"
                                if start is not None
                                else "; no record follows"
                            )
                        )[:500]
                        yield row
                        break
                    yield row
                else:
                    if records.offset < size:
                        failed_at = records.offset
                        index += 1
                        yield WarcRecord(
                            index,
                            failed_at,
                            "error",
                            "",
                            reason=(
                                f"truncated: {size - records.offset} bytes at the end are no complete record"
                            ),
                        )
                continue
            except Exception as error:  # noqa: BLE001 - any failure of a stranger's file is that record's
                failed_at = max(records.offset, last_start)
                # always forward: past the start of the last record read, so no record is read twice
                start = _next_record_start(stream, failed_at + 1, size)
                what = f"{type(error).__name__}: {ascii(str(error)[:200])}"
                # the reader's own error (warcio's, on a record cut off mid-header or mid-body) is
                # kept for diagnosis, after what it means for the file
                reason = (
                    f"truncated: the last {size - failed_at} bytes are an incomplete record ({what})"
                    if start is None
                    else f"unreadable, {start - failed_at} bytes skipped to the next record: {what}"
                )
            index += 1
            yield WarcRecord(index, failed_at, "error", "", reason=reason[:500])


def _read_record_or_error(record, index: int, offset: int, params: ExtractParams) -> WarcRecord:
    try:
        return _read_record(record, index, offset, params)
    except Exception as error:  # noqa: BLE001 - a malformed record is its own row, not the shard's end
        uri = record.rec_headers.get_header("WARC-Target-URI") or ""
        return WarcRecord(
            index,
            offset,
            record.rec_type or "error",
            uri,
            reason=f"malformed: {type(error).__name__}: {error}"[:500],
        )


_GZIP_MEMBER = b"\x1f\x8b\x08"


def _next_record_start(stream, after: int, size: int, chunk: int = 1 << 20) -> int | None:
    """Offset of the first record that begins at or after `after`: a gzip member that inflates to
    a WARC header, or, in an uncompressed file, a line starting ``WARC/1.``; None when there is none."""
    stream.seek(0)
    gzipped = stream.read(2) == _GZIP_MEMBER[:2]
    marker = _GZIP_MEMBER if gzipped else b"\nWARC/1."
    position = after
    while position < size:
        stream.seek(position)
        data = stream.read(chunk + len(marker))
        found = data.find(marker)
        while found >= 0:
            candidate = position + found + (0 if gzipped else 1)
            if not gzipped or _member_starts_a_record(stream, candidate):
                return candidate
            found = data.find(marker, found + 1)
        position += chunk
    return None


def _member_starts_a_record(stream, offset: int) -> bool:
    stream.seek(offset)
    return starts_a_warc_record(stream.read(4096))


def _read_record(record, index: int, offset: int, params: ExtractParams) -> WarcRecord:
    headers = record.rec_headers
    uri = headers.get_header("WARC-Target-URI") or ""
    out = WarcRecord(
        record_index=index,
        offset=offset,
        warc_type=record.rec_type,
        uri=uri,
        record_id=headers.get_header("WARC-Record-ID") or "",
        date=headers.get_header("WARC-Date") or "",
    )
    if uri.startswith("dns:"):
        out.reason = "dns"
        return out
    if record.rec_type != "response":
        out.reason = f"warc-type-{record.rec_type}"
        return out
    if record.http_headers is None:
        # warcio parses HTTP headers only for http(s) target URIs; crawlers also write others.
        if "application/http" not in (headers.get_header("Content-Type") or ""):
            out.reason = "no-http-headers"
            return out
        record.http_headers = StatusAndHeadersParser([], verify=False).parse(record.raw_stream)
    out.status = _status_code(record.http_headers.get_statuscode())
    out.content_type = record.http_headers.get_header("Content-Type") or ""
    out.http_charset = _charset_of(out.content_type)
    if out.status != 200:
        out.reason = f"status-{out.status}" if out.status is not None else "status-missing"
        return out
    mime = out.content_type.split(";", 1)[0].strip().lower()
    if mime not in params.html_content_types:
        out.reason = f"content-type-{mime or 'missing'}"
        return out
    declared_length = int(headers.get_header("Content-Length") or 0)
    if declared_length > params.max_bytes + 65536:  # HTTP headers are in the WARC length too
        out.reason = "too-large"
        return out
    try:
        body = _read_limited(record.content_stream(), params.max_bytes)
    except Exception as error:  # noqa: BLE001 - a broken member or content encoding
        out.reason = f"truncated: {type(error).__name__}"
        return out
    if body is None:
        out.reason = "too-large"
    elif record.raw_stream.limit > 0:
        # The record's declared length was not there to read: a member cut off mid-body.
        out.reason = f"truncated: {record.raw_stream.limit} bytes of the record missing"
    elif not body.strip():
        out.reason = "empty"
    elif len(body) < params.min_bytes:
        out.reason = "too-small"
    else:
        out.body = body
    return out


def _status_code(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


# --------------------------------------------------------------------------- decoding

_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE
)
_CONTROL_BYTES = bytes(set(range(0x20)) - {0x09, 0x0A, 0x0C, 0x0D, 0x1B})
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


class TooManyBlocksError(ValueError):
    """A page cut into more blocks than `max_blocks` (its row's reason says how many)."""


class UndecodableError(ValueError):
    """The body is binary or no charset turns it into text."""


def _codec(name: str | None) -> str | None:
    if not name:
        return None
    try:
        return codecs.lookup(name.strip().lower()).name
    except LookupError:
        return None


def control_byte_share(body: bytes, sample: int = 8192) -> float:
    """Share of C0 control bytes (but tab, newlines, form feed, escape) in the body's head."""
    head = body[:sample]
    return (len(head) - len(head.translate(None, _CONTROL_BYTES))) / max(1, len(head))


def decode_html(
    body: bytes, http_charset: str | None, max_control_share: float = 0.02
) -> tuple[str, str, str]:
    """Decode a page body: returns (text, codec name, where the charset came from).

    Order: byte-order mark; valid UTF-8 (a declaration is often wrong, valid multi-byte UTF-8
    by chance almost never is); the HTTP header charset; the `<meta>` charset; detection by
    charset-normalizer. A declared charset is used only if it decodes the body strictly, so a
    page served as "utf-8" in Latin-1 bytes still comes out readable.
    """
    for bom, name in _BOMS:
        if body.startswith(bom):
            return body.decode(name, errors="replace"), name, "bom"
    if control_byte_share(body) > max_control_share:
        raise UndecodableError("binary")
    declared = [("http", _codec(http_charset))]
    meta = _META_CHARSET.search(body[:4096])
    declared.append(("meta", _codec(meta.group(1).decode("ascii") if meta else None)))
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        source = next((s for s, c in declared if c == "utf-8"), "utf8-valid")
        return text, "utf-8", source
    for source, name in declared:
        if name and name != "utf-8":
            try:
                return body.decode(name), name, source
            except (UnicodeDecodeError, LookupError):
                continue
    lenient = _decode_utf8_leniently(body)
    if lenient is not None:
        return lenient, "utf-8", "utf8-lenient"
    return _decode_detected(body)


# A UTF-8 page with a stray byte, or cut off inside its last character, keeps its text when no more
# than one byte in this many is broken; each broken byte becomes U+FFFD (counted in the docs row).
LENIENT_UTF8_BYTES_PER_ERROR = 1000


def _decode_utf8_leniently(body: bytes) -> str | None:
    """The body as UTF-8 with its few broken bytes replaced, when it is UTF-8 — it holds more
    valid multi-byte characters than broken bytes — and the broken bytes are rare; else None. A
    page in a one-byte code page (whatever its declaration says) has a broken "byte" at every
    accented letter and no valid multi-byte character: it goes to detection."""
    text = body.decode("utf-8", errors="replace")
    broken = replaced_characters(text) - body.count(b"\xef\xbf\xbd")
    if broken > max(1, len(body) // LENIENT_UTF8_BYTES_PER_ERROR):
        return None
    multibyte = sum(1 for ch in text if ord(ch) > 127 and ch != "\ufffd")
    return text if multibyte > broken else None


def replaced_characters(text: str) -> int:
    return text.count("\ufffd")


def _decode_detected(body: bytes) -> tuple[str, str, str]:
    from charset_normalizer import from_bytes

    matches = list(from_bytes(body[:65536]))
    if not matches:
        raise UndecodableError("undecodable")
    best = min(matches, key=lambda match: match.chaos)
    # Short Western pages decode almost equally cleanly in several code pages; windows-1252 is
    # what undeclared Western pages overwhelmingly are (and the WHATWG default), so it wins near-ties.
    western = next((m for m in matches if m.encoding == "cp1252"), None)
    if western is not None and western.chaos <= best.chaos + 0.1:
        best = western
    return (
        body.decode(best.encoding, errors="replace"),
        _codec(best.encoding) or best.encoding,
        "detected",
    )


# --------------------------------------------------------------------------- page language

_HIDDEN_TEXT_TAGS = frozenset({"script", "style"})


def identify_sample(sample: str) -> tuple[str, float]:
    """ISO 639-1 code and probability of a text sample (py3langid, loaded once per process)."""
    if not sample:
        return "", 0.0
    codes, probabilities = load_identifier("py3langid").identify([sample])
    return codes[0], float(probabilities[0])


def visible_text_sample(root, sample_chars: int) -> str:
    """The first ``sample_chars`` characters of the text in the page's <body> (else its root)
    outside <script> and <style>, each whitespace run one space.

    A walk that stops once it has the sample: the XPath ``.//text()[not(ancestor::script or
    ancestor::style)]`` over the whole page, joined and cut, gave the same sample in four times
    the time (and was a quarter of the extract stage's work per page).
    """
    body = root.find("body")
    scope = body if body is not None else root
    words: list[str] = []
    length = -1  # of " ".join(words)
    walker = etree.iterwalk(scope, events=("start", "end", "comment", "pi"))
    for event, el in walker:
        if event == "start":
            if el.tag in _HIDDEN_TEXT_TAGS:
                walker.skip_subtree()  # its tail still comes with its end event
                continue
            piece = el.text
        elif el is scope:
            break
        else:
            piece = el.tail
        if piece:
            for word in piece.split():
                words.append(word)
                length += len(word) + 1
            if length >= sample_chars:
                break
    return " ".join(words)[:sample_chars]


def guess_page_language(root, sample_chars: int) -> tuple[str, float]:
    """ISO 639-1 code and probability of a page's visible text, to choose its stop list."""
    return identify_sample(visible_text_sample(root, sample_chars))


def segment_page(
    root, language: str, fallback: str, structure_hints: bool = True
) -> tuple[str | None, list]:
    """jusText's blocks of a page (§2.7.1; with ``structure_hints``, as the `best` preset reads
    them, also cut at HTML5's block-level elements) with stop words counted by the list of its language,
    else by ``fallback``'s; with fallback `page`, by a list of the page's own most frequent
    words (`stoplists.page_stoplist`), or letters where the language has no spaces.
    ``structure_hints``: as `segment_blocks` takes it."""
    name, stoplist = stoplists.stoplist_for(language, fallback)
    blocks = segment_blocks(root, stoplist, structure_hints)
    if name == stoplists.PAGE:
        by_characters = stoplists.writes_without_spaces(language)
        tokens = partial(stoplists.stop_tokens, by_characters=by_characters)
        count_stopwords(
            blocks, stoplists.page_stoplist((b.text for b in blocks), by_characters), tokens
        )
    return name, blocks


# --------------------------------------------------------------------------- the stage


@dataclass
class CleanedPage:
    """A page after decoding and jusText: what the docs and blocks tables need of it."""

    charset: str
    charset_source: str
    language: str
    language_probability: float
    stoplist: str
    blocks: list
    replaced_characters: int = 0  # broken bytes of a leniently decoded UTF-8 page
    title: str = ""  # the page's <title>, a feature of the learned classifier


def segmented_page(
    body: bytes, http_charset: str | None, params: ExtractParams, stoplist_name: str | None = None
) -> CleanedPage:
    """Decode, parse, pick the stop list by the page's language and cut the page into jusText's
    blocks (§2.7.1; the `best` preset's also at HTML5's block-level elements), not yet classified.

    `stoplist_name` forces one stop list instead of guessing the page's language.
    """
    text, charset, charset_source = decode_html(body, http_charset, params.max_control_share)
    replaced = replaced_characters(text) if charset_source == "utf8-lenient" else 0
    root = parse_html(text)
    if root is None:
        return CleanedPage(charset, charset_source, "", 0.0, "", [], replaced)
    if stoplist_name is None:
        language, probability = guess_page_language(root, params.language_sample_chars)
        stoplist_name, blocks = segment_page(
            root, language, params.stoplist_fallback, params.learned
        )
    else:
        language, probability = "", 0.0
        blocks = segment_blocks(root, stoplists.load_stoplist(stoplist_name), params.learned)
    if len(blocks) > params.max_blocks:
        raise TooManyBlocksError(
            f"too-many-blocks: {len(blocks)} (extract.max_blocks {params.max_blocks})"
        )
    # the title is a feature of the learned classifier only: the jusText presets skip the lookup
    return CleanedPage(
        charset,
        charset_source,
        language,
        probability,
        stoplist_name,
        blocks,
        replaced,
        page_title(root) if params.learned else "",
    )


def clean_page(
    body: bytes, http_charset: str | None, params: ExtractParams, stoplist_name: str | None = None
) -> CleanedPage:
    """:func:`segmented_page`, then jusText's classification (§2.7), or the learned classifier's
    with ``params.learned``."""
    page = segmented_page(body, http_charset, params, stoplist_name)
    if not page.blocks:
        return page
    if params.learned:
        # The learned classes are final (Algorithm 2.3's context is among the model's features);
        # jusText's context-free classes stay beside them, for the context pass that block
        # de-duplication and site-level boilerplate run again once blocks are removed (§3.5.2).
        final_classes = classify_learned(page.blocks, page.title, load_model(params.model))
        cf_classes = classify_context_free(page.blocks, params.justext)
    else:
        cf_classes, final_classes = classify(page.blocks, params.justext)
    for block, cf_class, final_class in zip(page.blocks, cf_classes, final_classes):
        block.cf_class = cf_class
        block.final_class = final_class
    return page


@dataclass
class ShardSummary:
    """Counts for the log and the caller: records by outcome and skip reason."""

    records: int = 0
    attempted: int = 0  # records whose body was read to be cleaned
    pages: int = 0
    blocks: int = 0
    good_blocks: int = 0
    reasons: dict[str, int] = field(default_factory=dict)

    def count(self, reason: str) -> None:
        key = reason.split(":", 1)[0]
        self.reasons[key] = self.reasons.get(key, 0) + 1


def extract_shard(
    warcs: Sequence[tuple[str, Path]],
    shard: str,
    docs_path: Path,
    blocks_path: Path,
    params: ExtractParams,
    progress_every: int = 500,
) -> ShardSummary:
    """Read a shard's WARCs, ``(name, path)`` in crawl order, and write its docs and blocks
    tables (atomically, in batches).

    A record's id is its WARC's name and its index there, so it is the same whichever shard
    holds the WARC; ``record_index`` counts on across the shard's WARCs (crawl order). A WARC cut
    short ends with its truncated row, and the next WARC is read all the same.
    A fault of one page is that page's row (reason ``error-…``); a fault of the environment — an
    unreadable model, an I/O or memory error — fails the job, and so does a shard in which every
    page failed, rather than leave tables of error rows that later stages take for a corpus."""
    if params.learned:
        try:
            load_model(params.model)
        except (OSError, ValueError, KeyError) as error:
            raise ConfigError(
                f"config key 'extract.model': cannot load {params.model or 'the shipped model'}: "
                f"{type(error).__name__}: {error}"
            ) from None
    summary = ShardSummary()
    with (
        ParquetBatchWriter(docs_path, DOCS_SCHEMA) as docs,
        ParquetBatchWriter(blocks_path, BLOCKS_SCHEMA) as blocks_out,
    ):
        for warc, path in warcs:
            for record in iter_warc_records(path, params):
                row = _doc_row(shard, warc, summary.records, record)
                summary.records += 1
                if record.body is not None:
                    summary.attempted += 1
                    _clean_into(row, record, params, blocks_out, summary)
                if row["reason"] != "ok":
                    summary.count(row["reason"])
                    if row["reason"].startswith("truncated"):
                        log.warning(
                            "%s: reading stopped at offset %d: %s",
                            warc,
                            record.offset,
                            row["reason"],
                        )
                docs.append(row)
                if summary.records % progress_every == 0:
                    log.info(
                        "%s: %d records, %d pages, %d blocks",
                        shard,
                        summary.records,
                        summary.pages,
                        summary.blocks,
                    )
        failed = {
            reason: count
            for reason, count in summary.reasons.items()
            if reason.startswith("error-")
        }
        if failed and sum(failed.values()) == summary.attempted:  # raised here, no table is written
            raise RuntimeError(
                f"{shard}: every page failed ({', '.join(failed)}): a fault of the code or the "
                "machine, not of the pages; see the log"
            )
    if params.site_boilerplate.mode != "off":
        summary.good_blocks = mark_site_boilerplate(docs_path, blocks_path, params)
    log.info(
        "%s: done: %d records, %d pages cleaned, %d blocks (%d good); skipped: %s",
        shard,
        summary.records,
        summary.pages,
        summary.blocks,
        summary.good_blocks,
        ", ".join(f"{k}={v}" for k, v in sorted(summary.reasons.items())) or "none",
    )
    return summary


def mark_site_boilerplate(docs_path: Path, blocks_path: Path, params: ExtractParams) -> int:
    """Rewrite a shard's tables with Ikeda et al.'s site-level marks; returns the good blocks left.

    Hosts are the shard's own: the pass needs every page of a host, and a shard is what one
    extract job sees.
    """
    docs, blocks = read_table(docs_path), read_table(blocks_path)
    blocks = mark_blocks(blocks, docs, params.site_boilerplate, params.justext)
    write_table(
        pa.Table.from_pandas(blocks, schema=BLOCKS_SCHEMA, preserve_index=False), blocks_path
    )
    if (
        params.site_boilerplate.mode == "combine"
    ):  # `mark` adds a column; only `combine` changes classes
        docs = recount_good(docs, blocks)
        write_table(pa.Table.from_pandas(docs, schema=DOCS_SCHEMA, preserve_index=False), docs_path)
    log.info(
        "site boilerplate (%s): %d of %d blocks marked",
        params.site_boilerplate.mode,
        int(blocks["site_boilerplate"].sum()),
        len(blocks),
    )
    return int((blocks["final_class"] == "good").sum())


def _doc_row(shard: str, warc: str, record_index: int, record: WarcRecord) -> dict:
    return {
        "doc_id": f"{warc}:{record.record_index}",
        "shard": shard,
        "record_index": record_index,
        "warc": warc,
        "offset": record.offset,
        "warc_type": record.warc_type,
        "uri": record.uri,
        "warc_record_id": record.record_id or None,
        "date": record.date or None,
        "status": record.status,
        "content_type": record.content_type,
        "charset": None,
        "charset_source": None,
        "replaced_characters": None,
        "page_language": None,
        "page_language_probability": None,
        "stoplist": None,
        "outcome": "skipped",
        "reason": record.reason,
        "n_blocks": 0,
        "n_good_blocks": 0,
        "n_good_words": 0,
    }


def _clean_into(
    row: dict, record: WarcRecord, params: ExtractParams, blocks_out, summary: ShardSummary
) -> None:
    try:
        page = clean_page(record.body, record.http_charset, params)
    except (UndecodableError, TooManyBlocksError) as error:
        row["reason"] = str(error)
        return
    except (OSError, MemoryError):
        raise  # the machine's fault, not the page's: the job fails rather than write an empty shard
    except Exception as error:  # noqa: BLE001 - one hostile page must not stop the shard
        log.exception("%s: cleaning failed", row["doc_id"])
        row["reason"] = f"error-{type(error).__name__}"
        return
    row.update(
        charset=page.charset,
        charset_source=page.charset_source,
        replaced_characters=page.replaced_characters,
        page_language=page.language,
        page_language_probability=page.language_probability,
        stoplist=page.stoplist,
    )
    if not page.blocks:
        row["reason"] = "no-text"
        return
    good = [b for b in page.blocks if b.final_class == "good"]
    row.update(
        outcome="ok",
        reason="ok",
        n_blocks=len(page.blocks),
        n_good_blocks=len(good),
        n_good_words=sum(b.n_words for b in good),
    )
    summary.pages += 1
    summary.blocks += len(page.blocks)
    summary.good_blocks += len(good)
    for index, block in enumerate(page.blocks):
        blocks_out.append(
            {
                "doc_id": row["doc_id"],
                "block_index": index,
                "text": block.text,
                "dom_path": block.dom_path,
                "xpath": block.xpath,
                "heading": block.heading,
                "n_chars": block.n_chars,
                "n_words": block.n_words,
                "n_stopwords": block.n_stopwords,
                "link_density": block.link_density,
                "stopword_density": block.stopword_density,
                "cf_class": block.cf_class,
                "final_class": block.final_class,
                "site_boilerplate": False,
            }
        )
