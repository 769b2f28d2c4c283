"""A document's text, in the two joins the stages read: the clean text between extraction and
export — its good blocks in page order, joined by newlines (`document_texts`: what the language
stage identifies, exact de-duplication hashes and the report's resemblance row compares) — and
the page text a user gets — its kept blocks, each on one line, a blank line between two
(`page_text`: the corpus document's ``text``, and the Python API's)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from corpusbuilder.contracts.tables import kept_block_mask

if TYPE_CHECKING:
    import pandas as pd


def good_blocks(blocks: pd.DataFrame) -> pd.DataFrame:
    """The blocks jusText kept (final class `good`), grouped by document, in page order."""
    good = blocks.loc[kept_block_mask(blocks)]
    return good.sort_values(["doc_id", "block_index"], kind="stable").reset_index(drop=True)


def document_texts(good: pd.DataFrame) -> pd.Series:
    """doc_id -> clean text: the document's good blocks in page order, joined by newlines."""
    return good.groupby("doc_id", sort=False)["text"].agg("\n".join)


def one_line(text: str) -> str:
    """A block's text as every output carries it: white space inside it one space."""
    return " ".join(text.split())


def page_text(block_texts: Iterable[str]) -> str:
    """The text of a page from its kept blocks' texts (each on one line), a blank line between
    two."""
    return "\n\n".join(block_texts)
