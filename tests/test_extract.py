"""The extract stage on hand-made WARCs: every record gets a row, hostile input is contained."""

from __future__ import annotations

import gzip

import pandas as pd
import pytest
from conftest import BOILERPLATE, require_shared, write_warc

from corpusbuilder.extraction.extract import (
    ExtractParams,
    UndecodableError,
    decode_html,
    extract_shard,
    iter_warc_records,
    visible_text_sample,
)
from corpusbuilder.extraction.segmentation import parse_html

ARTICLE = (
    "<html><head><title>t</title><script>var x = 'not text';</script></head><body><ul><li><a "
    "href='/'>Home</a></li><li><a href='/a'>About us</a></li></ul><h1>A walk along the "
    "river</h1><p>When we set out in the morning the river was still covered with a thin layer of "
    "mist, and the boats that are moored along the bank were hardly visible from the path. We "
    "walked for about an hour before the sun came through and the water began to shine.</p><p>It "
    "was the kind of day on which you forget about the time, and we did not turn back until the "
    "afternoon, when the wind had changed and the clouds were coming in from the "
    "west.</p><p>&copy; 2024 River Walkers. All rights reserved.</p></body></html>"
)


def extract(tmp_path, records, **params):
    warc = write_warc(tmp_path / "in.warc.gz", records)
    docs, blocks = tmp_path / "s.docs.parquet", tmp_path / "s.blocks.parquet"
    # jusText's own classes (preset `default`) unless a test asks for the learned one
    extract_shard([("s", warc)], "s", docs, blocks, ExtractParams(**{"learned": False, **params}))
    return pd.read_parquet(docs), pd.read_parquet(blocks)


def test_article_is_cleaned_and_boilerplate_is_kept_as_bad_blocks(tmp_path):
    docs, blocks = extract(tmp_path, [{"uri": "http://a.example/walk", "body": ARTICLE.encode()}])
    assert docs["reason"].tolist() == ["ok"]
    assert docs["doc_id"].tolist() == ["s:0"]
    assert docs["page_language"][0] == "en" and docs["stoplist"][0] == "English"
    good = blocks[blocks["final_class"] == "good"]["text"].tolist()
    assert any(t.startswith("When we set out") for t in good)
    bad = blocks[blocks["final_class"] == "bad"]["text"].tolist()
    assert any("All rights reserved" in t for t in bad)
    assert not any("not text" in t for t in blocks["text"])
    assert docs["n_good_blocks"][0] == len(good)


def test_every_record_gets_one_row_with_its_reason(tmp_path):
    page = ARTICLE.encode()
    records = [
        {"uri": "http://a.example/ok", "body": page},
        {"uri": "http://a.example/missing", "body": page, "status": "404 Not Found"},
        {"uri": "http://a.example/moved", "body": b"", "status": "301 Moved Permanently"},
        {
            "uri": "http://a.example/logo.png",
            "body": b"\x89PNG\r\n\x1a\n" + bytes(200),
            "content_type": "image/png",
        },
        {"uri": "http://a.example/empty", "body": b""},
        {"uri": "http://a.example/tiny", "body": b"<p>hi</p>"},
        {"uri": "http://a.example/garbage", "body": bytes(range(256)) * 20},
        {
            "uri": "dns:a.example",
            "body": b"a.example. 300 IN A 10.0.0.1",
            "warc_type": "resource",
            "warc_content_type": "text/dns",
        },
        {
            "uri": "http://a.example/req",
            "body": b"GET / HTTP/1.1\r\n\r\n",
            "warc_type": "request",
            "warc_content_type": "application/http; msgtype=request",
        },
        {"uri": "http://a.example/huge", "body": page * 50},
    ]
    docs, _ = extract(tmp_path, records, max_bytes=len(page) * 10)
    assert docs["reason"].tolist() == [
        "ok",
        "status-404",
        "status-301",
        "content-type-image/png",
        "empty",
        "too-small",
        "binary",
        "dns",
        "warc-type-request",
        "too-large",
    ]
    assert docs["record_index"].tolist() == list(range(len(records)))
    assert (docs["outcome"] == "skipped").sum() == len(records) - 1


