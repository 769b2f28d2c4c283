"""The report page's summaries as the workflow makes them — a job per shard, a merge of their
small files — against the same figures over every shard's tables at once (as the report's one
job computed them before it was split), on the sample build."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from corpusbuilder.contracts.files import FILES
from corpusbuilder.contracts.reportfiles import read_page_summary, write_page_summary
from corpusbuilder.contracts.survivors import read_survivors
from corpusbuilder.contracts.tables import ShardTables, read_table
from corpusbuilder.contracts.verdicts import read_document_verdicts
from corpusbuilder.report.joins import language_table, shard_overview, stages_that_ran
from corpusbuilder.report.quality import (
    MAIN_SIGNALS,
    PERCENTILES,
    RULE_SETS,
    add_quality,
    distribution_note,
    dropped_examples,
    percentile_error,
    rule_counts,
    rule_set_drops,
    sample_key,
    signal_distribution,
)
from corpusbuilder.report.rendering import LENGTH_BINS
from corpusbuilder.report.samples import document_html, pick_sample, sample_documents
from corpusbuilder.report.summary import (
    SUMMARIES_PER_MERGE,
    SummaryParams,
    merge_group,
    merge_summaries,
    merge_tree,
    summarise_shard,
)

pytestmark = pytest.mark.workflow


def sample_shards(build) -> list[ShardTables]:
    names = sorted(
        p.name.split(".")[0] for p in (build / "work" / "extract").glob("*.docs.parquet")
    )
    return [
        ShardTables(
            build / FILES.docs.format(shard=name),
            build / FILES.blocks.format(shard=name),
            build / FILES.language.format(shard=name),
            build / FILES.exact.format(shard=name),
            build / FILES.dedup.format(shard=name),
            name,
            build / FILES.quality.format(shard=name),
        )
        for name in names
    ]


def through_files(shards, params, root) -> dict:
    """The rules' path: a job per shard writing its summary, the merge reading them in turn."""
    for shard in shards:
        write_page_summary(summarise_shard(shard, params), root / f"{shard.name}.json")
    paths = [root / f"{shard.name}.json" for shard in shards]
    write_page_summary(merge_summaries(map(read_page_summary, paths), params), root / "page.json")
    return read_page_summary(root / "page.json")


@pytest.fixture(scope="module")
def shards(sample_build):
    found = sample_shards(sample_build)
    assert len(found) == 3
    return found


def test_languages_and_lengths_are_those_of_every_shard_at_once(shards, tmp_path):
    page = through_files(shards, SummaryParams(), tmp_path)
    identified, kept, in_corpus, words = Counter(), Counter(), Counter(), Counter()
    lengths = []
    for shard in shards:
        judged = read_document_verdicts(stages_that_ran(shard))
        judged = judged.loc[judged["language_kept"].notna()].fillna({"language": "unidentified"})
        identified.update(judged["language"])
        kept.update(judged.loc[judged["language_kept"].astype(bool), "language"])
        corpus = read_survivors(stages_that_ran(shard), ("n_words",))
        per_doc = corpus.blocks.to_pandas().groupby("doc_id")["n_words"].sum()
        codes = corpus.documents.to_pandas().set_index("doc_id")["language"].fillna("unidentified")
        in_corpus.update(codes)
        for doc_id, n in per_doc.items():
            words[codes[doc_id]] += int(n)
        lengths.append(per_doc.to_numpy())
    expected = [
        {
            "language": code,
            "identified": identified[code],
            "kept_by_filter": kept[code],
            "in_corpus": in_corpus[code],
            "words": words[code],
        }
        for code in identified
    ]
    table = language_table(page["languages"])
    assert sorted(table.to_dict("records"), key=str) == sorted(expected, key=str)
    assert list(table["words"]) == sorted(table["words"], reverse=True)
    lengths = np.concatenate(lengths)
    edges = [*LENGTH_BINS, max(lengths.max() + 1, LENGTH_BINS[-1] + 1)]
    assert page["lengths"] == {
        "documents": len(lengths),
        "bins": np.histogram(lengths, bins=edges)[0].tolist(),
    }
    assert sum(page["lengths"]["bins"]) == len(lengths) > 0


