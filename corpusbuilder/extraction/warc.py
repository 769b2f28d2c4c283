"""WARC reading: every record of a WARC file, in order, each either a page body or a reason.

Only HTTP 200 HTML responses keep their body; every other record keeps a row with the reason it
was skipped. Bodies are read with a hard size limit (a gzip bomb or a 2 GB "page" is never loaded
whole), and a truncated or corrupt gzip member ends the file's reading with a logged reason while
everything read so far is kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeadersParser

from corpusbuilder.download.transfer import starts_a_warc_record


class RecordLimits(Protocol):
    """What reading needs of the extract settings (`ExtractParams` has them)."""

    min_bytes: int
    max_bytes: int
    html_content_types: tuple[str, ...]


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


_CHARSET_PARAM = re.compile(r"charset\s*=\s*[\"']?([^\"';\s]+)", re.IGNORECASE)


def _charset_of(content_type: str) -> str | None:
    match = _CHARSET_PARAM.search(content_type or "")
    return match.group(1) if match else None


def _read_limited(stream, max_bytes: int) -> bytes | None:
    """Read at most `max_bytes`; None when there is more (the rest is never decompressed here)."""
    data = stream.read(max_bytes + 1)
    return None if len(data) > max_bytes else data


def iter_warc_records(path: Path, params: RecordLimits) -> Iterator[WarcRecord]:
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


def _read_record_or_error(record, index: int, offset: int, params: RecordLimits) -> WarcRecord:
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


def _read_record(record, index: int, offset: int, params: RecordLimits) -> WarcRecord:
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
