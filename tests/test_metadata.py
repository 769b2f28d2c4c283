"""Document metadata (issue 60): what a page says about itself, read off the extract stage's
tree and carried into the docs table, the corpus formats and the Python API."""

from __future__ import annotations

import dataclasses
import gzip
import xml.etree.ElementTree as ET

import pytest
from conftest import write_warc
from test_extract import ARTICLE, extract

import corpusbuilder
from corpusbuilder.contracts.corpus import kept_documents, read_corpus
from corpusbuilder.contracts.survivors import survivors
from corpusbuilder.contracts.tables import DOCS_SCHEMA, METADATA_COLUMNS
from corpusbuilder.export import write_corpus
from corpusbuilder.extraction.metadata import MAX_CHARS, Metadata, extract_metadata, iso_date
from corpusbuilder.extraction.segmentation import parse_html

BODY = ARTICLE[ARTICLE.index("<body>") :]

OPEN_GRAPH = f"""<html><head>
<title>A walk along the river | River Walkers</title>
<meta property="og:title" content="A walk along the river">
<meta property="og:site_name" content="River Walkers">
<meta property="og:url" content="https://walkers.example/og-url">
<meta property="article:published_time" content="2024-05-06T08:30:00+02:00">
<meta property="article:author" content="https://facebook.com/someone">
<meta name="author" content="By Jane Doe">
<link rel="canonical" href="/walks/river">
</head>{BODY}"""

JSON_LD = f"""<html><head><title>River walk - Walkers</title>
<base href="https://walkers.example/walks/">
<link rel="canonical" href="river?ref=1">
<script type="application/ld+json">
{{"@context": "https://schema.org", "@graph": [
  {{"@type": "WebSite", "name": "River Walkers"}},
  {{"@type": "NewsArticle", "headline": "A walk along the river &amp; back",
    "datePublished": "2024-05-06", "author": [{{"@type": "Person", "name": "Jane Doe"}},
    {{"@type": "Person", "name": "John Roe"}}], "publisher": {{"name": "Walkers Ltd"}}}}]}}
</script></head>{BODY}"""


def metadata_of(html: str, url: str | None = "https://walkers.example/x") -> Metadata:
    return extract_metadata(parse_html(html), url)


def test_open_graph_and_meta_tags():
    assert metadata_of(OPEN_GRAPH) == Metadata(
        title="A walk along the river",
        author="Jane Doe",  # "By " goes; article:author is a profile's URL, no name
        published="2024-05-06",
        sitename="River Walkers",
        canonical_url="https://walkers.example/walks/river",  # <link rel=canonical> over og:url
    )


def test_json_ld_with_a_graph_and_a_base_url():
    assert metadata_of(JSON_LD) == Metadata(
        title="A walk along the river & back",
        author="Jane Doe; John Roe",
        published="2024-05-06",
        sitename="Walkers Ltd",  # the article's publisher before the WebSite's name
        canonical_url="https://walkers.example/walks/river?ref=1",
    )


def test_a_page_that_says_nothing_about_itself():
    assert metadata_of("<html><body><p>Just a paragraph of text.</p></body></html>") == Metadata()
    assert extract_metadata(None) == Metadata()


@pytest.mark.parametrize(
    "head, body, title",
    [
        # no metadata: a page's only <h1> is its heading, <title> adds the site's name
        ("<title>Headline here | Site</title>", "<h1>The headline</h1>", "The headline"),
        # of several <h1>s, the one <title> repeats; else <title>, less the site's name it names
        (
            "<title>Site: The headline</title>",
            "<h1>Site</h1><h1>The headline</h1>",
            "The headline",
        ),
        (
            "<title>Headline | Site</title><meta property='og:site_name' content='Site'>",
            "<h1>Logo</h1><h1>Menu</h1>",
            "Headline",
        ),
        ("", "<h1>First</h1><h1>Second</h1>", "First"),
        # an only <h1> that is the site's name is its logo: cut off <title>, which is the title
        (
            "<title>Coastal path closed - any alternatives? - Walkers Forum</title>",
            "<h1>Walkers Forum</h1>",
            "Coastal path closed - any alternatives?",
        ),
        # the site's name first, the headline after it, and longer
        (
            "<title>Walkers - A walk by the river</title>",
            "<h1>A walk by the river</h1>",
            "A walk by the river",
        ),
        ("", "<h2>Only a second-level heading</h2><p>text</p>", "Only a second-level heading"),
        # the publisher's meta tags before anything the page shows
        ("<meta name='citation_title' content='Paper'><title>T</title>", "<h1>H</h1>", "Paper"),
    ],
)
def test_title_precedence(head, body, title):
    assert metadata_of(f"<html><head>{head}</head><body>{body}</body></html>").title == title


@pytest.mark.parametrize(
    "value, iso",
    [
        ("2015-03-04T23:30:00-05:00", "2015-03-04"),
        ("2015/3/4", "2015-03-04"),
        ("20150304", "2015-03-04"),
        ("4. 3. 2015", "2015-03-04"),
        ("March 4th, 2015", "2015-03-04"),
        ("4 March 2015", "2015-03-04"),
        ("Wed, 04 Mar 2015 10:00:00 GMT", "2015-03-04"),
        ("2015-02-30", None),  # no such day
        ("0000-00-00", None),
        ("2015", None),  # a year is no date
        ("yesterday", None),
    ],
)
def test_dates_are_iso(value, iso):
    assert iso_date(value) == iso


def test_several_citation_authors_and_a_time_element():
    html = (
        "<html><head><meta name='citation_author' content='Doe, Jane'>"
        "<meta name='citation_author' content='Roe, John'></head>"
        "<body><p>x</p><time datetime='2020-01-02'>2 Jan</time></body></html>"
    )
    found = metadata_of(html)
    assert (found.author, found.published) == ("Doe, Jane; Roe, John", "2020-01-02")


