"""WARC reading: every record of a WARC file, in order, each either a page body or a reason.

Only HTTP 200 HTML responses keep their body; every other record keeps a row with the reason it
was skipped. Bodies are read with a hard size limit (a gzip bomb or a 2 GB "page" is never loaded
whole), and a truncated or corrupt gzip member ends the file's reading with a logged reason while
everything read so far is kept.
"""

from __future__ import annotations

import io
import logging
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from corpusbuilder.download.transfer import starts_a_warc_record

log = logging.getLogger(__name__)


class RecordLimits(Protocol):
    """What reading needs of the extract settings (`ExtractParams` has them)."""

    # read-only, as the fields of the frozen ExtractParams are
    @property
    def min_bytes(self) -> int: ...
    @property
    def max_bytes(self) -> int: ...
    @property
    def html_content_types(self) -> tuple[str, ...]: ...


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


def iter_warc_records(
    path: Path, params: RecordLimits, start: int = 0, first_index: int = 0
) -> Iterator[WarcRecord]:
    """Yield every record of a WARC file in order, each with a reason when it is not a page;
    from byte `start`, where a record begins, its first record numbered `first_index` (a part of
    the WARC, `warc_parts`: the index it has in the whole file).

    A record that cannot be read (malformed headers, a corrupt gzip member) gets a row of type
    `error` with its index and offset, and reading resumes at the next record that can be found
    (the next gzip member that starts a record, or the next ``WARC/1.`` line; a file may mix
    both); the row says how many bytes were skipped. When none follows, the rest of the file is
    reported as truncated. An uncompressed record whose Content-Length does not end where the
    next record begins is read up to that record instead, and a gzip member that holds several
    records (a whole file gzipped at once) yields each of them.
    """
    # warcio where a WARC is read: a job that only names ExtractParams does not load it
    from warcio.archiveiterator import ArchiveIterator
    from warcio.exceptions import ArchiveLoadFailed

    size = Path(path).stat().st_size
    index = first_index - 1
    resume: int | None = start
    with open(path, "rb") as stream, open(path, "rb") as probe:
        while resume is not None:
            stream.seek(resume)
            records = ArchiveIterator(stream, check_digests=False)
            began = last_start = resume
            resume = None
            try:
                for record in records:
                    if records.offset < last_start:
                        raise _MemberContinues  # warcio reads on in the member, at a wrong offset
                    if record.rec_type is None:
                        # stray bytes between gzip members, which warcio takes for a record
                        last_start = records.offset
                        raise _NotARecord
                    index += 1
                    # records.offset is where this record starts; get_record_offset() would consume
                    # its body.
                    last_start = records.offset
                    true_end = _framing_end(probe, last_start, record, size)
                    if true_end is not None:
                        yield _reframed_record(probe, last_start, true_end, index, params)
                        resume = _next_record_start(probe, true_end, size)
                        break
                    row = _read_record_or_error(record, index, last_start, params)
                    if row.reason and _headers_cut_off(probe, last_start, size):
                        # read as a record of a partial type ("warc-type-re"), without a URI or
                        # without a length, when the file ends inside its WARC headers
                        row.reason = _HEADERS_CUT_OFF
                    if row.reason.startswith("malformed"):
                        # the reader's state after a malformed record is not to be trusted: go on
                        # from the next record that can be found, whatever this one's length said
                        resume = _next_record_start(probe, last_start + 1, size)
                        row.reason = (
                            row.reason
                            + (
                                f"; the next record is {resume - last_start} bytes on"
                                if resume is not None
                                else "; no record follows"
                            )
                        )[:500]
                        yield row
                        break
                    yield row
                else:
                    if records.offset < size:
                        index += 1
                        yield WarcRecord(
                            index,
                            records.offset,
                            "error",
                            "",
                            reason=(
                                f"truncated: {size - records.offset} bytes at the end are no "
                                "complete record"
                            ),
                        )
                continue
            except (ArchiveLoadFailed, _MemberContinues) as error:
                if "non-chunked gzip" not in str(error) and not isinstance(error, _MemberContinues):
                    failure: Exception = error
                else:
                    # the member goes on after its first record: read the rest of it as it inflates
                    member_end: list[int] = []
                    for row in _rest_of_member(probe, last_start, index, params, member_end):
                        index = row.record_index
                        yield row
                    resume = _next_record_start(probe, member_end[0], size) if member_end else None
                    continue
            except Exception as error:  # noqa: BLE001 - any failure of a stranger's file is that record's
                failure = error
            failed_at = max(records.offset, last_start)
            # always forward: past where this reading began, so no record is read twice
            resume = _next_record_start(probe, failed_at + (failed_at == began), size)
            if resume is not None and _only_blank_lines(probe, failed_at, resume):
                continue  # the reader stopped where a record of the other kind (gzip, plain) begins
            what = f"{type(failure).__name__}: {ascii(str(failure)[:200])}"
            # the reader's own error (warcio's, on a record cut off mid-header or mid-body) is
            # kept for diagnosis, after what it means for the file
            reason = (
                f"truncated: the last {size - failed_at} bytes are an incomplete record ({what})"
                if resume is None
                else f"unreadable, {resume - failed_at} bytes skipped to the next record: {what}"
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


class _NotARecord(Exception):
    """Bytes where a record should begin that hold no WARC header."""


class _MemberContinues(Exception):
    """A gzip member goes on after its first record (a whole file gzipped at once)."""


_GZIP_MEMBER = b"\x1f\x8b\x08"
_PLAIN_RECORD = b"WARC/1."
_RECORD_LINE = re.compile(rb"WARC/1\.[0-9]\r?\n")


def _next_record_start(stream, after: int, size: int, chunk: int = 1 << 20) -> int | None:
    """Offset of the first record that begins at or after `after`: a gzip member that inflates to
    a WARC header, or a line starting ``WARC/1.`` (a file may hold both); None when there is
    none."""
    stream.seek(after)
    if stream.read(len(_PLAIN_RECORD)) == _PLAIN_RECORD:
        return after
    position = after
    while position < size:
        stream.seek(position)
        data = stream.read(chunk + 16)
        candidates = []
        # a record's first line, also where stray bytes without a newline run into it
        found = _RECORD_LINE.search(data)
        if found:
            candidates.append(found.start())
        found = data.find(_GZIP_MEMBER)
        while found >= 0 and not _member_starts_a_record(stream, position + found):
            found = data.find(_GZIP_MEMBER, found + 1)
        if found >= 0:
            candidates.append(found)
        if candidates:
            return position + min(candidates)
        position += chunk
    return None


def _member_starts_a_record(stream, offset: int) -> bool:
    stream.seek(offset)
    return starts_a_warc_record(stream.read(4096))


_HEADERS_CUT_OFF = "truncated: the file ends inside the record's WARC headers"
_HEADERS_READ = 1 << 16


def _headers_cut_off(stream, offset: int, size: int) -> bool:
    """Whether the file ends inside the WARC headers of the record at `offset`: no blank line ends
    them, plain or inflated, and nothing but them lies between `offset` and the end of the file.

    Headers longer than ``_HEADERS_READ`` bytes are not taken for cut off (the check reads no
    more, and stays cheap for the many records skipped for their type)."""
    if size - offset > _HEADERS_READ:
        return False
    stream.seek(offset)
    data = stream.read(_HEADERS_READ)
    if data[:2] == _GZIP_MEMBER[:2]:
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            # a member cut off inflates as far as it goes, without an error
            data = inflate.decompress(data, _HEADERS_READ)
        except zlib.error:
            return False  # not a cut but a corrupt member, which its reason says
        if inflate.eof:
            return False  # the member is whole, whatever it holds
    # warcio ends headers at the first line that is blank once stripped
    return len(data) < _HEADERS_READ and not _BLANK_LINE.search(data)


_BLANK_LINE = re.compile(rb"\n[ \t\r]*\n")


def _only_blank_lines(stream, start: int, end: int) -> bool:
    stream.seek(start)
    return end - start <= 8 and not stream.read(end - start).strip(b"\r\n")


def _framing_end(stream, offset: int, record, size: int) -> int | None:
    """Where an uncompressed record really ends when its Content-Length is wrong: the start of the
    next record after its header; None when the length ends at a record boundary (or at the end
    of the file), when no record follows (a truncated last record), or for a gzip member, which
    frames its record itself."""
    stream.seek(offset)
    if stream.read(2) == _GZIP_MEMBER[:2]:
        return None
    stream.seek(offset)
    header_end = stream.read(1 << 16).find(b"\r\n\r\n")
    if header_end < 0:
        return None
    try:
        length = int(record.rec_headers.get_header("Content-Length") or 0)
    except ValueError:
        return None  # a malformed record: reading it says so
    body_start = offset + header_end + 4
    if _boundary_at(stream, body_start + length, size):
        return None
    return _next_record_start(stream, body_start, size)


def _boundary_at(stream, position: int, size: int) -> bool:
    """Whether `position` is where a record ends: at most four CR/LF bytes, then the end of the
    file or the next record, plain or gzipped."""
    if position > size:
        return False
    stream.seek(position)
    after = stream.read(4 + len(_PLAIN_RECORD))
    rest = after.lstrip(b"\r\n") if len(after) - len(after.lstrip(b"\r\n")) <= 4 else b"?"
    return not rest or rest.startswith(_PLAIN_RECORD) or rest.startswith(_GZIP_MEMBER)


def _reframed_record(stream, offset: int, end: int, index: int, params: RecordLimits) -> WarcRecord:
    """Read the uncompressed record at `offset` as ending at `end` (where the next one begins),
    its Content-Length set to what is there."""
    from warcio.archiveiterator import ArchiveIterator

    stream.seek(offset)
    head = stream.read(1 << 16)
    header = head[: head.find(b"\r\n\r\n")]
    length = end - offset - len(header) - 4
    stream.seek(offset + len(header) + 4)
    body = stream.read(length) if length <= params.max_bytes + 65536 else b""
    body = body[: len(body.rstrip(b"\r\n")) if body.endswith(b"\r\n\r\n") else len(body)]
    declared = len(body) if body else length
    header = _CONTENT_LENGTH.sub(b"Content-Length: %d" % declared, header)
    record = next(ArchiveIterator(io.BytesIO(header + b"\r\n\r\n" + body), check_digests=False))
    row = _read_record_or_error(record, index, offset, params)
    log.warning(
        "record %d at offset %d: its Content-Length disagrees with where the next record begins; "
        "read as %d bytes",
        index,
        offset,
        declared,
    )
    return row


_CONTENT_LENGTH = re.compile(rb"(?im)^content-length:[^\r\n]*")


class _MemberStream(io.RawIOBase):
    """The inflated bytes of the one gzip member at `offset`, inflated as they are read (never
    whole); `end` is where the member ends in the file, once it has been read to its end, and
    `cut` whether the file ended first."""

    def __init__(self, file, offset: int):
        self.file, self.position = file, offset
        self.inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self.pending = b""
        self.end: int | None = None
        self.cut = False
        self.delivered = 0  # inflated bytes handed to the reader

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self.pending:
            if self.inflate.eof:
                return 0
            data = self.inflate.unconsumed_tail
            if not data:
                self.file.seek(self.position)
                data = self.file.read(1 << 16)
                self.position += len(data)
                if not data:
                    # an end of stream, not an error: the reader's buffer keeps what was inflated
                    # before it, the whole records ahead of the cut
                    self.cut = True
                    return 0
            self.pending = self.inflate.decompress(data, 1 << 16)
            if self.inflate.eof:
                self.end = self.position - len(self.inflate.unused_data)
        count = min(len(buffer), len(self.pending))
        buffer[:count] = self.pending[:count]
        self.pending = self.pending[count:]
        self.delivered += count
        return count


def _rest_of_member(
    stream, offset: int, index: int, params: RecordLimits, member_end: list[int]
) -> Iterator[WarcRecord]:
    """The records after the first of a gzip member that holds several, each a row at the
    member's offset; appends where the member ends to `member_end` when it is whole."""
    from warcio.archiveiterator import ArchiveIterator

    member = _MemberStream(stream, offset)
    reader = io.BufferedReader(member)
    records = ArchiveIterator(reader, check_digests=False)
    cut_off = f"truncated: the gzip member at {offset} ends inside this record"
    # Each row waits for the next record: only the last one read can be the one a cut member
    # ends in, read as far as it goes (a record of a partial type, without a length, malformed,
    # or one whose block ends early).
    held: tuple[WarcRecord, bool] | None = None
    try:
        for number, record in enumerate(records):
            if number:  # the first was read already
                if held:
                    yield held[0]
                index += 1
                row = _read_record_or_error(record, index, offset, params)
                partial = not row.reason.startswith("truncated") and (
                    row.reason.startswith("malformed")
                    or record.rec_headers.get_header("Content-Length") is None
                    or _cut_off(record, params.max_bytes)
                )
                held = (row, partial)
        # warcio ends its iteration quietly on a record whose headers end the stream
        unread = member.cut and member.delivered - records.offset > len(b"\r\n\r\n")
        if held:
            row, partial = held
            if member.cut and partial and not unread:
                row.reason = cut_off
            yield row
            held = None
        if unread:
            index += 1
            yield WarcRecord(index, offset, "error", "", reason=cut_off)
        while reader.read(1 << 16):
            pass
    except Exception as error:  # noqa: BLE001 - a stranger's member that breaks is a row
        if held:
            yield held[0]
        index += 1
        what = f"{type(error).__name__}: {ascii(str(error)[:200])}"
        yield WarcRecord(
            index,
            offset,
            "error",
            "",
            reason=(
                f"{cut_off} ({what})"
                if member.cut
                else f"unreadable within the gzip member at {offset}: {what}"
            )[:500],
        )
    if member.end is not None:
        member_end.append(member.end)


def _read_record(record, index: int, offset: int, params: RecordLimits) -> WarcRecord:
    from warcio.statusandheaders import StatusAndHeadersParser

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
    mime = out.content_type.split(";", 1)[0].strip().lower()
    if out.status != 200:
        skipped = f"status-{out.status}" if out.status is not None else "status-missing"
    elif mime not in params.html_content_types:
        skipped = f"content-type-{mime or 'missing'}"
    else:
        skipped = ""
    if skipped:
        # A record cut off in its HTTP headers reads as one without a status, with the first
        # digits of one ("HTTP/1.1 20") or without a Content-Type; its body is read nowhere else.
        cut_off = _cut_off(record, params.max_bytes)
        out.reason = (
            f"truncated: {record.raw_stream.limit} bytes of the record missing"
            if cut_off
            else skipped
        )
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


def _cut_off(record, max_bytes: int) -> bool:
    """Whether a record's block ends before its Content-Length; False when more than
    ``max_bytes`` of it are there (never read whole, so not known to be cut off)."""
    try:
        block = _read_limited(record.raw_stream, max_bytes)
    except Exception:  # noqa: BLE001 - a broken member is cut off too
        return True
    return block is not None and record.raw_stream.limit > 0


def _status_code(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
