"""The Python API (corpusbuilder.api): a page and a WARC cleaned as the extract stage does."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys

import pandas as pd
import pytest
from conftest import CRAWL, REPO, require_shared, write_warc
from test_cli import GERMAN
from test_extract import ARTICLE

import corpusbuilder
from corpusbuilder import ConfigError, clean_html, clean_html_paragraphs, iter_documents
from corpusbuilder.extraction.extract import ExtractParams, extract_shard

SAMPLE_WARC = REPO / "resources" / "sample" / "sample-00.warc.gz"
DOCS_EXAMPLES = [REPO / "README.md", REPO / "docs" / "python-api.md"]


def test_clean_html_keeps_the_article_blocks_a_blank_line_apart():
    text = clean_html(ARTICLE, preset="default")
    paragraphs = text.split("\n\n")
    assert paragraphs[0].startswith("A walk along the river") or paragraphs[0].startswith("When")
    assert any(p.startswith("It was the kind of day") for p in paragraphs)
    assert "All rights reserved" not in text and "\n\n\n" not in text
    assert all("\n" not in p and "  " not in p for p in paragraphs)


def test_bytes_in_a_declared_charset_give_the_text_of_the_string():
    page = ARTICLE.replace("<html>", "<html><head><meta charset='windows-1250'></head>")
    page = page.replace("forget", "zapomněli")
    assert clean_html(page.encode("windows-1250"), preset="default") == clean_html(
        page, preset="default"
    )
    assert "zapomněli" in clean_html(page, preset="default")


def test_paragraphs_carry_every_block_with_its_features_and_verdicts():
    paragraphs = clean_html_paragraphs(ARTICLE, preset="default")
    page = corpusbuilder.clean_html_page(ARTICLE, preset="default")
    assert tuple(paragraphs) == page.paragraphs and page.language == "en"
    assert "\n\n".join(p.text for p in paragraphs if p.kept) == clean_html(
        ARTICLE, preset="default"
    )
    assert {p.final_class for p in paragraphs} == {"good", "bad"}
    assert all(p.kept == (p.final_class == "good") for p in paragraphs)
    footer = next(p for p in paragraphs if "All rights reserved" in p.text)
    assert not footer.kept and footer.cf_class == "bad"
    body = max(paragraphs, key=lambda p: p.n_words)
    assert body.kept and body.cf_class == "good" and body.xpath.startswith("/html[1]/body[1]")
    assert body.stopword_density == pytest.approx(body.n_stopwords / body.n_words)
    assert body.dom_path.split(".")[-1] == body.xpath.rsplit("/", 1)[-1].split("[")[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        body.kept = False  # type: ignore[misc]


def test_the_learned_preset_is_the_default_and_the_presets_differ():
    assert clean_html(ARTICLE) == clean_html(ARTICLE, preset="best")
    # on this five-block page the learned classifier keeps the copyright line, jusText does not
    assert clean_html(ARTICLE) != clean_html(ARTICLE, preset="default")
    links = "<p>" + " | ".join(f"<a href='/{i}'>Section {i}</a>" for i in range(12)) + "</p>"
    nav = clean_html_paragraphs(ARTICLE.replace("<body>", "<body>" + links), preset="C")
    assert nav[0].link_density == pytest.approx(110 / 143) and not nav[0].kept


def test_language_forces_the_stop_list_by_code_or_name():
    assert clean_html(GERMAN, language="en", preset="C") == ""
    german = clean_html(GERMAN, language="de", preset="C")
    assert german.startswith("Als wir am Morgen")
    assert clean_html(GERMAN, language="German", preset="C") == german
    assert clean_html(GERMAN, preset="C") == german  # auto: guessed as extract guesses it
    page = corpusbuilder.clean_html_page(GERMAN, language="de", preset="C")
    assert page.stoplist == "German" and page.language == ""


@pytest.mark.parametrize(
    "kwargs, named",
    [
        ({"preset": "E"}, "preset 'E'"),
        ({"language": "Klingon"}, "language 'Klingon'"),
        ({"config": {"extract": {"max_blocks": 0}}}, "extract.max_blocks"),
        ({"config": {"extract": {"max_block": 10}}}, "max_block"),
        ({"config": {"extract": {"model": "/nowhere/model.npz"}}}, "extract.model"),
    ],
)
def test_a_bad_argument_is_a_config_error_naming_it(kwargs, named):
    with pytest.raises(ConfigError, match=re.escape(named)):
        clean_html(ARTICLE, **kwargs)


def test_the_config_applies_under_the_chosen_preset(tmp_path):
    strict = {"extract": {"justext": {"length_high": 1000, "length_low": 900}}}
    assert clean_html(ARTICLE, preset="default", config=strict) == ""
    path = tmp_path / "config.yaml"
    path.write_text("extract:\n  max_blocks: 2\n")
    with pytest.raises(ValueError, match="too-many-blocks"):
        clean_html(ARTICLE, config=path)
    path.write_text("extract:\n  max_blocks: 5000\n")  # read again, once edited
    assert clean_html(ARTICLE, config=str(path)) == clean_html(ARTICLE)
    with pytest.raises(ValueError, match="binary"):
        clean_html(b"\x00\x01\x02\x03" * 100)
    assert clean_html("<html><body>  </body></html>") == ""


def test_text_with_a_lone_surrogate_is_cleaned_and_other_types_are_refused():
    page = ARTICLE.replace("forget about the time", "forget \udcff the time")
    assert "forget ? the time" in clean_html(page, preset="default")
    with pytest.raises(TypeError, match="str or bytes"):
        clean_html(None)  # type: ignore[arg-type]


def test_a_page_given_as_text_says_so_where_its_charset_came_from():
    assert corpusbuilder.clean_html_page(ARTICLE).charset_source == "str"
    assert corpusbuilder.clean_html_page(ARTICLE.encode("utf-8")).charset_source == "utf8-valid"


def test_a_file_path_given_as_the_page_is_refused_not_cleaned_to_nothing(tmp_path):
    page = tmp_path / "page.html"
    page.write_text(ARTICLE)
    with pytest.raises(ValueError, match="file's path, not a page"):
        clean_html(str(page))
    assert clean_html(page.read_bytes()) and clean_html("plain words, no tag") == ""
    # issue 56: a missing file's name was cleaned to "", read as a page without text
    for name in ("missing.html", "pages/Missing.HTM", " walk.htm "):
        with pytest.raises(ValueError, match=f"html: '{name}' is a file's name \\(no such file"):
            clean_html(name)
    assert clean_html("see index.html for more") == ""  # a sentence that mentions one is text


# --------------------------------------------------------------------------- iter_documents

RECORDS = [
    {"uri": "http://a.example/walk", "body": ARTICLE.encode()},
    {"uri": "http://a.example/missing", "body": ARTICLE.encode(), "status": "404 Not Found"},
    {"uri": "http://a.example/logo.png", "body": b"\x89PNG" * 40, "content_type": "image/png"},
    {"uri": "http://a.example/empty", "body": b"<html><body> </body></html>" + b" " * 64},
    {"uri": "http://b.example/fluss", "body": GERMAN.encode()},
]


def table_documents(docs_path, blocks_path) -> list[tuple]:
    """(id, url, language, text, warc, record index, offset, record id, date, charset) of the
    documents of an extract stage's tables with at least one good block, in order."""
    docs, blocks = pd.read_parquet(docs_path), pd.read_parquet(blocks_path)
    good = blocks[blocks["final_class"] == "good"]
    texts = good.groupby("doc_id", sort=False)["text"].agg(
        lambda texts: "\n\n".join(" ".join(t.split()) for t in texts)
    )
    kept = docs[docs["doc_id"].isin(texts.index)]
    return [
        (r.doc_id, r.uri, r.page_language, texts[r.doc_id], r.warc, r.record_index, r.offset)
        + (r.warc_record_id, r.date, r.charset)
        for r in kept.itertuples()
    ]


