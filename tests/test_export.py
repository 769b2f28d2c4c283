"""Export: which documents and blocks reach the corpus, and the three formats' exact shape."""

from __future__ import annotations

import gzip

import pandas as pd

from corpusbuilder.contracts.corpus import kept_documents, read_corpus
from corpusbuilder.contracts.survivors import survivors
from corpusbuilder.export import write_corpus


def tables():
    docs = pd.DataFrame(
        {
            "doc_id": ["s:1", "s:3", "s:5", "s:7"],
            "record_index": [1, 3, 5, 7],
            "uri": ["http://a/1", "http://a/3", "http://a/5", "http://a/7"],
            "page_language": ["en", "de", "en", None],
            "page_language_probability": [0.98, 0.9, 0.97, None],
            "outcome": ["ok", "ok", "ok", "skipped"],
            "shard": "s",
            "offset": [120, 900, 2000, 3000],
            "warc_record_id": ["<urn:uuid:1>", "<urn:uuid:3>", "<urn:uuid:5>", "<urn:uuid:7>"],
            "date": "2025-03-15T10:00:00Z",
        }
    )
    blocks = pd.DataFrame(
        {
            "doc_id": ["s:1", "s:1", "s:1", "s:3", "s:5"],
            "block_index": [0, 1, 2, 0, 0],
            "text": ["Title", "Body <with> &\n  text", "Menu", "Nur Text", "menu only"],
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
    language = pd.DataFrame(
        {"doc_id": ["s:1", "s:3"], "language": ["en", "de"], "kept": [True, False]}
    )
    exact = pd.DataFrame({"doc_id": ["s:1"], "kept": [True]})
    dedup = pd.DataFrame(
        {
            "doc_id": ["s:1"] * 3,
            "block_index": [0, 1, 2],
            "final_class": ["good", "duplicate", "bad"],
        }
    )
    out = list(kept_documents(survivors(docs, blocks, language, exact, dedup)))
    assert [(d.id, d.paragraphs) for d in out] == [("s:1", ["Title"])]


def test_jsonl_and_prevertical_formats(tmp_path):
    docs, blocks = tables()
    jsonl, prevert = tmp_path / "c.jsonl.gz", tmp_path / "c.prevert.gz"
    assert write_corpus(kept_documents(survivors(docs, blocks)), jsonl, prevert) == 2
    assert list(read_corpus(jsonl))[0] == {
        "id": "s:1",
        "text": "Title\n\nBody <with> & text",
        "url": "http://a/1",
        "language": "en",
        "language_score": 0.98,
        "warc_record_id": "<urn:uuid:1>",
        "date": "2025-03-15T10:00:00Z",
        "source": "s",
        "offset": 120,
        # what the page says about itself: null where it says nothing (these docs carry none)
        "title": None,
        "author": None,
        "published": None,
        "sitename": None,
        "canonical_url": None,
        "paragraphs": ["Title", "Body <with> & text"],  # one block, one line
    }
    assert gzip.open(prevert, "rt").read().splitlines()[:7] == [
        '<doc id="s:1" url="http://a/1" language="en">',
        '<p heading="1">',
        "Title",
        "</p>",
        "<p>",
        "Body &lt;with&gt; &amp; text",
        "</p>",
    ]
    first = jsonl.read_bytes()
    write_corpus(kept_documents(survivors(docs, blocks)), jsonl, prevert)
    assert jsonl.read_bytes() == first, "the same corpus must have the same bytes"


def test_the_jsonl_loads_in_the_readers_llm_data_tools_use(tmp_path):
    """pyarrow's JSON reader (what `datasets.load_dataset("json")` uses) reads the corpus as is,
    with `text`, `id` and the provenance fields typed."""
    import pyarrow.json as pj

    docs, blocks = tables()
    jsonl = tmp_path / "c.jsonl"
    write_corpus(
        kept_documents(survivors(docs, blocks)), tmp_path / "c.jsonl.gz", tmp_path / "c.prevert.gz"
    )
    jsonl.write_bytes(gzip.decompress((tmp_path / "c.jsonl.gz").read_bytes()))
    table = pj.read_json(jsonl)
    assert table.column("text").to_pylist() == ["Title\n\nBody <with> & text", "Nur Text"]
    assert table.column("offset").to_pylist() == [120, 900]
    assert str(table.schema.field("language_score").type) == "double"


def test_the_jsonl_loads_in_datatrove(tmp_path):
    """datatrove's JsonlReader takes the corpus folder as it is: `text` and `id` are the
    document's, every other field its metadata."""
    from conftest import unavailable

    try:
        from datatrove.pipeline.readers import JsonlReader
    except ImportError:
        unavailable("datatrove is not installed (the dev extra has it)")
    docs, blocks = tables()
    write_corpus(
        kept_documents(survivors(docs, blocks)), tmp_path / "c.jsonl.gz", tmp_path / "c.prevert.gz"
    )
    (tmp_path / "c.prevert.gz").unlink()
    read = list(JsonlReader(str(tmp_path)).run(rank=0, world_size=1))
    assert [(d.id, d.text) for d in read] == [
        ("s:1", "Title\n\nBody <with> & text"),
        ("s:3", "Nur Text"),
    ]
    assert (
        read[0].metadata["warc_record_id"] == "<urn:uuid:1>" and read[0].metadata["offset"] == 120
    )


def test_vertical_is_one_token_a_line_in_balanced_structures(tmp_path):
    """The vertical format's rules, as cwb-encode reads it: every line a structure tag or one
    token without white space; <doc> and <p> opened and closed in order; text XML-escaped."""
    import re

    docs, blocks = tables()
    vert = tmp_path / "c.vert.gz"
    write_corpus(
        kept_documents(survivors(docs, blocks)),
        tmp_path / "c.jsonl.gz",
        tmp_path / "c.prevert.gz",
        vert,
    )
    lines = gzip.open(vert, "rt", encoding="utf-8").read().splitlines()
    assert lines[:8] == [
        '<doc id="s:1" url="http://a/1" language="en">',
        '<p heading="1">',
        "Title",
        "</p>",
        '<p heading="0">',
        "Body",
        "&lt;",
        "with",
    ]
    open_tags = []
    for line in lines:
        if match := re.fullmatch(r'<(doc|p)( [a-z]+="[^"<>]*")*>', line):
            open_tags.append(match.group(1))
        elif match := re.fullmatch(r"</(doc|p)>", line):
            assert open_tags.pop() == match.group(1)
        else:
            assert (
                line
                and not any(ch.isspace() for ch in line)
                and "<" not in line
                and ">" not in line
            ), line
            assert open_tags == ["doc", "p"]
    assert open_tags == []


def test_control_characters_do_not_break_the_xml_formats(tmp_path):
    """Issue 17: a NUL or an ESC in a URL or a page's text made the prevertical ill-formed XML."""
    import xml.etree.ElementTree as ET

    docs, blocks = tables()
    docs.loc[0, "uri"] = "http://a/1?q=\x00\x1b[31m"
    blocks.loc[1, "text"] = "Body\x00 with\x1b an escape"
    prevert, vert = tmp_path / "c.prevert.gz", tmp_path / "c.vert.gz"
    write_corpus(kept_documents(survivors(docs, blocks)), tmp_path / "c.jsonl.gz", prevert, vert)
    for path in (prevert, vert):
        root = ET.fromstring(
            "<corpus>" + gzip.open(path, "rt", encoding="utf-8").read() + "</corpus>"
        )
        assert root[0].get("url") == "http://a/1?q=[31m"
    assert "Body with an escape" in gzip.open(prevert, "rt").read()


def test_the_vertical_tokens_from_the_token_file_are_the_tokenisers_on_real_pages(tmp_path):
    """The vertical file takes its tokens from the tokenise stage's token file
    (`vertical_paragraphs`): they must be what the tokeniser makes of each exported paragraph
    (`token_lines`), on the sample crawl's pages, on text made to be hard (control characters,
    soft hyphens and zero-width spaces alone between spaces, scripts without spaces), and on
    blocks partly kept by de-duplication, cut where its `removed_chunks` cuts them."""
    import numpy as np
    from conftest import SAMPLE_WARCS

    from corpusbuilder.contracts.tables import REMOVED_PARTS, read_table
    from corpusbuilder.contracts.tokenfile import read_tokens, write_token_stream
    from corpusbuilder.dedup.sentences import removed_chunks
    from corpusbuilder.export import TOKEN_FIELDS, token_lines, vertical_paragraphs
    from corpusbuilder.extraction.extract import ExtractParams, extract_shard
    from corpusbuilder.tokenise import TokeniseParams, tokenise_shard

    warcs = [(warc.name, warc) for warc in SAMPLE_WARCS]
    params = ExtractParams.from_config({})
    extract_shard(warcs, "s", tmp_path / "d.parquet", tmp_path / "b.parquet", params)
    docs, blocks = read_table(tmp_path / "d.parquet"), read_table(tmp_path / "b.parquet")
    first_good = blocks.index[blocks["final_class"] == "good"][:3]
    hard = [
        "a\x00b \x1b c \u00ad d\u200be \ufeff \u00ad",
        "東京タワーは 1958年 に完成した。ภาษาไทย ງ ကမ္ဘာ",
        "see https://x.org/a). mail john.doe+tag@mail.example.org, 1,000.50 don't re-use हिन्दी",
    ]
    blocks.loc[first_good, "text"] = hard
    assert len(docs) > 20 and (blocks["final_class"] == "good").sum() > 200

    kept = survivors(docs, blocks)
    path = tmp_path / "tokens.npz"
    write_token_stream(tokenise_shard(kept, TokeniseParams()), path)
    tokens = read_tokens(path, TOKEN_FIELDS)

    # de-duplication removes token ranges of a few blocks; the chunks they are in go
    rng = np.random.default_rng(5)
    offsets = np.asarray(tokens.block_offsets)
    long = np.flatnonzero(np.diff(offsets) > 6)[::3]
    first = offsets[long] + rng.integers(0, 3, len(long))
    end = np.minimum(first + rng.integers(1, 6, len(long)), offsets[long + 1])
    chunk_first, chunk_last = removed_chunks(first, end, offsets[long + 1], tokens)
    dedup = kept.blocks.select(["doc_id", "block_index"]).to_pandas().assign(final_class="good")
    cuts = chunk_first < chunk_last  # a range inside one chunk cuts none
    cut = [[[int(x)] if c else None for x, c in zip(at, cuts)] for at in (chunk_first, chunk_last)]
    partly = dedup.iloc[long].assign(**dict(zip(REMOVED_PARTS, cut)))
    dedup = pd.concat([dedup.drop(dedup.index[long]), partly])
    assert partly[REMOVED_PARTS[0]].notna().sum() > 10
    final = survivors(docs, blocks, dedup=dedup)

    vertical = vertical_paragraphs(final, tokens)
    documents = list(kept_documents(final))
    assert sum(len(doc.paragraphs) for doc in documents) == len(final.blocks)
    for doc in documents:
        assert vertical[doc.id] == [token_lines(text) for text in doc.paragraphs], doc.id


def test_a_token_file_without_the_tokens_texts_asks_for_tokenise_again(tmp_path):
    """A token file written before the texts were stored cannot give the vertical file its
    tokens: one line that says what to run, not a wrong corpus."""
    import numpy as np
    import pytest

    from corpusbuilder.contracts.tokenfile import TokenStream, read_tokens, write_token_stream
    from corpusbuilder.export import TOKEN_FIELDS, vertical_paragraphs

    docs, blocks = tables()
    kept = survivors(docs, blocks)
    path = tmp_path / "old.npz"
    doc_ids = kept.documents["doc_id"].to_pylist()
    count = len(kept.blocks)
    stream = TokenStream.of_blocks(list(range(1, 1 + 2 * count)), list(range(0, 2 * count + 1, 2)))
    stream.doc_ids = np.array(doc_ids)
    stream.block_doc = np.array(
        [doc_ids.index(d) for d in kept.blocks["doc_id"].to_pylist()], np.int32
    )
    stream.block_index = np.asarray(kept.blocks["block_index"], np.int32)
    write_token_stream(stream, path)
    with pytest.raises(ValueError, match="holds no token texts.*re-run tokenise"):
        vertical_paragraphs(kept, read_tokens(path, TOKEN_FIELDS))
