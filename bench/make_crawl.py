#!/usr/bin/env python3
"""A synthetic web crawl for the scale run: gzip'd WARC shards of HTML pages, deterministic by seed.

Text: content words drawn by Zipf's law (bench/zipf.py, exponent --zipf-a) from an English
vocabulary ranked by frequency (the words of the CleanEval gold texts in ../shared when present,
else generated syllable words), mixed with the English stop list (resources/stoplists/English.txt,
itself in frequency order, drawn by Zipf too) so that a share --stop-density (default 0.40) of the
words are function words — as in real English prose, so jusText keeps the paragraphs and the
language filter calls them English. Paragraphs have 40–150 words in sentences of 6–24 words.

Pages: each site has its own template — a header, a navigation bar, a sidebar of links, a
"related" box, a footer with a © line — repeated on all its pages (boilerplate for jusText);
the article between them is 2–12 paragraphs, sometimes with subheadings. Planted copies, each
drawn from the pages written so far (in this and earlier shards):

- mirrors (--mirror, default 5 %): an earlier article verbatim on another site's template;
- near-duplicates (--near, 5 %): an earlier article with a few words changed per paragraph,
  a paragraph dropped or a fresh one added;
- quoted paragraphs (--quote, 15 % of pages): 1–2 paragraphs of an earlier page quoted inside an
  otherwise fresh article.

Junk records (a few per shard): warcinfo, request records, a 404, an image/png, a text/plain
response, an empty body. Size: --gb is the target of *uncompressed HTTP payload bytes* (the HTML)
over all shards; the WARC files on disk are gzip'd, typically ~2.2× smaller (random word order
compresses worse than prose), or plain with --no-gzip (~1.08× the HTML: record and HTTP headers). A
summary (pages, words, copies planted, bytes) goes to <out>/crawl.json.

--first N writes only the first N shards of the crawl --gb/--shards/--seed describe, byte for byte
the same files (the generator runs shard after shard from one seed), so that a run too short for
the whole crawl can time shards of the same size and content.

    python bench/make_crawl.py /tmp/scale/warcs --gb 0.25 --shards 4 --seed 1
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from io import BytesIO
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = REPO.parent / "shared"
sys.path.insert(0, str(HERE))
from zipf import zipf_shard  # noqa: E402

STOPLIST = REPO / "resources" / "stoplists" / "English.txt"
WORD = re.compile(r"[a-z]{3,}")


# --- vocabulary -----------------------------------------------------------------------------------


def stop_words() -> np.ndarray:
    """The English stop list in its file order (most frequent first)."""
    return np.array(
        [w.strip() for w in STOPLIST.read_text(encoding="utf-8").splitlines() if w.strip()],
        dtype=object,
    )


def content_vocabulary(stops: set[str], rng: np.random.Generator, size: int = 60_000) -> np.ndarray:
    """Content words by decreasing frequency: CleanEval gold text words when ../shared has them,
    topped up with syllable words (deterministic) to `size`."""
    counts: Counter = Counter()
    gold = SHARED / "datasets" / "boilerplate"
    for path in sorted(gold.glob("cleaneval-*/GoldStandard/*.txt")):
        text = path.read_text(encoding="utf-8", errors="replace").lower()
        counts.update(w for w in WORD.findall(text) if w not in stops)
    words = [w for w, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]
    syllables = [
        "ba",
        "con",
        "de",
        "fer",
        "gal",
        "hin",
        "ter",
        "lo",
        "man",
        "nor",
        "pre",
        "ra",
        "sen",
        "tion",
        "ul",
        "ver",
        "wel",
        "im",
        "ly",
        "ment",
        "ous",
        "pa",
        "ri",
        "sto",
    ]
    seen = set(words)
    while len(words) < size:
        word = "".join(
            syllables[i] for i in rng.integers(0, len(syllables), int(rng.integers(2, 5)))
        )
        if word not in seen and word not in stops:
            seen.add(word)
            words.append(word)
    return np.array(words[:size], dtype=object)


class Words:
    """An endless stream of English-like words: Zipf content words (zipf.zipf_shard ranks, drawn in
    batches) interleaved with Zipf-ranked stop words at the given density."""

    def __init__(
        self,
        rng: np.random.Generator,
        content: np.ndarray,
        stops: np.ndarray,
        a: float,
        stop_density: float,
    ):
        self.rng, self.content, self.stops, self.a, self.stop_density = (
            rng,
            content,
            stops,
            a,
            stop_density,
        )
        self.buffer: np.ndarray = np.empty(0, dtype=object)
        self.position = 0

    def _refill(self) -> None:
        batch = 1 << 18
        ranks, _ = zipf_shard(self.rng, batch, self.content, self.a, 40, 0.0, None)
        words = self.content[ranks]
        is_stop = self.rng.random(batch) < self.stop_density
        stop_ranks = np.minimum(self.rng.zipf(1.3, batch) - 1, len(self.stops) - 1)
        words[is_stop] = self.stops[stop_ranks[is_stop]]
        self.buffer, self.position = words, 0

    def take(self, count: int) -> list[str]:
        if self.position + count > len(self.buffer):
            self._refill()
        words = self.buffer[self.position : self.position + count].tolist()
        self.position += count
        return words

    def paragraph(self, low: int = 40, high: int = 150) -> str:
        words = self.take(int(self.rng.integers(low, high + 1)))
        sentences, start = [], 0
        while start < len(words):
            end = min(len(words), start + int(self.rng.integers(6, 25)))
            if len(words) - end < 4:
                end = len(words)
            sentence = words[start:end]
            if len(sentence) > 8 and self.rng.random() < 0.5:
                comma = int(self.rng.integers(3, len(sentence) - 3))
                sentence[comma] += ","
            sentence[0] = sentence[0].capitalize()
            sentences.append(" ".join(sentence) + ("?" if self.rng.random() < 0.04 else "."))
            start = end
        return " ".join(sentences)

    def title(self, low: int = 3, high: int = 8) -> str:
        return " ".join(w.capitalize() for w in self.take(int(self.rng.integers(low, high + 1))))


# --- sites and pages ------------------------------------------------------------------------------


def esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class Site:
    """A template: everything on a page but the article, fixed per site."""

    def __init__(self, index: int, words: Words, rng: np.random.Generator):
        slug = re.sub(r"[^a-z0-9]+", "-", "-".join(words.take(2)).lower())
        domain = ["com", "org", "net", "co.uk", "info"][index % 5]
        self.host = f"www.{slug}{index}.{domain}"
        self.name = words.title(1, 3)
        self.tagline = words.title(3, 7)
        self.nav = [words.title(1, 2) for _ in range(int(rng.integers(5, 11)))]
        self.sidebar = [words.title(2, 6) for _ in range(int(rng.integers(6, 16)))]
        self.footer_links = [words.title(1, 3) for _ in range(int(rng.integers(3, 7)))]
        self.year = 2000 + int(rng.integers(0, 10))
        self.style = int(rng.integers(0, 3))  # div layout, table layout, html5-ish
        self.ad = words.title(4, 9)
        self.pages = 0

    def url(self, slug: str) -> str:
        self.pages += 1
        return f"http://{self.host}/{self.pages}/{slug}.html"

    def links(self, labels: list[str], prefix: str) -> str:
        return "".join(
            f'<li><a href="/{prefix}/{i}.html">{esc(label)}</a></li>'
            for i, label in enumerate(labels)
        )

    def render(self, title: str, article: list[tuple[str, str]], related: list[str]) -> str:
        body = "\n".join(
            f"<h2>{esc(text)}</h2>" if kind == "h" else f"<p>{esc(text)}</p>"
            for kind, text in article
        )
        head = (
            f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{esc(title)} | '
            f"{esc(self.name)}"
            f"</title><style>body{{font-family:sans-serif}}</style><script>var "
            f"s='{self.host}';</script></head>\n"
        )
        header = (
            f'<div class="header"><h1><a href="/">{esc(self.name)}</a></h1><div '
            f'class="tagline">{esc(self.tagline)}</div></div>\n<div '
            f'class="nav"><ul>{self.links(self.nav, "section")}</ul></div>\n'
        )
        sidebar = (
            f'<div class="sidebar"><h3>Archives</h3><ul>{self.links(self.sidebar, "archive")}</ul>'
            f'<div class="ad">Advertisement: <a href="http://ads.example/{self.host}">{esc(self.ad)}</a></div></div>\n'
        )
        related_box = (
            f'<div class="related"><h3>Related</h3><ul>{self.links(related, "story")}</ul></div>\n'
            if related
            else ""
        )
        footer = (
            f'<div class="footer"><ul>{self.links(self.footer_links, "about")}</ul>'
            f"<p>© {self.year} {esc(self.name)}. All rights reserved.</p></div>\n"
        )
        main = f'<div class="content"><h1>{esc(title)}</h1>\n{body}\n</div>\n'
        if self.style == 1:
            return (
                head
                + "<body><table><tr><td colspan=2>"
                + header
                + "</td></tr><tr><td>"
                + sidebar
                + "</td><td>"
                + main
                + related_box
                + "</td></tr><tr><td colspan=2>"
                + footer
                + "</td></tr></table></body></html>\n"
            )
        if self.style == 2:
            return (
                head
                + "<body><header>"
                + header
                + "</header><main><article>"
                + main
                + "</article>"
                + related_box
                + "</main><aside>"
                + sidebar
                + "</aside><footer>"
                + footer
                + "</footer></body></html>\n"
            )
        return (
            head
            + "<body>"
            + header
            + '<div class="wrap">'
            + main
            + related_box
            + sidebar
            + "</div>"
            + footer
            + "</body></html>\n"
        )


class Crawl:
    def __init__(self, args):
        self.args = args
        self.rng = np.random.default_rng(args.seed)
        stops = stop_words()
        self.words = Words(
            self.rng,
            content_vocabulary(set(stops), self.rng),
            stops,
            args.zipf_a,
            args.stop_density,
        )
        self.sites = [Site(i, self.words, self.rng) for i in range(args.sites)]
        self.pool: list[tuple[str, list[tuple[str, str]]]] = []  # earlier articles, for copies
        self.counts = Counter()

    def fresh_article(self) -> tuple[str, list[tuple[str, str]]]:
        article = []
        for _ in range(int(self.rng.integers(2, 13))):
            if self.rng.random() < 0.15:
                article.append(("h", self.words.title(2, 7)))
            article.append(("p", self.words.paragraph()))
        return self.words.title(), article

    def near_copy(self, article: list[tuple[str, str]]) -> list[tuple[str, str]]:
        out = []
        for kind, text in article:
            if kind == "p":
                words = text.split(" ")
                for _ in range(int(self.rng.integers(1, 4))):
                    i = int(self.rng.integers(0, len(words)))
                    words[i] = self.words.take(1)[0]
                text = " ".join(words)
            out.append((kind, text))
        if len(out) > 2 and self.rng.random() < 0.5:
            del out[int(self.rng.integers(0, len(out)))]
        if self.rng.random() < 0.5:
            out.insert(int(self.rng.integers(0, len(out) + 1)), ("p", self.words.paragraph()))
        return out

    def page(self) -> tuple[str, str]:
        site = self.sites[int(self.rng.integers(0, len(self.sites)))]
        draw = self.rng.random()
        if self.pool and draw < self.args.mirror:
            title, article = self.pool[int(self.rng.integers(0, len(self.pool)))]
            self.counts["mirror"] += 1
        elif self.pool and draw < self.args.mirror + self.args.near:
            title, source = self.pool[int(self.rng.integers(0, len(self.pool)))]
            article = self.near_copy(source)
            self.counts["near_duplicate"] += 1
        else:
            title, article = self.fresh_article()
            if self.pool and self.rng.random() < self.args.quote:
                for _ in range(int(self.rng.integers(1, 3))):
                    _, source = self.pool[int(self.rng.integers(0, len(self.pool)))]
                    paragraphs = [item for item in source if item[0] == "p"]
                    article.insert(
                        int(self.rng.integers(0, len(article) + 1)),
                        paragraphs[int(self.rng.integers(0, len(paragraphs)))],
                    )
                    self.counts["quoted_paragraph"] += 1
            self.counts["fresh"] += 1
            if len(self.pool) < 5000:
                self.pool.append((title, article))
            else:
                self.pool[int(self.rng.integers(0, len(self.pool)))] = (title, article)
        self.counts["article_words"] += sum(len(text.split()) for _, text in article)
        related = [self.words.title(3, 8) for _ in range(int(self.rng.integers(0, 6)))]
        slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60] or "page"
        return site.url(slug), site.render(title, article, related)

    def record_id(self) -> str:
        b = self.rng.integers(0, 256, 16, dtype=np.uint8).tobytes().hex()
        return f"<urn:uuid:{b[:8]}-{b[8:12]}-{b[12:16]}-{b[16:20]}-{b[20:]}>"

    def write_shard(self, path: Path, budget: int, shard: int) -> dict:
        from warcio.statusandheaders import StatusAndHeaders
        from warcio.warcwriter import WARCWriter

        date = f"2009-0{1 + shard % 9}-15T12:00:00Z"
        payload_bytes = pages = records = 0
        with open(path, "wb") as stream:
            writer = WARCWriter(stream, gzip=self.args.gzip)

            def write(uri, kind, body: bytes, http=None, content_type=None):
                nonlocal records
                headers = {"WARC-Record-ID": self.record_id(), "WARC-Date": date}
                record = writer.create_warc_record(
                    uri,
                    kind,
                    payload=BytesIO(body),
                    length=len(body),
                    http_headers=http,
                    warc_content_type=content_type,
                    warc_headers_dict=headers,
                )
                writer.write_record(record)
                records += 1

            write(
                None,
                "warcinfo",
                f"software: bench/make_crawl.py\nseed: {self.args.seed}\nshard: {shard}\n".encode(),
                content_type="application/warc-fields",
            )
            junk_every = max(1, int(1 / self.args.junk)) if self.args.junk > 0 else 0
            while payload_bytes < budget:
                url, html = self.page()
                body = html.encode("utf-8")
                if (
                    self.rng.random() < 0.05
                ):  # a request record now and then, as crawlers write them
                    write(
                        url,
                        "request",
                        f"GET {url[url.index('/', 7) :]} HTTP/1.1\r\nHost: x\r\n\r\n".encode(),
                        content_type="application/http; msgtype=request",
                    )
                http = StatusAndHeaders(
                    "200 OK",
                    [
                        ("Content-Type", "text/html; charset=utf-8"),
                        ("Content-Length", str(len(body))),
                    ],
                    protocol="HTTP/1.1",
                )
                write(url, "response", body, http)
                pages += 1
                payload_bytes += len(body)
                if junk_every and pages % junk_every == 0:
                    self.junk(write, StatusAndHeaders, url, pages // junk_every)
        return {
            "path": str(path),
            "pages": pages,
            "records": records,
            "payload_bytes": payload_bytes,
            "file_bytes": path.stat().st_size,
        }

    def junk(self, write, StatusAndHeaders, url: str, k: int) -> None:
        """One junk record, cycling through the kinds extract must skip."""
        kind = k % 4
        if kind == 0:
            body = b"<html><body><h1>404 Not Found</h1></body></html>"
            write(
                url + "?missing",
                "response",
                body,
                StatusAndHeaders(
                    "404 Not Found", [("Content-Type", "text/html")], protocol="HTTP/1.1"
                ),
            )
        elif kind == 1:
            body = b"\x89PNG\r\n\x1a\n" + self.rng.integers(0, 256, 600, dtype=np.uint8).tobytes()
            write(
                url.replace(".html", ".png"),
                "response",
                body,
                StatusAndHeaders("200 OK", [("Content-Type", "image/png")], protocol="HTTP/1.1"),
            )
        elif kind == 2:
            body = " ".join(self.words.take(80)).encode()
            write(
                url.replace(".html", ".txt"),
                "response",
                body,
                StatusAndHeaders("200 OK", [("Content-Type", "text/plain")], protocol="HTTP/1.1"),
            )
        else:
            write(
                url + "?empty",
                "response",
                b"",
                StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1"),
            )
        self.counts["junk_records"] += 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path, help="folder for the WARC shards")
    parser.add_argument(
        "--gb",
        type=float,
        default=1.0,
        help="uncompressed HTML payload, GB (10^9 bytes), all shards",
    )
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sites", type=int, default=400)
    parser.add_argument(
        "--mirror", type=float, default=0.05, help="share of pages that mirror an earlier article"
    )
    parser.add_argument(
        "--near", type=float, default=0.05, help="share of pages that near-duplicate one"
    )
    parser.add_argument(
        "--quote", type=float, default=0.15, help="share of fresh pages quoting earlier paragraphs"
    )
    parser.add_argument("--junk", type=float, default=0.01, help="junk records per page")
    parser.add_argument("--stop-density", type=float, default=0.40)
    parser.add_argument("--zipf-a", type=float, default=1.15)
    parser.add_argument("--prefix", default="synth")
    parser.add_argument(
        "--first",
        type=int,
        default=None,
        help="write only the first FIRST shards of the --shards (each still --gb/--shards in size)",
    )
    parser.add_argument(
        "--no-gzip",
        dest="gzip",
        action="store_false",
        help="write plain .warc files (a crawler's uncompressed WARCs) instead of per-record gzip",
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    crawl = Crawl(args)
    budget = int(args.gb * 1e9 / args.shards)
    shards = []
    for shard in range(min(args.shards, args.first or args.shards)):
        shards.append(
            crawl.write_shard(
                args.out / f"{args.prefix}-{shard:02d}.warc{'.gz' if args.gzip else ''}",
                budget,
                shard,
            )
        )
        print(
            f"{shards[-1]['path']}: {shards[-1]['pages']} pages, "
            f"{shards[-1]['payload_bytes'] / 1e6:.0f} MB HTML, "
            f"{shards[-1]['file_bytes'] / 1e6:.0f} MB on disk",
            flush=True,
        )
    summary = {
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "payload_bytes": sum(s["payload_bytes"] for s in shards),
        "file_bytes": sum(s["file_bytes"] for s in shards),
        "pages": sum(s["pages"] for s in shards),
        "planted": dict(crawl.counts),
        "seconds": round(time.perf_counter() - started, 1),
        "shards": shards,
    }
    (args.out / "crawl.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "shards"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
