"""The configured inputs resolved: input.warcs followed by a Common-Crawl-style listing's entries,
each with its unique shard name."""

from __future__ import annotations

import gzip
import itertools
import tempfile
import zlib
from pathlib import Path

from corpusbuilder.download.fetch import fetch
from corpusbuilder.download.sources import (
    REMOTE,
    _name_of,
    _unique_name,
    existing_file,
    local_path,
    parse_source,
)
from corpusbuilder.download.transfer import GZIP_MAGIC, DownloadError


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
        source = location if kind in REMOTE else str(local_path(location, Path(base_dir)))
        if source in sources:
            raise ValueError(f"input {entry!r} is listed more than once")
        sources.add(source)
        shards[_unique_name(_name_of(entry, kind, location), taken)] = source
    return shards


def _listing_entries(
    listing: str, base_url: str | None, limit: int | None, base_dir: Path, s3: dict | None
) -> list[str]:
    """The first ``limit`` non-blank lines of a warc.paths listing, joined to ``base_url`` when
    given."""
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
        data = existing_file(location, base_dir, listing).read_bytes()
    try:
        if data.startswith(GZIP_MAGIC):
            data = gzip.decompress(data)
        return data.decode("utf-8")
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as err:
        raise ValueError(f"cannot read listing {listing!r}: {err}") from err