def test_http_payload_under_a_non_http_uri_is_parsed(tmp_path):
    warc = tmp_path / "odd.warc.gz"
    payload = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + ARTICLE.encode()
    write_warc(
        warc,
        [
            {
                "uri": "hard::a-page.html",
                "body": payload,
                "warc_type": "response",
                "warc_content_type": "application/http; msgtype=response",
                "raw": True,
            }
        ],
    )
    records = list(iter_warc_records(warc, ExtractParams()))
    assert records[0].status == 200 and records[0].body.startswith(b"<html>")


def test_wrong_declared_charset_still_reads(tmp_path):
    latin1 = (
        "<html><body><p>Café crème brûlée à la française, déjà vu, naïve, façade.</p></body></html>"
    )
    docs, blocks = extract(
        tmp_path,
        [
            {
                "uri": "http://a.example/l1",
                "body": latin1.encode("latin-1"),
                "content_type": "text/html; charset=utf-8",
            },
            {
                "uri": "http://a.example/u8",
                "body": latin1.encode("utf-8"),
                "content_type": "text/html; charset=iso-8859-1",
            },
        ],
        min_bytes=10,
    )
    assert docs["reason"].tolist() == ["ok", "ok"]
    assert docs["charset_source"].tolist() == ["detected", "utf8-valid"]
    texts = blocks.groupby("doc_id")["text"].apply(" ".join)
    assert "crème brûlée" in texts["s:0"] and "crème brûlée" in texts["s:1"]


def test_decode_order_of_evidence():
    assert decode_html("<p>naïve</p>".encode("utf-16"), None)[2] == "bom"
    assert decode_html(b'<meta charset="windows-1250"><p>\x9atastn\xfd</p>', None)[:3] == (
        '<meta charset="windows-1250"><p>štastný</p>',
        "cp1250",
        "meta",
    )
    assert decode_html(b"<p>plain</p>", "utf-8")[2] == "http"
    with pytest.raises(UndecodableError):
        decode_html(bytes(range(32)) * 10, "utf-8")


CZECH = (
    "Když jsme ráno vyrazili, mlha ještě ležela nad řekou. Cesta vedla přes les a kolem starého"
    " mlýna, kde jsme si udělali krátkou přestávku."
)


@pytest.mark.parametrize(
    "head, charset",
    [
        ("", "cp1250"),
        ('<meta charset="utf-8">', "cp1250"),  # wrong: the bytes are no UTF-8
        ('<meta charset="x-bogus">', "cp1250"),  # no such charset
        ("", "iso8859-2"),
        # the first 64 KiB, which charset-normalizer reads, hold script and a title alone
        (
            "<title>Domácí zpravodajství</title><script>" + "var x = 1; " * 7000 + "</script>",
            "cp1250",
        ),
    ],
)
def test_an_undeclared_czech_page_keeps_its_code_page(head, charset):
    """windows-1252 decodes Czech almost as cleanly ("ještì", "øekou"); the stop words decide."""
    html = f"<html><head>{head}</head><body><p>{CZECH}</p></body></html>"
    assert decode_html(html.encode(charset), None) == (html, charset, "detected")


@pytest.mark.parametrize(
    "text",
    [
        # windows-1257 decodes it as cleanly ("crčme", "déją"): windows-1252 wins the near tie
        "Café crème brûlée à la française, déjà vu, naïve, façade.",
        # windows-1252 decodes it as windows-1250 does; HP Roman-8 almost as cleanly ("er÷ffnet")
        "Die Kooperation von creditshelf mit finleap: creditshelf eröffnet die Akquisition.",
    ],
)
def test_a_short_undeclared_western_page_is_windows_1252(text):
    html = f"<html><body><p>{text}</p></body></html>"
    assert decode_html(html.encode("cp1252"), None) == (html, "cp1252", "detected")


def test_a_last_record_shorter_than_its_length_is_reported_in_plain_words(tmp_path):
    """As the shared crawl's truncated shard ends: a complete gzip member whose record promises
    99,999 bytes. The reader fails inside warcio; the row says what
    that means for the file first."""
    warc = write_warc(
        tmp_path / "a.warc.gz", [{"uri": "http://a.example/1", "body": ARTICLE.encode()}]
    )
    cut_off = gzip.compress(
        b"WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 99999\r\n\r\nHTTP/1.1 200 OK\r\n"
    )
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(warc.read_bytes() + cut_off)
    records = list(iter_warc_records(cut, ExtractParams()))
    assert [r.reason for r in records[:1]] == [""] and len(records) == 2
    assert records[1].offset == warc.stat().st_size
    assert records[1].reason.startswith(
        f"truncated: the last {len(cut_off)} bytes are an incomplete record ("
    )