@pytest.fixture(scope="module")
def every_document_alone(shards):
    """Per shard, each of its documents as a summary of that shard alone with a sample of every
    document of the corpus shows it, by doc_id (each shard summarised once, for every size)."""
    every = sum(len(shard_overview(shard)) for shard in shards)
    params = SummaryParams(sample_size=every)
    found: dict[str, dict] = {}

    def documents(shard) -> dict:
        if shard.name not in found:
            alone = merge_summaries([summarise_shard(shard, params)], params)
            found[shard.name] = {
                d.doc_id: d
                for d in sample_documents(
                    pd.DataFrame(alone["candidates"]), alone["documents"], every
                )
            }
        return found[shard.name]

    return documents


@pytest.mark.parametrize("size", [1, 4, 10, 40])
def test_the_sample_is_the_pick_over_every_document(shards, every_document_alone, tmp_path, size):
    page = through_files(shards, SummaryParams(sample_size=size), tmp_path)
    every = pd.concat([shard_overview(shard) for shard in shards], ignore_index=True)
    picked = pick_sample(every, size)
    candidates = pd.DataFrame(page["candidates"])
    documents = sample_documents(candidates, page["documents"], size)
    assert [d.doc_id for d in documents] == list(picked["doc_id"])
    assert len(documents) == min(size, len(every))
    # and each as the page shows it: every block, its kind and title, its text as far as shown
    by_id = {shard.name: shard for shard in shards}
    for document, row in zip(documents, picked.itertuples(), strict=True):
        whole = every_document_alone(by_id[row.shard])[row.doc_id]
        assert document_html(document) == document_html(whole)
        assert document.verdict == row.verdict and document.removed == row.removed


def every_quality(shards) -> pd.DataFrame:
    return pd.concat([read_table(shard.quality) for shard in shards], ignore_index=True)


def test_quality_figures_are_those_of_every_shard_at_once(shards, tmp_path):
    quality = every_quality(shards)
    page = through_files(shards, SummaryParams(), tmp_path)["quality"]
    assert page["documents"] == len(quality) > 0
    drops = rule_set_drops(page).set_index("rule_set")
    for rule_set in RULE_SETS:
        fails = quality["fails"].map(lambda f, s=rule_set: any(r.startswith(s + ".") for r in f))
        assert drops.loc[rule_set, "documents"] == fails.sum()
        assert drops.loc[rule_set, "documents_share"] == fails.mean()
        assert drops.loc[rule_set, "words"] == quality.loc[fails, "words"].sum()
        assert drops.loc[rule_set, "words_share"] == (
            quality.loc[fails, "words"].sum() / quality["words"].sum()
        )
        dropped = quality["dropped_by"].fillna("").str.startswith(rule_set + ".")
        assert drops.loc[rule_set, "dropped"] == dropped.sum()
        # the first documents of the crawl that fail the set, in crawl order
        failing = quality.loc[fails, "doc_id"].head(3).tolist()
        examples = dropped_examples(page)
        assert examples.loc[examples["rule_set"] == rule_set, "doc_id"].tolist() == failing
    counted = rule_counts(page)
    assert dict(zip(counted["rule"], counted["documents"])) == (
        quality["fails"].explode().dropna().value_counts().to_dict()
    )
    # every document in the sample: the percentiles are exact, the means to the last bits
    distribution = signal_distribution(page).set_index("signal")
    for signal in MAIN_SIGNALS:
        values = quality[signal].to_numpy(float)
        expected = np.percentile(values, PERCENTILES)
        assert distribution.loc[signal, [f"p{p}" for p in PERCENTILES]].tolist() == list(expected)
        assert distribution.loc[signal, "mean"] == pytest.approx(values.mean(), rel=1e-12)
    assert distribution_note(page).startswith("Percentiles over every document")


def test_a_smaller_quality_sample_is_the_lowest_keys_of_the_corpus_and_says_its_error(
    shards, tmp_path
):
    quality = every_quality(shards)
    page = through_files(shards, SummaryParams(quality_sample=7), tmp_path)["quality"]
    keys = quality["doc_id"].map(sample_key)
    lowest = quality.loc[keys.sort_values(kind="stable").index[:7]]
    assert page["sample"]["key"] == sorted(keys)[:7]
    distribution = signal_distribution(page).set_index("signal")
    for signal in MAIN_SIGNALS:
        expected = np.percentile(lowest[signal].to_numpy(float), PERCENTILES)
        assert distribution.loc[signal, [f"p{p}" for p in PERCENTILES]].tolist() == list(expected)
        # the means are still over every document
        assert distribution.loc[signal, "mean"] == pytest.approx(quality[signal].mean())
    error = percentile_error(7, len(quality))
    assert error == pytest.approx(100 * np.sqrt(np.log(40) / 14))
    assert f"± {error:.2f} percentile points" in distribution_note(page)
    assert percentile_error(10_000, 10**9) == pytest.approx(1.36, abs=0.01)


