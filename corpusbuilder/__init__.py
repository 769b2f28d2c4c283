"""corpusbuilder: jusText boilerplate removal and onion de-duplication for web corpora.

The library implements the system of J. Pomikálek's thesis *Removing Boilerplate and
Duplicate Content from Web Corpora* (Masaryk University, 2011), one module per stage.

    >>> import corpusbuilder
    >>> corpusbuilder.clean_html("<html><body><p>...</p></body></html>")  # doctest: +SKIP

The Python API (`corpusbuilder.api`) is imported on first use of one of its names, so that
``import corpusbuilder.config`` or the `corpusbuilder` command's start do not load lxml, pandas
and the classifier.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:
    from corpusbuilder.api import (
        CleanedText,
        Document,
        Metadata,
        Page,
        Paragraph,
        Provenance,
        clean_html,
        clean_html_page,
        clean_html_paragraphs,
        iter_documents,
    )
    from corpusbuilder.config import ConfigError

__all__ = [
    "CleanedText",
    "ConfigError",
    "Document",
    "Metadata",
    "Page",
    "Paragraph",
    "Provenance",
    "clean_html",
    "clean_html_page",
    "clean_html_paragraphs",
    "iter_documents",
]


def __getattr__(name: str):
    if name == "ConfigError":
        from corpusbuilder.config import ConfigError

        return ConfigError
    if name in __all__:
        from corpusbuilder import api

        return getattr(api, name)
    raise AttributeError(f"module 'corpusbuilder' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
