"""The report's quality section: how the corpus scores on the signals of the quality stage
(`corpusbuilder.quality`), what each rule set (Gopher, C4, FineWeb) would drop, and examples of
documents each fails.

A shard's quality table is summed up by its own job (`shard_quality`: counts, the signals' sums,
the first failing documents of each rule set, and a sample of ``sample_size`` documents' signals,
those whose doc_id hashes lowest); the shards' summaries add up to the corpus's (`add_quality`),
no larger than one. The percentiles come from that sample: exact while the corpus holds no more
documents, else within `percentile_error` ranks. `quality_section` renders the corpus's summary
as an HTML section with its own markup, so that it can sit in any page of the report.
"""

from __future__ import annotations

import hashlib
import html
import math
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from corpusbuilder.contracts.corpus import EXPORT_COLUMNS, kept_documents
from corpusbuilder.contracts.survivors import read_survivors
from corpusbuilder.contracts.tables import ShardTables, read_table

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
# per rule set: the documents and the words it fails, the documents it dropped
RULE_SET_COUNTS = ("documents", "words", "dropped")
PERCENTILES = (5, 25, 50, 75, 95)
CONFIDENCE = 0.95  # of the percentiles' stated error


def sample_key(doc_id: str) -> int:
    """Where a document ranks for the signals' sample: a hash of its id, so that every shard and
    every merge keeps the same documents (the lowest keys), a uniform sample of the corpus."""
    return int.from_bytes(hashlib.blake2b(doc_id.encode(), digest_size=8).digest(), "big")


def _first_rule_of(fails, rule_set: str) -> str | None:
    return next((rule for rule in fails if rule.startswith(rule_set + ".")), None)


def _lowest(sample: dict, size: int) -> dict:
    """The ``size`` documents of a signals' sample with the lowest keys."""
    order = np.argsort(np.asarray(sample["key"], np.uint64), kind="stable")[:size]
    return {
        "key": [sample["key"][i] for i in order],
        "values": {name: [column[i] for i in order] for name, column in sample["values"].items()},
    }


def shard_quality(shard: ShardTables, per_set: int = 3, sample_size: int = 10_000) -> dict | None:
    """What the section shows of one shard's quality table, as plain data (None without one):
    ``documents`` and ``words`` scored; per rule set the documents and words it fails and the
    documents it dropped; documents per rule failed; each main signal's sum; the signals of the
    ``sample_size`` documents with the lowest `sample_key`; the first ``per_set`` documents each
    rule set fails (its rule, URL and the start of its text)."""
    if not shard.quality:
        return None
    quality = read_table(shard.quality)
    words = quality["words"]
    rule_sets = {}
    for rule_set in RULE_SETS:
        fails = quality["fails"].map(lambda f, s=rule_set: _first_rule_of(f, s) is not None)
        dropped = quality["dropped_by"].fillna("").str.startswith(rule_set + ".")
        rule_sets[rule_set] = {
            "documents": int(fails.sum()),
            "words": int(words[fails].sum()),
            "dropped": int(dropped.sum()),
        }
    sample = {
        "key": [sample_key(doc_id) for doc_id in quality["doc_id"]],
        "values": {name: quality[name].to_numpy(float).tolist() for name in MAIN_SIGNALS},
    }
    return {
        "documents": len(quality),
        "words": int(words.sum()),
        "rule_sets": rule_sets,
        "rules": {
            rule: int(n) for rule, n in quality["fails"].explode().dropna().value_counts().items()
        },
        "sums": {name: float(quality[name].to_numpy(float).sum()) for name in MAIN_SIGNALS},
        "sample": _lowest(sample, sample_size),
        "examples": _examples(shard, quality, per_set),
    }


def _examples(shard: ShardTables, quality: pd.DataFrame, per_set: int, chars: int = 300) -> dict:
    """Per rule set, the first ``per_set`` documents of the shard it fails, with the rule of the
    set each fails first, its URL and the first ``chars`` of its text."""
    chosen = {}
    for rule_set in RULE_SETS:
        first = quality["fails"].map(lambda f, s=rule_set: _first_rule_of(f, s))
        chosen[rule_set] = list(
            zip(
                first[first.notna()].head(per_set),
                quality.loc[first.notna(), "doc_id"].head(per_set),
            )
        )
    wanted = {doc_id for picked in chosen.values() for _, doc_id in picked}
    texts: dict[str, tuple[str, str]] = {}
    if wanted:
        # the text as the corpus has it, also of a document the filter keeps out of it
        unfiltered = ShardTables(
            shard.docs, shard.blocks, shard.language, shard.exact, shard.dedup, shard.name
        )
        for doc in kept_documents(read_survivors(unfiltered, EXPORT_COLUMNS)):
            if doc.id in wanted:
                texts[doc.id] = (doc.url, doc.text[:chars])
    return {
        rule_set: [
            {
                "rule": rule,
                "doc_id": doc_id,
                "url": texts.get(doc_id, ("", ""))[0],
                "excerpt": texts.get(doc_id, ("", ""))[1],
            }
            for rule, doc_id in picked
        ]
        for rule_set, picked in chosen.items()
    }


def _add_counts(first: dict[str, int], second: dict[str, int]) -> dict[str, int]:
    """A rule set's counts added up, in `RULE_SET_COUNTS` order, those that are zero left out
    (as Counter's sum left them out). Counter's sum put a count that became non-zero in the later
    summary last, so that the keys' order depended on how the summaries were grouped."""
    added = {key: first.get(key, 0) + second.get(key, 0) for key in RULE_SET_COUNTS}
    return {key: count for key, count in added.items() if count > 0}


