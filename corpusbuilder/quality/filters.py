"""The rules' verdicts on a shard's documents, and the stage's table."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from corpusbuilder.contracts.corpus import EXPORT_COLUMNS, kept_documents
from corpusbuilder.contracts.survivors import read_survivors
from corpusbuilder.contracts.tables import QUALITY_SCHEMA, ShardTables, stage_table
from corpusbuilder.quality.params import RULES, QualityParams
from corpusbuilder.quality.signals import shard_signals
from corpusbuilder.quality.words import TokenTypes

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- verdicts


def rule_failures(signals: pd.DataFrame, params: QualityParams) -> dict[str, np.ndarray]:
    """Per rule (by label, in `RULES` order): does each document (row of ``signals``) fail it."""
    failed = {}
    for rule in RULES:
        threshold = getattr(getattr(params, rule.rule_set), rule.name)
        values = signals[rule.signal].to_numpy()
        if rule.kind == "min":
            failed[rule.label] = values < threshold
        elif rule.kind == "max":
            failed[rule.label] = values > threshold
        else:
            failed[rule.label] = (values > 0) & bool(threshold)
    return failed


def quality_table(
    documents: Iterable[tuple[str, str | None, str]], params: QualityParams
) -> pd.DataFrame:
    """The quality table of a shard's documents, given as (doc_id, language, text): the signals,
    ``fails`` (every rule failed, of every set), ``dropped_by`` (the first rule of the
    `QualityParams.filter` sets failed; null when none is) and ``kept``."""
    import pandas as pd

    documents = list(documents)
    ids = [doc_id for doc_id, _, _ in documents]
    table = shard_signals(
        [(language, text) for _, language, text in documents], TokenTypes(), params
    )
    table.insert(0, "doc_id", pd.Series(ids, dtype=object))
    failed = rule_failures(table, params)
    labels = np.array(list(failed), dtype=object)
    matrix = np.column_stack(list(failed.values())) if len(table) else np.zeros((0, len(labels)))
    table["fails"] = [labels[row].tolist() for row in matrix.astype(bool)]
    filtering = np.array([rule.rule_set in params.filter for rule in RULES])
    dropping = matrix.astype(bool) & filtering
    table["dropped_by"] = [labels[row][0] if row.any() else None for row in dropping]
    table["kept"] = ~dropping.any(axis=1) if len(table) else np.ones(0, bool)
    return table


def score_shard(tables: ShardTables, params: QualityParams) -> pa.Table:
    """The quality table (QUALITY_SCHEMA) of the documents of a shard that survive the stages
    before, scored on their text as the corpus carries it (`contracts.corpus.kept_documents`)."""
    documents = kept_documents(read_survivors(tables, EXPORT_COLUMNS))
    table = quality_table(((doc.id, doc.language, doc.text) for doc in documents), params)
    dropped = table["dropped_by"].value_counts()
    log.info(
        "%s: %d documents scored, %d dropped by %s%s",
        tables.name,
        len(table),
        int(dropped.sum()),
        "+".join(params.filter) or "no filter",
        "".join(f"; {rule} {count}" for rule, count in dropped.items()),
    )
    return stage_table(table, QUALITY_SCHEMA)
