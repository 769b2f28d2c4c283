"""The report's quality section: how the corpus scores on the signals of the quality stage
(`corpusbuilder.quality`), what each rule set (Gopher, C4, FineWeb) would drop, and examples of
documents each fails.

Plain functions over the shards' quality tables, and one that renders them as an HTML
section with its own markup, so that it can sit in any page of the report.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from corpusbuilder.contracts.corpus import EXPORT_COLUMNS, kept_documents
from corpusbuilder.contracts.tables import ShardTables, read_survivors, read_table

if TYPE_CHECKING:
    import pandas as pd

# the signals whose distribution the report shows, one or more per rule set
MAIN_SIGNALS = (
    "words",
    "mean_word_length",
    "alpha_words",
    "stop_words",
    "dup_line_char_frac",
    "top_2gram_char_frac",
    "dup_10gram_char_frac",
    "c4_sentences",
    "fineweb_line_punct_ratio",
    "fineweb_short_line_ratio",
    "fineweb_char_dup_ratio",
    "fineweb_newline_ratio",
)
RULE_SETS = ("gopher", "c4", "fineweb")
PERCENTILES = (5, 25, 50, 75, 95)


def read_quality(shards: Sequence[ShardTables]) -> pd.DataFrame:
    """The quality tables of the shards that have one, with a ``shard`` column."""
    import pandas as pd

    tables = [
        read_table(shard.quality).assign(shard=shard.name) for shard in shards if shard.quality
    ]
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()


def signal_distribution(quality: pd.DataFrame) -> pd.DataFrame:
    """Per main signal: its percentiles over the documents, and its mean."""
    import pandas as pd

    rows = []
    for signal in MAIN_SIGNALS:
        values = quality[signal].to_numpy(float)
        row = {"signal": signal, "mean": float(values.mean()) if len(values) else np.nan}
        for p, value in zip(PERCENTILES, np.percentile(values, PERCENTILES) if len(values) else []):
            row[f"p{p}"] = float(value)
        rows.append(row)
    return pd.DataFrame(rows, columns=["signal", *(f"p{p}" for p in PERCENTILES), "mean"])


def _first_rule_of(fails, rule_set: str) -> str | None:
    return next((rule for rule in fails if rule.startswith(rule_set + ".")), None)


def rule_set_drops(quality: pd.DataFrame) -> pd.DataFrame:
    """Per rule set: the documents and words (its ``words`` signal) it would drop, as counts and
    shares of the corpus scored, and how many the filter did drop."""
    import pandas as pd

    total_words = max(int(quality["words"].sum()), 1)
    rows = []
    for rule_set in RULE_SETS:
        fails = quality["fails"].map(lambda f, s=rule_set: _first_rule_of(f, s) is not None)
        dropped = quality["dropped_by"].fillna("").str.startswith(rule_set + ".")
        rows.append(
            {
                "rule_set": rule_set,
                "documents": int(fails.sum()),
                "documents_share": fails.mean() if len(quality) else 0.0,
                "words": int(quality.loc[fails, "words"].sum()),
                "words_share": quality.loc[fails, "words"].sum() / total_words,
                "dropped": int(dropped.sum()),
            }
        )
    return pd.DataFrame(rows)


def rule_counts(quality: pd.DataFrame) -> pd.DataFrame:
    """Documents failing each rule (a document may fail several), most failed first."""
    import pandas as pd

    counts = quality["fails"].explode().dropna().value_counts()
    return pd.DataFrame({"rule": counts.index, "documents": counts.to_numpy()})


def dropped_examples(
    shards: Sequence[ShardTables], quality: pd.DataFrame, per_set: int = 3, chars: int = 300
) -> pd.DataFrame:
    """Up to ``per_set`` documents each rule set fails (the first in crawl order), with the rule
    of the set they fail first, their URL and the start of their text."""
    import pandas as pd

    chosen = []
    for rule_set in RULE_SETS:
        first = quality["fails"].map(lambda f, s=rule_set: _first_rule_of(f, s))
        picked = quality.loc[first.notna()].head(per_set)
        chosen.append(picked.assign(rule_set=rule_set, rule=first[picked.index]))
    examples = pd.concat(chosen, ignore_index=True) if chosen else pd.DataFrame()
    texts: dict[str, tuple[str, str]] = {}
    for shard in shards:
        wanted = set(examples.loc[examples["shard"] == shard.name, "doc_id"])
        if not wanted:
            continue
        # the text as the corpus has it, also of a document the filter keeps out of it
        unfiltered = ShardTables(
            shard.docs, shard.blocks, shard.language, shard.exact, shard.dedup, shard.name
        )
        for doc in kept_documents(read_survivors(unfiltered, EXPORT_COLUMNS)):
            if doc.id in wanted:
                texts[doc.id] = (doc.url, doc.text[:chars])
    examples["url"] = examples["doc_id"].map(lambda d: texts.get(d, ("", ""))[0])
    examples["excerpt"] = examples["doc_id"].map(lambda d: texts.get(d, ("", ""))[1])
    return examples[["rule_set", "rule", "doc_id", "url", "excerpt"]]


def _html_table(table: pd.DataFrame, percent: Sequence[str] = ()) -> str:
    def cell(column: str, value) -> str:
        if column in percent:
            return f"{100 * value:.1f} %"
        if isinstance(value, float):
            return f"{value:.3g}"
        return html.escape(str(value))

    head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{cell(c, v)}</td>" for c, v in row.items()) + "</tr>"
        for _, row in table.iterrows()
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def quality_section(shards: Sequence[ShardTables], per_set: int = 3) -> str:
    """The report's quality section; empty when no shard has a quality table."""
    quality = read_quality(shards)
    if quality.empty:
        return ""
    body = (
        f'<p class="lead">{len(quality)} documents scored by the quality stage (docs/quality.md): '
        "the Gopher, C4 and FineWeb signals each carries in the JSONL (<code>quality</code>), "
        "and what each rule set would drop (<code>quality.filter</code> names the sets that do; "
        "<em>dropped</em> counts those).</p>"
        + _html_table(rule_set_drops(quality), percent=("documents_share", "words_share"))
        + "<h3>Rules failed</h3>"
        + _html_table(rule_counts(quality))
        + "<h3>Distribution of the main signals</h3>"
        + _html_table(signal_distribution(quality))
        + "<h3>Examples of failing documents</h3>"
        + _html_table(dropped_examples(shards, quality, per_set))
    )
    return f'<section id="quality"><h2>Quality signals</h2>{body}</section>'
