"""What the report reads of the shard tables: the verdicts `corpusbuilder.contracts.verdicts` and
`tables.survivors` join, of the stages whose tables exist, turned into what the page shows — a
display kind per block, a verdict per document, documents and words per language."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from corpusbuilder.contracts.tables import ShardTables, read_survivors
from corpusbuilder.contracts.verdicts import read_block_verdicts, read_document_verdicts

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


def corpus_languages(shards: Sequence[ShardTables]) -> tuple[pd.DataFrame, np.ndarray]:
    """Per language: documents the language stage identified as it, kept, and in the corpus, with
    their words; and the words of every document in the corpus (for the length histogram)."""
    import pandas as pd

    identified: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    in_corpus: Counter[str] = Counter()
    words: Counter[str] = Counter()
    lengths = []
    for shard in shards:
        ran = stages_that_ran(shard)
        if not (ran.language and existing(shard.docs) and existing(shard.blocks)):
            continue
        judged = read_document_verdicts(ran)
        judged = judged.loc[judged["language_kept"].notna()]
        judged = judged.fillna({"language": "unidentified"})
        identified.update(judged["language"])
        kept.update(judged.loc[judged["language_kept"].astype(bool), "language"])
        corpus = read_survivors(ran, ("n_words",))
        per_doc = corpus.blocks.groupby("doc_id", sort=False)["n_words"].sum()
        codes = corpus.documents.set_index("doc_id")["language"].fillna("unidentified")
        in_corpus.update(codes)
        for doc_id, n in per_doc.items():
            words[codes[doc_id]] += int(n)
        lengths.append(per_doc.to_numpy(np.int64))
    table = pd.DataFrame(
        [
            {
                "language": code,
                "identified": identified[code],
                "kept_by_filter": kept[code],
                "in_corpus": in_corpus[code],
                "words": words[code],
            }
            for code in identified
        ]
    )
    if len(table):
        table = table.sort_values(
            ["words", "identified", "language"], ascending=[False, False, True]
        )
    return table.reset_index(drop=True), np.concatenate(lengths) if lengths else np.empty(
        0, np.int64
    )
