"""Corpus measurements on a hand-made token file, and the real workflow up to results/report.html,
opened in headless Chromium."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import (
    BOILERPLATE,
    QUICK_BINS,
    SAMPLE_WARCS,
    copy_workdir,
    ok,
    require_shared,
    snakemake,
    unavailable,
)

import corpusbuilder
from corpusbuilder.common.package_data import SHIPPED_MODEL
from corpusbuilder.common.versions import OUTPUT_LIBRARIES
from corpusbuilder.contracts.reportfiles import read_page_summary, write_page_summary
from corpusbuilder.contracts.tables import ShardTables
from corpusbuilder.contracts.tokenfile import read_tokens
from corpusbuilder.extraction.model import BlockModel
from corpusbuilder.report.corpus_stats import (
    ShardFiles,
    benchmark_files,
    measure_corpus,
    stage_times,
    write_corpus_stats,
)
from corpusbuilder.report.html_report import ReportFiles, render_report
from corpusbuilder.report.joins import language_table, shard_languages
from corpusbuilder.report.ngram_counts import RangeCounts, block_ngrams, duplicate_counts
from corpusbuilder.report.sections import cards_html
from corpusbuilder.report.summary import merge_summaries, summarise_shard

# --- a hand-made corpus: 2 documents, 4 blocks -------------------------------------------------
#
# doc a:0  block 0: tokens 1..12            (3 ten-grams)
# doc a:1  block 0: tokens 1..12, a copy    (the same 3 ten-grams)  → block dedup: duplicate
#          block 1: tokens 100..111         (3 ten-grams, unique)
#          block 2: tokens 200..204         (5 tokens: no ten-gram)  → bad after dedup (context)
# before: 12 instances, 9 distinct, 6 duplicate instances of 3 distinct duplicates
# after (a:0/0 and a:1/1): 6 instances, 6 distinct, no duplicates


def write_shard(root: Path, name: str = "a") -> ShardFiles:
    blocks_tokens = [np.arange(1, 13), np.arange(1, 13), np.arange(100, 112), np.arange(200, 205)]
    token_hash = np.concatenate(blocks_tokens).astype(np.uint64)
    offsets = np.concatenate(([0], np.cumsum([len(b) for b in blocks_tokens]))).astype(np.int64)
    np.savez(
        root / f"{name}.npz",
        token_hash=token_hash,
        is_punct=np.zeros(len(token_hash), bool),
        is_stop=np.zeros(len(token_hash), bool),
        block_offsets=offsets,
        block_doc=np.array([0, 1, 1, 1], np.int32),
        block_index=np.array([0, 0, 1, 2], np.int32),
        doc_ids=np.array([f"{name}:0", f"{name}:1"]),
    )
    blocks = pd.DataFrame(
        {
            "doc_id": [f"{name}:0", f"{name}:0", f"{name}:1", f"{name}:1", f"{name}:1"],
            "block_index": [0, 1, 0, 1, 2],
            "text": ["one two three", "Menu | Home", "one two three", "fresh text here", "a stub"],
            "heading": [False, False, False, False, False],
            "final_class": ["good", "bad", "good", "good", "good"],
            "n_words": [12, 3, 12, 12, 5],
        }
    )
    blocks.to_parquet(root / f"{name}.blocks.parquet")
    dedup = pd.DataFrame(
        {
            "doc_id": [f"{name}:0", f"{name}:0", f"{name}:1", f"{name}:1", f"{name}:1"],
            "block_index": [0, 1, 0, 1, 2],
            "final_class": ["good", "bad", "duplicate", "good", "bad"],
            "duplicate_of": [None, None, f"{name}:0", None, None],
            "dup_share": [0.0, np.nan, 1.0, 0.0, 0.0],
        }
    )
    dedup.to_parquet(root / f"{name}.dedup.parquet")
    docs = pd.DataFrame(
        {
            "doc_id": [f"{name}:0", f"{name}:1", f"{name}:2"],
            "record_index": [0, 1, 2],
            "uri": ["http://x/0", "http://x/1", None],
            "outcome": ["ok", "ok", "skipped"],
            "page_language": ["en", "en", None],
        }
    )
    docs.to_parquet(root / f"{name}.docs.parquet")
    pd.DataFrame(
        {
            "doc_id": [f"{name}:0", f"{name}:1"],
            "kept": [True, True],
            "reason": ["ok", "ok"],
            "language": ["en", "en"],
            "dropped_blocks": [[], []],
        }
    ).to_parquet(root / f"{name}.language.parquet")
    pd.DataFrame(
        {"doc_id": [f"{name}:0", f"{name}:1"], "kept": [True, True], "duplicate_of": [None, None]}
    ).to_parquet(root / f"{name}.exact.parquet")
    return ShardFiles(
        root / f"{name}.npz", root / f"{name}.blocks.parquet", root / f"{name}.dedup.parquet"
    )


FUNNEL = pd.DataFrame(
    {
        "stage": ["records", "html_documents", "good_text", "language_kept", "exact_dedup_kept"],
        "documents": [3, 2, 2, 2, 2],
        "words": [44, 44, 41, 41, 41],
        "pct_of_previous_documents": [np.nan, 66.67, 100.0, 100.0, 100.0],
        "pct_of_previous_words": [np.nan, 100.0, 93.18, 100.0, 100.0],
    }
)


def test_duplicate_counts_count_every_occurrence_of_a_repeated_ngram():
    counts = duplicate_counts([np.array([5, 5, 7], np.uint64), np.array([5, 9, 9, 11], np.uint64)])
    assert (counts.ngram_instances, counts.distinct_ngrams) == (7, 4)
    assert (counts.duplicate_instances, counts.distinct_duplicates) == (5, 2)
    assert duplicate_counts([]).ngram_instances == 0


def test_counts_by_hash_range_equal_the_counts_in_memory(tmp_path):
    # every occurrence of a hash lands in one range, so the ranges' sums are the corpus' counts
    rng = np.random.default_rng(7)
    shards = [
        rng.integers(0, 5000, size, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        for size in (3000, 0, 4500, 1)
    ]
    for ranges in (1, 3, 256):
        with RangeCounts(ranges, tmp_path) as counter:
            for hashes in shards:
                counter.add(hashes)
            assert counter.counts() == duplicate_counts(shards)
    assert not list(tmp_path.iterdir())  # the spill is gone


def test_ngrams_never_bridge_a_dropped_block(tmp_path):
    shard = write_shard(tmp_path)
    tokens = read_tokens(shard.tokens)
    assert len(block_ngrams(tokens)) == 3 + 3 + 3
    # dropping the copy must not create 10-grams spanning a:0/0 → a:1/1
    blocks = np.array([True, False, True, True])
    assert len(block_ngrams(tokens, np.repeat(blocks, np.diff(tokens.block_offsets)))) == 6
    # nor dropping a stretch inside a block (sentences removed from it): the first block's first
    # 10-gram survives only when its first token is kept
    keep = np.ones(tokens.block_offsets[-1], bool)
    keep[tokens.block_offsets[0]] = False
    assert len(block_ngrams(tokens, keep)) == 3 + 3 + 3 - 1


def test_measures_on_a_hand_made_corpus(tmp_path):
    measures = measure_corpus(FUNNEL, [write_shard(tmp_path)])
    dup = measures.duplicates.set_index("corpus")
    before, after = dup.loc["before_block_dedup"], dup.loc["after_block_dedup"]
    assert (before["ngram_instances"], before["distinct_ngrams"]) == (9, 6)
    assert (before["duplicate_instances"], before["distinct_duplicates"]) == (6, 3)
    assert (after["ngram_instances"], after["distinct_ngrams"], after["duplicate_instances"]) == (
        6,
        6,
        0,
    )
    assert (before["tokens"], after["tokens"]) == (41, 24)
    assert (before["blocks"], after["blocks"], before["documents"], after["documents"]) == (
        4,
        2,
        2,
        2,
    )
    assert after["pct_of_before"] == 0.0 and before["pct_duplicate_instances"] == pytest.approx(
        66.67
    )
    funnel = measures.funnel.set_index("stage")
    assert list(funnel.index)[-1] == "block_dedup_kept"
    assert (funnel.at["block_dedup_kept", "documents"], funnel.at["block_dedup_kept", "words"]) == (
        2,
        24,
    )
    assert funnel.at["block_dedup_kept", "pct_of_previous_words"] == pytest.approx(
        100 * 24 / 41, abs=0.01
    )
    assert funnel.at["exact_dedup_kept", "tokens"] == 41 and pd.isna(funnel.at["records", "tokens"])
    assert measures.extra["blocks_per_document_before"] == 2.0


def test_without_block_dedup_the_corpus_after_is_the_corpus_before(tmp_path):
    shard = write_shard(tmp_path)
    measures = measure_corpus(FUNNEL, [ShardFiles(shard.tokens, shard.blocks, None)])
    assert list(measures.funnel["stage"])[-1] == "exact_dedup_kept"
    dup = measures.duplicates.set_index("corpus")
    assert dup.loc["after_block_dedup", "duplicate_instances"] == 6


def test_stage_times_sum_jobs_and_keep_the_peak(tmp_path):
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    (tmp_path / "benchmarks" / "extract").mkdir(parents=True)
    for shard, (s, rss) in {"s0": (2.0, 100.0), "s1": (3.5, 250.0)}.items():
        (tmp_path / "benchmarks" / "extract" / f"{shard}.tsv").write_text(
            header + f"{s}\t0:00:02\t{rss}\t1\t1\t1\t0\t0\t50\t1.5\n"
        )
    (tmp_path / "benchmarks" / "dedup.tsv").write_text(
        header + "1.0\t0:00:01\tNA\t1\t1\t1\t0\t0\t50\t0.9\n"
    )
    found = benchmark_files(
        tmp_path,
        {
            "extract": "benchmarks/extract/{shard}.tsv",
            "dedup": "benchmarks/dedup.tsv",
            "sweep": "benchmarks/evaluate/sweep.tsv",
        },
    )
    assert set(found) == {"extract", "dedup"}
    assert set(benchmark_files(tmp_path)) == {"extract", "dedup"}
    table = stage_times(found).set_index("rule")
    assert list(table.index) == ["extract", "dedup"]
    assert table.at["extract", "jobs"] == 2 and table.at["extract", "seconds"] == 5.5
    assert table.at["extract", "max_rss_mb"] == 250.0 and table.at["extract", "cpu_seconds"] == 3.0
    assert pd.isna(table.at["dedup", "max_rss_mb"])
    assert table["pct_of_total_seconds"].sum() == pytest.approx(100, abs=0.05)


def test_report_renders_from_hand_made_tables_without_evaluation(tmp_path):
    shard = write_shard(tmp_path)
    outputs = {k: tmp_path / f"{k}.tsv" for k in ("funnel_full", "duplicates", "stage_times")}
    outputs["summary"] = tmp_path / "summary.json"
    FUNNEL.to_csv(tmp_path / "funnel.tsv", sep="\t", index=False)
    summary = write_corpus_stats(tmp_path / "funnel.tsv", [shard], outputs, {})
    assert summary["words_final"] == 24 and summary["duplicate_ngram_instances_after"] == 0
    assert json.loads(outputs["summary"].read_text())["final_stage"] == "block_dedup_kept"
    shard_tables = ShardTables(
        tmp_path / "a.docs.parquet",
        tmp_path / "a.blocks.parquet",
        tmp_path / "a.language.parquet",
        tmp_path / "a.exact.parquet",
        shard.dedup,
        "a",
    )
    write_page_summary(summarise_shard(shard_tables), tmp_path / "a.summary.json")
    write_page_summary(
        merge_summaries([read_page_summary(tmp_path / "a.summary.json")]), tmp_path / "page.json"
    )
    files = ReportFiles(
        **outputs,
        page_summary=tmp_path / "page.json",
        boilerplate=tmp_path / "absent.tsv",
        sweep_png=tmp_path / "absent.png",
    )
    page = render_report(files)
    assert (
        page.count("data:image/png;base64,") == 3
    )  # funnel, duplicates, lengths; no stage times, no sweep
    languages, lengths = shard_languages(shard_tables)
    assert language_table(languages).to_dict("records") == [
        {"language": "en", "identified": 2, "kept_by_filter": 2, "in_corpus": 2, "words": 24}
    ]  # the summary's words_final
    # both documents of 12 words, in the bin 1-49
    assert lengths == {"documents": 2, "bins": [2, *[0] * 8]} and "Languages and lengths" in page
    assert 'class="blk dup"' in page and 'title="duplicate of a:0' in page
    assert 'class="blk ctx"' in page and 'class="blk bad"' in page
    assert "boilerplate.tsv is absent" in page
    assert "after block-level de-duplication" in page


def test_the_report_says_what_built_the_corpus_and_warns_of_mixed_versions():
    writer = {"corpusbuilder": "0.1.0", "commit": "0123456789ab", "python": "3.11.7"}
    later = {**writer, "commit": "<b>ba9876543210"}
    record = {
        **writer,
        "commit": "not what wrote the tables",
        "model": {"path": "best.npz", "sha256": "f" * 64},
        "stages": {
            "extract": [
                {"written_by": writer, "shards": ["a"]},
                {"written_by": later, "shards": ["b"]},
            ],
            "language": [{"written_by": None, "shards": ["a", "b"]}],
        },
        "mixed_versions": {"extract": {"lxml": ["5.3.0", "6.0.0", "6.1.3"]}},
    }
    cards = cards_html({"records": 3, "provenance": record})
    # the tables' writers, not the record's; markup from a file escaped
    assert (
        "Built by corpusbuilder 0.1.0 at commit 0123456789ab and &lt;b&gt;ba9876543210, "
        "Python 3.11.7; block classifier sha256 ffffffffffffffff…"
    ) in cards
    assert "rule extract were written with lxml 5.3.0, 6.0.0 and 6.1.3" in cards
    assert "snakemake --cores N -R extract" in cards and 'class="note warn"' in cards
    assert "Mixed" not in cards_html({"provenance": {**record, "mixed_versions": {}}})
    # records from before: tables without writers, a flat mixed_versions, none at all
    old = {"corpusbuilder": "0.1.0", "python": "3.11.7", "mixed_versions": {"lxml": ["1", "2"]}}
    assert "Built by corpusbuilder 0.1.0, Python 3.11.7 (results" in cards_html({"provenance": old})
    assert "Mixed" not in cards_html({"provenance": old})
    assert "Built by" not in cards_html({"records": 3})


# --- the real workflow and a browser ------------------------------------------------------------


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    unavailable(
        "chromium is not installed (apt-get install -y chromium) - the rendering check needs a "
        "browser"
    )


def run_chromium(browser: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    command = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=180)


@pytest.fixture(scope="module")
def report_run(tmp_path_factory, sample_build):
    """The session's sample build, copied, taken on to the report: evaluation, training, figures."""
    workdir = copy_workdir(sample_build, tmp_path_factory.mktemp("report") / "build")
    config = {"input": {"warcs": list(map(str, SAMPLE_WARCS))}}
    if os.environ.get("CI"):
        require_shared(BOILERPLATE)  # under CI the gold-set parts of the report are checked too
    with_gold = BOILERPLATE.is_dir()
    # `best` is scored by models held out from each evaluated source, trained on a few pages
    config["evaluate"] = {
        "max_pages": 10,
        "datasets": ["cleaneval-dev", "trafilatura-dev"],
        "extractors": ["best", "best-adapted", "justext-default", "keep-all"],
        "gold_dir": str(BOILERPLATE if with_gold else workdir / "no-gold-sets"),
    }
    # two stages: each held-out model has two sources left to cross-fit its second stage over
    config["train"] = {
        "max_pages": 5,
        "max_iter": 5,
        "max_bins": QUICK_BINS,
        "datasets": ["cleaneval-dev", "l3s-gn1", "trafilatura-dev"],
        "stages": 2,
    }
    config["adapt"] = {"rounds": 1, "pages": 4, "confidence": 0.51}  # five trees are never sure
    ok(snakemake(workdir, "results/report.html", config=config))
    return workdir, with_gold


