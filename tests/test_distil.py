"""Distilling `best` with every peer into `best` alone (`train.distil`): the teacher's labels,
the table the student is fitted on, and a refusal of pages read with other peers."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import BOILERPLATE, QUICK_BINS, SAMPLE_WARCS, ok, require_shared, snakemake

from corpusbuilder.config import ConfigError
from corpusbuilder.evaluation.distil import (
    TEACHER_GROUP,
    DistilParams,
    distil,
    distilled_table,
    teacher_labels,
    teacher_probabilities,
)
from corpusbuilder.evaluation.gold import iter_dataset
from corpusbuilder.evaluation.training import (
    TrainParams,
    fit,
    gold_source_weight,
    training_pages,
    training_table,
    unlabelled_blocks,
)
from corpusbuilder.extraction.classifier import FEATURE_NAMES
from corpusbuilder.extraction.extract import ExtractParams
from corpusbuilder.extraction.model import BlockModel

FEW = TrainParams(max_bins=QUICK_BINS, max_iter=8)


@pytest.fixture(scope="module")
def gold():
    """A handful of gold pages of three sources, read with every peer (as the teacher reads
    them); skipped when the peers are not installed."""
    pytest.importorskip("trafilatura")
    pytest.importorskip("readability")
    pytest.importorskip("resiliparse")
    require_shared(BOILERPLATE)
    pages = [
        page
        for name in ("cleaneval-final", "l3s-gn1", "trafilatura-dev")
        for page in iter_dataset(name, BOILERPLATE, 4)
    ]
    return training_pages(pages, ExtractParams(peers="all"))


def student_part(table):
    """The table as the student reads it: the block features, before the peers' columns."""
    width = len(FEATURE_NAMES)
    return type(table)(
        table.features[:, :width],
        table.labels,
        table.weights,
        table.group,
        FEATURE_NAMES,
        table.words,
        table.page,
    )


def test_the_student_is_fitted_on_the_gold_blocks_and_the_teachers_labels_weighing_w_sources(
    gold,
):
    labelled = [p for p in gold if p.gold.dataset != "l3s-gn1"]
    teacher = fit(training_table(labelled), FEW)
    assert teacher.peers == ("in_trafilatura", "in_readability", "in_resiliparse")
    pages = unlabelled_blocks([p for p in gold if p.gold.dataset == "l3s-gn1"])
    labels = teacher_labels(teacher, pages)
    probability = teacher.page_probabilities(pages.features, pages.words, pages.page)
    assert np.array_equal(labels, probability >= teacher.threshold_good)

    table = student_part(training_table(labelled))
    joined = distilled_table(table, pages, labels, 2.0)
    mine = joined.group == TEACHER_GROUP
    assert np.array_equal(joined.features[~mine], table.features)
    assert np.array_equal(joined.weights[~mine], table.weights)
    assert np.array_equal(joined.features[mine], pages.features[:, : len(FEATURE_NAMES)])
    assert np.array_equal(joined.labels[mine], labels)
    # two gold sources' weight in all, each block its words' share
    assert joined.weights[mine].sum() == pytest.approx(2 * gold_source_weight(table))
    assert np.allclose(
        joined.weights[mine] * pages.words.sum(), joined.weights[mine].sum() * pages.words
    )
    # the teacher's pages number on after the gold pages
    assert joined.page is not None and table.page is not None
    assert joined.page[mine].min() == table.page.max() + 1

    student = distil(table, pages, teacher, FEW, 2.0)
    assert student.feature_names == FEATURE_NAMES and not student.peers
    assert student.trained_on == ("cleaneval", TEACHER_GROUP, "trafilatura-dev")
    # held out from a source: its gold blocks are left out, the teacher's kept
    held_out = distil(table, pages, teacher, FEW, 2.0, without="cleaneval")
    assert held_out.trained_on == (TEACHER_GROUP, "trafilatura-dev")


