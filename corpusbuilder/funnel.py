"""The funnel: documents and words left after each step, as the thesis reports a corpus (Table 3.8).

Thesis Table 3.8 follows a corpus "throughout processing" — original size, after removing
boilerplate, after language filtering, after removing exact duplicates — in words, each step
also as a percentage of the one before. "Words" are whitespace-separated strings, as jusText
counts them (the blocks' ``n_words``). The rows here:

======================  =========================================  ==========================
stage                   documents                                  words
======================  =========================================  ==========================
``records``             every WARC record                          of all blocks (text found)
``html_documents``      records extract cleaned (outcome ``ok``)   of all their blocks
``good_text``           ... with at least one good block           of their good blocks
``language_kept``       ... kept by the language filter            of their kept good blocks
``exact_dedup_kept``    ... not an exact copy of an earlier one    likewise
``block_dedup_kept``    ... left a block by block de-duplication   of their blocks it keeps
``quality_kept``        ... not dropped by the quality filter      likewise: the corpus
======================  =========================================  ==========================

Non-HTML records hold no text, so ``records`` and ``html_documents`` have the same words.
The reasons table counts, for each step, why the documents it lost were lost: extract's skip
reasons (their detail after ":" left out), the language stage's ``no-text`` (the step to
``good_text``) and its other reasons, ``duplicate`` for exact copies, and the quality rule that
dropped a document (``gopher.min_stop_words``: the first rule it fails of the sets in
`quality.filter`; no document, by default) — for each step they add up to the documents the step
lost. Block de-duplication (when it ran; else its row repeats the one before) loses the documents
it leaves no block, as ``duplicate``, so the last row counts the documents the corpus holds.

Shards are counted by their export job each (`count_shard`, written by `write_counts`) and the
counts added up (`read_counts`), so no job reads more than one shard's tables, and the sum's work
grows with the shards alone.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from corpusbuilder.contracts.reportfiles import read_funnel_counts, write_funnel_counts
from corpusbuilder.contracts.survivors import Survivors, arrow_table, ids_in, read_survivors
from corpusbuilder.contracts.tables import ShardTables, cleaned_page_mask, read_columns

BLOCK_STAGE = "block_dedup_kept"

if TYPE_CHECKING:
    import pandas as pd

STAGES = (
    "records",
    "html_documents",
    "good_text",
    "language_kept",
    "exact_dedup_kept",
    BLOCK_STAGE,
    "quality_kept",
)


@dataclass
class FunnelCounts:
    """Documents and words per stage, and lost documents per (stage, reason)."""

    documents: Counter = field(default_factory=Counter)
    words: Counter = field(default_factory=Counter)
    lost: Counter = field(default_factory=Counter)

    def __add__(self, other: FunnelCounts) -> FunnelCounts:
        return FunnelCounts(
            self.documents + other.documents, self.words + other.words, self.lost + other.lost
        )


def funnel_counts(
    docs: pa.Table | pd.DataFrame,
    blocks: pa.Table | pd.DataFrame,
    language: pa.Table | pd.DataFrame,
    exact: pa.Table | pd.DataFrame,
    deduplicated: Survivors,
    quality: pa.Table | pd.DataFrame | None = None,
) -> FunnelCounts:
    """Count one shard from its extract docs and blocks, language table, exact decisions, what
    survives block de-duplication (`survivors.survivors` without the quality filter; its blocks
    with ``n_words``) and the quality filter's verdicts (doc_id, dropped_by; none dropped
    without it). Arrow tables (a DataFrame is converted): the export job that counts its shard
    runs without pandas."""
    import pyarrow.compute as pc

    docs, blocks, language, exact, quality = map(
        arrow_table, (docs, blocks, language, exact, quality)
    )
    ok = cleaned_page_mask(docs)
    with_text = ok & (_integers(docs["n_good_blocks"]) > 0)
    language_kept, exact_kept = _integers(language["kept"]) > 0, _integers(exact["kept"]) > 0
    html_words = _integers(blocks["n_words"])[ids_in(blocks["doc_id"], docs["doc_id"].filter(ok))]
    documents = {
        "records": len(docs),
        "html_documents": int(ok.sum()),
        "good_text": int(with_text.sum()),
        "language_kept": int(language_kept.sum()),
        "exact_dedup_kept": int(exact_kept.sum()),
    }
    left = deduplicated.documents["doc_id"]
    documents[BLOCK_STAGE] = len(left)
    dropped: list[str] = []
    if quality is not None:
        judged = quality.filter(
            pa.array(
                np.asarray(pc.is_valid(quality["dropped_by"])) & ids_in(quality["doc_id"], left)
            )
        )
        dropped = judged["dropped_by"].to_pylist()
        lost_to_quality = ids_in(deduplicated.blocks["doc_id"], judged["doc_id"])
    else:
        lost_to_quality = np.zeros(len(deduplicated.blocks), bool)
    words_left = _integers(deduplicated.blocks["n_words"])
    documents["quality_kept"] = documents[BLOCK_STAGE] - len(dropped)
    words = {
        "records": int(html_words.sum()),
        "html_documents": int(html_words.sum()),
        "good_text": int(_integers(docs["n_good_words"])[with_text].sum()),
        "language_kept": int(_integers(language["n_words"])[language_kept].sum()),
        "exact_dedup_kept": int(_integers(exact["n_words"])[exact_kept].sum()),
        BLOCK_STAGE: int(words_left.sum()),
        "quality_kept": int(words_left[~lost_to_quality].sum()),
    }
    lost: Counter = Counter()
    for reason in docs["reason"].filter(pa.array(~ok)).to_pylist():
        if reason is not None:  # extract's reason less its detail after ":"
            lost["html_documents", reason.split(":", 1)[0]] += 1
    for reason in language["reason"].filter(pa.array(~language_kept)).to_pylist():
        if reason is not None:
            lost["good_text" if reason == "no-text" else "language_kept", reason] += 1
    lost["exact_dedup_kept", "duplicate"] += int((~exact_kept).sum())
    lost[BLOCK_STAGE, "duplicate"] += documents["exact_dedup_kept"] - documents[BLOCK_STAGE]
    for rule in dropped:
        lost["quality_kept", rule] += 1
    return FunnelCounts(Counter(documents), Counter(words), +lost)


def _integers(column) -> np.ndarray:
    """An integer or boolean Arrow column as int64, a null as 0 (as pandas' sums skip it)."""
    import pyarrow.compute as pc

    return np.asarray(pc.fill_null(column, 0) if column.null_count else column).astype(np.int64)


def count_shard(tables: ShardTables) -> FunnelCounts:
    """`funnel_counts` of one shard's files, reading only the columns it counts."""
    if tables.language is None or tables.exact is None:
        raise ValueError(f"shard {tables.name}: the funnel reads its language and exact tables too")
    return funnel_counts(
        read_columns(tables.docs, ["doc_id", "outcome", "reason", "n_good_blocks", "n_good_words"]),
        read_columns(tables.blocks, ["doc_id", "n_words"]),
        read_columns(tables.language, ["kept", "reason", "n_words"]),
        read_columns(tables.exact, ["doc_id", "kept", "n_words"]),
        read_survivors(replace(tables, quality=None), ("n_words",)),
        read_columns(tables.quality, ["doc_id", "dropped_by"]) if tables.quality else None,
    )


def write_counts(counts: FunnelCounts, path) -> None:
    write_funnel_counts(counts.documents, counts.words, counts.lost, path)


def read_counts(path) -> FunnelCounts:
    documents, words, lost = read_funnel_counts(path)
    return FunnelCounts(Counter(documents), Counter(words), Counter(lost))


def _percent(values: list[int]) -> list[float]:
    previous = np.array([np.nan] + values[:-1], dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(previous > 0, 100 * np.array(values, dtype=float) / previous, np.nan)
    return np.round(share, 2).tolist()


def funnel_tables(counts: FunnelCounts) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(funnel: stage, documents, words, pct_of_previous_documents, pct_of_previous_words;
    skipped: stage, reason, count — by stage in funnel order, then by count)."""
    import pandas as pd

    documents = [counts.documents[s] for s in STAGES]
    words = [counts.words[s] for s in STAGES]
    funnel = pd.DataFrame(
        {
            "stage": STAGES,
            "documents": documents,
            "words": words,
            "pct_of_previous_documents": _percent(documents),
            "pct_of_previous_words": _percent(words),
        }
    )
    skipped = pd.DataFrame(
        [(stage, reason, count) for (stage, reason), count in counts.lost.items()],
        columns=["stage", "reason", "count"],
    )
    skipped["order"] = skipped["stage"].map(STAGES.index)
    skipped = skipped.sort_values(["order", "count", "reason"], ascending=[True, False, True])
    return funnel, skipped.drop(columns="order").reset_index(drop=True)