@pytest.mark.workflow
def test_workflow_writes_the_measurements(report_run):
    workdir, with_gold = report_run
    stats = workdir / "results" / "stats"
    funnel = pd.read_csv(stats / "funnel_full.tsv", sep="\t").set_index("stage")
    assert list(funnel.index) == [
        "records",
        "html_documents",
        "good_text",
        "language_kept",
        "exact_dedup_kept",
        "block_dedup_kept",
    ]
    dedup_stats = json.loads((workdir / "work" / "dedup" / "stats.json").read_text())
    assert funnel.at["block_dedup_kept", "words"] == dedup_stats["words"]["good"]
    duplicates = pd.read_csv(stats / "duplicates.tsv", sep="\t").set_index("corpus")
    before, after = duplicates.loc["before_block_dedup"], duplicates.loc["after_block_dedup"]
    assert (
        before["duplicate_instances"] > 0
        and after["duplicate_instances"] < before["duplicate_instances"]
    )
    assert (
        before["distinct_duplicates"] == dedup_stats["duplicate_ngrams"]
    )  # same n-grams: 10, all tokens
    # thesis Table 3.4: whole-document resemblance dedup leaves more
    # duplicate content than block dedup
    resemblance = duplicates.loc["after_resemblance_dedup"]
    assert (
        after["duplicate_instances"]
        <= resemblance["duplicate_instances"]
        <= before["duplicate_instances"]
    )
    stages = pd.read_csv(stats / "stage_times.tsv", sep="\t").set_index("rule")
    assert {"extract", "language", "tokenise", "dedup"} <= set(stages.index)
    assert stages.at["extract", "jobs"] == 3 and (stages["seconds"] > 0).all()
    summary = json.loads((stats / "summary.json").read_text())
    assert summary["documents_final"] == funnel.at["block_dedup_kept", "documents"]
    provenance = summary["provenance"]
    assert provenance["corpusbuilder"] == corpusbuilder.__version__
    assert provenance["libraries"]["pydivsufsort"] == importlib.metadata.version("pydivsufsort")
    assert set(OUTPUT_LIBRARIES) <= set(provenance["libraries"]) and all(
        provenance["libraries"].values()
    )
    assert provenance["model"]["sha256"] == hashlib.sha256(SHIPPED_MODEL.read_bytes()).hexdigest()
    assert provenance["config"]["extract"]["preset"] == "best"  # effective: defaults filled in
    assert provenance["config"]["dedup"]["ngram"] == 10
    if with_gold:
        site = pd.read_csv(stats / "site_boilerplate.tsv", sep="\t")
        assert set(site["variant"]) == {
            "justext",
            "justext+site",
            "justext-minus-site",
            "site-only",
        }
        held_out = {
            source: BlockModel.load(workdir / "results" / "model" / "held_out" / f"{source}.npz")
            for source in ("cleaneval", "trafilatura-dev")
        }
        assert held_out["cleaneval"].trained_on == ("l3s-gn1", "trafilatura-dev")
        assert held_out["trafilatura-dev"].trained_on == ("cleaneval", "l3s-gn1")
        assert all(model.second_stage is not None for model in held_out.values())
        adapted = {
            source: BlockModel.load(
                workdir / "results" / "model" / "adapted_held_out" / f"{source}.npz"
            )
            for source in ("cleaneval", "trafilatura-dev")
        }
        # adapted to the held-out source's own pages, still without its gold labels
        assert adapted["cleaneval"].trained_on == (
            "l3s-gn1",
            "self-labelled:cleaneval",
            "trafilatura-dev",
        )
        assert (
            "round 1: " in (workdir / "logs" / "adapt" / "held_out" / "cleaneval.log").read_text()
        )
        # self-training refits the first stage and keeps the second
        assert all(
            adapted[source].second_stage.value.tolist()
            == held_out[source].second_stage.value.tolist()
            for source in adapted
        )
        scores = pd.read_csv(stats / "boilerplate.tsv", sep="\t")
        assert set(scores["extractor"]) == {"best", "best-adapted", "justext-default", "keep-all"}
        languages = pd.read_csv(stats / "boilerplate_languages.tsv", sep="\t")
        traf = languages[
            (languages["dataset"] == "trafilatura-dev") & (languages["extractor"] == "best")
        ]
        assert traf["language"].nunique() >= 2 and traf["pages"].sum() == 10


