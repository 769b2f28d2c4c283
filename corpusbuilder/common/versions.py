"""Which versions wrote a stage's file: every Parquet file written through `common.io` (and
every n-gram run) carries, in its schema metadata, the version of corpusbuilder, its commit,
Python and the libraries that shape the output text in the process that wrote it; a token file
carries the same in a member (`tokenfile`), a part of G₂₊ in the stats beside it (`ngramfiles`).
Under ``--use-conda`` each rule runs in its own environment, and an incremental build re-runs
only the shards whose inputs changed, so one corpus can hold the work of several library
versions; the provenance record reads them from the files (`corpusbuilder.common.provenance`).
"""

from __future__ import annotations

import copy
import functools
import json
import platform
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import corpusbuilder

# Distributions whose version can change which words end up in the corpus.
OUTPUT_LIBRARIES = (
    "lxml",
    "py3langid",
    "charset-normalizer",
    "numpy",
    "pandas",
    "pyarrow",
    "warcio",
    "judy",
    "pydivsufsort",
)

# the schema metadata key of a table's writer
WRITER_KEY = b"corpusbuilder.writer"


def library_versions(names: tuple[str, ...] = OUTPUT_LIBRARIES) -> dict[str, str | None]:
    """Installed version of each distribution (None where it is not installed)."""
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = None
    return versions


def this_process() -> dict[str, Any]:
    """corpusbuilder's version and commit, Python's and the output libraries' versions here."""
    return copy.deepcopy(_this_process())


@functools.cache
def _this_process() -> dict[str, Any]:
    # read once: a running process does not change them
    return {
        "corpusbuilder": corpusbuilder.__version__,
        "commit": checkout_commit(),
        "python": platform.python_version(),
        "libraries": library_versions(),
    }


def checkout_commit(package: Path | None = None) -> str | None:
    """The commit of the git checkout corpusbuilder runs from (the workflow's, whose version
    number stays put between commits); None for an installed package. ``package``: the package
    folder (corpusbuilder's own unless given)."""
    package = package or Path(corpusbuilder.__file__).resolve().parent

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(package), *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout.strip()

    try:
        # a checkout of its own, not a package installed inside some other repository
        if Path(git("rev-parse", "--show-toplevel")) != package.parent:
            return None
        return git("rev-parse", "--short=12", "HEAD") or None
    except (OSError, subprocess.SubprocessError):
        return None


@functools.cache
def writer_json() -> str:
    """This process as a file's writer, as JSON: the one spelling of every stamp."""
    return json.dumps(_this_process(), sort_keys=True)


def writer_metadata() -> dict[bytes, bytes]:
    """The schema metadata that names this process as a table's writer."""
    return {WRITER_KEY: writer_json().encode()}


def writer_of(metadata: dict[bytes, bytes] | None) -> dict[str, Any] | None:
    """The writer a table's schema metadata names; None for a table written before tables
    were stamped."""
    raw = (metadata or {}).get(WRITER_KEY)
    return json.loads(raw) if raw else None
