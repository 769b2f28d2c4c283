"""Gold-set readers: hand-made miniatures of each format, then the real sets in ../shared."""

from itertools import islice
from pathlib import Path

import pytest
from conftest import BOILERPLATE, require_shared

from corpusbuilder.evaluation.extractors import decode_page, prepare_page
from corpusbuilder.evaluation.gold import (
    READERS,
    cleaneval_gold_text,
    gold_source,
    iter_cleaneval,
    iter_dataset,
    iter_l3s_gn1,
    iter_snippet_set,
    unwrap_cleaneval_input,
)
from corpusbuilder.evaluation.metrics import Counts, aligned_word_counts

FIXTURES = Path(__file__).parent / "fixtures" / "evaluate"


@pytest.fixture
def shared_gold() -> Path:
    return require_shared(BOILERPLATE)


# --- miniatures -----------------------------------------------------------------------------------


def test_cleaneval_reader_unwraps_skips_pages_without_gold_and_orders_numerically():
    pages = list(iter_cleaneval(FIXTURES / "cleaneval", "mini"))
    assert [p.page_id for p in pages] == ["1", "10"]  # 2 has no gold; 10 after 1 (and after 2)
    first = pages[0]
    assert first.http_charset == "iso-8859-1"
    assert first.html.lstrip().startswith(b"<html>") and b"</text>" not in first.html
    expected = "Café Our café serves coffee every day of the week. Open daily"
    assert first.gold_text.split() == expected.split()
    assert pages[1].http_charset is None  # encoding="unset"


def test_cleaneval_markers_and_url_line_are_stripped():
    gold = cleaneval_gold_text("URL: http://x\n<h>Title\n<p>Text <l>item")
    assert gold.split() == ["Title", "Text", "item"]
    assert unwrap_cleaneval_input(b"<html><body>no wrapper</body></html>") == (
        b"<html><body>no wrapper</body></html>",
        None,
    )


def test_cleaneval_gold_is_read_as_text_past_blank_lines_marks_and_references(tmp_path):
    # CleanPortalEval's files: a blank line before the URL line, the pages' character references
    gold = cleaneval_gold_text(
        "\nURL: http://x\n<p>the BBC&#039;s Kate &#8211; it&rsquo;s &amp; &copy2016 AT&T;"
    )
    assert gold.split() == [
        "the",
        "BBC's",
        "Kate",
        "\u2013",
        "it\u2019s",
        "&",
        "&copy2016",
        "AT&T;",
    ]
    (tmp_path / "input").mkdir()
    (tmp_path / "GoldStandard").mkdir()
    (tmp_path / "input" / "1.html").write_bytes(b"<html><body><p>Text</p></body></html>")
    (tmp_path / "GoldStandard" / "1.txt").write_bytes(
        "\ufeffURL: http://example.org/a\n<p>Text".encode()
    )
    [page] = iter_cleaneval(tmp_path, "mini")  # a byte-order mark does not hide the URL line
    assert (page.gold_text.split(), page.url) == (["Text"], "http://example.org/a")


def test_l3s_reader_takes_outermost_annotations_without_scripts():
    [page] = iter_l3s_gn1(FIXTURES / "l3s", "mini")
    # sel1 nested in sel2 is read once; sel0 (not content), the script and the footer are not
    assert page.gold_text.split() == ["Big", "news", "Body", "text", "here.", "Related", "story"]
    assert "Big news\n" in page.gold_text  # the <h1> ends a line, so "news" and "Body" stay apart
    assert page.html.startswith(b"<html>")


def test_snippet_reader_skips_missing_files():
    [page] = iter_snippet_set(FIXTURES / "snippets", "mini")
    assert page.page_id == "http://example.org/a"
    assert page.with_snippets == ("Es war gesagt,",)
    assert page.without_snippets == ("3:59 PM", "Aufrufe:")
    assert page.gold_text is None


def test_unknown_dataset_is_refused():
    with pytest.raises(ValueError, match="unknown dataset"):
        iter_dataset("no-such-set", FIXTURES)


def test_a_missing_gold_set_names_the_config_key(tmp_path):
    with pytest.raises(FileNotFoundError, match="evaluate.gold_dir"):
        iter_dataset("cleaneval-dev", tmp_path)


