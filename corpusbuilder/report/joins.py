"""What the report reads of the shard tables: the verdicts `corpusbuilder.contracts.verdicts` and
`survivors.survivors` join, of the stages whose tables exist, turned into what the page shows — a
display kind per block, a verdict per document, documents and words per language."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from corpusbuilder.contracts.survivors import read_survivors
from corpusbuilder.contracts.tables import ShardTables
from corpusbuilder.contracts.verdicts import read_block_verdicts, read_document_verdicts
from corpusbuilder.report.rendering import LENGTH_BINS

if TYPE_CHECKING:
    import pandas as pd

BLOCK_KINDS = {  # css class → legend label
    "good": "kept text",
    "bad": "boilerplate (extract)",
    "dup": "duplicate block (block de-duplication)",
    "ctx": "removed beside duplicates (context pass)",
    "lang": "dropped by the language filter",
}


def existing(path: Path | str | None) -> Path | None:
    return Path(path) if path is not None and Path(path).is_file() else None


def stages_that_ran(shard: ShardTables) -> ShardTables:
    """``shard`` without the tables of the stages that left none (a report can be drawn from a
    workflow that stopped early, or ran without block de-duplication)."""
    return replace(
        shard,
        language=existing(shard.language),
        exact=existing(shard.exact),
        dedup=existing(shard.dedup),
    )


def block_kinds(blocks: pd.DataFrame) -> pd.Series:
    """The display kind (a `BLOCK_KINDS` key) of each row of `verdicts.block_verdicts`: what
    removed the block last, or ``good``."""
    import pandas as pd

    kind = np.where(blocks["kept_by_extract"], "good", "bad").astype(object)
    kind = np.where(blocks["duplicate"], "dup", kind)
    kind = np.where(blocks["context_removed"], "ctx", kind)
    kind = np.where(blocks["language_dropped"] & (kind == "good"), "lang", kind)
    return pd.Series(kind, index=blocks.index, name="kind")


def shard_overview(shard: ShardTables) -> pd.DataFrame:
    """Per cleaned document of a shard: block counts by display kind and the document's verdict."""
    import pandas as pd

    ran = stages_that_ran(shard)
    blocks = read_block_verdicts(ran)
    counts = pd.crosstab(blocks["doc_id"], block_kinds(blocks)).reindex(
        columns=list(BLOCK_KINDS), fill_value=0
    )
    overview = read_document_verdicts(ran, ["record_index", "uri"])
    overview = overview.loc[overview["doc_id"].isin(counts.index)].copy()
    overview[list(BLOCK_KINDS)] = counts.loc[overview["doc_id"]].to_numpy()
    overview["shard"] = shard.name
    overview["verdict"] = "kept"
    overview["removed"] = False
    if ran.language:
        lost = overview["language_kept"].eq(False)
        overview.loc[lost, "verdict"] = (
            "dropped by the language filter: " + overview.loc[lost, "language_reason"]
        )
        overview.loc[lost, "removed"] = True
    if ran.exact:
        copy = overview["exact_kept"].eq(False)
        overview.loc[copy, "verdict"] = "exact duplicate of " + overview.loc[
            copy, "duplicate_of"
        ].astype(str)
        overview.loc[copy, "removed"] = True
    emptied = ~overview["removed"] & (overview["good"] == 0)
    overview.loc[emptied, "verdict"] = np.where(
        overview.loc[emptied, "dup"] > 0,
        "removed: every kept block was a duplicate",
        "no block left",
    )
    overview.loc[emptied, "removed"] = True
    return overview


# per language: documents identified as it, kept by the filter, in the corpus, and their words
LANGUAGE_COUNTS = ("identified", "kept_by_filter", "in_corpus", "words")


def shard_languages(shard: ShardTables) -> tuple[dict[str, list[int]], dict]:
    """One shard's `LANGUAGE_COUNTS` per language the language stage identified (in the order
    first seen), and its corpus's ``documents`` with the number per bin of words (``bins``:
    `LENGTH_BINS`); nothing for a shard that has no language table."""
    ran = stages_that_ran(shard)
    if not (ran.language and existing(shard.docs) and existing(shard.blocks)):
        return {}, {"documents": 0, "bins": [0] * len(LENGTH_BINS)}
    counts: dict[str, Counter[str]] = {name: Counter() for name in LANGUAGE_COUNTS}
    judged = read_document_verdicts(ran)
    judged = judged.loc[judged["language_kept"].notna()]
    judged = judged.fillna({"language": "unidentified"})
    counts["identified"].update(judged["language"])
    counts["kept_by_filter"].update(judged.loc[judged["language_kept"].astype(bool), "language"])
    corpus = read_survivors(ran, ("n_words",))
    per_doc = corpus.blocks.to_pandas().groupby("doc_id", sort=False)["n_words"].sum()
    codes = corpus.documents.to_pandas().set_index("doc_id")["language"].fillna("unidentified")
    counts["in_corpus"].update(codes)
    for doc_id, n in per_doc.items():
        counts["words"][codes[doc_id]] += int(n)
    lengths = per_doc.to_numpy(np.int64)
    edges = [*LENGTH_BINS, max(int(lengths.max(initial=0)) + 1, LENGTH_BINS[-1] + 1)]
    bins, _ = np.histogram(lengths, bins=edges)
    languages = {
        code: [counts[name][code] for name in LANGUAGE_COUNTS] for code in counts["identified"]
    }
    return languages, {"documents": len(lengths), "bins": [int(n) for n in bins]}


def add_languages(total: dict[str, list[int]], shard: dict[str, list[int]]) -> dict[str, list[int]]:
    """Two `shard_languages` counts added up, language by language."""
    added = {code: list(counts) for code, counts in total.items()}
    for code, counts in shard.items():
        added[code] = [a + b for a, b in zip(added.get(code, [0] * len(counts)), counts)]
    return added


def language_table(languages: dict[str, list[int]]) -> pd.DataFrame:
    """The languages section's table: a row per language identified, most words first."""
    import pandas as pd

    table = pd.DataFrame(
        [{"language": code, **dict(zip(LANGUAGE_COUNTS, n))} for code, n in languages.items()],
        columns=["language", *LANGUAGE_COUNTS],
    )
    if len(table):
        table = table.sort_values(
            ["words", "identified", "language"], ascending=[False, False, True]
        )
    return table.reset_index(drop=True)
