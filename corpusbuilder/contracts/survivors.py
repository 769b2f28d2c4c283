"""The one join every consumer of the stage tables asks — which documents and blocks of a shard
survive the stages that ran (`survivors`, `read_survivors`) — and the row matching it is made of
(`ids_in`, `id_rows`, `block_rows`), in numpy and Arrow: a job that reads its survivors needs no
pandas. Part of the contracts layer; the tables themselves are `tables`'."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from corpusbuilder.contracts.tables import (
    METADATA_COLUMNS,
    REMOVED_PARTS,
    ShardTables,
    cleaned_page_mask,
    kept_block_mask,
    read_columns,
)

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class Survivors:
    """What of a shard reaches the corpus: ``documents`` (doc_id, record_index, uri, language,
    language_score and, where the docs table has them, shard, warc, offset, warc_record_id, date
    and the METADATA_COLUMNS) in crawl order, and their ``blocks`` (doc_id, block_index and the
    block columns read) in page order, as Arrow tables: the stages that read them (exact hashes,
    tokenise, export) then run without pandas. Every document has at least one block."""

    documents: pa.Table
    blocks: pa.Table


# the docs-table columns a surviving document carries into the corpus, besides its language and
# what the page says about itself (METADATA_COLUMNS)
PROVENANCE_COLUMNS = ["shard", "warc", "offset", "warc_record_id", "date"]


def _strings(column) -> pa.Array | pa.ChunkedArray:
    """Document ids (an Arrow, pandas or numpy column) as one Arrow string type, so that any two
    compare, whatever table they come from (an empty column read as objects has no type)."""
    if not isinstance(column, (pa.Array, pa.ChunkedArray)):
        return pa.array(column, type=pa.large_string())
    return column.cast(pa.large_string())


def _numbers(column) -> np.ndarray:
    """An integer column (Arrow, pandas or numpy) as int64."""
    return np.asarray(column, dtype=np.int64)


def ids_in(ids, values) -> np.ndarray:
    """Per row of ``ids``: is it one of ``values`` (document ids, Arrow or pandas columns).
    Computed in Arrow: pandas' ``isin`` on Arrow-backed strings makes an Arrow scalar of every
    value in Python, a second per block of a shard."""
    import pyarrow.compute as pc

    return np.asarray(pc.is_in(_strings(ids), value_set=_strings(values)), dtype=bool)


def id_rows(ids, of_ids) -> np.ndarray:
    """Per row of ``ids``: the row of ``of_ids`` (distinct document ids) that holds it, -1 where
    none does."""
    import pyarrow.compute as pc

    rows = pc.index_in(_strings(ids), value_set=_strings(of_ids))
    return np.asarray(rows.fill_null(-1), dtype=np.int64)


def block_rows(doc_ids, block_indexes, of_doc_ids, of_block_indexes) -> np.ndarray:
    """Per (doc_id, block_index) pair: the row of the pairs ``of_doc_ids``/``of_block_indexes``
    (distinct) that holds it, -1 where none does. A pair is one int64 (the document's number
    among ``of_doc_ids``' distinct ids, then the block index), found by a binary search."""
    import pyarrow.compute as pc

    of_ids = _strings(of_doc_ids)
    distinct = pc.unique(of_ids)
    codes = id_rows(doc_ids, distinct)
    keys = (codes << 32) | _numbers(block_indexes)
    of_keys = (id_rows(of_ids, distinct) << 32) | _numbers(of_block_indexes)
    if not len(of_keys):
        return np.full(len(keys), -1, np.int64)
    order = np.argsort(of_keys, kind="stable")
    at = np.minimum(np.searchsorted(of_keys[order], keys), len(order) - 1)
    found = (of_keys[order][at] == keys) & (codes >= 0)
    return np.where(found, order[at], -1)


def _column_names(table) -> list[str]:
    return table.column_names if isinstance(table, pa.Table) else list(table.columns)


def dropped_block_mask(blocks, language) -> np.ndarray:
    """Per row of ``blocks``: did the language stage drop this one block of its document
    (block-level filtering, ``dropped_blocks``). Arrow tables or DataFrames."""
    import pyarrow.compute as pc

    if "dropped_blocks" not in _column_names(language):
        return np.zeros(len(blocks), dtype=bool)
    lists = language["dropped_blocks"]
    if not isinstance(lists, (pa.Array, pa.ChunkedArray)):
        lists = pa.array(lists, type=pa.list_(pa.int32()))
    dropped = pc.list_flatten(lists)
    if not len(dropped):
        return np.zeros(len(blocks), dtype=bool)
    owners = _strings(language["doc_id"]).take(pc.list_parent_indices(lists))
    return block_rows(blocks["doc_id"], blocks["block_index"], owners, dropped) >= 0


def arrow_table(table):
    """A stage table as an Arrow table (a DataFrame is converted; None stays None)."""
    if table is None or isinstance(table, pa.Table):
        return table
    return pa.Table.from_pandas(table, preserve_index=False)


def survivors(
    docs: pa.Table | pd.DataFrame,
    blocks: pa.Table | pd.DataFrame,
    language: pa.Table | pd.DataFrame | None = None,
    exact: pa.Table | pd.DataFrame | None = None,
    dedup: pa.Table | pd.DataFrame | None = None,
    quality: pa.Table | pd.DataFrame | None = None,
) -> Survivors:
    """The documents and blocks that survive every stage that ran (Arrow tables as
    `read_survivors` reads them; a DataFrame is converted).

    A cleaned page (extract's outcome ``ok``) keeps the blocks classified good — by block
    de-duplication when it ran (``dedup``, which only ever demotes a block, and whose
    ``removed_chunk_starts``/``removed_chunk_ends`` a partly kept block carries: `corpus.kept_text`
    is its text), else by extract;
    the language stage drops whole documents and, with block-level filtering, single blocks; exact
    de-duplication drops copies; the quality filter (``quality``: doc_id, kept) drops what its
    rule sets fail. A document left with no block is not in the corpus. The
    document's language is the language stage's verdict when it ran, else the page language
    extract guessed for its stop list.
    """
    import pyarrow.compute as pc

    docs, blocks, language, exact, dedup, quality = (
        arrow_table(table) for table in (docs, blocks, language, exact, dedup, quality)
    )
    carried = [
        "doc_id",
        "record_index",
        "uri",
        "page_language",
        "page_language_probability",
        *PROVENANCE_COLUMNS,
        *METADATA_COLUMNS,
    ]
    documents = docs.filter(pa.array(cleaned_page_mask(docs)))
    documents = documents.select([c for c in carried if c in docs.column_names])
    renamed = {"page_language": "language", "page_language_probability": "language_score"}
    documents = documents.rename_columns([renamed.get(c, c) for c in documents.column_names])
    good = blocks
    if dedup is not None:
        # a block partly kept (sentence and span modes) carries its removed token ranges
        verdict = [c for c in ("final_class", *REMOVED_PARTS) if c in dedup.column_names]
        row = block_rows(good["doc_id"], good["block_index"], dedup["doc_id"], dedup["block_index"])
        good = good.drop_columns(["final_class"]).filter(pa.array(row >= 0))
        for name in verdict:
            good = good.append_column(name, dedup[name].take(row[row >= 0]))
    good = good.filter(pa.array(kept_block_mask(good)))
    if language is not None:
        kept = language.filter(language["kept"])
        row = id_rows(documents["doc_id"], kept["doc_id"])
        documents = documents.drop_columns(
            [c for c in ("language", "language_score") if c in documents.column_names]
        ).filter(pa.array(row >= 0))
        row = row[row >= 0]
        documents = documents.append_column("language", kept["language"].take(row))
        if "probability" in kept.column_names:
            documents = documents.append_column("language_score", kept["probability"].take(row))
        good = good.filter(pa.array(ids_in(good["doc_id"], kept["doc_id"])))
        good = good.filter(pa.array(~dropped_block_mask(good, kept)))
    if exact is not None:
        copies = exact.filter(exact["kept"])["doc_id"]
        documents = documents.filter(pa.array(ids_in(documents["doc_id"], copies)))
    if quality is not None:
        failed = quality.filter(pc.invert(quality["kept"]))["doc_id"]
        documents = documents.filter(pa.array(~ids_in(documents["doc_id"], failed)))
    documents = documents.filter(pa.array(ids_in(documents["doc_id"], good["doc_id"])))
    documents = documents.take(np.argsort(_numbers(documents["record_index"]), kind="stable"))
    rank = id_rows(good["doc_id"], documents["doc_id"])
    good = good.filter(pa.array(rank >= 0))
    order = np.lexsort((_numbers(good["block_index"]), rank[rank >= 0]))
    return Survivors(documents.combine_chunks(), good.take(order).combine_chunks())


def read_survivors(tables: ShardTables, block_columns: tuple[str, ...] = ("text",)) -> Survivors:
    """`survivors` of one shard's files, reading only what the join and ``block_columns`` need."""
    docs = read_columns(
        tables.docs,
        ["doc_id", "record_index", "uri", "outcome", "page_language"],
        optional=["page_language_probability", *PROVENANCE_COLUMNS, *METADATA_COLUMNS],
    )
    blocks = read_columns(
        tables.blocks, ["doc_id", "block_index", "final_class", *block_columns], good_only=True
    )
    language = (
        read_columns(
            tables.language,
            ["doc_id", "language", "kept", "dropped_blocks"],
            optional=["probability"],
        )
        if tables.language
        else None
    )
    exact = read_columns(tables.exact, ["doc_id", "kept"]) if tables.exact else None
    dedup = (
        read_columns(
            tables.dedup,
            ["doc_id", "block_index", "final_class"],
            optional=REMOVED_PARTS if "text" in block_columns else (),
        )
        if tables.dedup
        else None
    )
    quality = read_columns(tables.quality, ["doc_id", "kept"]) if tables.quality else None
    return survivors(docs, blocks, language, exact, dedup, quality)


def good_after_dedup(blocks, dedup) -> np.ndarray:
    """Per row of ``blocks`` (doc_id, block_index): is it still good after block
    de-duplication (all are, when it did not run)."""
    if dedup is None:
        return np.ones(len(blocks), dtype=bool)
    good = dedup.loc[kept_block_mask(dedup), ["doc_id", "block_index"]]
    return (
        block_rows(blocks["doc_id"], blocks["block_index"], good["doc_id"], good["block_index"])
        >= 0
    )
