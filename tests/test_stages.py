"""The `best` preset's second stage (train.stages: 2): the first stage's probabilities read in
their page's context, fitted on probabilities cross-fitted by gold source."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import BOILERPLATE, QUICK_BINS, require_shared

from corpusbuilder.config import ConfigError
from corpusbuilder.evaluation.gold import iter_dataset
from corpusbuilder.evaluation.training import (
    AdaptParams,
    TrainParams,
    fit,
    read_training_table,
    second_stage_table,
    self_train,
    training_pages,
    training_table,
    unlabelled_blocks,
    write_training_blocks,
)
from corpusbuilder.extraction.extract import ExtractParams, clean_page
from corpusbuilder.extraction.model import (
    CONTEXT_NAMES,
    SECOND_STAGE,
    BlockModel,
    stage_context,
)

FEW = TrainParams(max_bins=QUICK_BINS, max_iter=6, min_samples_leaf=10, stages=2)


def context(name: str, table: np.ndarray) -> list[float]:
    return [round(float(v), 4) for v in table[:, CONTEXT_NAMES.index(name)]]


def test_the_context_of_a_block_stays_on_its_page():
    # two pages: three blocks, then two
    p = np.array([0.9, 0.2, 0.6, 0.1, 0.8])
    words = np.array([10.0, 30.0, 0.0, 5.0, 5.0])
    table = stage_context(p, words, np.array([4, 4, 4, 7, 7]))
    assert table.shape == (5, len(CONTEXT_NAMES)) and table.dtype == np.float32
    assert context("stage1@-1", table) == [-1, 0.9, 0.2, -1, 0.1]
    assert context("stage1@+2", table) == [0.6, -1, -1, -1, -1]
    # a block of no words weighs one in its page's mean
    page_one = (0.9 * 10 + 0.2 * 30 + 0.6 * 1) / 41
    assert context("stage1_page_mean", table) == [round(page_one, 4)] * 3 + [0.45, 0.45]
    assert context("stage1_page_good", table) == [round(11 / 41, 4)] * 3 + [0.5, 0.5]
    assert context("stage1_max_before", table) == [-1, 0.9, 0.9, -1, 0.1]
    assert context("stage1_max_after", table) == [0.6, 0.6, -1, 0.8, -1]
    # between content: the lower of the highest before and the highest after, within reach
    assert context("stage1_between", table) == [-1, 0.6, -1, -1, -1]
    # one page read alone gives what it gives among others
    np.testing.assert_array_equal(stage_context(p[3:], words[3:], np.zeros(2, int)), table[3:])
    assert stage_context(np.zeros(0), np.zeros(0), np.zeros(0, int)).shape == (0, 13)


def test_the_running_maxima_reach_past_three_blocks():
    p = np.array([0.3, 0.1, 0.1, 0.1, 0.1, 0.7])
    table = stage_context(p, np.ones(6), np.zeros(6, int))
    assert context("stage1_max_before3", table)[4] == 0.1
    assert context("stage1_max_before", table)[4] == 0.3
    assert context("stage1_max_after3", table)[1] == 0.1
    assert context("stage1_max_after", table)[1] == 0.7


@pytest.fixture(scope="module")
def pages():
    require_shared(BOILERPLATE)
    names = ("cleaneval-final", "l3s-gn1", "trafilatura-dev")
    return training_pages([p for name in names for p in iter_dataset(name, BOILERPLATE, 5)])


@pytest.mark.slow
def test_a_second_stage_learns_from_probabilities_of_trees_that_never_saw_the_source(
    pages, monkeypatch
):
    from corpusbuilder.evaluation import training

    table = training_table(pages)
    # the training blocks keep the unknown ones (trafilatura-dev's unmarked blocks): a second
    # stage reads them beside their labelled neighbours; they weigh nothing
    assert (table.labels == -1).any() and not table.weights[table.labels == -1].any()
    real_fit, fitted_without = training.fit_trees, []

    def recording_fit(table, params, without=None):
        fitted_without.append(without)
        return real_fit(table, params, without)

    monkeypatch.setattr(training, "fit_trees", recording_fit)
    second = second_stage_table(table, FEW, without="cleaneval")
    # one first stage per source left, each without it; cleaneval's rows get no probabilities
    assert fitted_without == ["l3s-gn1", "trafilatura-dev"]
    assert second.feature_names == table.feature_names + CONTEXT_NAMES
    assert not second.features[table.group == "cleaneval", -len(CONTEXT_NAMES) :].any()
    l3s = table.group == "l3s-gn1"
    trees = real_fit(table.rows(table.group != "cleaneval"), FEW, "l3s-gn1")
    np.testing.assert_array_equal(
        second.features[l3s, len(table.feature_names)],
        trees.probabilities(table.features[l3s]).astype(np.float32),
    )


@pytest.mark.slow
def test_a_model_of_two_stages_is_saved_read_and_used_by_the_extract_stage(pages, tmp_path):
    for name in ("cleaneval-final", "l3s-gn1", "trafilatura-dev"):
        write_training_blocks(
            [p for p in pages if p.gold.dataset == name], name, tmp_path / f"{name}.npz"
        )
    model = fit(read_training_table(sorted(tmp_path.glob("*.npz"))), FEW, without="l3s-gn1")
    assert model.second_stage is not None
    assert model.second_stage.feature_names == model.feature_names + CONTEXT_NAMES
    assert "l3s-gn1" not in model.trained_on + model.second_stage.trained_on
    model.save(tmp_path / "model.npz")
    loaded = BlockModel.load(tmp_path / "model.npz")
    assert loaded.second_stage is not None
    page = next(p for p in pages if p.gold.dataset == "l3s-gn1")
    words = np.array([b.n_words for b in page.blocks], dtype=float)
    both = loaded.page_probabilities(page.features, words)
    np.testing.assert_array_equal(both, model.page_probabilities(page.features, words))
    first = loaded.probabilities(page.features)
    context = stage_context(first, words, np.zeros(len(words), int))
    np.testing.assert_array_equal(
        both, loaded.second_stage.probabilities(np.column_stack([page.features, context]))
    )
    # the second stage's trees split on the first's probabilities
    second = loaded.second_stage
    assert (
        second.feature[second.left != np.arange(len(second.left))] >= len(model.feature_names)
    ).any()
    # the extract stage keeps what the two stages keep
    params = ExtractParams(model=tmp_path / "model.npz")
    cleaned = clean_page(page.gold.html, page.gold.http_charset, params)
    assert [b.text for b in cleaned.blocks] == [b.text for b in page.blocks]
    assert [b.final_class == "good" for b in cleaned.blocks] == list(both >= model.threshold_good)


@pytest.mark.slow
def test_a_model_fitted_without_a_source_is_the_one_trained_without_its_blocks(pages):
    # the held-out source's labelled blocks, however many, no longer set the others' weights
    without_l3s = fit(training_table([p for p in pages if p.gold.dataset != "l3s-gn1"]), FEW)
    full = training_table(pages)
    held_out = fit(full, FEW, without="l3s-gn1")
    l3s = np.flatnonzero((full.group == "l3s-gn1") & (full.labels >= 0))
    full.labels[l3s[::2]] = -1
    fewer_labels = fit(full, FEW, without="l3s-gn1")
    for model in (held_out, fewer_labels):
        for stage, alone in ((model, without_l3s), (model.second_stage, without_l3s.second_stage)):
            assert stage is not None and alone is not None
            np.testing.assert_array_equal(stage.feature, alone.feature)
            np.testing.assert_allclose(stage.value, alone.value, rtol=1e-9, atol=1e-12)


@pytest.mark.slow
def test_a_second_stage_naming_other_columns_is_refused(pages, tmp_path):
    model = fit(training_table(pages), FEW)
    arrays = model._arrays()
    # a model file from a version whose context columns came in another order
    arrays[f"{SECOND_STAGE}feature_names"] = np.array(model.feature_names + CONTEXT_NAMES[::-1])
    np.savez_compressed(tmp_path / "odd.npz", **arrays)
    with pytest.raises(ValueError, match="second stage reads other columns"):
        BlockModel.load(tmp_path / "odd.npz")


@pytest.mark.slow
def test_a_model_file_missing_arrays_or_no_archive_at_all_is_refused_by_name(pages, tmp_path):
    arrays = fit(training_table(pages), FEW)._arrays()
    del arrays[f"{SECOND_STAGE}roots"], arrays[f"{SECOND_STAGE}meta"]
    np.savez_compressed(tmp_path / "cut.npz", **arrays)
    with pytest.raises(ValueError, match="lacks second_stage.roots, second_stage.meta; retrain"):
        BlockModel.load(tmp_path / "cut.npz")
    (tmp_path / "text.npz").write_text("feature,threshold\n")
    with pytest.raises(ValueError, match="not a model file"):
        BlockModel.load(tmp_path / "text.npz")


def test_a_cross_fit_short_of_labels_names_the_source_it_fitted_without(pages):
    table = training_table([p for p in pages if p.gold.dataset != "trafilatura-dev"])
    # l3s-gn1 keeps its labels; CleanEval's blocks are all content, so trees fitted
    # without l3s-gn1 have one class to learn from
    cleaneval = (table.group == "cleaneval") & (table.labels >= 0)
    table.labels[cleaneval] = 1
    with pytest.raises(ValueError, match="fitted without l3s-gn1.*come from: cleaneval"):
        second_stage_table(table, FEW)


@pytest.mark.slow
def test_self_training_refits_the_first_stage_and_keeps_the_second(pages):
    gold = [p for p in pages if p.gold.dataset != "l3s-gn1"]
    table = training_table(gold)
    model = fit(table, FEW)
    target = unlabelled_blocks([p for p in pages if p.gold.dataset == "l3s-gn1"])
    adapted = self_train(table, target, model, FEW, AdaptParams(rounds=1, confidence=0.6))
    assert adapted.second_stage is model.second_stage
    assert not np.array_equal(adapted.value, model.value)


@pytest.mark.slow
def test_two_stages_need_two_sources_and_a_stage_count_of_one_or_two(pages, caplog):
    two_sources = training_table([p for p in pages if p.gold.dataset != "trafilatura-dev"])
    with pytest.raises(ConfigError, match="train.stages"):
        second_stage_table(two_sources, FEW, without="l3s-gn1")
    # a held-out model of two gold sources: one stage, said so
    assert fit(two_sources, FEW, without="l3s-gn1").second_stage is None
    assert "the table without l3s-gn1 holds one source: the model has one stage" in caplog.text
    assert fit(two_sources, FEW).second_stage is not None
    with pytest.raises(ConfigError, match="train.stages"):
        TrainParams.from_config({"stages": 3})
    assert TrainParams.from_config({"stages": 2}).stages == 2


def test_training_blocks_of_an_earlier_version_serve_one_stage_and_not_two(pages, tmp_path):
    # blocks written before pages were stored: only the labelled ones, no page numbers
    for name in ("cleaneval-final", "l3s-gn1"):
        mine = [p for p in pages if p.gold.dataset == name]
        known = [p.labels >= 0 for p in mine]
        np.savez_compressed(
            tmp_path / f"{name}.npz",
            dataset=np.array(name),
            features=np.concatenate([p.features[k] for p, k in zip(mine, known)]),
            labels=np.concatenate([p.labels[k] for p, k in zip(mine, known)]),
            words=np.concatenate(
                [np.array([b.n_words for b in p.blocks], float)[k] for p, k in zip(mine, known)]
            ),
            feature_names=np.array(mine[0].feature_names),
        )
    table = read_training_table(sorted(tmp_path.glob("*.npz")))
    assert table.page is None
    assert fit(table, TrainParams(max_bins=QUICK_BINS, max_iter=3)).second_stage is None
    with pytest.raises(ValueError, match="delete results/train/blocks and rerun"):
        fit(table, FEW)
