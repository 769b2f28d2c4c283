"""One HTTP(S) download attempt: resumed by byte range only while the server's validator stays
the same, redirects followed to http(s) only, the body's length checked against what was
announced."""

from __future__ import annotations

import http.client
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from corpusbuilder import __version__
from corpusbuilder.download.transfer import (
    CHUNK_SIZE,
    RETRY_STATUSES,
    DownloadError,
    TransientError,
    file_size,
    receive,
    validator_path,
)

USER_AGENT = f"corpusbuilder/{__version__}"


class _HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects to http(s) only: a crawl file redirected to ftp:// or file:// is an
    error."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        scheme = urllib.parse.urlsplit(newurl).scheme.lower()
        if scheme not in ("http", "https"):
            raise urllib.error.URLError(
                f"redirected to {scheme}:// ({newurl}); only http(s) is followed"
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_HttpOnlyRedirects)


def _validator_of(headers) -> str | None:
    """A strong ETag, else Last-Modified: what If-Range may carry (RFC 9110 §13.1.5)."""
    etag = headers.get("ETag")
    if etag and not etag.startswith("W/"):
        return etag
    return headers.get("Last-Modified")


def download_attempt(url: str, part: Path, *, timeout: float, log) -> None:
    """One request: append the rest of the body to part, or rewrite part if the server sends it all.

    A resumed request carries If-Range with the validator the download began with: a file that
    changed on the server since comes back whole (200) and replaces the partial one, so no
    download mixes two versions."""
    offset = file_size(part)
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    validator_file = validator_path(part)
    validator = validator_file.read_text() if offset and validator_file.is_file() else None
    if offset:
        headers["Range"] = f"bytes={offset}-"
        if validator:
            headers["If-Range"] = validator
    try:
        response = _OPENER.open(urllib.request.Request(url, headers=headers), timeout=timeout)
    except urllib.error.HTTPError as err:
        err.close()
        if err.code == 416 and offset:
            _, total = _parse_content_range(err.headers.get("Content-Range"))
            if total == offset:
                return  # part already holds every byte
            part.unlink()
            raise TransientError(
                f"cannot resume at byte {offset} (size {total}); restarting"
            ) from err
        if err.code in RETRY_STATUSES or err.code >= 500:
            raise TransientError(f"HTTP {err.code} {err.reason}") from err
        raise DownloadError(f"{url}: HTTP {err.code} {err.reason}") from err
    except urllib.error.URLError as err:
        if isinstance(err.reason, OSError):
            raise TransientError(f"cannot connect: {err.reason}") from err
        raise DownloadError(f"{url}: {err.reason}") from err
    except (OSError, http.client.HTTPException) as err:
        raise TransientError(f"no valid response: {err!r}") from err

    with response:
        current = _validator_of(response.headers)
        if response.status == 206:
            start, total = _parse_content_range(response.headers.get("Content-Range"))
            if start != offset:
                part.unlink()
                raise TransientError(
                    f"asked for bytes from {offset}, got a range from {start}; restarting"
                )
            if validator and current and current != validator:  # a server that ignores If-Range
                part.unlink()
                validator_file.unlink(missing_ok=True)
                raise TransientError(
                    "the file changed on the server since the download began; restarting"
                )
        elif response.status == 200:
            if offset:
                log(
                    f"{url}: the server sent the whole file (it changed since, or ignored the "
                    "Range request); restarting from zero"
                )
            start, total = 0, _int_or_none(response.headers.get("Content-Length"))
        else:
            raise DownloadError(f"{url}: unexpected HTTP {response.status} {response.reason}")
        if start == 0:
            if current:
                validator_file.write_text(current)
            else:
                validator_file.unlink(missing_ok=True)
        receive(response.read1, part, start=start, total=total, log=log, chunk_size=CHUNK_SIZE)

    size = file_size(part)
    if total is not None and size > total:
        part.unlink()
        raise TransientError(f"received {size} bytes, more than the announced {total}; restarting")
    if total is not None and size < total:
        # http.client ends a body cut short silently, so the length check is what notices it.
        raise TransientError(f"connection closed after {size} of {total} bytes")


def _parse_content_range(header: str | None) -> tuple[int | None, int | None]:
    """(first byte, total size) of a Content-Range header; None for what it leaves out or
    garbles."""
    match = re.fullmatch(r"\s*bytes\s+(?:(\d+)-\d+|\*)/(\d+|\*)\s*", header or "")
    if not match:
        return None, None
    return _int_or_none(match[1]), _int_or_none(match[2])


def _int_or_none(text: str | None) -> int | None:
    return int(text) if text is not None and text.strip().isdigit() else None
