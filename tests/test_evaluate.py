"""Evaluation metrics and baseline extractors on hand-computed cases (thesis §2.6, §2.9)."""

import math
import random

import pandas as pd
import pytest

from corpusbuilder.evaluation.baselines import (
    bte_extract,
    classify_default_extractor,
    max_scoring_span,
)
from corpusbuilder.evaluation.metrics import (
    Counts,
    aligned_word_counts,
    bag_of_words_counts,
    cleaneval_words,
    f_beta,
    fragment_lengths,
    fragmentation,
    lcs_length,
    scores,
    snippet_counts,
)
from corpusbuilder.extraction.segmentation import parse_html

# --- word-level alignment -------------------------------------------------------------------------


def test_alignment_on_five_words_by_hand():
    # output a b c d e, gold a c x e: the best alignment pairs a, c, e -> 3 aligned words
    counts = aligned_word_counts("a b c d e", "a c x e")
    assert counts == Counts(matched=3, output=5, gold=4)
    measured = scores(counts)
    assert measured.precision == pytest.approx(3 / 5)
    assert measured.recall == pytest.approx(3 / 4)
    assert measured.f1 == pytest.approx(2 * 0.6 * 0.75 / 1.35)  # 0.6667
    assert measured.f05 == pytest.approx(1.25 * 0.6 * 0.75 / (0.25 * 0.6 + 0.75))  # 0.625


def test_alignment_respects_order_unlike_bag_of_words():
    assert aligned_word_counts("b a", "a b").matched == 1
    assert bag_of_words_counts("b a", "a b").matched == 2


def test_alignment_is_case_sensitive_and_drops_non_ascii_like_cleaneval_a():
    assert cleaneval_words("Zürich – the end?") == ["Zrich", "the", "end"]
    assert cleaneval_words("Kosovo’s") == cleaneval_words("Kosovo?s")  # a lossy gold's "?"
    assert aligned_word_counts("The Zürich", "the Zürich") == Counts(1, 2, 2)


def test_lcs_length_matches_textbook_dynamic_programming():
    def reference(a, b):
        table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                table[i + 1][j + 1] = (
                    table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
                )
        return table[-1][-1]

    rng = random.Random(7)
    for _ in range(300):
        a = [rng.choice("abcd") for _ in range(rng.randint(0, 25))]
        b = [rng.choice("abcde") for _ in range(rng.randint(0, 25))]
        assert lcs_length(a, b) == reference(a, b), (a, b)


# --- bag of words, snippets, scores -------------------------------------------------------------


def test_bag_of_words_is_a_lowercased_multiset_intersection():
    # output {the:2, cat, dog}, gold {the:3, cat, bird}: min counts the 2 + cat 1 = 3
    counts = bag_of_words_counts("The cat the dog", "the the THE cat bird")
    assert counts == Counts(matched=3, output=4, gold=5)
    assert scores(counts).precision == pytest.approx(0.75)
    assert scores(counts).recall == pytest.approx(0.6)


def test_snippets_found_missing_and_unwanted():
    output = "Hello   world.\nFoo\tbar and more"
    counts = snippet_counts(output, ["Hello world", "missing"], ["Foo bar", "absent"])
    # TP: "Hello world" (whitespace collapsed); FN: "missing"; FP: "Foo bar"
    assert counts == Counts(matched=1, output=2, gold=2)
    assert (scores(counts).precision, scores(counts).recall) == (0.5, 0.5)


def test_undefined_precision_is_nan_and_f_is_zero():
    measured = scores(Counts(matched=0, output=0, gold=5))
    assert math.isnan(measured.precision)
    assert measured.recall == 0.0
    assert measured.f1 == measured.f05 == 0.0
    assert f_beta(1.0, 1.0, 0.5) == pytest.approx(1.0)


def test_counts_add_up_for_micro_averaging():
    # micro: (1+9)/(2+10), not the mean of 1/2 and 9/10
    total = Counts(1, 2, 4) + Counts(9, 10, 10)
    assert scores(total).precision == pytest.approx(10 / 12)


# --- fragmentation (Table 2.11) -------------------------------------------------------------------


def test_fragments_are_maximal_runs_of_kept_blocks():
    assert fragment_lengths([3, 4, 5, 6, 7], [True, True, False, True, False]) == [7, 6]
    assert fragment_lengths([3, 4], [False, False]) == []
    summary = fragmentation([[7, 6], [], [10]])
    assert (summary.documents, summary.fragments) == (3, 3)
    assert summary.mean_length == pytest.approx(23 / 3)
    assert summary.median_length == 7
    assert summary.fragments_per_document == 1.0


