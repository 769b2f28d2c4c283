"""Inputs as shards: what kind each input is, the sanitised unique name it gets, and how
consecutive inputs are grouped into shards and laid out in a shard's folder."""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
import urllib.parse
import urllib.request
from pathlib import Path, PurePosixPath

MAX_NAME_LENGTH = 100  # leaves room for suffixes like ".warc.gz.part" within 255-byte file names
REMOTE = ("http", "s3")  # the kinds of input that are downloaded


def parse_source(source: str) -> tuple[str, str]:
    """Classify one input as ("http", url), ("s3", url) or ("local", path); reject every other
    kind."""
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
                f"file URL {source!r} names host {parts.netloc!r}; only local files "
                "(file:///path) are supported"
            )
        return "local", urllib.request.url2pathname(parts.path)
    if parts.scheme == "":
        return "local", source
    raise ValueError(
        f"unsupported scheme {parts.scheme!r} in input entry {source!r}: use http://, https://, "
        "s3://, file:// or a local path (write a relative path containing ':' as ./path)"
    )


def shard_name(source: str) -> str:
    """Sanitised base name for one input: its file name without .warc/.gz, limited to
    [A-Za-z0-9._-].

    The result has no slashes, never starts with '.', '-' or '_', and is never empty (an input
    without a usable name gets ``shard-`` plus a hash of the input). It is not necessarily unique;
    resolve_sources() disambiguates collisions.
    """
    return parsed_shard_name(source, *parse_source(source))


def parsed_shard_name(source: str, kind: str, location: str) -> str:
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


def split_shards(
    groups: dict[str, dict[str, str]], parts: dict[str, int]
) -> dict[str, tuple[str, int, int]]:
    """Every shard in crawl order as ``{shard: (group, part, parts)}``: a group of `group_sources`
    read whole is ``(group, 0, 1)`` under its own name; one read as ``parts[group]`` > 1 parts
    (one WARC too large for a shard, `extraction.warc_parts`) is that many shards,
    ``{group}.part{k}of{parts}`` (k zero-padded, so the names sort in crawl order), each name
    unique among the shards."""
    taken = {group.lower() for group in groups}
    shards = {}
    for group in groups:
        count = parts.get(group, 1)
        if count == 1:
            shards[group] = (group, 0, 1)
            continue
        for part in range(count):
            name = unique_name(f"{group}.part{part:0{len(str(count - 1))}d}of{count}", taken)
            shards[name] = (group, part, count)
    return shards


def warc_file(folder: str | Path, warc: str) -> Path:
    """Where a shard's folder (`fetch_shard`) holds its WARC named ``warc``."""
    return Path(folder) / f"{warc}.warc.gz"


def warc_sidecar(folder: str | Path, warc: str) -> Path:
    """... and that WARC's sidecar (source, size, sha256)."""
    return Path(folder) / f"{warc}.json"


def unique_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name-2``, ``name-3``, ... whichever is not taken yet; records it as taken."""
    candidate, number = name, 1
    # Compared case-insensitively so shards stay distinct on case-insensitive file systems.
    while candidate.lower() in taken:
        number += 1
        candidate = f"{name}-{number}"
    taken.add(candidate.lower())
    return candidate


def local_path(location: str, base_dir: Path) -> Path:
    """Absolute form of a local path; a relative one is taken relative to base_dir."""
    return Path(os.path.abspath(base_dir / Path(location).expanduser()))


def existing_file(location: str, base_dir: Path, source: str) -> Path:
    path = local_path(location, base_dir)
    if not path.is_file():
        raise FileNotFoundError(
            f"local input {str(path)!r} (from {source!r}) is missing or not a file"
        )
    return path