def test_hostile_metadata_is_skipped_or_bounded():
    broken = (
        "<html><head><title>Fallback title</title>"
        '<script type="application/ld+json">{"headline": "unclosed", </script>'
        '<script type="application/ld+json">' + "[" * 100_000 + "</script>"
        "<link rel=canonical href='javascript:alert(1)'>"
        "<meta property='article:published_time' content='not a date'></head>"
        "<body><p>text</p></body></html>"
    )
    assert metadata_of(broken) == Metadata(title="Fallback title")
    huge = metadata_of(f"<html><head><title>{'word ' * 100_000}</title></head></html>").title
    assert huge is not None and len(huge) <= MAX_CHARS + 1 and huge.endswith("…")
    controls = metadata_of("<html><head><title>A\x01 \"quoted\"\x1b\t'title'\x7f</title></head>")
    assert controls.title == "A \"quoted\" 'title'"


def test_the_docs_table_columns_are_the_metadata_fields():
    assert METADATA_COLUMNS == tuple(f.name for f in dataclasses.fields(Metadata))
    assert set(METADATA_COLUMNS) <= set(DOCS_SCHEMA.names)


def test_the_extract_stage_writes_them_and_export_carries_them(tmp_path):
    hostile = OPEN_GRAPH.replace(
        'content="A walk along the river"', 'content="A &quot;walk&quot; \x01&amp; it\'s &lt;b&gt;"'
    )
    records = [
        {"uri": "https://walkers.example/a", "body": hostile.encode()},
        {"uri": "https://walkers.example/b", "body": ARTICLE.encode()},
    ]
    docs, blocks = extract(tmp_path, records)
    # ARTICLE has no metadata: its only <h1> is its title
    assert docs["title"].tolist() == ['A "walk" & it\'s <b>', "A walk along the river"]
    assert docs["canonical_url"].iloc[0] == "https://walkers.example/walks/river"
    assert docs["canonical_url"].isna().iloc[1]
    jsonl, prevert, vert = (tmp_path / f"c.{ext}.gz" for ext in ("jsonl", "prevert", "vert"))
    write_corpus(kept_documents(survivors(docs, blocks)), jsonl, prevert, vert)
    first, second = read_corpus(jsonl)
    assert {k: first[k] for k in METADATA_COLUMNS} == {
        "title": 'A "walk" & it\'s <b>',
        "author": "Jane Doe",
        "published": "2024-05-06",
        "sitename": "River Walkers",
        "canonical_url": "https://walkers.example/walks/river",
    }
    assert first["date"] != first["published"]  # date stays the WARC-Date
    assert {k: second[k] for k in METADATA_COLUMNS} == {
        **dict.fromkeys(METADATA_COLUMNS),
        "title": "A walk along the river",
    }
    for path in (prevert, vert):
        corpus = ET.fromstring("<c>" + gzip.open(path, "rt", encoding="utf-8").read() + "</c>")
        assert corpus[0].get("title") == 'A "walk" & it\'s <b>'
        assert corpus[0].get("published") == "2024-05-06"
        assert corpus[1].get("title") == "A walk along the river"
        assert corpus[1].get("author") is None  # absent, not empty


def test_the_python_api_gives_them(tmp_path):
    found = corpusbuilder.clean_html(JSON_LD, with_metadata=True, preset="default")
    assert isinstance(found, corpusbuilder.CleanedText)
    assert found.text == corpusbuilder.clean_html(JSON_LD, preset="default")
    assert (found.title, found.published) == ("A walk along the river & back", "2024-05-06")
    page = corpusbuilder.clean_html_page(OPEN_GRAPH, url="https://walkers.example/a")
    assert page.metadata == metadata_of(OPEN_GRAPH, "https://walkers.example/a")
    # a relative canonical link, and no URL to resolve it against: og:url's is absolute
    unresolved = corpusbuilder.clean_html_page(OPEN_GRAPH).metadata
    assert unresolved.canonical_url == "https://walkers.example/og-url"
    warc = write_warc(
        tmp_path / "w.warc.gz", [{"uri": "https://walkers.example/a", "body": OPEN_GRAPH.encode()}]
    )
    (document,) = corpusbuilder.iter_documents(warc)
    assert document.metadata == page.metadata


@pytest.mark.workflow
def test_metadata_on_a_sample_build(sample_build):
    """The workflow's corpus carries what each page says about itself in the JSONL and on the
    <doc> of every .vert: every sample page has a <title>, the news site's its date published,
    site name and canonical link, the French and Spanish hiking site's no canonical link."""
    corpus_dir = sample_build / "results" / "corpus"
    documents = [d for p in sorted(corpus_dir.glob("*.jsonl.gz")) for d in read_corpus(p)]
    assert documents and all(d["title"] for d in documents)
    news = [d for d in documents if "harbourledger" in d["url"]]
    assert news and all(
        d["canonical_url"] == d["url"] and d["sitename"] == "The Harbour Ledger" for d in news
    )
    # the news site's URLs hold the year and month it published each article in
    assert all(d["published"].startswith("-".join(d["url"].split("/")[-3:-1])) for d in news)
    assert any(d["canonical_url"] is None for d in documents)
    by_id = {d["id"]: d for d in documents}
    for vert in sorted(corpus_dir.glob("*.vert.gz")):
        corpus = ET.fromstring("<c>" + gzip.open(vert, "rt", encoding="utf-8").read() + "</c>")
        for doc in corpus:
            for name in METADATA_COLUMNS:
                assert doc.get(name) == by_id[doc.get("id")][name], name