# --- BTE (§2.6.1) ---------------------------------------------------------------------------------


def test_max_scoring_span():
    assert max_scoring_span([-1, 3, -1, -1, 5, -4, 2]) == (1, 4)
    assert max_scoring_span([-1, -1]) is None
    assert max_scoring_span([]) is None
    assert max_scoring_span([2, -2, 2]) == (0, 0)  # ties: earliest, then shortest


PAGE = """<html><head><title>Site title words here</title></head><body>
<div><a href="/">Home</a> <a href="/n">News</a> <a href="/a">About</a> \
<a href="/c">Contact</a></div>
<div class="article">
<p>This is the long main article text with many words in it.</p>
<script>var a = "lots of words inside a script that must never count";</script>
<p>Second paragraph of the <b>article</b> continues here.</p>
</div>
<ul><li><a href="/1">One</a></li><li><a href="/2">Two</a></li><li><a href="/3">Three</a></li></ul>
</body></html>"""


def test_bte_extracts_the_tag_sparse_article():
    extract = bte_extract(parse_html(PAGE))
    assert (
        extract.split()
        == (
            "This is the long main article text with many words in it. "
            "Second paragraph of the article continues here."
        ).split()
    )
    assert "\n" in extract  # the paragraphs stay apart


def test_bte_of_a_page_without_words_is_empty():
    assert bte_extract(parse_html("<html><body><div><br><img src=x></div></body></html>")) == ""
    assert bte_extract(None) == ""


# --- DefaultExtractor (Algorithm 2.1) -------------------------------------------------------------


@pytest.mark.parametrize(
    "words, density, expected",
    [
        # long block; short one after a >4-word block; linky block; long one after a linky block
        ([20, 3, 2, 50], [0, 0, 1.0, 0], [True, True, False, True]),
        # two short blocks between empty edges: both boilerplate
        ([3, 3], [0, 0], [False, False]),
        # after a linky block (>0.555556), a 10-word block needs more than 17 words next
        ([5, 10, 18], [0.9, 0, 0], [False, True, True]),
        ([5, 10, 17], [0.9, 0, 0], [False, False, True]),
        # link density exactly at the threshold is still content-eligible
        ([30], [0.333333], [True]),
        ([30], [0.34], [False]),
    ],
)
def test_default_extractor_decision_tree(words, density, expected):
    assert classify_default_extractor(words, density) == expected


def test_main_content_overview_pivots_bag_of_words_and_snippet_f1():
    from corpusbuilder.report.sections import main_content_overview

    rows = pd.DataFrame(
        [
            {
                "extractor": "a",
                "dataset": "x",
                "pages": 10,
                "seconds": 1.0,
                "bow_f1": 0.9,
                "snippet_f1": None,
            },
            {
                "extractor": "a",
                "dataset": "s",
                "pages": 10,
                "seconds": 4.0,
                "bow_f1": None,
                "snippet_f1": 0.7,
            },
            {
                "extractor": "b",
                "dataset": "x",
                "pages": 10,
                "seconds": 2.0,
                "bow_f1": 0.95,
                "snippet_f1": None,
            },
            {
                "extractor": "b",
                "dataset": "s",
                "pages": 10,
                "seconds": 2.0,
                "bow_f1": None,
                "snippet_f1": 0.85,
            },
            {
                "extractor": "b",
                "dataset": "all",
                "pages": 20,
                "seconds": 4.0,
                "bow_f1": 0.5,
                "snippet_f1": None,
            },
        ]
    )
    overview = main_content_overview(rows)
    assert list(overview["extractor"]) == ["b", "a"]  # best mean first
    assert overview.set_index("extractor").loc["a", "s"] == 0.7
    assert overview.set_index("extractor").loc["b", "mean"] == pytest.approx(0.9)
    assert overview.set_index("extractor").loc["a", "pages/s"] == pytest.approx(20 / 5.0)


def test_a_peer_scored_alone_reads_the_page():
    # Without one of our block extractors the page is not segmented, but the peer still gets it
    # (it was once handed an empty page and scored 0 on every set).
    from corpusbuilder.evaluation.extractors import Extraction, Extractor
    from corpusbuilder.evaluation.gold import GoldPage
    from corpusbuilder.evaluation.scores import evaluate_pages

    def whole_text(page):
        root = parse_html(page.html)
        return Extraction(" ".join(root.itertext()) if root is not None else "")

    html = b"<html><body><p>The river rose overnight and the town woke to water.</p></body></html>"
    page = GoldPage(
        "hand", "1", html, gold_text="The river rose overnight and the town woke to water."
    )
    alone = evaluate_pages([page], [Extractor("peer", whole_text, reading=None, module="peer")])[
        "peer"
    ]
    assert alone.failures == 0
    assert scores(alone.words).f1 == 1.0