def api_documents(warc, config=None) -> list[tuple]:
    return [
        (d.id, d.url, d.language, d.text)
        + dataclasses.astuple(d.provenance)[:-1]  # all but the preset
        for d in iter_documents(warc, config)
    ]


def test_iter_documents_yields_the_pages_with_kept_text_and_their_provenance(tmp_path):
    warc = write_warc(tmp_path / "crawl-7.warc.gz", RECORDS)
    docs = list(iter_documents(str(warc), {"extract": {"preset": "default"}}))
    assert [d.id for d in docs] == ["crawl-7:0", "crawl-7:4"]
    walk, fluss = docs
    assert walk.url == "http://a.example/walk" and walk.language == "en"
    assert walk.text == clean_html(ARTICLE, preset="default")
    assert fluss.language == "de" and fluss.text.startswith("Als wir am Morgen")
    provenance = fluss.provenance
    assert (provenance.warc, provenance.record_index, provenance.preset) == (
        "crawl-7",
        4,
        "default",
    )
    assert provenance.record_id.startswith("<urn:uuid:") and provenance.date[:2] == "20"
    assert provenance.charset == "utf-8" and provenance.offset > walk.provenance.offset


@pytest.mark.parametrize("preset", ["default", "best"])
def test_iter_documents_are_the_extract_stage_documents(tmp_path, preset):
    warc = write_warc(tmp_path / "crawl-7.warc.gz", RECORDS)
    paths = tmp_path / "docs.parquet", tmp_path / "blocks.parquet"
    extract_shard([("crawl-7", warc)], "crawl-7", *paths, ExtractParams().with_preset(preset))
    config = {"extract": {"preset": preset}}
    assert api_documents(warc, config) == table_documents(*paths)


