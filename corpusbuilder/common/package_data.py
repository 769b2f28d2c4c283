"""The files the library ships inside the package: the config schema, the stop lists, the table
of language codes, the models.

They are read through ``importlib.resources``, so an installed wheel finds them from any working
directory. In a checkout, ``corpusbuilder/data/`` holds symlinks to ``config/schema.yaml``,
``resources/stoplists/`` and ``resources/language_codes.tsv`` (their one copy in git, where the
workflow's layout puts them); building a wheel follows the links and ships the files themselves.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def packaged(*parts: str) -> Path:
    """A file or folder inside the installed package, as a filesystem path (pip unpacks a wheel,
    so a package is never read from a zip here)."""
    return Path(str(files("corpusbuilder").joinpath(*parts)))


SCHEMA_PATH = packaged("data", "schema.yaml")
STOPLIST_DIR = packaged("data", "stoplists")
LANGUAGE_CODES_PATH = packaged("data", "language_codes.tsv")
SHIPPED_MODEL = packaged("models", "best.npz")  # extract.comments: true, all running text
SHIPPED_ARTICLE_MODEL = packaged("models", "best-article.npz")  # extract.comments: false


def shipped_peer_model(peers: str, comments: bool) -> Path:
    """The model of extract.peers ("resiliparse" or "all") for a scope of extract.comments."""
    return packaged("models", f"best-peers-{peers}{'' if comments else '-article'}.npz")