@pytest.mark.workflow
def test_report_renders_in_chromium(report_run, tmp_path):
    workdir, with_gold = report_run
    browser = chromium()
    report = workdir / "results" / "report.html"
    dom = run_chromium(browser, tmp_path / "profile", "--dump-dom", report.as_uri())
    assert dom.returncode == 0, dom.stderr[-3000:]
    page = dom.stdout
    charts = page.count('<img src="data:image/png;base64,')
    assert charts >= (4 if with_gold else 3)  # funnel, duplicates, stage times (+ sweep)
    assert "after block-level de-duplication" in page and "after removing exact duplicates" in page
    assert 'class="blk dup"' in page and 'title="duplicate of sample-' in page
    assert 'class="blk bad' in page and 'class="legend"' in page
    assert "Built by corpusbuilder" in page and "Mixed versions" not in page
    if with_gold:
        assert "justext-default" in page and "cleaneval-dev" in page and "word F1" in page
        assert "leave-one-source-out" in page and "Main-content F1 by page language" in page
    else:
        assert "boilerplate.tsv is absent" in page
    screenshot = tmp_path / "report.png"
    shot = run_chromium(
        browser,
        tmp_path / "profile",
        f"--screenshot={screenshot}",
        "--window-size=1200,3000",
        report.as_uri(),
    )
    assert shot.returncode == 0, shot.stderr[-3000:]
    assert screenshot.is_file() and screenshot.stat().st_size > 50_000
    keep = os.environ.get("REPORT_SCREENSHOT")
    if keep:
        shutil.copy(screenshot, keep)
