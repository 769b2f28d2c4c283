"""A document's text, in the two joins the stages read: the clean text between extraction and
export — its good blocks in page order, joined by newlines (`document_texts`: what the language
stage identifies, exact de-duplication hashes and the report's resemblance row compares) — and
the page text a user gets — its kept blocks, each on one line, a blank line between two
(`page_text`: the corpus document's ``text``, and the Python API's)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from corpusbuilder.common.arrays import factorize
from corpusbuilder.contracts.tables import kept_block_mask

if TYPE_CHECKING:
    import pandas as pd


def good_blocks(blocks: pd.DataFrame) -> pd.DataFrame:
    """The blocks jusText kept (final class `good`), grouped by document, in page order."""
    good = blocks.loc[kept_block_mask(blocks)]
    return good.sort_values(["doc_id", "block_index"], kind="stable").reset_index(drop=True)


def joined_texts(doc_ids, texts) -> tuple[np.ndarray, list[str]]:
    """(document ids, clean texts) of blocks given as two columns (Arrow, pandas or numpy) in
    page order: each document's block ``texts`` joined by newlines, the documents in the order of
    their first blocks (a ``groupby(sort=False)``'s, which took twice as long: a Series a
    document). A null doc_id is no document's."""
    codes, ids = factorize(doc_ids)
    return ids, texts_by_document(codes, len(ids), texts)


def texts_by_document(codes: np.ndarray, documents: int, texts) -> list[str]:
    """Per document number 0 .. ``documents`` - 1, the ``texts`` of its blocks (``codes``: each
    block's document number, -1 for none) joined by newlines, in their order; "" for a document
    with no block."""
    # a document's blocks together, in their order
    order = np.argsort(codes, kind="stable")[np.count_nonzero(codes < 0) :]
    if isinstance(texts, (pa.Array, pa.ChunkedArray)):
        texts = texts.to_numpy(zero_copy_only=False)
    texts = np.asarray(texts, dtype=object)[order]
    ends = np.cumsum(np.bincount(codes[order], minlength=documents))
    starts = np.r_[0, ends[:-1]]
    return ["\n".join(texts[a:b]) for a, b in zip(starts.tolist(), ends.tolist())]


def document_texts(good: pd.DataFrame) -> pd.Series:
    """doc_id -> clean text (`joined_texts` of the good blocks' doc_id and text). The texts stay
    Python strings (object dtype): pandas' own string dtype would copy them all into Arrow, 0.38
    of exact_hashes' 1.0 CPU-s on a 4,500-page shard, for callers that only iterate them."""
    import pandas as pd

    ids, texts = joined_texts(good["doc_id"], good["text"])
    return pd.Series(
        texts,
        index=pd.Index(ids, name="doc_id", dtype=good["doc_id"].dtype),
        name="text",
        dtype=object if len(ids) else good["text"].dtype,  # as a groupby's of no group
    )


def one_line(text: str) -> str:
    """A block's text as every output carries it: white space inside it one space."""
    return " ".join(text.split())


def page_text(block_texts: Iterable[str]) -> str:
    """The text of a page from its kept blocks' texts (each on one line), a blank line between
    two."""
    return "\n\n".join(block_texts)
