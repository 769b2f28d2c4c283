"""What each stage decided about each document and block of extract's tables, joined onto them in
one place for whoever shows the decisions (the report), as `survivors.survivors` joins what
survives.

Part of the contracts layer beside `tables`, through which it reads: a consumer takes the verdicts
from here and never joins the language, exact or dedup tables onto extract's rows itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from corpusbuilder.contracts.survivors import dropped_block_mask
from corpusbuilder.contracts.tables import (
    BAD,
    DUPLICATE,
    REMOVED_PARTS,
    ShardTables,
    cleaned_page_mask,
    kept_block_mask,
    read_table,
)

if TYPE_CHECKING:
    import pandas as pd


def document_verdicts(
    docs: pd.DataFrame, language: pd.DataFrame | None = None, exact: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The cleaned pages of ``docs``, in its order, with the whole-document verdicts of the stages
    that ran: the language stage's ``language``, ``language_kept`` and ``language_reason``; exact
    de-duplication's ``exact_kept`` and ``duplicate_of``. Null where a stage did not judge."""
    documents = docs.loc[cleaned_page_mask(docs)]
    for verdicts, stage in ((language, "language"), (exact, "exact")):
        if verdicts is not None:
            renamed = verdicts.rename(
                columns={"kept": f"{stage}_kept", "reason": f"{stage}_reason"}
            )
            documents = documents.merge(renamed, on="doc_id", how="left")
    return documents


def read_document_verdicts(tables: ShardTables, columns: Sequence[str] = ()) -> pd.DataFrame:
    """`document_verdicts` of one shard's files (stages whose table is None did not run), with
    ``columns`` of its docs table."""
    docs = read_table(tables.docs, ["doc_id", *columns, "outcome"])
    language = (
        read_table(tables.language, ["doc_id", "language", "kept", "reason"])
        if tables.language
        else None
    )
    exact = read_table(tables.exact, ["doc_id", "kept", "duplicate_of"]) if tables.exact else None
    return document_verdicts(docs, language, exact)


# what block de-duplication says of a block beside its class (DEDUP_SCHEMA); null where it did not
# judge the block
DEDUP_DETAILS = (
    "duplicate_of",
    "dup_share",
    "removed_starts",
    *REMOVED_PARTS,
    "removed_duplicate_of",
)


def block_verdicts(
    blocks: pd.DataFrame, dedup: pd.DataFrame | None = None, language: pd.DataFrame | None = None
) -> pd.DataFrame:
    """``blocks`` (extract's rows, in their order) with what became of each: ``kept_by_extract``;
    block de-duplication's ``duplicate`` (a copy) and ``context_removed`` (kept by extract, then
    removed among copies), with its `DEDUP_DETAILS`; the language stage's ``language_dropped``
    (block-level filtering)."""
    import pandas as pd

    after = pd.DataFrame(index=blocks.index, columns=["final_class", *DEDUP_DETAILS], dtype=object)
    after["dup_share"] = after["dup_share"].astype(float)
    if dedup is not None:
        merged = blocks[["doc_id", "block_index"]].merge(
            dedup, on=["doc_id", "block_index"], how="left", sort=False
        )
        for column in after.columns.intersection(merged.columns):
            after[column] = merged[column].to_numpy(dtype=after[column].dtype)
    kept = kept_block_mask(blocks).to_numpy()
    dropped = (
        np.zeros(len(blocks), bool) if language is None else dropped_block_mask(blocks, language)
    )
    return blocks.assign(
        kept_by_extract=kept,
        duplicate=(after["final_class"] == DUPLICATE).to_numpy(),
        context_removed=kept & (after["final_class"] == BAD).to_numpy(),
        language_dropped=dropped,
        **after[list(DEDUP_DETAILS)],
    )


def read_block_verdicts(
    tables: ShardTables, columns: Sequence[str] = (), doc_ids: list[str] | None = None
) -> pd.DataFrame:
    """`block_verdicts` of one shard's files (of the documents ``doc_ids``, else all; stages whose
    table is None did not run), with ``columns`` of its blocks table."""
    blocks = read_table(
        tables.blocks, ["doc_id", "block_index", "final_class", *columns], doc_ids=doc_ids
    )
    dedup = (
        read_table(
            tables.dedup,
            ["doc_id", "block_index", "final_class", "duplicate_of", "dup_share"],
            doc_ids=doc_ids,
            optional=["removed_starts", *REMOVED_PARTS, "removed_duplicate_of"],
        )
        if tables.dedup
        else None
    )
    language = (
        read_table(tables.language, ["doc_id", "dropped_blocks"], doc_ids=doc_ids)
        if tables.language
        else None
    )
    return block_verdicts(blocks, dedup, language)