def test_each_extractor_reads_the_blocks_of_its_own_reading():
    # jusText's presets get the package's blocks, `best` the blocks cut at HTML5's elements too
    from corpusbuilder.evaluation.extractors import (
        JUSTEXT_BLOCKS,
        LEARNED_BLOCKS,
        Extraction,
        Extractor,
        prepare_page,
    )
    from corpusbuilder.evaluation.gold import GoldPage
    from corpusbuilder.evaluation.scores import evaluate_pages

    seen = {}

    def recording(name):
        def run(page):
            seen[name] = [block.text for block in page.blocks]
            return Extraction("\n".join(seen[name]))

        return run

    html = (
        b"<html><body><div>The river rose overnight. <figure><figcaption>Photo: Agency</figcaption>"
        b"</figure>The town woke to water.</div></body></html>"
    )
    page = GoldPage(
        "hand", "1", html, gold_text="The river rose overnight. The town woke to water."
    )
    evaluate_pages(
        [page],
        [
            Extractor("jt", recording("jt"), JUSTEXT_BLOCKS),
            Extractor("learned", recording("learned"), LEARNED_BLOCKS),
        ],
    )
    assert seen["jt"] == ["The river rose overnight. Photo: AgencyThe town woke to water."]
    assert seen["learned"] == [
        "The river rose overnight.",
        "Photo: Agency",
        "The town woke to water.",
    ]
    with pytest.raises(ValueError, match="unknown reading 'hints'"):
        prepare_page("<p>x</p>", reading="hints")


GERMAN_PAGE = (
    "<html><head><title>Hochwasser</title></head><body>"
    "<ul><li><a href='/'>Startseite</a></li><li><a href='/k'>Kontakt</a></li></ul>"
    "<p>Der Fluss ist in der Nacht über die Ufer getreten, und als die Leute am Morgen aus den "
    "Fenstern sahen, stand das Wasser schon bis zu den Türen der Häuser in der Altstadt, und "
    "es stieg noch immer weiter an, bis es am Mittag endlich zum Stehen kam.</p>"
    "<p>Die Feuerwehr war mit allen Wagen unterwegs, aber sie konnte nicht überall zugleich sein, "
    "und so haben viele Nachbarn sich gegenseitig geholfen, so gut es eben ging, mit Booten, mit "
    "Leitern und mit allem, was sie in den Kellern und auf den Dachböden noch fanden.</p>"
    "</body></html>"
)


def test_the_justext_package_gets_the_stop_list_of_the_pages_language():
    # Its users pick the list by the page's language; with the English list on every page it
    # once dropped all German prose, a loss that was the evaluation's, not the package's.
    import justext

    from corpusbuilder.evaluation.extractors import PreparedPage, run_justext_package

    english = justext.justext(GERMAN_PAGE, justext.get_stoplist("English"))
    assert all(p.is_boilerplate for p in english)
    kept = run_justext_package(PreparedPage(GERMAN_PAGE, None, [], None)).text
    assert kept.startswith("Der Fluss ist in der Nacht")
    assert "Nachbarn sich gegenseitig geholfen" in kept
    assert "Startseite" not in kept


def test_the_justext_package_list_follows_the_guess_made_with_the_evaluations_settings(
    monkeypatch,
):
    # Croatian and Bosnian share a list in the extract stage; the package has one of each, which
    # its users pick. The guess reads as many characters as the extract stage is set to.
    from corpusbuilder.evaluation import extractors
    from corpusbuilder.extraction.extract import ExtractParams

    samples, guessed = [], {}

    def guess(root, sample_chars):
        samples.append(sample_chars)
        return guessed["language"], 1.0

    monkeypatch.setattr(extractors, "guess_page_language", guess)
    params = ExtractParams(language_sample_chars=123)
    expected = {"hr": "Croatian", "bs": "Bosnian", "de": "German"}
    # no list in the package, or no guess: its English list
    expected |= {"ja": "English", "xx": "English", "": "English"}
    for language, name in expected.items():
        guessed["language"] = language
        assert extractors.package_stoplist_name(GERMAN_PAGE, params) == name, language
    assert samples == [123] * len(expected)
