"""Download stage: turn the configured inputs into local WARC shards under data/warc/.

Inputs are URLs (http, https, s3), local paths and file:// URLs, or a Common-Crawl-style
``warc.paths(.gz)`` listing joined to a base URL. Each input gets a sanitised, unique WARC name;
consecutive inputs, ``input.warcs_per_shard`` at a time, make one shard, named after its first.
HTTP and S3 downloads go to ``{dest}.part``, resume with byte ranges, retry with exponential
back-off and are moved into place only when complete; local files are symlinked (or copied), never
downloaded. Every shard gets a JSON sidecar with its source, size and sha256. Only bytes are
checked here: the extract stage copes with truncated WARC content.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.client
import itertools
import json
import logging
import os
import re
import shutil
import tempfile
import time
import unicodedata
import urllib.error
import urllib.parse
import urllib.request
import zlib
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath

from corpusbuilder import __version__

logger = logging.getLogger(__name__)

USER_AGENT = f"corpusbuilder/{__version__}"
CHUNK_SIZE = 1 << 20
# botocore's read(n) drops what it got of a chunk the connection lost, so S3 bodies are read in
# smaller chunks: a dropped connection costs at most this much to download again.
S3_CHUNK_SIZE = 1 << 16
PROGRESS_INTERVAL = 10.0  # seconds between progress lines of one download
MAX_NAME_LENGTH = 100  # leaves room for suffixes like ".warc.gz.part" within 255-byte file names
RETRY_STATUSES = {408, 425, 429}  # besides every 5xx
GZIP_MAGIC = b"\x1f\x8b"
REMOTE = ("http", "s3")  # the kinds of input that are downloaded
MAX_RETRY_DELAY = 300.0  # seconds: the exponential back-off stops growing here
# A server that trickles (a byte a second passes every read time-out) is a failed attempt: the
# bytes received in each window of this many seconds must reach the minimum rate.
SLOW_WINDOW = 60.0
MIN_BYTES_PER_SECOND = 1024


class _HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects to http(s) only: a crawl file redirected to
    ftp:// or file:// is an error."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        scheme = urllib.parse.urlsplit(newurl).scheme.lower()
        if scheme not in ("http", "https"):
            raise urllib.error.URLError(
                f"redirected to {scheme}:// ({newurl}); only http(s) is followed"
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_HttpOnlyRedirects)


class DownloadError(RuntimeError):
    """A download that cannot succeed: refused by the server, or out of retries."""


class _TransientError(Exception):
    """A failed attempt worth retrying (lost connection, timeout, 5xx, inconsistent range)."""


def parse_source(source: str) -> tuple[str, str]:
    """Classify one input as ("http", url), ("s3", url) or ("local",
    path); reject every other kind."""
    if not isinstance(source, str) or not source:
        raise ValueError(f"empty or non-string input entry: {source!r}")
    try:
        parts = urllib.parse.urlsplit(source)
        _ = parts.port  # raises on a malformed port
    except ValueError as err:
        raise ValueError(f"malformed input entry {source!r}: {err}") from err
    if parts.scheme in ("http", "https"):
        if not parts.hostname:
            raise ValueError(f"URL {source!r} has no host")
        # http.client refuses these late with an exception that looks transient.
        if re.search(r"[\x00-\x20\x7f]", source):
            raise ValueError(
                f"URL {source!r} contains spaces or control characters; percent-encode them"
            )
        return "http", source
    if parts.scheme == "s3":
        if not parts.netloc or not parts.path.strip("/"):
            raise ValueError(f"S3 URL {source!r} needs a bucket and a key: s3://bucket/key")
        return "s3", source
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise ValueError(
                f"file URL {source!r} names host {parts.netloc!r}; only local files (file:///path) "
                "are supported"
            )
        return "local", urllib.request.url2pathname(parts.path)
    if parts.scheme == "":
        return "local", source
    raise ValueError(
        f"unsupported scheme {parts.scheme!r} in input entry {source!r}: use http://, https://, "
        "s3://, file:// or a local path (write a relative path containing ':' as ./path)"
    )


def shard_name(source: str) -> str:
    """Sanitised base name for one input: its file name without
    .warc/.gz, limited to [A-Za-z0-9._-].

    The result has no slashes, never starts with '.', '-' or '_', and is never empty (an input
    without a usable name gets ``shard-`` plus a hash of the input). It is not necessarily unique;
    resolve_sources() disambiguates collisions.
    """
    return _name_of(source, *parse_source(source))


def _name_of(source: str, kind: str, location: str) -> str:
    """`shard_name` of a source already parsed (a listing's 100,000 entries are parsed once)."""
    if kind in REMOTE:
        parts = urllib.parse.urlsplit(location)
        path, fallback = urllib.parse.unquote(parts.path), parts.hostname or ""
    else:
        path, fallback = location, ""
    name = PurePosixPath(path.replace("\\", "/")).name or fallback
    # Transliterate accented letters to ASCII rather than dropping them as unsafe characters.
    name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    for suffix in (".gz", ".warc"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:MAX_NAME_LENGTH].strip("._-")
    return name or "shard-" + hashlib.sha1(source.encode("utf-8")).hexdigest()[:8]


def resolve_sources(
    warcs: list[str] | None,
    cc_listing: str | None = None,
    cc_base_url: str | None = None,
    cc_limit: int | None = None,
    base_dir: str | Path = Path("."),
    s3: dict | None = None,
) -> dict[str, str]:
    """Map every input to a unique shard name: ``{shard: source}`` in input order.

    The inputs are ``warcs`` followed by the first ``cc_limit`` entries (all when None) of the
    listing ``cc_listing`` (a local path or URL, plain or gzipped), each joined to
    ``cc_base_url`` when given. Relative local paths, including the listing's, are resolved
    against ``base_dir`` and returned absolute; URLs are returned unchanged. A listing on S3 is
    read with the options ``s3`` (see fetch). Colliding names get ``-2``, ``-3``, ... in input
    order. Raises ValueError for an unsupported or repeated input.
    """
    if isinstance(warcs, str):
        raise ValueError(f"input.warcs must be a list of paths or URLs, not the string {warcs!r}")
    entries = list(warcs or [])
    if cc_listing is not None:
        entries += _listing_entries(cc_listing, cc_base_url, cc_limit, Path(base_dir), s3)
    shards: dict[str, str] = {}
    sources: set[str] = set()
    taken: set[str] = set()
    for entry in entries:
        kind, location = parse_source(entry)
        source = location if kind in REMOTE else str(_local_path(location, Path(base_dir)))
        if source in sources:
            raise ValueError(f"input {entry!r} is listed more than once")
        sources.add(source)
        shards[_unique_name(_name_of(entry, kind, location), taken)] = source
    return shards


def group_sources(sources: dict[str, str], warcs_per_shard: int) -> dict[str, dict[str, str]]:
    """Consecutive inputs of `resolve_sources`, ``warcs_per_shard`` at a time, as shards:
    ``{shard: {warc: source}}`` in input order, each shard named after its first WARC.

    Groups are counted from the first input, so inputs added at the end change only the last
    shard (when it was not full) and make new ones; one WARC a shard keeps its name as shard name.
    """
    if (
        not isinstance(warcs_per_shard, int)
        or isinstance(warcs_per_shard, bool)
        or warcs_per_shard < 1
    ):
        raise ValueError(
            f"input.warcs_per_shard must be a positive integer, not {warcs_per_shard!r}"
        )
    warcs = list(sources.items())
    groups = (
        dict(warcs[start : start + warcs_per_shard])
        for start in range(0, len(warcs), warcs_per_shard)
    )
    return {next(iter(group)): group for group in groups}


def fetch_shard(
    sources: dict[str, str], folder: str | Path, staging: str | Path, **options
) -> list[dict]:
    """`fetch` each WARC of one shard (``{warc: source}``, `group_sources`) to
    ``{folder}/{warc}.warc.gz`` with its sidecar ``{warc}.json``; return the sidecars in order.

    Each file goes to ``staging`` first and all move into ``folder`` at the end: a failed
    download fails the shard, and the WARCs it had complete stay in ``staging`` (where a later
    run takes them up, if from the same source) rather than in a folder the workflow deletes
    before it runs the shard again. ``options`` are fetch's (retries, backoff, timeout, copy_local).
    """
    metas = []
    for warc, source in sources.items():
        staged, meta_path = warc_file(staging, warc), warc_sidecar(staging, warc)
        earlier = (
            json.loads(meta_path.read_text()) if staged.exists() and meta_path.is_file() else None
        )
        if earlier is not None and earlier["source"] == source:
            metas.append(earlier)
        else:
            metas.append(fetch(source, staged, meta_path=meta_path, expect_warc=True, **options))
    Path(folder).mkdir(parents=True, exist_ok=True)
    for warc in sources:
        for where in (warc_file, warc_sidecar):
            os.replace(where(staging, warc), where(folder, warc))
    return metas


def warc_file(folder: str | Path, warc: str) -> Path:
    """Where a shard's folder (`fetch_shard`) holds its WARC named ``warc``."""
    return Path(folder) / f"{warc}.warc.gz"


def warc_sidecar(folder: str | Path, warc: str) -> Path:
    """... and that WARC's sidecar (source, size, sha256)."""
    return Path(folder) / f"{warc}.json"


def _unique_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name-2``, ``name-3``, ... whichever is not taken yet; records it as taken."""
    candidate, number = name, 1
    # Compared case-insensitively so shards stay distinct on case-insensitive file systems.
    while candidate.lower() in taken:
        number += 1
        candidate = f"{name}-{number}"
    taken.add(candidate.lower())
    return candidate


def _listing_entries(
    listing: str, base_url: str | None, limit: int | None, base_dir: Path, s3: dict | None
) -> list[str]:
    """The first ``limit`` non-blank lines of a warc.paths listing, joined
    to ``base_url`` when given."""
    if limit is not None and (not isinstance(limit, int) or limit < 0):
        raise ValueError(f"the listing limit must be a non-negative integer, not {limit!r}")
    lines = (line.strip() for line in _read_listing(listing, base_dir, s3).splitlines())
    entries = list(itertools.islice(filter(None, lines), limit))
    if base_url is None:
        return entries
    for entry in entries:
        # A fetched listing must not steer us outside the base (e.g. to local files).
        if ".." in entry.split("/"):
            raise ValueError(
                f"entry {entry!r} of listing {listing!r} climbs out of the base URL with '..'"
            )
    return [base_url.rstrip("/") + "/" + entry.lstrip("/") for entry in entries]


def _read_listing(listing: str, base_dir: Path, s3: dict | None) -> str:
    """Text of a listing given as a local path or URL, gunzipped when it is gzip data."""
    kind, location = parse_source(listing)
    if kind in REMOTE:
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "listing"
            try:
                fetch(listing, copy, s3=s3)
            except (
                DownloadError
            ) as err:  # the workflow reads the listing while it plans: a line, not a traceback
                raise ValueError(f"cannot read listing {listing!r}: {err}") from err
            data = copy.read_bytes()
    else:
        data = _existing_file(location, base_dir, listing).read_bytes()
    try:
        if data.startswith(GZIP_MAGIC):
            data = gzip.decompress(data)
        return data.decode("utf-8")
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as err:
        raise ValueError(f"cannot read listing {listing!r}: {err}") from err


def _local_path(location: str, base_dir: Path) -> Path:
    """Absolute form of a local path; a relative one is taken relative to base_dir."""
    return Path(os.path.abspath(base_dir / Path(location).expanduser()))


def _existing_file(location: str, base_dir: Path, source: str) -> Path:
    path = _local_path(location, base_dir)
    if not path.is_file():
        raise FileNotFoundError(
            f"local input {str(path)!r} (from {source!r}) is missing or not a file"
        )
    return path


def fetch(
    source: str,
    dest: str | Path,
    *,
    meta_path: str | Path | None = None,
    retries: int = 5,
    backoff: float = 1.0,
    timeout: float = 60,
    copy_local: bool = False,
    expect_warc: bool = False,
    s3: dict | None = None,
    log=logger.info,
) -> dict:
    """Put the bytes of ``source`` at ``dest`` and write the sidecar; return the sidecar dict.

    HTTP(S) sources are downloaded into ``{dest}.part``, resumed from where it ends (also by a
    later run), and moved to ``dest`` only when complete. ``retries`` counts consecutive failed
    attempts; the n-th waits ``backoff * 2**(n-1)`` seconds. ``timeout`` applies to connecting
    and to every read. S3 objects (s3://bucket/key) take the same way, resumed by byte range
    only while their ETag stays the same, and checked against the object's size and, where its
    ETag is one, MD5. ``s3`` holds download.s3's options: ``endpoint_url`` of an S3-compatible
    store, ``anonymous`` for a public bucket; credentials come the standard AWS way (environment,
    ~/.aws). Local paths (relative to the current directory) and file:// URLs are symlinked, or
    copied when ``copy_local``. The sidecar (``meta_path``, default ``{dest}.json``) holds source,
    size, sha256, method ("http", "s3", "link" or "copy") and when.
    With ``expect_warc``, a download that is no WARC (a login page served in its place) is an
    error and is not kept.
    Progress, retries and the outcome are reported through ``log`` (default: this module's logger).

    Raises ValueError for an unsupported source, FileNotFoundError for a missing local file and
    DownloadError when the server refuses the request (a missing object, denied access), the
    retries run out, or s3:// is used without boto3 installed.
    """
    kind, location = parse_source(source)
    dest = Path(dest)
    meta_path = Path(meta_path) if meta_path is not None else dest.with_name(dest.name + ".json")
    part = dest.with_name(dest.name + ".part")
    dest.parent.mkdir(parents=True, exist_ok=True)
    if kind in REMOTE:
        method = kind
        if kind == "http":
            attempt = functools.partial(_download_attempt, location, part, timeout=timeout, log=log)
        else:
            attempt = functools.partial(
                _s3_attempt, _s3_client(s3 or {}, timeout), location, part, log=log
            )
        _download(location, part, attempt, retries=retries, backoff=backoff, log=log)
        _validator_path(part).unlink(missing_ok=True)
        if expect_warc and not looks_like_warc(part):
            with open(part, "rb") as f:
                head = f.read(60)
            part.unlink()
            raise DownloadError(
                f"{location}: what arrived is not a WARC file (it begins {head!r}); nothing kept"
            )
    else:
        method = "copy" if copy_local else "link"
        _place_local(_existing_file(location, Path.cwd(), source), part, copy=copy_local)
    size, sha256 = _size_and_sha256(part)
    os.replace(part, dest)
    meta = {
        "source": source,
        "size": size,
        "sha256": sha256,
        "method": method,
        "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    _write_json(meta_path, meta)
    log(f"{dest.name}: {size} bytes, sha256 {sha256} ({method} from {source})")
    return meta


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


def _place_local(path: Path, part: Path, *, copy: bool) -> None:
    """Symlink or copy a local file to part."""
    # A leftover .part would block the symlink, and copying onto a leftover link would
    # overwrite the file it points to.
    part.unlink(missing_ok=True)
    if copy:
        shutil.copyfile(path, part)
    else:
        os.symlink(path, part)


def _download(url: str, part: Path, attempt, *, retries: int, backoff: float, log) -> None:
    """Download url into part by calls of ``attempt()``, each keeping what part already holds;
    retry with exponential back-off."""
    if part.is_symlink():
        # Left by an interrupted local run; appending would write into the linked file.
        part.unlink()
    failures = 0
    while True:
        before = _file_size(part)
        try:
            attempt()
            return
        except _TransientError as err:
            # An attempt that grew the partial file made progress, so only
            # fruitless attempts in a row count.
            failures = 1 if _file_size(part) > before else failures + 1
            if failures > retries:
                raise DownloadError(
                    f"{url}: giving up after {failures} failed attempt(s) in a row, last: {err}; "
                    f"{_file_size(part)} bytes kept in {part} for the next run to resume"
                ) from err
            delay = min(backoff * 2 ** (failures - 1), MAX_RETRY_DELAY)
            log(f"{url}: {err}; retry {failures} of {retries} in {delay:.2f} s")
            time.sleep(delay)


def _validator_path(part: Path) -> Path:
    """Where the server's validator (ETag or Last-Modified) of a partial download is kept, so that
    a later attempt, or a later run, resumes only the same version of the file."""
    return part.with_name(part.name + ".validator")


def _validator_of(headers) -> str | None:
    """A strong ETag, else Last-Modified: what If-Range may carry (RFC 9110 §13.1.5)."""
    etag = headers.get("ETag")
    if etag and not etag.startswith("W/"):
        return etag
    return headers.get("Last-Modified")


def _download_attempt(url: str, part: Path, *, timeout: float, log) -> None:
    """One request: append the rest of the body to part, or rewrite part if the server sends it all.

    A resumed request carries If-Range with the validator the download began with: a file that
    changed on the server since comes back whole (200) and replaces the partial one, so no
    download mixes two versions."""
    offset = _file_size(part)
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    validator_file = _validator_path(part)
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
            raise _TransientError(
                f"cannot resume at byte {offset} (size {total}); restarting"
            ) from err
        if err.code in RETRY_STATUSES or err.code >= 500:
            raise _TransientError(f"HTTP {err.code} {err.reason}") from err
        raise DownloadError(f"{url}: HTTP {err.code} {err.reason}") from err
    except urllib.error.URLError as err:
        if isinstance(err.reason, OSError):
            raise _TransientError(f"cannot connect: {err.reason}") from err
        raise DownloadError(f"{url}: {err.reason}") from err
    except (OSError, http.client.HTTPException) as err:
        raise _TransientError(f"no valid response: {err!r}") from err

    with response:
        current = _validator_of(response.headers)
        if response.status == 206:
            start, total = _parse_content_range(response.headers.get("Content-Range"))
            if start != offset:
                part.unlink()
                raise _TransientError(
                    f"asked for bytes from {offset}, got a range from {start}; restarting"
                )
            if validator and current and current != validator:  # a server that ignores If-Range
                part.unlink()
                validator_file.unlink(missing_ok=True)
                raise _TransientError(
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
        _receive(
            response.read1,
            part,
            start=start,
            total=total,
            label=part.name,
            log=log,
            chunk_size=CHUNK_SIZE,
        )

    size = _file_size(part)
    if total is not None and size > total:
        part.unlink()
        raise _TransientError(f"received {size} bytes, more than the announced {total}; restarting")
    if total is not None and size < total:
        # http.client ends a body cut short silently, so the length check is what notices it.
        raise _TransientError(f"connection closed after {size} of {total} bytes")


S3_INSTALL_HINT = "s3:// inputs need boto3: pip install 'corpusbuilder[s3]'"


def s3_available() -> bool:
    """Whether boto3, which s3:// inputs need, is installed (the config
    check asks before any job)."""
    try:
        import boto3  # noqa: F401
    except ImportError:
        return False
    return True


def _s3_client(options: dict, timeout: float):
    """A boto3 S3 client for download.s3's ``options``. botocore's own retries are off: fetch's
    back-off is the one that counts, and a connection lost mid-body is resumed, not re-read."""
    try:
        import boto3
        import botocore
        from botocore.config import Config
    except ImportError as err:
        raise DownloadError(S3_INSTALL_HINT) from err
    config = Config(
        connect_timeout=timeout,
        read_timeout=timeout,
        retries={"total_max_attempts": 1},
        signature_version=botocore.UNSIGNED if options.get("anonymous") else None,
    )
    # A session of its own: boto3's default one keeps the credentials it found first.
    return boto3.session.Session().client(
        "s3", endpoint_url=options.get("endpoint_url"), config=config
    )


def _s3_attempt(client, url: str, part: Path, *, log) -> None:
    """One attempt at an S3 object: read its size and ETag, then append the bytes part lacks.

    The ETag the download began with is kept beside part, and the ranged GET carries If-Match: an
    object replaced since restarts from zero, so no download mixes two versions. When complete,
    the size must be the object's and so must the MD5, where the ETag is one (_plain_md5)."""
    from botocore import exceptions as boto

    bucket, _, key = url.removeprefix("s3://").partition("/")
    validator_file = _validator_path(part)
    offset = _file_size(part)
    try:
        head = client.head_object(Bucket=bucket, Key=key)
        etag, total = head["ETag"], head["ContentLength"]
        began = validator_file.read_text() if offset and validator_file.is_file() else etag
        if began != etag or offset > total:
            why = (
                "the object changed since the download began"
                if began != etag
                else "the partial file is too long"
            )
            log(f"{url}: {why}; restarting from zero")
            part.unlink()
            offset = 0
        validator_file.write_text(etag)
        # offset == total > 0: part holds every byte already. From byte 0 no Range is sent, which
        # S3 would refuse for an empty object.
        if offset == 0 or offset < total:
            ranged = {"Range": f"bytes={offset}-"} if offset else {}
            body = client.get_object(Bucket=bucket, Key=key, IfMatch=etag, **ranged)["Body"]
            _receive(
                body.read,
                part,
                start=offset,
                total=total,
                label=part.name,
                log=log,
                chunk_size=S3_CHUNK_SIZE,
                errors=(OSError, boto.HTTPClientError, boto.IncompleteReadError),
            )
    except boto.ClientError as err:
        raise _s3_failure(url, err) from err
    except (boto.HTTPClientError, boto.ConnectionError) as err:
        raise _TransientError(f"no valid response: {err}") from err
    except boto.NoCredentialsError as err:
        raise DownloadError(
            f"{url}: no AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or "
            "~/.aws/credentials); a bucket open to everyone needs download.s3.anonymous"
        ) from err
    except boto.BotoCoreError as err:  # a malformed endpoint, a bad profile: no retry mends these
        raise DownloadError(f"{url}: {err}") from err

    size = _file_size(part)
    if size != total:
        part.unlink()
        raise _TransientError(f"received {size} bytes, the object has {total}; restarting")
    md5 = _plain_md5(head)
    if md5 is not None and _hex_digest(part, "md5") != md5:
        part.unlink()
        raise _TransientError(f"the bytes received do not have the object's MD5 {md5}; restarting")


S3_RETRY_CODES = {
    "SlowDown",
    "RequestTimeout",
    "Throttling",
    "ThrottlingException",
    "InternalError",
}


def _s3_failure(url: str, err) -> Exception:
    """The error an S3 error response stands for: a retry for a server's trouble or an object
    replaced in mid-download, else one DownloadError line naming the URL."""
    status = err.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
    code = err.response.get("Error", {}).get("Code") or str(status)
    if status == 412:  # If-Match failed: the next attempt's HEAD sees the new ETag and restarts
        return _TransientError("the object changed since the download began")
    if status in RETRY_STATUSES or status >= 500 or code in S3_RETRY_CODES:
        return _TransientError(f"S3 {status} {code}")
    explanation = {
        403: "access denied (check the AWS credentials, or set download.s3.anonymous for a public "
        "bucket)",
        404: "no such bucket or object",
    }.get(status, err.response.get("Error", {}).get("Message") or "refused")
    detail = (
        str(status) if code == str(status) else f"{status} {code}"
    )  # a HEAD's error has no code
    return DownloadError(f"{url}: {explanation} (S3 {detail})")


def _plain_md5(head: dict) -> str | None:
    """The MD5 of an S3 object's bytes as its ETag states it; None where the ETag is no MD5: an
    object uploaded in parts ("<hex>-<parts>") or encrypted with a KMS or customer key."""
    etag = head["ETag"].strip('"')
    encryption = head.get("ServerSideEncryption")
    if encryption not in (None, "AES256") or "SSECustomerAlgorithm" in head:
        return None
    return etag if re.fullmatch(r"[0-9a-f]{32}", etag) else None


def _receive(
    read,
    part: Path,
    *,
    start: int,
    total: int | None,
    label: str,
    log,
    chunk_size: int,
    errors: tuple[type[Exception], ...] = (OSError, http.client.HTTPException),
) -> None:
    """Write what ``read(n)`` returns to part from byte start on, until it returns nothing,
    logging progress now and then; ``errors`` raised by read are a lost connection."""
    progress = _Progress(label, start, total, log)
    window_start, window_bytes = time.monotonic(), 0
    with open(part, "ab" if start else "wb") as out:
        while True:
            try:
                # HTTP's read1 hands over whatever has arrived, so bytes
                # received before a timeout are kept.
                chunk = read(chunk_size)
            except errors as err:
                raise _TransientError(
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
                    raise _TransientError(
                        f"{window_bytes / elapsed:.0f} bytes/s for {elapsed:.0f} s, below "
                        f"{MIN_BYTES_PER_SECOND} bytes/s; the next attempt resumes"
                    )
                window_start, window_bytes = time.monotonic(), 0


class _Progress:
    """Logs bytes so far, percentage and rate of one transfer, at most
    every PROGRESS_INTERVAL seconds."""

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


def _parse_content_range(header: str | None) -> tuple[int | None, int | None]:
    """(first byte, total size) of a Content-Range header; None for
    what it leaves out or garbles."""
    match = re.fullmatch(r"\s*bytes\s+(?:(\d+)-\d+|\*)/(\d+|\*)\s*", header or "")
    if not match:
        return None, None
    return _int_or_none(match[1]), _int_or_none(match[2])


def _int_or_none(text: str | None) -> int | None:
    return int(text) if text is not None and text.strip().isdigit() else None


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _size_and_sha256(path: Path) -> tuple[int, str]:
    return _file_size(path), _hex_digest(path, "sha256")


def _hex_digest(path: Path, algorithm: str) -> str:
    digest = hashlib.new(algorithm)
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK_SIZE):
            digest.update(chunk)
    return digest.hexdigest()


def _write_json(path: Path, data: dict) -> None:
    """Write data as JSON atomically, so a crash never leaves half a sidecar."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