def test_a_gold_set_without_pages_is_no_score(tmp_path):
    """A score over 0 pages would be written as a result (and kept by Snakemake as up to date)."""
    (tmp_path / "cleaneval-dev" / "input").mkdir(parents=True)
    (tmp_path / "cleaneval-dev" / "GoldStandard").mkdir()
    with pytest.raises(ValueError, match="no pages"):
        list(iter_dataset("cleaneval-dev", tmp_path))


# --- the real sets --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, pages",
    [
        ("cleaneval-dev", 58),
        ("cleaneval-final", 681),
        ("cleanportaleval", 71),
        ("trafilatura-dev", 482),
        ("fundus", 181),
        ("msv-big9", 358),
        ("msv-chaos", 354),
    ],
)
def test_shared_sets_have_their_documented_page_counts(shared_gold, name, pages):
    read = list(iter_dataset(name, shared_gold))
    assert len(read) == pages
    assert len({page.page_id for page in read}) == pages


@pytest.mark.parametrize("name", ["fundus", "msv-big9", "msv-chaos"])
def test_shared_paragraph_per_line_sets_give_url_plain_gold_and_decodable_pages(shared_gold, name):
    for page in iter_dataset(name, shared_gold, max_pages=15):
        assert page.url.startswith("http") and not page.gold_text.startswith("URL:")
        assert len(page.gold_text.split()) > 20
        # most declare their charset late: decoded as the extract stage does, the gold's opening
        # words are in the page
        text = " ".join(decode_page(page.html, None).split())
        assert " ".join(page.gold_text.split()[:3]) in text or page.gold_text.split()[0] in text


def test_gold_sources_group_the_sets_annotated_together():
    assert {gold_source(name) for name in READERS} == {
        "cleaneval",
        "cleanportaleval",
        "l3s-gn1",
        "trafilatura-dev",
        "fundus",
        "msv",
    }


def test_shared_cleaneval_gold_is_plain_text(shared_gold):
    for page in iter_dataset("cleaneval-final", shared_gold, max_pages=20):
        assert not page.gold_text.startswith("URL:")
        assert "<p>" not in page.gold_text and "<l>" not in page.gold_text
        assert not page.html.lstrip().lower().startswith(b"<text")
        assert len(page.gold_text.split()) > 0


def test_shared_l3s_gold_is_page_text(shared_gold):
    pages = list(iter_dataset("l3s-gn1", shared_gold, max_pages=15))
    assert len(pages) == 15
    counts = Counts()
    for page in pages:
        assert page.gold_text.split(), page.page_id
        blocks = prepare_page(decode_page(page.html, None)).blocks
        counts += aligned_word_counts("\n".join(b.text for b in blocks), page.gold_text)
    # annotations only wrap page text: keeping every block recovers nearly all gold words, in order
    assert counts.matched > 0.95 * counts.gold


def test_shared_l3s_has_every_annotated_page(shared_gold):
    originals = sorted((shared_gold / "l3s-gn1" / "original").glob("*.html"))
    assert len(originals) == 621
    first = next(iter_dataset("l3s-gn1", shared_gold, max_pages=1))
    assert first.page_id == originals[0].stem


def test_shared_snippet_set_has_snippets_on_both_sides(shared_gold):
    pages = list(islice(iter_dataset("trafilatura-dev", shared_gold), 50))
    assert all(page.with_snippets for page in pages)
    assert sum(len(page.without_snippets) for page in pages) > 0


def test_shared_cleanportaleval_gold_has_no_url_line_or_references(shared_gold):
    for page in iter_dataset("cleanportaleval", shared_gold):
        assert not page.gold_text.lstrip().startswith("URL:"), page.page_id
        assert "&#" not in page.gold_text and "&mdash;" not in page.gold_text, page.page_id


@pytest.mark.slow
def test_shared_l3s_pages_with_a_runaway_title_get_their_blocks(shared_gold):
    """Eight L3S-GN1 pages lost their </title>: read as lxml reads them, they have no blocks."""
    empty = []
    for page in iter_dataset("l3s-gn1", shared_gold):
        if (
            len(page.gold_text.split()) >= 100
            and not prepare_page(decode_page(page.html, None)).blocks
        ):
            empty.append(page.page_id)
    # left: one page whose <html> tag swallowed the page, one that opens its body inside <head>
    assert len(empty) <= 2, empty