def test_with_site_boilerplate_combined_the_documents_are_the_stage_documents(tmp_path):
    """Mode combine marks a host's repeated blocks across its pages: iter_documents reads the
    WARC whole first, and keeps what the stage's rewritten tables keep."""
    config = {"extract": {"preset": "default", "site_boilerplate": {"mode": "combine"}}}
    paths = tmp_path / "docs.parquet", tmp_path / "blocks.parquet"
    extract_shard(
        [("sample-00", SAMPLE_WARC)],
        "sample-00",
        *paths,
        ExtractParams.from_config(config["extract"]),
    )
    assert pd.read_parquet(paths[1])["site_boilerplate"].any()  # the pass changed something
    assert api_documents(SAMPLE_WARC, config) == table_documents(*paths)
    assert api_documents(SAMPLE_WARC, config) != api_documents(
        SAMPLE_WARC, {"extract": {"preset": "default"}}
    )


def test_iter_documents_rejects_what_is_no_warc_when_called(tmp_path):
    with pytest.raises(FileNotFoundError):
        iter_documents(tmp_path / "missing.warc.gz")
    with pytest.raises(IsADirectoryError, match="Is a directory"):
        iter_documents(tmp_path)
    (tmp_path / "page.html").write_text(ARTICLE)
    with pytest.raises(ConfigError, match="not a WARC file"):
        iter_documents(tmp_path / "page.html")
    with pytest.raises(ConfigError, match="extract.preset"):
        iter_documents(SAMPLE_WARC, {"extract": {"preset": "Z"}})


@pytest.mark.shared
@pytest.mark.slow
def test_iter_documents_on_a_dev_crawl_warc_equals_the_extract_command(tmp_path):
    """A real crawl WARC: what `corpusbuilder extract` writes (the default preset, best) is what
    iter_documents yields, document for document."""
    warc = require_shared(CRAWL / "crawl-01.warc.gz")
    prefix = tmp_path / "crawl-01"  # the WARC's name, as the workflow and iter_documents name it
    result = subprocess.run(
        [sys.executable, "-m", "corpusbuilder.cli.main", "extract", str(warc), str(prefix)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    expected = table_documents(f"{prefix}.docs.parquet", f"{prefix}.blocks.parquet")
    assert len(expected) > 100
    assert api_documents(warc) == expected


# --------------------------------------------------------------------------- documentation


def python_blocks(path) -> str:
    """The ```python blocks of a Markdown file, in order, as one program."""
    return "\n".join(re.findall(r"^```python\n(.*?)^```", path.read_text(), re.M | re.S))


def shown_output(path) -> str:
    """A regular expression of what the ```text blocks of a Markdown file show the examples
    print, in order; a line "..." stands for any lines."""
    lines = "".join(re.findall(r"^```text\n(.*?)^```", path.read_text(), re.M | re.S)).splitlines()
    return "\n".join(".*?" if line == "..." else re.escape(line.rstrip()) + " *" for line in lines)


@pytest.mark.parametrize("path", DOCS_EXAMPLES, ids=lambda p: p.name)
def test_the_python_examples_of_the_docs_run(path, monkeypatch, capsys):
    """Every ```python block of README.md and docs/python-api.md runs, from the checkout as the
    reader's working directory (a file's blocks in order, sharing their names); the API page
    shows what its examples print."""
    if not path.exists():
        pytest.fail(f"{path.relative_to(REPO)} is missing")
    program = python_blocks(path)
    monkeypatch.chdir(REPO)
    exec(compile(program, str(path), "exec"), {"__name__": "__docs__"})
    printed = capsys.readouterr().out
    if path.name == "python-api.md":
        assert "iter_documents" in program and "clean_html" in program
        assert re.fullmatch(shown_output(path), printed.rstrip("\n"), re.S), printed
