"""The configured inputs resolved: input.warcs (a local folder or glob pattern read as the WARCs
in it or matching it, sorted) followed by a Common-Crawl-style listing's entries, each with its
unique shard name."""

from __future__ import annotations

import glob
import gzip
import itertools
import os
import tempfile
import zlib
from pathlib import Path
from typing import Any

from corpusbuilder.config import ConfigError, check_settings
from corpusbuilder.download.fetch import fetch
from corpusbuilder.download.sources import (
    REMOTE,
    existing_file,
    local_path,
    parse_source,
    parsed_shard_name,
    unique_name,
)
from corpusbuilder.download.transfer import GZIP_MAGIC, DownloadError, looks_like_warc


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
    entries = [warc for entry in warcs or [] for warc in expand_input(entry, Path(base_dir))]
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
        shards[unique_name(parsed_shard_name(entry, kind, location), taken)] = source
    return shards


# what a folder given in input.warcs holds as inputs
WARC_SUFFIXES = (".warc.gz", ".warc")
GLOB_CHARS = "*?["


def expand_input(entry: str, base_dir: Path) -> list[str]:
    """The inputs one input.warcs entry stands for: a local folder's ``*.warc.gz`` and ``*.warc``
    files, or the files a local glob pattern (``*``, ``?``, ``[...]``, ``**``) matches, sorted
    by path, each as the folder or pattern spelled it; any other entry (a URL, a file, a path
    that does not exist) as given. An existing file is itself even when its name has ``[``.
    ValueError for a folder without WARCs and a glob that matches no file."""
    kind, location = parse_source(entry)
    if kind in REMOTE:
        return [entry]
    path = local_path(location, base_dir)
    if path.is_dir():
        warcs = sorted(
            child.name
            for child in path.iterdir()
            if child.name.lower().endswith(WARC_SUFFIXES)
            and not child.name.startswith(".")
            and child.is_file()
        )
        if not warcs:
            raise ValueError(
                f"folder {entry!r} holds no {' or '.join('*' + s for s in WARC_SUFFIXES)} file"
            )
        return [str(Path(location) / name) for name in warcs]
    if path.exists() or not any(char in location for char in GLOB_CHARS):
        return [entry]
    # matched from base_dir, as a relative path is read, and returned as the pattern spells them
    matches = glob.glob(os.path.expanduser(location), root_dir=base_dir, recursive=True)
    files = sorted(match for match in matches if local_path(match, base_dir).is_file())
    if not files:
        raise ValueError(f"glob {entry!r} matches no file")
    return files


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


# --------------------------------------------------------------------------- checked at planning


def _check_local_warc(path: Path, key: str, own_copies: Path) -> None:
    if not path.is_file():
        raise ConfigError(f"{key}: no such file: {path}")
    if Path(os.path.abspath(path)).is_relative_to(own_copies):
        raise ConfigError(
            f"{key}: {path} is inside data/warc/, where the workflow keeps its own copies of the "
            "inputs (and replaces them); give the original"
        )
    # an empty file is a WARC of no records (a crawler that fetched nothing), not a wrong file
    if path.stat().st_size and not looks_like_warc(path):
        raise ConfigError(f"{key}: {path} is not a WARC file")


def check_input_paths(config: dict[str, Any], base_dir: Path) -> None:
    """Stop early, naming the key, when an input cannot make a corpus: a local WARC that does not
    exist or is no WARC, a glob that matches no file, a folder without WARCs, one listed twice,
    one inside the workflow's own data/warc/ (whose files it replaces), a local Common Crawl
    listing that is missing or unreadable, an s3:// input without boto3 installed, and settings
    that contradict each other."""
    from corpusbuilder.download.s3 import S3_INSTALL_HINT, s3_available

    # compared without following links: data/warc/ holds links to the originals
    own_copies = Path(os.path.abspath(base_dir / "data" / "warc"))
    for index, entry in enumerate(config["input"]["warcs"]):
        try:
            warcs = [parse_source(warc) for warc in expand_input(entry, base_dir)]
        except ValueError as error:
            raise ConfigError(f"config key 'input.warcs[{index}]': {error}") from None
        for path in (base_dir / location for kind, location in warcs if kind == "local"):
            _check_local_warc(path, f"config key 'input.warcs[{index}]'", own_copies)
    cc_paths = config["input"]["cc_paths"]
    s3_keys = [
        f"input.warcs[{index}]"
        for index, source in enumerate(config["input"]["warcs"])
        if source.startswith("s3://")
    ]
    s3_keys += [
        f"input.cc_paths.{key}"
        for key in ("listing", "base_url")
        if (cc_paths[key] or "").startswith("s3://")
    ]
    if s3_keys and not s3_available():
        raise ConfigError(f"config key '{s3_keys[0]}': {S3_INSTALL_HINT}")
    try:
        resolve_sources(config["input"]["warcs"], base_dir=base_dir)
    except ValueError as error:
        raise ConfigError(f"config key 'input.warcs': {error}") from None
    listing = cc_paths["listing"]
    try:
        # a remote listing is read once, when the workflow plans its jobs (its errors name it); a
        # local one with input.warcs, as the workflow reads them: an entry may repeat a WARC
        if listing is not None and parse_source(listing)[0] == "local":
            resolve_sources(
                config["input"]["warcs"],
                cc_listing=listing,
                cc_base_url=cc_paths["base_url"],
                cc_limit=cc_paths["limit"],
                base_dir=base_dir,
            )
    except (ValueError, OSError) as error:
        raise ConfigError(f"config key 'input.cc_paths.listing': {error}") from None
    check_settings(config, base_dir)