@pytest.mark.parametrize("cut_at", ["mid-body", "member-start"])
def test_truncated_shard_keeps_what_was_read(tmp_path, cut_at):
    page = ARTICLE.encode()
    warc = write_warc(
        tmp_path / "full.warc.gz",
        [{"uri": f"http://a.example/{i}", "body": page} for i in range(3)],
    )
    data = warc.read_bytes()
    third = [r.offset for r in iter_warc_records(warc, ExtractParams())][2]
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(data[: len(data) - 200] if cut_at == "mid-body" else data[: third + 10])
    records = list(iter_warc_records(cut, ExtractParams()))
    assert [r.reason for r in records[:2]] == ["", ""]
    assert len(records) == 3 and records[-1].reason.startswith("truncated")
    assert records[-1].warc_type == ("response" if cut_at == "mid-body" else "error")
    docs, blocks = tmp_path / "d.parquet", tmp_path / "b.parquet"
    extract_shard([("cut", cut)], "cut", docs, blocks, ExtractParams())
    table = pd.read_parquet(docs)
    assert table["reason"].str.startswith("truncated").tolist() == [False, False, True]
    assert (table["reason"] == "ok").sum() == 2


def test_gzip_bomb_is_not_read_whole(tmp_path):
    bomb = gzip.compress(b"<p>" + b"a" * 50_000_000 + b"</p>")
    docs, _ = extract(
        tmp_path,
        [{"uri": "http://a.example/bomb", "body": bomb, "headers": [("Content-Encoding", "gzip")]}],
        max_bytes=1_000_000,
    )
    assert docs["reason"].tolist() == ["too-large"]


def test_deeply_nested_and_malformed_html_does_not_stop_the_shard(tmp_path):
    nested = ("<div>" * 100_000 + "deep text " + "</div>" * 100_000).encode()
    malformed = b"<html><body><p>unclosed <b><i>tags <table><tr><td>cell</p></div></span>" * 50
    docs, _ = extract(
        tmp_path,
        [
            {"uri": "http://a.example/nested", "body": nested},
            {"uri": "http://a.example/malformed", "body": malformed},
            {"uri": "http://a.example/ok", "body": ARTICLE.encode()},
        ],
        max_bytes=10_000_000,
    )
    assert len(docs) == 3
    assert docs["reason"].iloc[2] == "ok"
    assert all(reason in {"ok", "no-text"} for reason in docs["reason"])


# --- no silent loss (issue 17): faults of the machine fail the job; a page's own faults are its row


def test_a_broken_model_fails_the_shard_naming_the_key(tmp_path):
    from corpusbuilder.config import ConfigError

    warc = write_warc(
        tmp_path / "in.warc.gz", [{"uri": "http://a.example/walk", "body": ARTICLE.encode()}]
    )
    broken = tmp_path / "model.npz"
    broken.write_text("root:x:0:0:root:/root:/bin/bash\n")
    with pytest.raises(ConfigError, match="extract.model"):
        extract_shard(
            [("s", warc)],
            "s",
            tmp_path / "s.docs.parquet",
            tmp_path / "s.blocks.parquet",
            ExtractParams(learned=True, model=broken),
        )
    assert not (tmp_path / "s.docs.parquet").exists()


def test_an_io_error_fails_the_job_instead_of_becoming_error_rows(tmp_path, monkeypatch):
    import corpusbuilder.extraction.extract as extract_module

    def disk_full(*args, **kwargs):
        raise OSError(27, "File too large")

    monkeypatch.setattr(extract_module, "clean_page", disk_full)
    warc = write_warc(
        tmp_path / "in.warc.gz", [{"uri": "http://a.example/walk", "body": ARTICLE.encode()}]
    )
    with pytest.raises(OSError):
        extract_shard(
            [("s", warc)],
            "s",
            tmp_path / "s.docs.parquet",
            tmp_path / "s.blocks.parquet",
            ExtractParams(),
        )
    assert not (tmp_path / "s.docs.parquet").exists()


