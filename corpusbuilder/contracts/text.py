"""A document's clean text as the stages between extraction and export read it: its good blocks
in page order, joined by newlines — what the language stage identifies, exact de-duplication
hashes and the report's resemblance row compares."""

from __future__ import annotations

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
