"""What every download shares: its errors, the loop that writes a body to the partial file with
progress lines and a minimum rate, file digests, and the check that bytes begin a WARC record."""

from __future__ import annotations

import gzip
import hashlib
import http.client
import time
import zlib
from pathlib import Path

CHUNK_SIZE = 1 << 20
PROGRESS_INTERVAL = 10.0  # seconds between progress lines of one download
RETRY_STATUSES = {408, 425, 429}  # besides every 5xx
GZIP_MAGIC = b"\x1f\x8b"
# A server that trickles (a byte a second passes every read time-out) is a failed attempt: the
# bytes received in each window of this many seconds must reach the minimum rate.
SLOW_WINDOW = 60.0
MIN_BYTES_PER_SECOND = 1024


class DownloadError(RuntimeError):
    """A download that cannot succeed: refused by the server, or out of retries."""


class TransientError(Exception):
    """A failed attempt worth retrying (lost connection, timeout, 5xx, inconsistent range)."""


def receive(
    read,
    part: Path,
    *,
    start: int,
    total: int | None,
    log,
    chunk_size: int,
    errors: tuple[type[Exception], ...] = (OSError, http.client.HTTPException),
) -> None:
    """Write what ``read(n)`` returns to part from byte start on, until it returns nothing,
    logging progress (under the part's name) now and then; ``errors`` raised by read are a lost
    connection. The one loop every kind of download receives its bytes with."""
    progress = _Progress(part.name, start, total, log)
    window_start, window_bytes = time.monotonic(), 0
    with open(part, "ab" if start else "wb") as out:
        while True:
            try:
                # HTTP's read1 hands over whatever has arrived, so bytes received before a timeout
                # are kept.
                chunk = read(chunk_size)
            except errors as err:
                raise TransientError(
                    f"connection lost after {progress.done} bytes: {err!r}"
                ) from err
            if not chunk:
                return
            out.write(chunk)
            progress.advance(len(chunk))
            window_bytes += len(chunk)
            elapsed = time.monotonic() - window_start
            if elapsed >= SLOW_WINDOW:
                if window_bytes < MIN_BYTES_PER_SECOND * elapsed:
                    raise TransientError(
                        f"{window_bytes / elapsed:.0f} bytes/s for {elapsed:.0f} s, below "
                        f"{MIN_BYTES_PER_SECOND} bytes/s; the next attempt resumes"
                    )
                window_start, window_bytes = time.monotonic(), 0


class _Progress:
    """Logs bytes so far, percentage and rate of one transfer, at most every PROGRESS_INTERVAL
    seconds."""

    def __init__(self, label: str, done: int, total: int | None, log):
        self.label, self.done, self.total, self.log = label, done, total, log
        self.started = self.logged = time.monotonic()
        self.first = done

    def advance(self, nbytes: int) -> None:
        self.done += nbytes
        now = time.monotonic()
        if now - self.logged < PROGRESS_INTERVAL:
            return
        self.logged = now
        rate = (self.done - self.first) / max(now - self.started, 1e-6)
        of_total = (
            f" of {_megabytes(self.total)} ({100 * self.done / self.total:.1f}%)"
            if self.total
            else ""
        )
        self.log(f"{self.label}: {_megabytes(self.done)}{of_total} at {_megabytes(rate)}/s")


def _megabytes(nbytes: float) -> str:
    return f"{nbytes / 1e6:.1f} MB"


def validator_path(part: Path) -> Path:
    """Where the server's validator (ETag or Last-Modified) of a partial download is kept, so that
    a later attempt, or a later run, resumes only the same version of the file."""
    return part.with_name(part.name + ".validator")


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def hex_digest(path: Path, algorithm: str) -> str:
    digest = hashlib.new(algorithm)
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK_SIZE):
            digest.update(chunk)
    return digest.hexdigest()


def starts_a_warc_record(head: bytes) -> bool:
    """Whether these bytes (the first few kB of a file, or of a gzip member) begin a WARC record,
    gzipped or not."""
    if head[:2] == GZIP_MAGIC:
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 16)
        except zlib.error:
            return False
    return head.startswith(b"WARC/")


def looks_like_warc(path: Path) -> bool:
    """Whether a file begins with a WARC record header (its first bytes only)."""
    with open(path, "rb") as f:
        return starts_a_warc_record(f.read(4096))


def incomplete_warc(path: Path) -> str | None:
    """Why a downloaded WARC is cut off — gzip data that ends mid-member, or a record that ends
    before its Content-Length — or None when every record it holds is whole. Read once, as a
    stream; a part that is no WARC framing at all is left to the extract stage to report."""
    with open(path, "rb") as raw:
        gzipped = raw.read(2) == GZIP_MAGIC
    try:
        with gzip.open(path, "rb") if gzipped else open(path, "rb") as stream:
            return _cut_off_record(stream)
    except EOFError as error:
        return f"the gzip data ends mid-member ({error})"
    except (OSError, zlib.error):
        return None  # not gzip further on: framing, not length, which extract reports


def _cut_off_record(stream) -> str | None:
    records = 0
    while True:
        line = stream.readline()
        while line in (b"\r\n", b"\n"):
            line = stream.readline()
        if not line:
            return None
        if not line.startswith(b"WARC/"):
            return None  # framing the extract stage reads past and reports
        length = None
        while (line := stream.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length" and value.strip().isdigit():
                length = int(value)
        if not line:
            return f"the file ends inside the header of record {records + 1}"
        missing = length or 0
        while missing and (chunk := stream.read(min(missing, CHUNK_SIZE))):
            missing -= len(chunk)
        if missing:
            return f"record {records + 1} ends {missing} bytes before its Content-Length"
        records += 1
