"""The bundled sample crawl (resources/sample): reproducible, parseable, and as truth.tsv says."""

from __future__ import annotations

import csv
import difflib
import gzip
import hashlib
import subprocess
import sys
import zlib
from collections import Counter
from pathlib import Path

import lxml.html
import pytest
from conftest import unavailable
from warcio.archiveiterator import ArchiveIterator

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "resources" / "sample"
SHARDS = ["sample-00", "sample-01", "sample-02"]
# The committed .warc.gz files were compressed with this zlib; another zlib may choose other
# (equally valid) deflate output, so only the decompressed bytes are compared there.
BUILT_WITH_ZLIB = "1.2.13"


def read_tsv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


TRUTH = read_tsv(SAMPLE / "truth.tsv")
MANIFEST = read_tsv(SAMPLE / "manifest.tsv")


def records(shard: str):
    """(index, record, payload bytes) for every record of a committed shard, in file order."""
    with (SAMPLE / f"{shard}.warc.gz").open("rb") as f:
        for index, record in enumerate(ArchiveIterator(f, check_digests="raise")):
            yield index, record, record.content_stream().read()


BLOCKS = {
    "p",
    "div",
    "td",
    "th",
    "li",
    "blockquote",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "article",
    "section",
    "table",
    "tr",
    "ul",
    "ol",
    "header",
    "footer",
    "nav",
    "aside",
    "form",
    "dl",
    "dt",
    "dd",
    "figure",
    "figcaption",
    "main",
    "body",
}


