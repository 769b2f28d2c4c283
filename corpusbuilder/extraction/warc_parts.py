"""A large WARC read as several shards (`input.shard_mb`): part k of K holds the records whose
reading begins in bytes [k·size/K, (k+1)·size/K) of the file, each with the index it has in the
whole WARC, so a document's id (its WARC's name and record index) does not depend on the split.

A record's index is its position in `iter_warc_records`' reading of the whole file, error rows
included, and no part can count the records before it without reading them. So one job a WARC
(`index_parts`, rule `warc_parts`) reads it whole — the reading without any HTML work, about a
twentieth of what extracting it costs — and notes where each part starts: the first record at
or after the part's first byte that a reading begun there reads as the whole file's reading
does. That is a gzip member that inflates to a WARC record, holds no other, and follows a
record read without fault; the reader keeps no state across such a boundary, so a fresh reading
from it yields the same rows. A WARC with no such point past its start (uncompressed, one gzip
member for the whole file, or unreadable throughout) cannot be split: its first part reads it
whole, the others are empty, and the log says so.

Each part's job (`read_part`) seeks to its start, reads until the next part's, and checks that
it stopped at the index the whole reading had there: a disagreement is a fault of the code, which
fails the job rather than hand on ids that another part also has.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from corpusbuilder.common.faults import JobFault
from corpusbuilder.contracts.warcparts import PartStart
from corpusbuilder.download.transfer import GZIP_MAGIC, starts_a_warc_record
from corpusbuilder.extraction.warc import RecordLimits, WarcRecord, iter_warc_records

log = logging.getLogger(__name__)

# the extract settings a reading of records reads (`RecordLimits`): the warc_parts job's, whose
# starts a change of any other leaves as they are
RECORD_LIMITS = ("min_bytes", "max_bytes", "html_content_types")
_HEADER_BYTES = 4096  # inflated, enough to see a record's first line


@dataclass(frozen=True)
class ReadRow:
    """What choosing the starts needs of a record as the whole file's reading read it: its
    offset, and whether it was read without fault."""

    offset: int
    clean: bool


def part_starts(
    rows: list[ReadRow], size: int, parts: int, member_start: Callable[[int], bool]
) -> list[PartStart]:
    """Each part's start, and after the last the end (``parts + 1`` of them), from the rows of
    the whole file's reading: part 0 at the file's start; part k at the first row at or after
    byte k·size/K that is clean, alone at its offset (a member of one record), after a clean row,
    and where `member_start(offset)` (a gzip member that inflates to a WARC record); the end
    when no row is."""
    end = PartStart(size, len(rows))
    starts = [PartStart(0, 0)]
    index = 1
    for k in range(1, parts):
        boundary = k * size // parts
        found = end
        while index < len(rows):
            row = rows[index]
            if row.offset >= boundary and _restartable(rows, index) and member_start(row.offset):
                found = PartStart(row.offset, index)
                break
            index += 1
        starts.append(found)
    return [*starts, end]


def _restartable(rows: list[ReadRow], index: int) -> bool:
    row, before = rows[index], rows[index - 1]
    after = rows[index + 1] if index + 1 < len(rows) else None
    return (
        row.clean
        and before.clean
        and before.offset < row.offset
        and (after is None or after.offset > row.offset)
    )


def _clean(record: WarcRecord) -> bool:
    return record.warc_type != "error" and not record.reason.startswith(("malformed", "truncated"))


def index_parts(path: Path, params: RecordLimits, parts: int) -> list[PartStart]:
    """Read the WARC at `path` whole and return its parts' starts (`part_starts`)."""
    rows = [ReadRow(r.offset, _clean(r)) for r in iter_warc_records(path, params)]

    with open(path, "rb") as stream:

        def member_start(offset: int) -> bool:
            stream.seek(offset)
            head = stream.read(_HEADER_BYTES)
            if not head.startswith(GZIP_MAGIC):
                return False  # a plain record: its reading is framed by its neighbours
            try:
                inflated = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 64)
            except zlib.error:
                return False
            return starts_a_warc_record(inflated)

        starts = part_starts(rows, path.stat().st_size, parts, member_start)
    if parts > 1 and all(start == starts[-1] for start in starts[1:]):
        log.warning(
            "%s: cannot be split (no gzip member of one record past its start: uncompressed, "
            "one member for the whole file, or unreadable); part 0 of %d reads it whole, the "
            "others are empty",
            path.name,
            parts,
        )
    return starts


def read_part(
    path: Path, params: RecordLimits, starts: list[PartStart], part: int
) -> Iterator[WarcRecord]:
    """The records of part `part` of the WARC at `path`, with their indices in the whole file,
    from `starts` (`index_parts`); JobFault when the reading does not stop at the next part's
    start with the index the whole reading had there."""
    first, following = starts[part], starts[part + 1]
    if first == following:
        return
    index = first.index
    for record in iter_warc_records(path, params, first.offset, first.index):
        if record.offset >= following.offset:
            index = record.record_index
            break
        index = record.record_index + 1
        yield record
    if index != following.index:
        raise JobFault(
            f"{path.name}: part {part} read up to record {index} where the whole file's reading "
            f"had record {following.index} at byte {following.offset}: parts of this WARC would "
            "share ids; set input.shard_mb to null to read it whole"
        )