def test_a_shard_whose_every_page_failed_is_a_failed_job(tmp_path, monkeypatch):
    import corpusbuilder.extraction.extract as extract_module

    def bug(*args, **kwargs):
        raise ValueError("a bug")

    monkeypatch.setattr(extract_module, "clean_page", bug)
    warc = write_warc(
        tmp_path / "in.warc.gz",
        [{"uri": f"http://a.example/{i}", "body": ARTICLE.encode()} for i in range(3)],
    )
    with pytest.raises(RuntimeError, match="every page failed"):
        extract_shard(
            [("s", warc)],
            "s",
            tmp_path / "s.docs.parquet",
            tmp_path / "s.blocks.parquet",
            ExtractParams(),
        )
    assert not (tmp_path / "s.docs.parquet").exists()


@pytest.mark.parametrize("damage", ["stray byte", "cut at the end"])
def test_a_utf8_page_with_a_broken_byte_keeps_its_text(tmp_path, damage):
    body = ARTICLE.replace("river", "rivière").encode("utf-8")
    body = (
        body.replace(b"morning", b"mor\xffning", 1)
        if damage == "stray byte"
        else body + "é".encode()[:1]
    )
    docs, blocks = extract(tmp_path, [{"uri": "http://a.example/walk", "body": body}])
    assert docs["reason"].tolist() == ["ok"] and docs["charset_source"][0] == "utf8-lenient"
    assert docs["replaced_characters"][0] == 1
    assert any("rivière" in text for text in blocks["text"])


def test_a_latin1_page_is_not_taken_for_broken_utf8(tmp_path):
    body = ARTICLE.replace("river", "rivière").encode("latin-1")
    docs, blocks = extract(tmp_path, [{"uri": "http://a.example/walk", "body": body}])
    assert docs["charset_source"][0] != "utf8-lenient" and any(
        "rivière" in text for text in blocks["text"]
    )


def raw_record(
    uri: str | None,
    payload: bytes,
    length: str | None = None,
    content_type: str = "application/http; msgtype=response",
) -> bytes:
    """One WARC response record as bytes, its headers as given (a malformed one on purpose)."""
    headers = [
        "WARC/1.0",
        "WARC-Type: response",
        f"WARC-Record-ID: <urn:uuid:{abs(hash((uri, payload))):032x}>",
        "WARC-Date: 2025-03-15T10:00:00Z",
    ]
    if uri is not None:
        headers.append(f"WARC-Target-URI: {uri}")
    headers += [
        f"Content-Type: {content_type}",
        f"Content-Length: {length if length is not None else len(payload)}",
    ]
    return ("\r\n".join(headers) + "\r\n\r\n").encode() + payload + b"\r\n\r\n"


PAGE = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" + ARTICLE.encode()
MALFORMED = {
    "no target uri": raw_record(None, PAGE),
    "non-numeric length": raw_record("http://a.example/bad", PAGE, length="many"),
    "negative length": raw_record("http://a.example/bad", PAGE, length="-5"),
    "empty http payload, non-http uri": raw_record("urn:example:bad", b""),
}


@pytest.mark.parametrize("damage", list(MALFORMED))
def test_a_malformed_record_is_its_own_row_and_reading_goes_on(tmp_path, damage):
    """Issue 17: one malformed record used to end the shard (3 of 5 records lost) and its error
    row took the next record's index. Now: five records, five rows, the bad one at index 2."""
    members = [raw_record(f"http://a.example/{i}", PAGE) for i in range(5)]
    members[2] = MALFORMED[damage]
    warc = tmp_path / "bad.warc.gz"
    warc.write_bytes(b"".join(gzip.compress(member) for member in members))
    docs, _ = tmp_path / "d.parquet", tmp_path / "b.parquet"
    extract_shard([("bad", warc)], "bad", docs, _, ExtractParams().with_preset("default"))
    table = pd.read_parquet(docs)
    assert table["record_index"].tolist() == [0, 1, 2, 3, 4]
    assert table["reason"].tolist()[:2] == ["ok", "ok"] and table["reason"].tolist()[3:] == [
        "ok",
        "ok",
    ]
    assert table["reason"][2] != "ok"