def main_text(html: bytes) -> list[str]:
    """The page's text blocks (split at block elements and <br>) of 20+
    words, whitespace-normalised."""
    doc = lxml.html.fromstring(html)
    for el in doc.iter():
        if el.tag in BLOCKS or el.tag == "br":
            el.tail = "\n\n" + (el.tail or "")
            if el.tag != "br":
                el.text = "\n\n" + (el.text or "")
    for junk in doc.xpath("//script|//style"):
        junk.drop_tree()
    blocks = (" ".join(part.split()) for part in doc.text_content().split("\n\n"))
    return [b for b in blocks if len(b.split()) >= 20]


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sample")
    subprocess.run(
        [sys.executable, str(REPO / "tools" / "make_sample.py"), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    return out


@pytest.mark.parametrize("name", [f"{s}.warc.gz" for s in SHARDS])
def test_rebuild_gives_identical_records(rebuilt, name):
    fresh = gzip.decompress((rebuilt / name).read_bytes())
    assert fresh == gzip.decompress((SAMPLE / name).read_bytes()), (
        f"{name}: records differ; rerun tools/make_sample.py"
    )


@pytest.mark.parametrize("name", [f"{s}.warc.gz" for s in SHARDS] + ["truth.tsv"])
def test_rebuild_gives_identical_files(rebuilt, name):
    if name.endswith(".gz") and zlib.ZLIB_RUNTIME_VERSION != BUILT_WITH_ZLIB:
        unavailable(
            f"zlib {zlib.ZLIB_RUNTIME_VERSION} may compress the same records differently from "
            f"{BUILT_WITH_ZLIB}, which built the committed files (the records are compared anyway)"
        )
    assert (rebuilt / name).read_bytes() == (SAMPLE / name).read_bytes(), (
        f"{name} differs from a fresh build; rerun tools/make_sample.py"
    )


def test_sample_is_small():
    total = sum((SAMPLE / f"{s}.warc.gz").stat().st_size for s in SHARDS)
    assert total < 300_000


@pytest.mark.parametrize("shard", SHARDS)
def test_every_record_parses(shard):
    types = []
    ids = set()
    pending_request = None
    for index, record, payload in records(shard):
        types.append(record.rec_type)
        rid = record.rec_headers.get_header("WARC-Record-ID")
        assert rid not in ids
        ids.add(rid)
        assert record.rec_headers.get_header("WARC-Date")
        if index == 0:
            assert record.rec_type == "warcinfo"
            assert record.rec_headers.get_header("WARC-Filename") == f"{shard}.warc.gz"
            continue
        assert record.rec_type != "warcinfo"
        if record.rec_type == "request":
            assert pending_request is None
            pending_request = record
            assert payload == b""
            assert record.http_headers.protocol == "GET"  # warcio splits "GET /path HTTP/1.1"
            assert record.http_headers.get_header("Host") in record.rec_headers.get_header(
                "WARC-Target-URI"
            )
        elif record.rec_type == "response":
            assert pending_request is not None, "a response without its request"
            assert pending_request.rec_headers.get_header(
                "WARC-Target-URI"
            ) == record.rec_headers.get_header("WARC-Target-URI")
            assert pending_request.rec_headers.get_header("WARC-Concurrent-To") == rid
            pending_request = None
            assert record.http_headers.get_header("Content-Length") == str(len(payload))
        else:
            assert record.rec_type == "resource"
            assert record.rec_headers.get_header("WARC-Target-URI").startswith("dns:")
    assert pending_request is None
    assert types.count("request") == types.count("response")


def test_truth_matches_the_warcs():
    seen = []
    for shard in SHARDS:
        for index, record, payload in records(shard):
            if record.rec_type in ("warcinfo", "request"):
                continue
            status = record.http_headers.get_statuscode() if record.http_headers else "-"
            ctype = (
                record.http_headers.get_header("Content-Type")
                if record.http_headers
                else record.rec_headers.get_header("Content-Type")
            )
            seen.append(
                {
                    "shard": shard,
                    "record": str(index),
                    "id": f"{shard}:{index}",
                    "warc_type": record.rec_type,
                    "url": record.rec_headers.get_header("WARC-Target-URI"),
                    "status": status,
                    "content_type": ctype or "-",
                    "sha1": hashlib.sha1(payload).hexdigest(),
                }
            )
    assert len(seen) == len(TRUTH)
    for got, row in zip(seen, TRUTH):
        assert {k: row[k] for k in got} == got


def test_truth_matches_the_manifest():
    assert [(r["shard"], r["url"], r["kind"], r["of"], r["lang"]) for r in TRUTH] == [
        (r["shard"], r["url"], r["kind"], r["of"], r["lang"]) for r in MANIFEST
    ]


def test_every_page_file_is_in_the_manifest():
    used = {r["file"] for r in MANIFEST if r["file"] != "-"}
    on_disk = {
        str(p.relative_to(SAMPLE / "pages")) for p in (SAMPLE / "pages").rglob("*") if p.is_file()
    }
    assert used == on_disk


def test_composition():
    kinds = Counter(r["kind"] for r in TRUTH)
    assert kinds["mirror"] == 2 and kinds["near"] == 2 and kinds["quote"] >= 1
    for junk in (
        "junk-404",
        "junk-redirect",
        "junk-image",
        "junk-pdf",
        "junk-empty",
        "junk-charset",
        "junk-dns",
    ):
        assert kinds[junk] >= 1, junk
    originals = [r for r in TRUTH if r["kind"] == "original"]
    assert 25 <= len(originals) <= 35
    assert len({r["url"].split("/")[2] for r in originals}) >= 5
    langs = Counter(r["lang"] for r in originals)
    assert langs["en"] > len(originals) / 2
    assert sum(1 for lang in ("de", "cs", "fr", "es") if langs[lang] >= 3) >= 2
    by_status = Counter(r["status"] for r in TRUTH)
    assert by_status["301"] == 1 and by_status["404"] == 1


def test_copies_point_at_earlier_originals():
    position = {r["id"]: i for i, r in enumerate(TRUTH)}
    by_id = {r["id"]: r for r in TRUTH}
    for r in TRUTH:
        if r["kind"] in ("mirror", "near", "quote"):
            original = by_id[r["of_id"]]
            assert original["url"] == r["of"] and original["kind"] == "original"
            assert position[original["id"]] < position[r["id"]]
            assert r["url"] != original["url"]
        else:
            assert r["of"] == "-" and r["of_id"] == "-"


def _payloads():
    out = {}
    for shard in SHARDS:
        for index, _record, payload in records(shard):
            out[f"{shard}:{index}"] = payload
    return out


def test_copies_are_the_kind_of_copy_truth_says():
    payload = _payloads()
    for r in TRUTH:
        if r["kind"] == "mirror":
            assert payload[r["id"]] == payload[r["of_id"]]
        elif r["kind"] == "near":
            assert payload[r["id"]] != payload[r["of_id"]]
            # the article's paragraphs (40+ words), not the template around them
            copy_words = " ".join(
                p for p in main_text(payload[r["id"]]) if len(p.split()) >= 40
            ).split()
            orig_words = " ".join(
                p for p in main_text(payload[r["of_id"]]) if len(p.split()) >= 40
            ).split()
            matcher = difflib.SequenceMatcher(None, orig_words, copy_words, autojunk=False)
            matched = sum(block.size for block in matcher.get_matching_blocks())
            assert matched / len(orig_words) > 0.9  # nearly all the original's text …
            assert copy_words != orig_words  # … but edited
        elif r["kind"] == "quote":
            quoting = " ".join(main_text(payload[r["id"]]))
            quoted = [p for p in main_text(payload[r["of_id"]]) if p in quoting]
            assert len(quoted) == 1, "a quote page quotes exactly one paragraph of its original"


def test_junk_bodies_are_what_they_claim():
    payload = _payloads()
    for r in TRUTH:
        body = payload[r["id"]]
        if r["kind"] == "junk-image":
            assert body.startswith(b"\x89PNG\r\n\x1a\n")
        elif r["kind"] == "junk-pdf":
            assert body.startswith(b"%PDF-") and body.rstrip().endswith(b"%%EOF")
        elif r["kind"] == "junk-empty":
            assert body == b"" and r["status"] == "200" and "html" in r["content_type"]
        elif r["kind"] == "junk-charset":
            declared = r["content_type"].lower().split("charset=")[1]
            if declared == "utf-8":
                with pytest.raises(UnicodeDecodeError):
                    body.decode("utf-8")
                body.decode("iso-8859-1")
            else:
                assert declared == "iso-8859-1"
                text = body.decode("utf-8")
                assert text != body.decode("iso-8859-1")  # trusting the header gives mojibake
        elif r["kind"] == "junk-dns":
            assert r["url"].startswith("dns:") and r["warc_type"] == "resource"


def test_originals_have_substantial_text():
    payload = _payloads()
    for r in TRUTH:
        if r["kind"] == "original" and not r["url"].endswith(
            "/local/"
        ):  # the section front is teasers only
            paragraphs = main_text(payload[r["id"]])
            long_ones = [p for p in paragraphs if 40 <= len(p.split()) <= 160]
            assert len(long_ones) >= 3, r["url"]