def relabelled(summary: dict, tag: str) -> dict:
    """``summary`` as another shard's: its shard, its documents and its signals' sample keys
    renamed by ``tag``, its counts the same — so that a few shards make many, the copies tying
    on every ranking but their names."""
    copy = json.loads(json.dumps(summary))
    for row in copy["candidates"]:
        row["shard"], row["doc_id"] = tag + row["shard"], tag + row["doc_id"]
    for record in copy["documents"]:
        record["doc_id"] = tag + record["doc_id"]
    sample = copy["quality"]["sample"]
    sample["key"] = [sample_key(f"{tag}{key}") for key in sample["key"]]
    for examples in copy["quality"]["examples"].values():
        for example in examples:
            example["doc_id"] = tag + example["doc_id"]
    return copy


def through_tree(summaries: list[dict], params, per_merge: int, root) -> dict:
    """The rules' path: each level's merge jobs (report_summary_group) writing their files, the
    next reading them, and the last merge (report_summary)."""
    level = summaries
    for depth, jobs in enumerate(merge_tree(len(summaries), per_merge)[1:], 1):
        paths = [root / f"{depth}-{group}.json" for group in range(jobs)]
        for group, path in enumerate(paths):
            members = merge_group(group, len(level), per_merge)
            write_page_summary(merge_summaries([level[i] for i in members], params), path)
        level = [read_page_summary(path) for path in paths]
    return merge_summaries(level, params)


@pytest.mark.parametrize(("per_merge", "levels"), [(2, 4), (3, 3), (5, 2), (12, 1)])
def test_a_tree_of_merges_is_the_one_merge_in_shard_order(shards, tmp_path, per_merge, levels):
    """12 shards (the sample build's 3, each also as 3 more) merged at once and through a tree:
    the same summary, its keys in the same order, but for the quality sums' last bits (floats
    added in another grouping)."""
    params = SummaryParams(sample_size=4, quality_sample=50)
    real = [summarise_shard(shard, params) for shard in shards]
    summaries = [relabelled(summary, f"c{copy}-") for copy in range(4) for summary in real]
    assert len(merge_tree(len(summaries), per_merge)) == levels
    at_once = merge_summaries(summaries, params)
    tree = through_tree(summaries, params, per_merge, tmp_path)
    assert at_once["quality"]["documents"] > 50  # the sample is a part of the documents
    sums = tree["quality"].pop("sums")
    for name, value in at_once["quality"].pop("sums").items():
        assert sums[name] == pytest.approx(value, rel=1e-12)
    assert json.dumps(tree) == json.dumps(at_once)


def test_the_tree_reads_at_most_its_fan_in_a_job():
    assert merge_tree(1) == [1]
    assert merge_tree(SUMMARIES_PER_MERGE) == [SUMMARIES_PER_MERGE]  # today's one job
    assert merge_tree(SUMMARIES_PER_MERGE + 1) == [SUMMARIES_PER_MERGE + 1, 2]
    assert merge_tree(29_333) == [29_333, 459, 8]  # 10^12 words
    assert [list(merge_group(g, 130)) for g in range(3)] == [
        list(range(0, 64)),
        list(range(64, 128)),
        [128, 129],
    ]
    with pytest.raises(ValueError, match="at least 2"):
        merge_tree(10, 1)


def test_the_rule_sets_counts_keep_their_order_in_any_grouping(shards):
    """A rule set whose failing documents have no words (so far): Counter's sum listed a count
    first non-zero in a later summary last, and the order depended on the grouping."""
    quality = summarise_shard(shards[0])["quality"]
    a, b, c = (
        {**quality, "rule_sets": {s: dict(counts) for s in RULE_SETS}}
        for counts in (
            {"documents": 2, "words": 0, "dropped": 1},
            {"documents": 0, "words": 0, "dropped": 0},
            {"documents": 1, "words": 5, "dropped": 0},
        )
    )
    left, right = add_quality(add_quality(a, b), c), add_quality(a, add_quality(b, c))
    assert json.dumps(left["rule_sets"]) == json.dumps(right["rule_sets"])
    assert list(left["rule_sets"]["c4"].items()) == [("documents", 3), ("words", 5), ("dropped", 1)]
