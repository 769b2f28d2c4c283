"""Putting one input's bytes in place: downloaded (HTTP, S3) with retries and back-off, or a local
file linked or copied; a shard's WARCs staged and moved in together; a JSON sidecar for each."""

from __future__ import annotations

import functools
import json
import logging
import os
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path

from corpusbuilder.download.http_download import download_attempt
from corpusbuilder.download.s3 import s3_attempt, s3_client
from corpusbuilder.download.sources import (
    REMOTE,
    existing_file,
    parse_source,
    warc_file,
    warc_sidecar,
)
from corpusbuilder.download.transfer import (
    DownloadError,
    TransientError,
    file_size,
    hex_digest,
    incomplete_warc,
    looks_like_warc,
    validator_path,
)

logger = logging.getLogger(__name__)
MAX_RETRY_DELAY = 300.0  # seconds: the exponential back-off stops growing here


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
    With ``expect_warc``, a download that is no WARC (a login page served in its place), or one
    that ends mid-record, is an error and is not kept.
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
            attempt = functools.partial(download_attempt, location, part, timeout=timeout, log=log)
        else:
            attempt = functools.partial(
                s3_attempt, s3_client(s3 or {}, timeout), location, part, log=log
            )
        _download(location, part, attempt, retries=retries, backoff=backoff, log=log)
        validator_path(part).unlink(missing_ok=True)
        if expect_warc and not looks_like_warc(part):
            with open(part, "rb") as f:
                head = f.read(60)
            part.unlink()
            raise DownloadError(
                f"{location}: what arrived is not a WARC file (it begins {head!r}); nothing kept"
            )
        cut_off = incomplete_warc(part) if expect_warc else None
        if cut_off is not None:
            # the server sent all it announced, and it is not all of a WARC: a Content-Length
            # that disagrees with the file, or a file cut off at its source
            part.unlink()
            raise DownloadError(
                f"{location}: what arrived is a cut-off WARC ({cut_off}) although its length is "
                "what the server announced; nothing kept"
            )
    else:
        method = "copy" if copy_local else "link"
        _place_local(existing_file(location, Path.cwd(), source), part, copy=copy_local)
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
        before = file_size(part)
        try:
            attempt()
            return
        except TransientError as err:
            # An attempt that grew the partial file made progress, so only fruitless attempts in a
            # row count.
            failures = 1 if file_size(part) > before else failures + 1
            if failures > retries:
                raise DownloadError(
                    f"{url}: giving up after {failures} failed attempt(s) in a row, last: {err}; "
                    f"{file_size(part)} bytes kept in {part} for the next run to resume"
                ) from err
            delay = min(backoff * 2 ** (failures - 1), MAX_RETRY_DELAY)
            log(f"{url}: {err}; retry {failures} of {retries} in {delay:.2f} s")
            time.sleep(delay)


def _size_and_sha256(path: Path) -> tuple[int, str]:
    return file_size(path), hex_digest(path, "sha256")


def _write_json(path: Path, data: dict) -> None:
    """Write data as JSON atomically, so a crash never leaves half a sidecar."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