def test_soft_labels_make_each_block_a_content_and_a_boilerplate_row_by_the_teachers_probability(
    gold,
):
    labelled = [p for p in gold if p.gold.dataset != "l3s-gn1"]
    teacher = fit(training_table(labelled), FEW)
    pages = unlabelled_blocks([p for p in gold if p.gold.dataset == "l3s-gn1"])
    probability = teacher_probabilities(teacher, pages)
    probability[:2] = [0.0, 1.0]  # sure blocks are one row each
    table = student_part(training_table(labelled))
    soft = distilled_table(table, pages, probability, 2.0)
    hard = distilled_table(table, pages, probability >= teacher.threshold_good, 2.0)
    mine = soft.group == TEACHER_GROUP
    assert mine.sum() == (probability > 0).sum() + (probability < 1).sum()
    assert list(soft.labels[mine][:2]) == [0, 1]
    # a block's rows follow its page's order, and weigh what its one hard row weighs
    assert soft.page is not None and np.all(np.diff(soft.page[mine]) >= 0)
    assert soft.weights[mine].sum() == pytest.approx(
        hard.weights[hard.group == TEACHER_GROUP].sum()
    )
    content = soft.labels[mine] == 1
    share = soft.weights[mine].sum() / pages.words.sum()
    assert soft.weights[mine][content].sum() == pytest.approx(
        float((probability * pages.words).sum() * share)
    )
    student = distil(table, pages, teacher, FEW, 2.0, labels="soft")
    assert student.feature_names == FEATURE_NAMES


def test_pages_read_without_the_teachers_peers_are_refused(gold):
    teacher = fit(training_table(gold), FEW)
    plain = unlabelled_blocks(gold)
    plain = type(plain)(
        plain.features[:, : len(FEATURE_NAMES)], plain.words, plain.page, plain.pages
    )
    with pytest.raises(ConfigError, match="train.distil"):
        teacher_labels(teacher, plain)


def test_distil_params_default_to_no_teacher_and_refuse_unknown_ones():
    assert DistilParams().teacher == "none"
    assert DistilParams.from_config({"teacher": "peers-all", "weight": 0.5}) == DistilParams(
        "peers-all", 0.5
    )
    with pytest.raises(ConfigError, match="train.distil.teacher"):
        DistilParams(teacher="trafilatura")
    with pytest.raises(ConfigError, match="train.distil.weight"):
        DistilParams(weight=0)


@pytest.mark.workflow
def test_the_train_rule_distils_the_stacked_model_on_pages_of_the_crawl(tmp_path):
    """train.distil: rule train fits on the gold blocks and the shipped stacked model's labels
    of pages drawn from the crawl; a held-out model has no teacher."""
    pytest.importorskip("trafilatura")
    pytest.importorskip("readability")
    pytest.importorskip("resiliparse")
    require_shared(BOILERPLATE)
    config = {
        "input": {"warcs": list(map(str, SAMPLE_WARCS))},
        "evaluate": {"gold_dir": str(BOILERPLATE)},
        "train": {
            "max_pages": 5,
            "max_iter": 5,
            "max_bins": QUICK_BINS,
            "datasets": ["cleaneval-dev", "l3s-gn1"],
            "distil": {"teacher": "peers-all", "weight": 0.5, "pages": 6},
        },
    }
    targets = ("results/model/best.npz", "results/model/held_out/cleaneval.npz")
    ok(snakemake(tmp_path, *targets, config=config))
    student = BlockModel.load(tmp_path / targets[0])
    assert student.trained_on == ("cleaneval", "l3s-gn1", TEACHER_GROUP)
    assert student.feature_names == FEATURE_NAMES
    assert BlockModel.load(tmp_path / targets[1]).trained_on == ("l3s-gn1",)
    assert not (tmp_path / "results" / "distil" / "sample").exists() or not any(
        (tmp_path / "results" / "distil" / "sample").iterdir()
    )  # the labelled samples are temporary


@pytest.mark.workflow
def test_a_teacher_for_a_model_that_reads_peers_is_refused(tmp_path):
    config = {
        "input": {"warcs": list(map(str, SAMPLE_WARCS))},
        "extract": {"peers": "resiliparse"},
        "train": {"distil": {"teacher": "peers-all"}},
    }
    result = snakemake(tmp_path, "-n", "results/model/best.npz", config=config)
    assert result.returncode != 0
    said = result.stdout + result.stderr
    assert "train.distil.teacher" in said and "extract.peers none" in said
