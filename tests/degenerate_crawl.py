"""A crawl whose shards the stages empty, one way each: the WARCs are written here from the
bundled sample's pages (resources/sample/pages), so the crawl is real HTML in real WARC records,
and every shard but the first ends with no document at some stage.

In crawl order (`DEGENERATE_SHARDS`):
- ``source``: four English articles, the originals the later shards copy;
- ``no-records``: a WARC file of no records at all;
- ``warcinfo``: only a warcinfo record;
- ``junk``: a 404 and a PDF, nothing extract cleans;
- ``foreign``: German pages, outside the targets of `DEGENERATE_CONFIG`;
- ``copies`` (an odd file name, spaces, quotes and a non-ASCII letter): the source's pages
  byte for byte at other URLs, so exact dedup empties it;
- ``reordered``: the source's pages with their paragraphs in reverse order, so no text is an
  exact copy but every block is a duplicate, and block dedup empties it;
- ``junky``: fresh articles each of whose paragraphs holds a curly bracket, which C4's rules
  fail, so the quality filter empties it;
- ``single``: one document;
- ``one-token``: a page whose whole text is one word (and its full stop), kept by the
  extractor, which `DEGENERATE_CONFIG` lets through the language filter.
"""

from __future__ import annotations

import re
from pathlib import Path

from conftest import REPO, write_warc

PAGES = REPO / "resources" / "sample" / "pages"
# targets: the foreign shard is dropped; min_chars and threshold 0: the one-word page is not
DEGENERATE_CONFIG = {"language": {"targets": ["en"], "min_chars": 0, "threshold": 0.0}}
SOURCE_PAGES = [
    "harbourledger/ferry-timetable-winter-changes.html",
    "harbourledger/saltmarsh-restoration-first-year.html",
    "harbourledger/harbour-bakery-closes-after-forty-years.html",
    "harbourledger/rowing-club-regatta-returns.html",
]
FOREIGN_PAGES = [
    "bergsport-huber/ratgeber-daunenjacken-pflegen.html",
    "bergsport-huber/ratgeber-rucksack-packen.html",
]
JUNKY_PAGES = [
    "slowloaves/seeded-spelt-loaf.html",
    "slowloaves/pruning-the-old-apple-tree.html",
]
SINGLE_PAGE = "trailhead/trip-report-northmoor-ridge.html"
# shard name (the file's stem as corpusbuilder names it) -> WARC file name
DEGENERATE_SHARDS = {
    "a-source": "a-source.warc.gz",
    "b-no-records": "b-no-records.warc.gz",
    "c-warcinfo": "c-warcinfo.warc.gz",
    "d-junk": "d-junk.warc.gz",
    "e-foreign": "e-foreign.warc.gz",
    "f_copies_u_q": "f copies ü'q'.warc.gz",
    "g-reordered": "g-reordered.warc.gz",
    "h-junky": "h-junky.warc.gz",
    "i-single": "i-single.warc.gz",
    "j-one-token": "j-one-token.warc.gz",
}
# the shards no document of survives the default build (`DEGENERATE_CONFIG`, no filter); the
# one-word page reaches the corpus (Gopher's rules would fail it)
EMPTIED_BY_DEFAULT = {
    "b-no-records",
    "c-warcinfo",
    "d-junk",
    "e-foreign",
    "f_copies_u_q",
    "g-reordered",
}

PARAGRAPH = re.compile(rb"<p>(?:(?!</p>).)*</p>", re.S)
# the article: the longest run of plain paragraphs one after another
PARAGRAPH_RUN = re.compile(rb"<p>(?:(?!</p>).)*</p>(?:\s*<p>(?:(?!</p>).)*</p>)+", re.S)


def page(name: str) -> bytes:
    return (PAGES / name).read_bytes()


def url(site: str, name: str) -> str:
    return f"https://{site}.example/{Path(name).stem}"


def rewrite_article(html: bytes, rewrite) -> bytes:
    """The page with its article (`PARAGRAPH_RUN`) replaced by ``rewrite(article)``."""
    article = max(PARAGRAPH_RUN.finditer(html), key=lambda m: len(m.group(0)))
    return html[: article.start()] + rewrite(article.group(0)) + html[article.end() :]


def reversed_paragraphs(html: bytes) -> bytes:
    """The page with its article's paragraphs in reverse order, everything else in place."""

    def reverse(article: bytes) -> bytes:
        paragraphs = PARAGRAPH.findall(article)
        return b"\n".join(reversed(paragraphs))

    return rewrite_article(html, reverse)


def with_curly_brackets(html: bytes) -> bytes:
    """Every paragraph of the article ends with a braced aside: C4 fails a page with a kept
    line holding a curly bracket (its code filter), the extractor keeps the prose."""
    return rewrite_article(
        html,
        lambda article: PARAGRAPH.sub(
            lambda m: m.group(0)[:-4] + b" {see the notes below}</p>", article
        ),
    )


def write_degenerate_crawl(directory: Path) -> list[Path]:
    """Write the crawl's WARCs into ``directory``; their paths in crawl order."""
    directory.mkdir(parents=True, exist_ok=True)
    html = "text/html; charset=utf-8"
    shards: dict[str, list[dict]] = {
        "a-source": [{"uri": url("source", name), "body": page(name)} for name in SOURCE_PAGES],
        "c-warcinfo": [
            {
                "uri": "",
                "warc_type": "warcinfo",
                "body": b"software: corpusbuilder tests\r\n",
                "warc_content_type": "application/warc-fields",
            }
        ],
        "d-junk": [
            {
                "uri": "https://junk.example/gone",
                "status": "404 Not Found",
                "body": page("harbourledger/404.html"),
            },
            {
                "uri": "https://junk.example/report.pdf",
                "content_type": "application/pdf",
                "body": b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << >>\n%%EOF\n",
            },
        ],
        "e-foreign": [{"uri": url("foreign", name), "body": page(name)} for name in FOREIGN_PAGES],
        "f_copies_u_q": [{"uri": url("mirror", name), "body": page(name)} for name in SOURCE_PAGES],
        "g-reordered": [
            {"uri": url("reordered", name), "body": reversed_paragraphs(page(name))}
            for name in SOURCE_PAGES
        ],
        "h-junky": [
            {"uri": url("junky", name), "body": with_curly_brackets(page(name))}
            for name in JUNKY_PAGES
        ],
        "i-single": [{"uri": url("single", SINGLE_PAGE), "body": page(SINGLE_PAGE)}],
        "j-one-token": [
            {
                "uri": "https://one.example/word",
                "content_type": html,
                "body": b"<!DOCTYPE html><html lang='en'><head><title></title></head>"
                b"<body><main><p>Breakfast.</p></main></body></html>",
            }
        ],
    }
    paths = []
    for shard, file_name in DEGENERATE_SHARDS.items():
        path = directory / file_name
        if shard == "b-no-records":
            path.write_bytes(b"")
        else:
            write_warc(path, shards[shard])
        paths.append(path)
    return paths
