"""Scoring jusText with and without site-level boilerplate: hand-made tables, then the gold sets."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from conftest import BOILERPLATE, require_shared

from corpusbuilder.evaluation.gold import GoldPage, iter_dataset
from corpusbuilder.evaluation.scores import EvaluateConfig, write_tsv
from corpusbuilder.evaluation.site import SITE_COLUMNS, evaluate_gold_sets, score_variants
from corpusbuilder.extraction.justext import PRESETS

JUSTEXT = PRESETS["default"]
TEMPLATE = "Sign up for our daily newsletter and follow us on every network you use"


def pages(host: str, count: int) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, GoldPage]]:
    """Pages whose jusText classes kept the template line; it is marked as site boilerplate."""
    docs, blocks, gold = [], [], {}
    for i in range(count):
        doc_id = f"{host}:{i}"
        article = (
            f"Story number {i} tells what happened in the village on day {i} of the long summer"
        )
        docs.append({"doc_id": doc_id, "shard": "s", "uri": f"http://{host}/{i}", "outcome": "ok"})
        for j, (text, marked) in enumerate([(article, False), (TEMPLATE, True)]):
            blocks.append(
                {
                    "doc_id": doc_id,
                    "block_index": j,
                    "text": text,
                    "n_chars": len(text),
                    "heading": False,
                    "cf_class": "good",
                    "final_class": "good",
                    "site_boilerplate": marked,
                }
            )
        gold[doc_id] = GoldPage("hand", doc_id, b"", gold_text=article, url=f"http://{host}/{i}")
    return pd.DataFrame(docs), pd.DataFrame(blocks), gold


def test_marked_template_costs_precision_only_without_the_site_signal():
    docs, blocks, gold = pages("a.example", 3)
    tallies, counts = score_variants(docs, blocks, gold, JUSTEXT, min_pages=3)
    words = {variant: tally.words for variant, tally in tallies["all pages"].items()}
    article_words, template_words = 16, len(TEMPLATE.split())
    assert words["justext"].matched == 3 * article_words
    assert words["justext"].output == 3 * (article_words + template_words)
    for variant in ("justext+site", "justext-minus-site", "site-only"):
        assert words[variant].output == words[variant].matched == 3 * article_words
    assert counts["hosts"] == {"all pages": 1, "multi-page hosts": 1}
    assert counts["marked_blocks"]["multi-page hosts"] == 3


def test_multi_page_scope_counts_hosts_per_shard_when_asked():
    docs, blocks, gold = pages("a.example", 4)
    docs.loc[2:, "shard"] = "t"  # two pages in each of two shards
    tallies, _ = score_variants(docs, blocks, gold, JUSTEXT, min_pages=3)
    assert tallies["multi-page hosts"]["justext"].pages == 4
    tallies, _ = score_variants(docs, blocks, gold, JUSTEXT, min_pages=3, per_shard=True)
    assert tallies["multi-page hosts"]["justext"].pages == 0


@pytest.fixture
def gold_dir() -> Path:
    require_shared(BOILERPLATE / "cleanportaleval")
    return BOILERPLATE


def test_gold_pages_carry_their_urls(gold_dir):
    portal = next(iter_dataset("cleanportaleval", gold_dir, 1))
    assert portal.url == "http://bbc.co.uk/news/business-21302969"
    l3s = next(iter_dataset("l3s-gn1", gold_dir, 1))
    assert l3s.url and l3s.url.startswith("http")


def test_site_signal_raises_precision_on_a_news_portal(gold_dir, tmp_path):
    # the first 24 CleanPortalEval pages: 12 of bbc.co.uk, 12 of blogs.wsj.com
    config = EvaluateConfig(gold_dir=gold_dir, datasets=("cleanportaleval",), max_pages=24)
    rows = pd.DataFrame(evaluate_gold_sets(config))
    scores = rows[rows["scope"] == "multi-page hosts"].set_index("variant")
    assert scores.at["justext", "pages"] == 24 and scores.at["justext", "hosts"] == 2
    assert scores.at["justext+site", "word_precision"] > scores.at["justext", "word_precision"]
    assert scores.at["site-only", "word_recall"] > scores.at["justext", "word_recall"]
    write_tsv(rows.to_dict("records"), SITE_COLUMNS, tmp_path / "site.tsv")
    assert pd.read_csv(tmp_path / "site.tsv", sep="\t").columns.tolist() == list(SITE_COLUMNS)


def test_gold_pages_are_read_with_the_extract_stages_settings(gold_dir):
    # a language guessed from a dozen characters picks other stop lists, so jusText keeps other
    # blocks: the settings reach the pages' reading
    from corpusbuilder.extraction.extract import ExtractParams

    config = EvaluateConfig(gold_dir=gold_dir, datasets=("cleanportaleval",), max_pages=12)

    def justext_recall(params):
        rows = pd.DataFrame(evaluate_gold_sets(config, params))
        scores = rows[rows["scope"] == "multi-page hosts"].set_index("variant")
        return scores.at["justext", "word_recall"]

    assert justext_recall(ExtractParams(language_sample_chars=12)) != justext_recall(
        ExtractParams()
    )
