"""Ikeda et al.'s alternation counts and FindOptimal on hand-made sites sharing a template."""

from __future__ import annotations

import pandas as pd
import pytest

from corpusbuilder.site_boilerplate import (
    SiteBoilerplateParams,
    alternation_count,
    find_optimal,
    mark_site_boilerplate,
    ngram_ranking,
    preprocess,
    useless_coverage,
    useless_ngrams,
)

NAV = "Home | World news | Sport results | Weather today | Letters to the editor | Contact the newsroom | Subscribe"
FOOTER = ("Copyright 2011 The Harbour Ledger Ltd. All rights reserved. Terms of use and privacy policy. "
          "Registered office: 12 Quay Street, Portwick. Advertise with us. Jobs at the Ledger.")
ARTICLES = [
    ["Council approves the new ferry timetable", "The harbour council voted on Tuesday to add two evening crossings from May, after months of complaints from commuters."],
    ["Storm closes the coastal road", "Heavy rain and gales brought down trees near the lighthouse, and the road will stay shut until engineers inspect the bridge."],
    ["School choir wins regional prize", "Forty pupils travelled north for the competition and sang a programme of folk songs that the judges called fearless."],
    ["Fish market moves to the old depot", "Traders begin selling from the renovated depot next week, freeing the quay for the summer festival stalls."],
    ["Lifeboat crew rescues two kayakers", "Volunteers launched at dawn when a passing trawler spotted the pair clinging to rocks beyond the breakwater."],
]


def site(host: str, articles) -> tuple[pd.DataFrame, pd.DataFrame]:
    docs, blocks = [], []
    for i, (title, body) in enumerate(articles):
        doc_id = f"s:{host}:{i}"
        docs.append({"doc_id": doc_id, "uri": f"http://{host}/news/{i}", "outcome": "ok"})
        for j, text in enumerate([NAV, title, body, FOOTER]):
            blocks.append({"doc_id": doc_id, "block_index": j, "text": text, "final_class": "good"})
    return pd.DataFrame(docs), pd.DataFrame(blocks)


def test_alternation_count_of_definition_2_example():
    # x = accbaacbc, W = {cb, ba}: r = 110001001, four boundaries
    assert alternation_count(["accbaacbc"], {"cb", "ba"}, 2) == 4


def test_ranking_and_top_a_percent():
    ranking = ngram_ranking(["abab", "abxy", "xyab"], 2)  # ab 4, xy 2, ba bx ya 1
    assert ranking[:2] == [("ab", 4), ("xy", 2)]
    assert useless_ngrams(ranking, 1) == {"ab"}
    assert useless_ngrams(ranking, 40) == {"ab", "xy"}
    assert useless_ngrams(ranking, 100) == {"ab", "xy"}  # n-grams seen once are never frequent


def test_find_optimal_walks_past_short_ngrams():
    _, blocks = site("ledger.example", ARTICLES)
    pages = [preprocess(p) for p in blocks.groupby("doc_id")["text"].agg("\n".join)]
    n, a = find_optimal(pages)
    assert n > 2  # bigrams occur in article text too; the walk must leave them
    useless = useless_ngrams(ngram_ranking(pages, n), a)
    assert useless_coverage(FOOTER, useless, n) > 0.9
    assert useless_coverage(ARTICLES[0][1], useless, n) < 0.5


@pytest.mark.parametrize("mode", ["mark", "combine"])
def test_template_blocks_are_marked(mode):
    docs, blocks = site("ledger.example", ARTICLES)
    small_docs, small_blocks = site("tiny.example", ARTICLES[:2])  # below min_pages
    out = mark_site_boilerplate(pd.concat([blocks, small_blocks]), pd.concat([docs, small_docs]),
                                SiteBoilerplateParams(mode=mode, min_pages=3))
    ledger = out[out.doc_id.str.contains("ledger")]
    template = ledger.text.isin([NAV, FOOTER])
    assert ledger.loc[template, "site_boilerplate"].all()
    assert not ledger.loc[~template, "site_boilerplate"].any()
    assert not out[out.doc_id.str.contains("tiny")].site_boilerplate.any()
    expected = "bad" if mode == "combine" else "good"
    assert (ledger.loc[template, "final_class"] == expected).all()
    assert (ledger.loc[~template, "final_class"] == "good").all()


def test_off_mode_adds_a_false_column_and_bad_mode_is_named():
    docs, blocks = site("ledger.example", ARTICLES)
    assert not mark_site_boilerplate(blocks, docs).site_boilerplate.any()
    with pytest.raises(ValueError, match="'on'"):
        mark_site_boilerplate(blocks, docs, SiteBoilerplateParams(mode="on"))