def test_reading_resumes_after_a_corrupt_gzip_member(tmp_path):
    members = [gzip.compress(raw_record(f"http://a.example/{i}", PAGE)) for i in range(4)]
    garbage = gzip.compress(raw_record("http://a.example/lost", PAGE))[:40] + b"\x00" * 300
    warc = tmp_path / "corrupt.warc.gz"
    warc.write_bytes(members[0] + members[1] + garbage + members[2] + members[3])
    records = list(iter_warc_records(warc, ExtractParams()))
    assert [r.uri for r in records if r.reason == ""] == [f"http://a.example/{i}" for i in range(4)]
    [error] = [r for r in records if r.warc_type == "error"]
    assert (
        error.offset == len(members[0] + members[1])
        and f"{len(garbage)} bytes skipped" in error.reason
    )


def test_a_latin1_page_served_as_utf8_is_not_taken_for_broken_utf8(tmp_path):
    """One accented letter in Latin-1 bytes under a UTF-8 header: no valid multi-byte character,
    so it is no UTF-8 page with a stray byte — detection reads the letter right (a mirror of the
    page served with the right header gets the same text, as exact dedup needs)."""
    body = ARTICLE.replace("river", "rivière", 1).encode("latin-1")
    docs, blocks = extract(
        tmp_path,
        [
            {
                "uri": "http://a.example/walk",
                "body": body,
                "content_type": "text/html; charset=utf-8",
            }
        ],
    )
    assert docs["charset_source"][0] != "utf8-lenient" and any(
        "rivière" in text for text in blocks["text"]
    )


def test_a_page_of_too_many_blocks_is_skipped_saying_so(tmp_path):
    """Issue 17: memory grows with a page's blocks; past extract.max_blocks the page is its row."""
    page = "<html><body>" + "".join(f"<p>item {i}</p>" for i in range(300)) + "</body></html>"
    docs, _ = extract(
        tmp_path,
        [
            {"uri": "http://a.example/many", "body": page.encode()},
            {"uri": "http://a.example/walk", "body": ARTICLE.encode()},
        ],
        max_blocks=100,
    )
    assert docs["reason"][0].startswith("too-many-blocks: 300") and docs["reason"][1] == "ok"


def test_a_gzip_of_plain_text_is_no_page_and_has_no_negative_offset(tmp_path):
    plain = tmp_path / "notes.gz"
    plain.write_bytes(gzip.compress(b"this is plain text, not a WARC\n" * 3000))
    records = list(iter_warc_records(plain, ExtractParams()))
    assert all(r.offset >= 0 for r in records) and not any(r.reason == "" for r in records)


def xpath_sample(root, sample_chars: int) -> str:
    """The language sample as the whole-page XPath gives it: what visible_text_sample must equal."""
    body = root.find("body")
    scope = body if body is not None else root
    text = " ".join(scope.xpath(".//text()[not(ancestor::script or ancestor::style)]"))
    return " ".join(text.split())[:sample_chars]


@pytest.mark.parametrize(
    "html",
    [
        ARTICLE,
        "<div>no body <script>x<b>y</b></script>tail of script<!-- c -->tail of comment<?pi p?>"
        "tail of pi</div>",
        "<html><body><style>p {}</style><p>one<span>two</span>three</p>  <svg><style>s</style>"
        "after</svg></body></html>",
        "<html><head><title>only a title</title></head></html>",
        "<html><body><p>" + "word " * 500 + "</p><p>never reached</p></body></html>",
    ],
)
def test_language_sample_is_the_visible_text_the_xpath_gives(html):
    root = parse_html(html)
    for sample_chars in (0, 7, 2000, 10**6):
        assert visible_text_sample(root, sample_chars) == xpath_sample(root, sample_chars)


def test_language_sample_on_real_pages():
    require_shared(BOILERPLATE)
    for folder in ("l3s-gn1/original", "cleaneval-final/input", "fundus/input", "msv-chaos/input"):
        for path in sorted((BOILERPLATE / folder).glob("*.html"))[:15]:
            root = parse_html(decode_html(path.read_bytes(), None)[0])
            assert visible_text_sample(root, 2000) == xpath_sample(root, 2000), path
