"""Export: which documents and blocks reach the corpus, and the two formats' exact shape."""

from __future__ import annotations

import gzip

import pandas as pd

from corpusbuilder.export import kept_documents, read_corpus, write_corpus
from corpusbuilder.tables import survivors


def tables():
    docs = pd.DataFrame(
        {
            "doc_id": ["s:1", "s:3", "s:5", "s:7"],
            "record_index": [1, 3, 5, 7],
            "uri": ["http://a/1", "http://a/3", "http://a/5", "http://a/7"],
            "page_language": ["en", "de", "en", None],
            "outcome": ["ok", "ok", "ok", "skipped"],
        }
    )
    blocks = pd.DataFrame(
        {
            "doc_id": ["s:1", "s:1", "s:1", "s:3", "s:5"],
            "block_index": [0, 1, 2, 0, 0],
            "text": ["Title", "Body <with> & text", "Menu", "Nur Text", "menu only"],
            "heading": [True, False, False, False, False],
            "final_class": ["good", "good", "bad", "good", "bad"],
        }
    )
    return docs, blocks


def test_only_good_blocks_of_kept_documents_in_page_order():
    docs, blocks = tables()
    out = list(kept_documents(survivors(docs, blocks)))
    assert [d.id for d in out] == ["s:1", "s:3"]  # s:5 has no good block, s:7 was skipped
    assert out[0].paragraphs == ["Title", "Body <with> & text"]
    assert out[0].headings == [True, False]


def test_later_stages_verdicts_apply():
    docs, blocks = tables()
    language = pd.DataFrame({"doc_id": ["s:1", "s:3"], "language": ["en", "de"], "kept": [True, False]})
    exact = pd.DataFrame({"doc_id": ["s:1"], "kept": [True]})
    dedup = pd.DataFrame({"doc_id": ["s:1"] * 3, "block_index": [0, 1, 2], "final_class": ["good", "duplicate", "bad"]})
    out = list(kept_documents(survivors(docs, blocks, language, exact, dedup)))
    assert [(d.id, d.paragraphs) for d in out] == [("s:1", ["Title"])]


def test_jsonl_and_prevertical_formats(tmp_path):
    docs, blocks = tables()
    jsonl, prevert = tmp_path / "c.jsonl.gz", tmp_path / "c.prevert.gz"
    assert write_corpus(kept_documents(survivors(docs, blocks)), jsonl, prevert) == 2
    assert list(read_corpus(jsonl))[0] == {
        "id": "s:1", "url": "http://a/1", "language": "en", "paragraphs": ["Title", "Body <with> & text"],
    }
    assert gzip.open(prevert, "rt").read().splitlines()[:7] == [
        '<doc id="s:1" url="http://a/1" language="en">',
        '<p heading="1">', "Title", "</p>",
        "<p>", "Body &lt;with&gt; &amp; text", "</p>",
    ]
    first = jsonl.read_bytes()
    write_corpus(kept_documents(survivors(docs, blocks)), jsonl, prevert)
    assert jsonl.read_bytes() == first, "the same corpus must have the same bytes"
