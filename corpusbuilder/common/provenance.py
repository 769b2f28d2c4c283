"""What decided a corpus, recorded beside it (``results/stats/provenance.json``, copied into the
report's ``summary.json``), so that it can be rebuilt and two corpora compared: the version of
corpusbuilder, of the libraries whose behaviour shapes the output text (HTML parsing, language
identification, hashing, suffix sorting), the hash of the block classifier's model file, and the
effective config with every default filled in.
"""

from __future__ import annotations

import hashlib
import json
import platform
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import corpusbuilder
from corpusbuilder.common.io import atomic_path

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


def library_versions(names: tuple[str, ...] = OUTPUT_LIBRARIES) -> dict[str, str | None]:
    """Installed version of each distribution (None where it is not installed)."""
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = None
    return versions


def file_sha256(path: Path | str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def provenance(config: dict[str, Any], model: Path | str | None) -> dict[str, Any]:
    """The provenance record; ``model`` is the `best` preset's model file
    (None for a jusText preset)."""
    return {
        "corpusbuilder": corpusbuilder.__version__,
        "python": platform.python_version(),
        "libraries": library_versions(),
        "model": {"path": str(model), "sha256": file_sha256(model)} if model else None,
        "config": config,
    }


def write_provenance(record: dict[str, Any], path: Path | str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(record, indent=1, sort_keys=True, default=str) + "\n")


def read_provenance(path: Path | str) -> dict[str, Any]:
    return json.loads(Path(path).read_text())
