"""The evaluation end to end on a few real pages per gold set, the tables and the sweep."""

import csv

import pytest
from conftest import BOILERPLATE, require_shared

from corpusbuilder.evaluation.extractors import EXTRACTORS
from corpusbuilder.evaluation.gold import iter_dataset
from corpusbuilder.evaluation.scores import (
    BOILERPLATE_COLUMNS,
    FRAGMENTATION_COLUMNS,
    SWEEP_COLUMNS,
    EvaluateConfig,
    boilerplate_rows,
    evaluate,
    fragmentation_rows,
    language_rows,
    plot_sweep,
    sweep,
    vary_one,
    with_overall,
    write_tsv,
)
from corpusbuilder.extraction.justext import PRESETS

OURS = ("justext-default", "keep-all", "bte", "defext-lxml")
DATASETS = ("cleaneval-dev", "cleanportaleval", "l3s-gn1", "trafilatura-dev")


@pytest.fixture(scope="module")
def rows():
    require_shared(BOILERPLATE)
    config = EvaluateConfig.from_config(
        {
            "gold_dir": str(BOILERPLATE),
            "datasets": list(DATASETS),
            "extractors": list(OURS),
            "max_pages": 10,
        }
    )
    evaluation = evaluate(config)
    results = with_overall(evaluation.results)
    return (
        boilerplate_rows(results),
        fragmentation_rows(results),
        language_rows(evaluation.by_language),
    )


def _row(rows, extractor, dataset):
    [row] = [r for r in rows if r["extractor"] == extractor and r["dataset"] == dataset]
    return row


@pytest.mark.parametrize("dataset", ["l3s-gn1", "cleanportaleval"])
def test_justext_is_more_precise_than_keeping_everything(rows, dataset):
    scores, _, _ = rows
    justext, keep_all = _row(scores, "justext-default", dataset), _row(scores, "keep-all", dataset)
    assert justext["pages"] == keep_all["pages"] == 10
    assert justext["word_precision"] > keep_all["word_precision"] + 0.1
    assert justext["bow_precision"] > keep_all["bow_precision"] + 0.1
    assert keep_all["word_recall"] > justext["word_recall"]


def test_rows_cover_every_extractor_and_dataset_with_the_right_measures(rows):
    scores, fragments, _ = rows
    assert {(r["extractor"], r["dataset"]) for r in scores} == {
        (e, d) for e in OURS for d in (*DATASETS, "all")
    }
    snippets = _row(scores, "justext-default", "trafilatura-dev")
    assert "word_f1" not in snippets and 0 < snippets["snippet_f1"] <= 1
    assert "snippet_f1" not in _row(scores, "justext-default", "l3s-gn1")
    overall = _row(scores, "keep-all", "all")
    assert overall["pages"] == 40 and overall["pages_per_second"] > 0
    assert _row(fragments, "bte", "l3s-gn1")["fragments_per_document"] == 1.0  # one span per page
    assert _row(fragments, "justext-default", "l3s-gn1")["fragments_per_document"] >= 1.0


def test_scores_per_page_language_add_up_to_the_set(rows):
    scores, _, by_language = rows
    multilingual = [
        r for r in by_language if r["dataset"] == "trafilatura-dev" and r["extractor"] == "keep-all"
    ]
    assert (
        len({r["language"] for r in multilingual}) >= 2
    )  # its first ten pages are not all one language
    assert (
        sum(r["pages"] for r in multilingual)
        == _row(scores, "keep-all", "trafilatura-dev")["pages"]
    )
    assert all(0 <= r["snippet_f1"] <= 1 for r in multilingual if "snippet_f1" in r)


def test_tables_are_written_with_their_headers(rows, tmp_path):
    scores, fragments, _ = rows
    write_tsv(scores, BOILERPLATE_COLUMNS, tmp_path / "boilerplate.tsv")
    write_tsv(fragments, FRAGMENTATION_COLUMNS, tmp_path / "fragmentation.tsv")
    with open(tmp_path / "boilerplate.tsv", encoding="utf-8") as table:
        read = list(csv.DictReader(table, delimiter="\t"))
    assert tuple(read[0]) == BOILERPLATE_COLUMNS
    assert len(read) == len(scores)
    snippet_row = next(r for r in read if r["dataset"] == "trafilatura-dev")
    assert snippet_row["word_f1"] == "" and float(snippet_row["snippet_f1"]) > 0


def test_sweep_moves_precision_and_recall_and_draws_them(tmp_path):
    require_shared(BOILERPLATE)
    pages = list(iter_dataset("cleanportaleval", BOILERPLATE, max_pages=4))
    swept = sweep(pages, {"max_link_density": (0.0, 0.2, 1.0)})
    assert [r["value"] for r in swept] == [0.0, 0.2, 1.0]
    assert [r["is_default"] for r in swept] == [0, 1, 0]
    recalls = [r["word_recall"] for r in swept]
    assert recalls[0] < recalls[2]  # allowing links keeps more
    write_tsv(swept, SWEEP_COLUMNS, tmp_path / "sweep.tsv")
    plot_sweep(swept, tmp_path / "sweep.png")
    assert (tmp_path / "sweep.png").read_bytes().startswith(b"\x89PNG")


def test_varying_one_threshold_keeps_low_at_most_high():
    base = PRESETS["default"]
    assert vary_one(base, "stopwords_low", 0.4).stopwords_high == 0.4
    assert vary_one(base, "length_high", 50).length_low == 50
    assert vary_one(base, "max_link_density", 0.5).length_low == base.length_low


def test_config_refuses_unknown_names():
    with pytest.raises(ValueError, match="nope"):
        EvaluateConfig.from_config({"extractors": ["nope"]})
    # every extractor, and `best` once more as adapted to each held-out set's pages
    assert set(EvaluateConfig().extractors) == set(EXTRACTORS) | {"best-adapted"}


def test_best_adapted_is_skipped_without_models_adapted_to_each_source():
    require_shared(BOILERPLATE)
    config = EvaluateConfig.from_config(
        {
            "gold_dir": str(BOILERPLATE),
            "datasets": ["cleaneval-dev"],
            "extractors": ["best-adapted", "keep-all"],
            "max_pages": 2,
        }
    )
    assert set(evaluate(config).results["cleaneval-dev"]) == {"keep-all"}


def test_pages_are_read_with_the_extract_stages_settings():
    # A user's `extract` settings for reading pages reach the evaluation: a language guessed from
    # a dozen characters is another language than one guessed from the default 2,000.
    require_shared(BOILERPLATE)
    from corpusbuilder.extraction.extract import ExtractParams

    config = EvaluateConfig.from_config(
        {
            "gold_dir": str(BOILERPLATE),
            "datasets": ["fundus"],
            "extractors": ["justext-default"],
            "max_pages": 20,
        }
    )

    def languages(params):
        by_language = evaluate(config, params=params).by_language["fundus"]
        return {language: t["justext-default"].pages for language, t in by_language.items()}

    default = languages(ExtractParams())
    assert sum(default.values()) == 20 and {"de", "en"} <= set(default)
    assert languages(ExtractParams(language_sample_chars=12)) != default
