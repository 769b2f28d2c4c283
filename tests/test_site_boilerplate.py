"""Ikeda et al.'s alternation counts and FindOptimal on hand-made sites sharing a template, and
the extract stage's site_boilerplate modes."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from conftest import ok, snakemake, write_warc

from corpusbuilder.config import ConfigError, validate_config
from corpusbuilder.extraction.extract import ExtractParams, extract_shard
from corpusbuilder.extraction.justext import PRESETS
from corpusbuilder.extraction.site_boilerplate import (
    HostText,
    SiteBoilerplateParams,
    alternation_count,
    char_ngram_hashes,
    find_optimal,
    first_level,
    host_boilerplate,
    host_of,
    mark_blocks,
    next_level,
    preprocess,
    walk,
)

NAV = (
    "Home | World news | Sport results | Weather today | Letters to the editor | Contact the "
    "newsroom | Subscribe"
)
FOOTER = (
    "Copyright 2011 The Harbour Ledger Ltd. All rights reserved. Terms of use and privacy policy. "
    "Registered office: 12 Quay Street, Portwick. Advertise with us. Jobs at the Ledger."
)
ARTICLES = [
    [
        "Council approves the new ferry timetable",
        "The harbour council voted on Tuesday to add two evening crossings from May, after months "
        "of complaints from commuters who were stranded on the island when the last boat left "
        "before six.",
    ],
    [
        "Storm closes the coastal road",
        "Heavy rain and gales brought down trees near the lighthouse, and the road will stay shut "
        "until engineers inspect the bridge over the estuary, which was damaged by a fallen oak.",
    ],
    [
        "School choir wins regional prize",
        "Forty pupils travelled north for the competition and sang a programme of folk songs that "
        "the judges called fearless, and the headmaster has promised them a concert in the town "
        "hall.",
    ],
    [
        "Fish market moves to the old depot",
        "Traders begin selling from the renovated depot next week, freeing the quay for the summer "
        "festival stalls and for the fishing boats that unload at night.",
    ],
    [
        "Lifeboat crew rescues two kayakers",
        "Volunteers launched at dawn when a passing trawler spotted the pair clinging to rocks "
        "beyond the breakwater, cold and tired but otherwise unhurt after their ordeal.",
    ],
]


def levels(docs: list[str], up_to: int):
    text = HostText.of(docs)
    level = first_level(text)
    yield text, level
    while level.n < up_to:
        level = next_level(text, level)
        yield text, level


def brute_force_counts(docs: list[str], n: int) -> Counter:
    return Counter(doc[i : i + n] for doc in docs for i in range(len(doc) - n + 1))


def test_alternation_count_of_definition_2_example():
    # x = accbaacbc, W = {cb, ba}: r = 110001001, four boundaries
    text = HostText.of(["accbaacbc"])
    assert alternation_count(text, np.array([2, 3, 6]), 2) == 4
    # the same string twice: no boundary is counted across the two documents
    assert (
        alternation_count(
            HostText.of(["accbaacbc", "accbaacbc"]), np.array([2, 3, 6, 11, 12, 15]), 2
        )
        == 8
    )


def test_incremental_levels_count_every_ngram_like_a_counter():
    rng = random.Random(7)
    for _ in range(50):
        docs = [
            "".join(rng.choice("ab c") for _ in range(rng.randint(0, 30)))
            for _ in range(rng.randint(1, 4))
        ]
        for text, level in levels(docs, 6):
            expected = brute_force_counts(docs, level.n)
            assert level.distinct == len(expected)
            assert sorted(level.ranked.tolist(), reverse=True) == sorted(
                (c for c in expected.values() if c >= 2), reverse=True
            )
            grams = ["".join(map(chr, text.codes[p : p + level.n])) for p in level.positions]
            assert [expected[g] for g in grams] == level.counts.tolist()
            assert len(level.positions) == sum(c for c in expected.values() if c >= 2)


def test_top_a_percent_keeps_ties_and_never_singletons():
    # ab 4, xy 2, ba bx ya 1: five distinct bigrams
    *_, (text, level) = levels(["abab", "abxy", "xyab"], 2)
    assert level.threshold(1) == 4 and level.threshold(40) == 2 and level.threshold(100) == 2
    hashes, _ = char_ngram_hashes(HostText.of(["ab", "xy"]), 2)
    assert set(level.useless_hashes(1).tolist()) == {int(hashes[0])}
    assert set(level.useless_hashes(100).tolist()) == set(hashes.tolist())


def test_find_optimal_walks_past_short_ngrams():
    pages = ["\n".join([NAV, title, body, FOOTER]) for title, body in ARTICLES]
    n, a = find_optimal(pages)
    assert n > 2  # bigrams occur in article text too; the walk must leave them
    assert walk(HostText.of([preprocess(p) for p in pages]))[:2] == (n, a)


def test_template_blocks_are_marked_and_content_is_not():
    pages = [[NAV, title, body, FOOTER] for title, body in ARTICLES]
    marks = host_boilerplate(pages, SiteBoilerplateParams(mode="mark"))
    assert [m.tolist() for m in marks] == [[True, False, False, True]] * len(ARTICLES)
    too_few = host_boilerplate(pages[:2], SiteBoilerplateParams(mode="mark", min_pages_per_host=3))
    assert not any(m.any() for m in too_few)
    # the cut point found on the first pages still marks the template of every page
    capped = host_boilerplate(pages, SiteBoilerplateParams(mode="mark", max_pages_per_host=3))
    assert [m.tolist() for m in capped] == [[True, False, False, True]] * len(ARTICLES)


def test_host_ignores_www_and_case():
    assert (
        host_of("http://WWW.Example.org/a")
        == host_of("https://example.org:8080/b")
        == "example.org"
    )


def tables(
    host: str, blocks_per_page: list[list[tuple[str, str]]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """docs and blocks tables as extract writes them; blocks are (text, cf_class) pairs."""
    docs, blocks = [], []
    for i, page in enumerate(blocks_per_page):
        doc_id = f"s:{host}:{i}"
        docs.append(
            {
                "doc_id": doc_id,
                "uri": f"http://{host}/news/{i}",
                "outcome": "ok",
                "n_good_blocks": 0,
                "n_good_words": 0,
            }
        )
        for j, (text, cf) in enumerate(page):
            blocks.append(
                {
                    "doc_id": doc_id,
                    "block_index": j,
                    "text": text,
                    "cf_class": cf,
                    "final_class": cf,
                    "n_chars": len(text),
                    "n_words": len(text.split()),
                    "heading": False,
                }
            )
    return pd.DataFrame(docs), pd.DataFrame(blocks)


@pytest.mark.parametrize("mode", ["off", "mark", "combine"])
def test_modes_on_a_shard_table(mode):
    # jusText found the navigation near-good, the footer good, and a page's date between them short
    dates = [
        "Tuesday 3 May",
        "Friday 9 June",
        "Monday 17 July",
        "Sunday 20 August",
        "Wednesday 1 March",
    ]
    pages = [
        [(NAV, "near-good"), (date, "short"), (FOOTER, "good"), (title, "short"), (body, "good")]
        for date, (title, body) in zip(dates, ARTICLES)
    ]
    docs, blocks = tables("ledger.example", pages)
    out = mark_blocks(blocks, docs, SiteBoilerplateParams(mode=mode), PRESETS["default"])
    template = out["text"].isin([NAV, FOOTER])
    if mode == "off":
        assert not out["site_boilerplate"].any()
    else:
        assert (
            out.loc[template, "site_boilerplate"].all()
            and not out.loc[~template, "site_boilerplate"].any()
        )
    if mode == "combine":
        assert (out.loc[template, ["cf_class", "final_class"]] == "bad").all().all()
        # the date sits between two site-boilerplate blocks: Algorithm 2.3 makes it bad too
        assert (out.loc[out["text"].isin(dates), "final_class"] == "bad").all()
        assert (out.loc[out["text"].isin([b for _, b in ARTICLES]), "final_class"] == "good").all()
    else:
        assert out["final_class"].tolist() == blocks["final_class"].tolist()


HTML = (
    "<html><body><div class='nav'>"
    + " | ".join(f"<a href='/{i}'>{item}</a>" for i, item in enumerate(NAV.split(" | ")))
    + "</div><h1>{title}</h1><p>{body} Readers wrote to us about it all week, and their letters "
    "are on page four.</p><p>This newspaper is published every weekday morning by a cooperative "
    "of fishermen, and the opinions of our columnists are not necessarily those of the editors of "
    "the paper. Our photographers sell prints of their work from a small shop by the "
    "market.</p><p>" + FOOTER + "</p></body></html>"
)


def test_extract_stage_honours_the_mode(tmp_path):
    records = [
        {
            "uri": f"http://www.ledger.example/news/{i}",
            "body": HTML.format(title=title, body=body).encode(),
        }
        for i, (title, body) in enumerate(ARTICLES)
    ]
    warc = write_warc(tmp_path / "in.warc.gz", records)
    results = {}
    for mode in ("off", "mark", "combine"):
        params = ExtractParams.from_config({"site_boilerplate": {"mode": mode}})
        docs, blocks = tmp_path / f"{mode}.docs.parquet", tmp_path / f"{mode}.blocks.parquet"
        extract_shard([("s", warc)], "s", docs, blocks, params)
        results[mode] = pd.read_parquet(docs), pd.read_parquet(blocks)
    colophon = results["off"][1]["text"].str.startswith("This newspaper is published")
    assert (
        results["off"][1].loc[colophon, "final_class"] == "good"
    ).all()  # jusText alone keeps it
    assert not results["off"][1]["site_boilerplate"].any()
    marked = results["mark"][1]
    assert marked.loc[colophon, "site_boilerplate"].all()
    assert not marked.loc[
        marked["text"].str.contains("harbour council|Heavy rain"), "site_boilerplate"
    ].any()
    assert marked["final_class"].tolist() == results["off"][1]["final_class"].tolist()
    docs, combined = results["combine"]
    assert (combined.loc[colophon, "final_class"] == "bad").all()
    # only blocks jusText kept can turn bad, and the content it found good on its own stays good
    off = results["off"][1]
    assert not ((combined["final_class"] == "good") & (off["final_class"] != "good")).any()
    content_good = (off["cf_class"] == "good") & ~marked["site_boilerplate"]
    assert content_good.sum() >= 3 and (combined.loc[content_good, "final_class"] == "good").all()
    good_words = combined[combined["final_class"] == "good"].groupby("doc_id")["n_words"].sum()
    assert docs.set_index("doc_id")["n_good_words"].to_dict() == good_words.to_dict()
    assert (docs["n_good_words"] < results["off"][0]["n_good_words"]).all()


@pytest.mark.parametrize(
    "section, message",
    [
        ({"mode": "on"}, "extract.site_boilerplate.mode"),
        ({"min_pages_per_host": 1}, "extract.site_boilerplate.min_pages_per_host"),
        ({"min_coverage": 1.5}, "extract.site_boilerplate.min_coverage"),
        ({"min_pages": 3}, "under 'extract.site_boilerplate': min_pages"),
    ],
)
def test_config_keys_are_validated(section, message):
    with pytest.raises(ConfigError, match=message):
        validate_config({"extract": {"site_boilerplate": section}})


def test_config_defaults_and_a_bare_yaml_off():
    section = validate_config({})["extract"]["site_boilerplate"]
    assert section == {
        "mode": "off",
        "min_pages_per_host": 3,
        "min_coverage": 0.8,
        "max_pages_per_host": 200,
    }
    assert (
        ExtractParams.from_config({"site_boilerplate": {"mode": False}}).site_boilerplate.mode
        == "off"
    )
    with pytest.raises(ValueError, match="'on'"):
        SiteBoilerplateParams(mode="on")


@pytest.mark.workflow
def test_snakemake_passes_the_mode_to_extract(tmp_path):
    records = [
        {
            "uri": f"http://www.ledger.example/news/{i}",
            "body": HTML.format(title=title, body=body).encode(),
        }
        for i, (title, body) in enumerate(ARTICLES)
    ]
    warc = write_warc(tmp_path / "ledger.warc.gz", records)
    config = {"input": {"warcs": [str(warc)]}, "extract": {"site_boilerplate": {"mode": "combine"}}}
    ok(snakemake(tmp_path, "work/extract/ledger.blocks.parquet", config=config, cores=1))
    blocks = pd.read_parquet(tmp_path / "work" / "extract" / "ledger.blocks.parquet")
    colophon = blocks["text"].str.startswith("This newspaper is published")
    assert (
        blocks.loc[colophon, "site_boilerplate"].all()
        and (blocks.loc[colophon, "final_class"] == "bad").all()
    )
    assert (
        "site boilerplate (combine)" in (tmp_path / "logs" / "extract" / "ledger.log").read_text()
    )
