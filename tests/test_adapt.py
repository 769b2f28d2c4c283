"""Self-training `best` on the crawl's own pages: the page sample, its blocks, the refit rounds,
and the workflow's `adapt` path on the sample crawl."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from conftest import BOILERPLATE, QUICK_BINS, SAMPLE_WARCS, ok, require_shared, snakemake

from corpusbuilder.common.stoplists import writes_without_spaces
from corpusbuilder.contracts.files import FILES
from corpusbuilder.evaluation import training
from corpusbuilder.evaluation.gold import iter_dataset
from corpusbuilder.evaluation.training import (
    AdaptParams,
    TrainParams,
    fit,
    self_train,
    training_pages,
    training_table,
    unlabelled_blocks,
)
from corpusbuilder.extraction.adapt import UnlabelledBlocks, crawl_blocks, is_target, sample_pages
from corpusbuilder.extraction.classifier import FEATURE_NAMES
from corpusbuilder.extraction.extract import (
    ExtractParams,
    WarcRecord,
    clean_page,
    extract_shard,
    iter_warc_records,
)
from corpusbuilder.extraction.model import BlockModel

PARAMS = ExtractParams()  # the best preset, as the extract stage runs it by default


def test_pages_are_drawn_at_random_but_reproducibly_from_the_records_with_a_body():
    pages = [
        r for path in SAMPLE_WARCS for r in iter_warc_records(path, PARAMS) if r.body is not None
    ]
    drawn = sample_pages(SAMPLE_WARCS, 10, [1, 0], PARAMS)
    assert len(drawn) == 10 and all(r.body is not None for r in drawn)
    assert [r.uri for r in drawn] == [r.uri for r in sample_pages(SAMPLE_WARCS, 10, [1, 0], PARAMS)]
    assert [r.uri for r in drawn] != [r.uri for r in sample_pages(SAMPLE_WARCS, 10, [1, 1], PARAMS)]
    assert {r.uri for r in drawn} <= {r.uri for r in pages}
    # asked for more than there are: every page, in crawl order
    assert [r.uri for r in sample_pages(SAMPLE_WARCS, len(pages) + 5, 1, PARAMS)] == [
        r.uri for r in pages
    ]


def test_a_shard_sample_has_the_blocks_the_extract_stage_cuts(tmp_path):
    warc = SAMPLE_WARCS[0]
    extract_shard(
        [(warc.name, warc)], "s", tmp_path / "docs.parquet", tmp_path / "blocks.parquet", PARAMS
    )
    docs = pd.read_parquet(tmp_path / "docs.parquet")
    blocks, skipped = crawl_blocks(sample_pages([warc], 10_000, 1, PARAMS), PARAMS)
    ok = docs[docs["reason"] == "ok"]
    without_spaces = ok["page_language"].map(writes_without_spaces)
    if without_spaces.any():
        assert skipped.pop("language-without-spaces") == without_spaces.sum()
    ok = ok[~without_spaces]
    # every drawn page counts, those left out with no block
    assert blocks.pages == blocks.target_pages + sum(
        skipped.values()
    ) and blocks.target_pages == len(ok)
    per_page = np.bincount(blocks.page, minlength=blocks.pages)
    assert np.array_equal(per_page[per_page > 0], ok["n_blocks"].to_numpy())
    table_words = pd.read_parquet(tmp_path / "blocks.parquet")["n_words"].to_numpy()
    assert np.array_equal(blocks.words, table_words)
    cleaned = docs[docs["outcome"] != "ok"]["reason"].str.split(":").str[0]
    assert (
        skipped
        == cleaned[cleaned.isin(["no-text", "binary", "undecodable", "too-many-blocks"])]
        .value_counts()
        .to_dict()
    )
    assert blocks.features.shape == (len(blocks.words), len(FEATURE_NAMES))


JAPANESE = (
    "<html><head><title>ニュース</title></head><body><div id='content'>"
    + "<p>東京都は十五日、新しい公園の整備計画を発表した。"
    "市民の意見を取り入れ、来年春の開園を目指す。"
    "計画では、子どもが安全に遊べる広場や、高齢者が休めるベンチを多く設けるという。</p>"
    * 4
    + "</div></body></html>"
)


def test_pages_of_a_language_written_without_spaces_are_no_target():
    assert not is_target("ja") and not is_target("zh") and is_target("de") and is_target("")
    japanese = WarcRecord(
        0, 0, "response", "http://example.jp/", body=JAPANESE.encode(), http_charset="utf-8"
    )
    blocks, skipped = crawl_blocks([japanese], PARAMS)
    assert (blocks.pages, blocks.target_pages) == (1, 0) and skipped == {
        "language-without-spaces": 1
    }


def test_unlabelled_blocks_sample_whole_pages_and_survive_a_round_trip(tmp_path):
    pages = [
        (np.full((n, len(FEATURE_NAMES)), n, dtype=np.float32), np.arange(n, dtype=np.float64))
        for n in (3, 1, 0, 4, 2)
    ]  # the third page drawn, and left out
    blocks = UnlabelledBlocks.of_pages(pages)
    assert (blocks.pages, blocks.target_pages) == (5, 4) and list(blocks.page) == [
        0,
        0,
        0,
        1,
        3,
        3,
        3,
        3,
        4,
        4,
    ]
    for seed in range(20):
        three = blocks.sample(3, seed=seed)
        assert three.pages == 3 and three.target_pages in (2, 3) and set(three.page) <= {0, 1, 2}
        # a page's blocks all came along: each kept page's rows carry its own block count
        for page in set(three.page):
            rows = three.features[three.page == page]
            assert len(rows) == rows[0, 0]
    assert {blocks.sample(3, seed=seed).target_pages for seed in range(20)} == {
        2,
        3,
    }  # the empty page is drawn too
    assert blocks.sample(9, seed=5) is blocks
    three = blocks.sample(3, seed=1)
    joined = UnlabelledBlocks.joined([blocks, three])
    assert joined.pages == 8 and list(joined.page[-len(three.page) :]) == list(three.page + 5)
    blocks.save(tmp_path / "b.npz")
    back = UnlabelledBlocks.load(tmp_path / "b.npz")
    assert np.array_equal(back.features, blocks.features) and np.array_equal(back.page, blocks.page)
    assert back.pages == 5


@pytest.fixture(scope="module")
def gold():
    require_shared(BOILERPLATE)
    pages = training_pages(
        [
            page
            for name in ("cleaneval-final", "l3s-gn1", "trafilatura-dev")
            for page in iter_dataset(name, BOILERPLATE, 8)
        ]
    )
    return pages


@pytest.mark.slow
def test_each_round_labels_the_target_with_the_last_model_and_adds_its_sure_blocks_as_one_source(
    gold, monkeypatch
):
    table = training_table([p for p in gold if p.gold.dataset != "l3s-gn1"])
    target = unlabelled_blocks([p for p in gold if p.gold.dataset == "l3s-gn1"])
    params, adapt = (
        TrainParams(max_bins=QUICK_BINS, max_iter=6),
        AdaptParams(rounds=2, confidence=0.7, pages=100),
    )
    base = fit(table, params)
    fitted, seen = [], []
    real_fit = training.fit_trees

    def recording_fit(table, params, without=None):
        seen.append(table)
        fitted.append(real_fit(table, params, without))
        return fitted[-1]

    monkeypatch.setattr(training, "fit_trees", recording_fit)
    adapted = self_train(table, target, base, params, adapt, target_name="l3s-gn1")
    assert len(seen) == 2 and adapted is fitted[-1]
    for labeller, refit_on in zip([base, fitted[0]], seen):
        mine = refit_on.group == "self-labelled:l3s-gn1"
        assert np.array_equal(
            refit_on.features[~mine], table.features
        )  # the gold blocks, all of them
        assert np.array_equal(refit_on.weights[~mine], table.weights)
        p = labeller.probabilities(target.features)
        sure = (p >= 0.7) | (p <= 0.3)
        assert np.array_equal(refit_on.features[mine], target.features[sure])
        assert np.array_equal(refit_on.labels[mine], (p[sure] >= 0.7).astype(np.int8))
        # weighed as one gold source: its words, scaled to a source's share of the table
        assert refit_on.weights[mine].sum() == pytest.approx(table.weights.sum() / 2)
        assert np.allclose(
            refit_on.weights[mine] / target.words[sure],
            refit_on.weights[mine][0] / target.words[sure][0],
        )
    assert adapted.trained_on == ("cleaneval", "self-labelled:l3s-gn1", "trafilatura-dev")
    assert not np.array_equal(adapted.value, base.value)


def test_a_target_with_no_confident_block_leaves_the_model_as_it_is(gold, caplog):
    table = training_table(gold)
    base = fit(table, TrainParams(max_bins=QUICK_BINS, max_iter=3))
    # three trees barely move off the prior: no block reaches 0.99 either way
    target = unlabelled_blocks(gold[:3])
    assert (
        (base.probabilities(target.features) > 0.01) & (base.probabilities(target.features) < 0.99)
    ).all()
    assert (
        self_train(
            table,
            target,
            base,
            TrainParams(max_bins=QUICK_BINS, max_iter=3),
            AdaptParams(confidence=0.99),
        )
        is base
    )
    assert "no block of the 3 target pages" in caplog.text


def test_the_held_out_target_is_every_block_of_the_gold_pages_in_languages_with_spaces(gold):
    target = unlabelled_blocks(gold)
    assert target.pages == target.target_pages == len(gold) and len(target.words) == sum(
        len(p.blocks) for p in gold
    )
    relabelled = [replace(page, language="ja") if i % 2 else page for i, page in enumerate(gold)]
    thinned = unlabelled_blocks(relabelled)
    assert (thinned.pages, thinned.target_pages) == (len(gold), (len(gold) + 1) // 2)


@pytest.mark.workflow
def test_the_sample_crawl_is_extracted_with_a_model_adapted_to_it(tmp_path):
    """adapt.enabled: pages drawn from each shard, the model refitted on
    them, extract runs with it."""
    require_shared(BOILERPLATE)
    config = {
        "input": {"warcs": list(map(str, SAMPLE_WARCS))},
        "evaluate": {"gold_dir": str(BOILERPLATE)},
        "train": {
            "max_pages": 5,
            "max_iter": 5,
            "max_bins": QUICK_BINS,
            "datasets": ["cleaneval-dev", "l3s-gn1"],
        },
        "adapt": {"enabled": True, "rounds": 2, "pages": 12},
    }
    shards = ("sample-00", "sample-01", "sample-02")
    ok(snakemake(tmp_path, *(FILES.docs.format(shard=shard) for shard in shards), config=config))
    model = tmp_path / "results" / "model" / "adapted.npz"
    adapted = BlockModel.load(model)
    assert adapted.trained_on == ("cleaneval", "l3s-gn1", "self-labelled:crawl")
    for shard in shards:  # 12 pages over three shards
        log = (tmp_path / "logs" / "adapt" / "sample" / f"{shard}.log").read_text()
        assert f"{shard}: 4 target pages" in log
    assert not list(
        (tmp_path / "results" / "adapt").rglob("*.npz")
    )  # temp(): gone once adapt has run
    assert "round 2:" in (tmp_path / "logs" / "adapt" / "adapt.log").read_text()
    # the shards' good blocks are the adapted model's, not the shipped one's
    docs = pd.read_parquet(tmp_path / FILES.docs.format(shard="sample-00")).set_index("doc_id")
    with_adapted, with_shipped = replace(PARAMS, model=model), PARAMS
    records = {
        f"{SAMPLE_WARCS[0].name.removesuffix('.warc.gz')}:{r.record_index}": r
        for r in iter_warc_records(SAMPLE_WARCS[0], PARAMS)
        if r.body is not None
    }
    differ = 0
    for doc_id in docs.index[docs["reason"] == "ok"]:
        record = records[doc_id]
        good = [
            b.n_words
            for b in clean_page(record.body, record.http_charset, with_adapted).blocks
            if b.final_class == "good"
        ]
        assert docs.at[doc_id, "n_good_words"] == sum(good)
        shipped = clean_page(record.body, record.http_charset, with_shipped).blocks
        differ += sum(b.n_words for b in shipped if b.final_class == "good") != sum(good)
    assert differ  # five trees on ten gold pages and twelve crawl pages: not the shipped model