def add_quality(
    total: dict | None, shard: dict | None, per_set: int = 3, sample_size: int = 10_000
) -> dict | None:
    """Two quality summaries as one (``shard`` the later in shard order), no larger than one.
    Associative, so that summaries can be merged in any grouping of the shard order: sums (the
    signals' in floats, to their last bits), the lowest keys of the signals' sample (ties to the
    earlier in shard order), the first examples in shard order, the rules in order first seen."""
    if total is None or shard is None:
        return total or shard
    return {
        "documents": total["documents"] + shard["documents"],
        "words": total["words"] + shard["words"],
        "rule_sets": {
            rule_set: _add_counts(total["rule_sets"][rule_set], shard["rule_sets"][rule_set])
            for rule_set in RULE_SETS
        },
        "rules": dict(Counter(total["rules"]) + Counter(shard["rules"])),
        "sums": {name: total["sums"][name] + shard["sums"][name] for name in MAIN_SIGNALS},
        "sample": _lowest(
            {
                "key": total["sample"]["key"] + shard["sample"]["key"],
                "values": {
                    name: total["sample"]["values"][name] + shard["sample"]["values"][name]
                    for name in MAIN_SIGNALS
                },
            },
            sample_size,
        ),
        "examples": {
            rule_set: (total["examples"][rule_set] + shard["examples"][rule_set])[:per_set]
            for rule_set in RULE_SETS
        },
    }


def percentile_error(sampled: int, documents: int, confidence: float = CONFIDENCE) -> float:
    """How far, in percentile points, a percentile of a uniform sample of ``sampled`` of
    ``documents`` may stand from the one named: the Dvoretzky-Kiefer-Wolfowitz bound on the
    sample's distribution function, which holds for every percentile at once with probability
    ``confidence`` (0 when the sample is every document)."""
    if sampled >= documents:
        return 0.0
    return 100 * math.sqrt(math.log(2 / (1 - confidence)) / (2 * sampled))


def signal_distribution(summary: dict) -> pd.DataFrame:
    """Per main signal: its percentiles over the sampled documents, and its mean over all."""
    import pandas as pd

    rows = []
    for signal in MAIN_SIGNALS:
        values = np.asarray(summary["sample"]["values"][signal], float)
        row = {"signal": signal, "mean": summary["sums"][signal] / summary["documents"]}
        for p, value in zip(PERCENTILES, np.percentile(values, PERCENTILES) if len(values) else []):
            row[f"p{p}"] = float(value)
        rows.append(row)
    return pd.DataFrame(rows, columns=["signal", *(f"p{p}" for p in PERCENTILES), "mean"])


def rule_set_drops(summary: dict) -> pd.DataFrame:
    """Per rule set: the documents and words (its ``words`` signal) it would drop, as counts and
    shares of the corpus scored, and how many the filter did drop."""
    import pandas as pd

    documents, words = summary["documents"], max(summary["words"], 1)
    rows = []
    for rule_set in RULE_SETS:
        found = summary["rule_sets"][rule_set]
        rows.append(
            {
                "rule_set": rule_set,
                "documents": found.get("documents", 0),
                "documents_share": found.get("documents", 0) / documents if documents else 0.0,
                "words": found.get("words", 0),
                "words_share": found.get("words", 0) / words,
                "dropped": found.get("dropped", 0),
            }
        )
    return pd.DataFrame(rows)


def rule_counts(summary: dict) -> pd.DataFrame:
    """Documents failing each rule (a document may fail several), most failed first."""
    import pandas as pd

    counts = sorted(summary["rules"].items(), key=lambda item: (-item[1], item[0]))
    return pd.DataFrame(counts, columns=["rule", "documents"])


def dropped_examples(summary: dict) -> pd.DataFrame:
    """The first documents each rule set fails, in crawl order, with the rule of the set they
    fail first, their URL and the start of their text."""
    import pandas as pd

    return pd.DataFrame(
        [
            {"rule_set": rule_set, **example}
            for rule_set in RULE_SETS
            for example in summary["examples"][rule_set]
        ],
        columns=["rule_set", "rule", "doc_id", "url", "excerpt"],
    )


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


def distribution_note(summary: dict) -> str:
    """Where the percentiles come from, and how far they may be off."""
    sampled, documents = len(summary["sample"]["key"]), summary["documents"]
    if sampled >= documents:
        return "Percentiles over every document scored; means over every document."
    return (
        f"Percentiles over a uniform sample of {sampled:,} of the {documents:,} documents (those "
        "whose doc_id hashes lowest): each is the value at a rank within "
        f"± {percentile_error(sampled, documents):.2f} percentile points of the one named "
        f"({100 * CONFIDENCE:.0f} % confidence, for all of them at once). Means over every "
        "document."
    )


def quality_section(summary: dict | None) -> str:
    """The report's quality section from the corpus's quality summary (`add_quality`); empty
    when no document was scored."""
    if not summary or not summary["documents"]:
        return ""
    body = (
        f'<p class="lead">{summary["documents"]} documents scored by the quality stage '
        "(docs/quality.md): the Gopher, C4 and FineWeb signals each carries in the JSONL "
        "(<code>quality</code>), and what each rule set would drop (<code>quality.filter</code> "
        "names the sets that do; <em>dropped</em> counts those).</p>"
        + _html_table(rule_set_drops(summary), percent=("documents_share", "words_share"))
        + "<h3>Rules failed</h3>"
        + _html_table(rule_counts(summary))
        + "<h3>Distribution of the main signals</h3>"
        + f'<p class="note">{html.escape(distribution_note(summary))}</p>'
        + _html_table(signal_distribution(summary))
        + "<h3>Examples of failing documents</h3>"
        + _html_table(dropped_examples(summary))
    )
    return f'<section id="quality"><h2>Quality signals</h2>{body}</section>'
