"""The rules' verdicts on a shard's documents, and the stage's table."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable

import numpy as np
import pyarrow as pa

from corpusbuilder.contracts.corpus import EXPORT_COLUMNS, kept_documents
from corpusbuilder.contracts.survivors import read_survivors
from corpusbuilder.contracts.tables import QUALITY_SCHEMA, ShardTables
from corpusbuilder.quality.params import RULES, QualityParams
from corpusbuilder.quality.signals import shard_signals
from corpusbuilder.quality.words import TokenTypes

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- verdicts


def rule_failures(signals: pa.Table, params: QualityParams) -> dict[str, np.ndarray]:
    """Per rule (by label, in `RULES` order): does each document (row of ``signals``) fail it.
    A null signal (NaN) fails no rule."""
    failed = {}
    for rule in RULES:
        threshold = getattr(getattr(params, rule.rule_set), rule.name)
        values = np.asarray(signals[rule.signal])
        if rule.kind == "min":
            failed[rule.label] = values < threshold
        elif rule.kind == "max":
            failed[rule.label] = values > threshold
        else:
            failed[rule.label] = (values > 0) & bool(threshold)
    return failed


def quality_table(
    documents: Iterable[tuple[str, str | None, str]], params: QualityParams
) -> pa.Table:
    """The quality table (QUALITY_SCHEMA) of a shard's documents, given as (doc_id, language,
    text): the signals, ``fails`` (every rule failed, of every set), ``dropped_by`` (the first
    rule of the `QualityParams.filter` sets failed; null when none is) and ``kept``."""
    documents = list(documents)
    signals = shard_signals(
        [(language, text) for _, language, text in documents], TokenTypes(), params
    )
    failed = rule_failures(signals, params)
    labels = np.array(list(failed), dtype=object)
    count = len(documents)
    matrix = np.column_stack(list(failed.values())) if count else np.zeros((0, len(labels)), bool)
    filtering = np.array([rule.rule_set in params.filter for rule in RULES])
    dropping = matrix & filtering
    table = pa.table(
        {
            "doc_id": pa.array([doc_id for doc_id, _, _ in documents], pa.string()),
            **{name: signals[name] for name in signals.column_names},
            "fails": pa.array([labels[row].tolist() for row in matrix], pa.list_(pa.string())),
            "dropped_by": pa.array(
                [labels[row][0] if row.any() else None for row in dropping], pa.string()
            ),
            "kept": pa.array(~dropping.any(axis=1) if count else np.ones(0, bool)),
        }
    )
    return table.cast(QUALITY_SCHEMA)


def score_shard(tables: ShardTables, params: QualityParams) -> pa.Table:
    """The quality table (QUALITY_SCHEMA) of the documents of a shard that survive the stages
    before, scored on their text as the corpus carries it (`contracts.corpus.kept_documents`)."""
    documents = kept_documents(read_survivors(tables, EXPORT_COLUMNS))
    table = quality_table(((doc.id, doc.language, doc.text) for doc in documents), params)
    dropped = Counter(rule for rule in table["dropped_by"].to_pylist() if rule is not None)
    log.info(
        "%s: %d documents scored, %d dropped by %s%s",
        tables.name,
        len(table),
        dropped.total(),
        "+".join(params.filter) or "no filter",
        "".join(f"; {rule} {count}" for rule, count in dropped.most_common()),
    )
    return table
