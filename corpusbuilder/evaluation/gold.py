"""Readers for the boilerplate gold sets in their native formats (see ../shared/README.md).

Every reader yields :class:`GoldPage` objects of one shape: the page's HTML bytes plus either a
gold text (CleanEval, CleanPortalEval, L3S-GN1) or snippet lists (trafilatura's evaldata.json).
Readers go in file-name order so runs and ``max_pages`` prefixes are reproducible.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from lxml import etree

from corpusbuilder.extraction.segmentation import PARAGRAPH_TAGS


@dataclass(frozen=True)
class GoldPage:
    """One evaluation page: input HTML and what a perfect extractor's output must contain."""

    dataset: str
    page_id: str
    html: bytes
    http_charset: str | None = None  # a charset the dataset declares for the page, if any
    gold_text: str | None = None  # the main content as plain text, when the set has it
    with_snippets: tuple[str, ...] = ()  # snippet sets: must appear in the output
    without_snippets: tuple[str, ...] = ()  # snippet sets: must not appear in the output
    url: str | None = None  # where the page was crawled, when the set records it


def _decode_text_file(data: bytes) -> str:
    """Gold text files are mostly UTF-8; the older CleanEval ones are Windows Western."""
    try:
        # utf-8-sig: a byte-order mark would hide the ``URL:`` line from cleaneval_gold_text
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


# --- CleanEval and CleanPortalEval --------------------------------------------------------------

_TEXT_WRAPPER_START = re.compile(rb"\A\s*<text\b([^>]*)>", re.IGNORECASE)
_TEXT_WRAPPER_END = re.compile(rb"</text>\s*\Z", re.IGNORECASE)
_WRAPPER_ENCODING = re.compile(rb"""\bencoding\s*=\s*["']?([^"'\s>]+)""", re.IGNORECASE)
_WRAPPER_ID = re.compile(rb"""\bid\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
_CLEANEVAL_MARKERS = re.compile(r"<[phl]>", re.IGNORECASE)


def unwrap_cleaneval_input(data: bytes) -> tuple[bytes, str | None]:
    """Strip CleanEval's ``<text id=… encoding=…>`` wrapper; return the
    page and its declared charset.

    The wrapper is not part of the page: left in, libxml2 would take ``<text>`` for an element
    of the body and file the whole document under it.
    """
    charset = None
    start = _TEXT_WRAPPER_START.match(data)
    if start:
        declared = _WRAPPER_ENCODING.search(start.group(1))
        if declared and declared.group(1).lower() not in (b"unset", b"unknown", b""):
            charset = declared.group(1).decode("ascii", "replace")
        data = data[start.end() :]
        data = _TEXT_WRAPPER_END.sub(b"", data)
    return data, charset


def cleaneval_url(data: bytes) -> str | None:
    """The page's URL: the ``id`` of CleanEval's ``<text>`` wrapper, when it has one."""
    start = _TEXT_WRAPPER_START.match(data)
    found = _WRAPPER_ID.search(start.group(1)) if start else None
    return found.group(1).decode("utf-8", "replace").strip() if found else None


_CHARACTER_REFERENCE = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")


def cleaneval_gold_text(raw: str) -> str:
    """The plain text of a CleanEval gold file: the ``URL:`` line and ``<p>/<h>/<l>`` markers
    removed, character references read as the characters they stand for.

    CleanPortalEval's files open with a blank line before ``URL:`` and keep the pages' references
    (``it&#8217;s``, ``&mdash;``: 1,186 in 64 of its 71 files), which no extractor's text holds.
    Only references closed by ``;`` are read, so a plain-text ``&copy2016`` stays as it is.
    """
    lines = (
        raw.lstrip().splitlines()
    )  # the URL line past leading blank lines, as gold_file_url reads it
    if lines and lines[0].startswith("URL:"):
        lines = lines[1:]
    text = _CLEANEVAL_MARKERS.sub(" ", "\n".join(lines))
    return _CHARACTER_REFERENCE.sub(lambda found: html.unescape(found.group()), text)


def _numeric_then_name(path: Path) -> tuple:
    """CleanEval names pages by number: order 2 before 10."""
    return (0, int(path.stem), "") if path.stem.isdigit() else (1, 0, path.stem)


def gold_file_url(raw: str) -> str | None:
    """The ``URL: …`` first line of a CleanEval-format gold file, if it has one."""
    first = raw.lstrip().split("\n", 1)[0]
    return first.removeprefix("URL:").strip() or None if first.startswith("URL:") else None


def iter_cleaneval(root: Path, dataset: str) -> Iterator[GoldPage]:
    """CleanEval-format sets: ``input/<id>.html`` and ``GoldStandard/<id>.txt`` (cleaneval-dev,
    cleaneval-final, cleanportaleval; fundus, msv-big9 and msv-chaos share the layout, without
    CleanEval's ``<text>`` wrapper and with one paragraph per gold line).

    Pages without a gold file are skipped (59 in cleaneval-final have none).
    """
    root = Path(root)
    for html_path in sorted((root / "input").glob("*.html"), key=_numeric_then_name):
        gold_path = root / "GoldStandard" / f"{html_path.stem}.txt"
        if not gold_path.is_file():
            continue
        raw = html_path.read_bytes()
        html, charset = unwrap_cleaneval_input(raw)
        gold_raw = _decode_text_file(gold_path.read_bytes())
        yield GoldPage(
            dataset,
            html_path.stem,
            html,
            charset,
            gold_text=cleaneval_gold_text(gold_raw),
            url=cleaneval_url(raw) or gold_file_url(gold_raw),
        )


# --- L3S-GN1 ------------------------------------------------------------------------------------

CONTENT_CLASSES = frozenset({"x-nc-sel1", "x-nc-sel2", "x-nc-sel3", "x-nc-sel4", "x-nc-sel5"})
_NOT_TEXT = frozenset({"script", "style", "noscript"})


def _is_annotated(element) -> bool:
    return not CONTENT_CLASSES.isdisjoint((element.get("class") or "").split())


def l3s_gold_text(annotated_html: bytes) -> str:
    """The text of every outermost element annotated as content (classes x-nc-sel1…5), in order.

    Annotations nest (a headline inside a full-text span), so only elements without an annotated
    ancestor are read — each piece of content is counted once. One line per element; text
    outside any annotated element (including that of class x-nc-sel0) is boilerplate.
    """
    root = etree.fromstring(annotated_html, etree.HTMLParser(encoding="utf-8"))
    if root is None:
        return ""
    pieces = []
    walker = etree.iterwalk(root, events=("start",))  # comments and PIs are not yielded
    for _, element in walker:
        if element.tag in _NOT_TEXT:
            walker.skip_subtree()
        elif _is_annotated(element):
            pieces.append(_visible_text(element))
            walker.skip_subtree()
    return "\n".join(pieces)


# Tags that end a line of text: without the break, "<h1>Title</h1><p>Text" would read "TitleText".
_LINE_BREAKING = PARAGRAPH_TAGS | {"br", "hr"}


def _visible_text(element) -> str:
    """The element's text, a line break at block-level tags, no scripts, styles or comments."""
    parts = []
    walker = etree.iterwalk(element, events=("start", "end", "comment", "pi"))
    for event, node in walker:
        if event in ("comment", "pi"):
            parts.append(node.tail or "")
            continue
        visible = node.tag not in _NOT_TEXT
        if event == "start":
            if not visible:
                walker.skip_subtree()
                continue
            if node.tag in _LINE_BREAKING:
                parts.append("\n")
            parts.append(node.text or "")
        else:
            if visible and node.tag in _LINE_BREAKING:
                parts.append("\n")
            if node is not element:
                parts.append(node.tail or "")
    return "".join(parts)


def iter_l3s_gn1(root: Path, dataset: str = "l3s-gn1") -> Iterator[GoldPage]:
    """L3S-GN1: ``original/<uuid>.html`` as input, gold text read from ``annotated/<uuid>.html``."""
    root = Path(root)
    urls = l3s_urls(root / "url-mapping.txt")
    for html_path in sorted((root / "original").glob("*.html")):
        annotated = root / "annotated" / html_path.name
        if not annotated.is_file():
            continue
        gold = l3s_gold_text(annotated.read_bytes())
        yield GoldPage(
            dataset,
            html_path.stem,
            html_path.read_bytes(),
            gold_text=gold,
            url=urls.get(html_path.stem),
        )


def l3s_urls(mapping: Path) -> dict[str, str]:
    """``url-mapping.txt``: ``<urn:uuid:ID><TAB>URL`` lines → {ID: URL}
    (empty when the file is absent)."""
    if not mapping.is_file():
        return {}
    pairs = (
        line.split("\t", 1)
        for line in mapping.read_text(encoding="utf-8", errors="replace").splitlines()
    )
    return {
        key.strip().strip("<>").removeprefix("urn:uuid:"): url.strip()
        for key, url in (pair for pair in pairs if len(pair) == 2)
    }


# --- trafilatura-style snippet sets ---------------------------------------------------------------


def iter_snippet_set(root: Path, dataset: str = "trafilatura-dev") -> Iterator[GoldPage]:
    """``evaldata.json`` = {url: {file, with: [...], without: [...]}}; pages under ``html/``.

    Entries whose file is missing are skipped. The URL is the page id.
    """
    root = Path(root)
    entries = json.loads((root / "evaldata.json").read_text(encoding="utf-8"))
    for url in sorted(entries):
        entry = entries[url]
        html_path = root / "html" / entry["file"]
        if not html_path.is_file():
            continue
        yield GoldPage(
            dataset,
            url,
            html_path.read_bytes(),
            with_snippets=tuple(entry.get("with", ())),
            without_snippets=tuple(entry.get("without", ())),
            url=url,
        )


# --- one entry point ------------------------------------------------------------------------------

READERS: dict[str, Callable[[Path, str], Iterator[GoldPage]]] = {
    "cleaneval-dev": iter_cleaneval,
    "cleaneval-final": iter_cleaneval,
    "cleanportaleval": iter_cleaneval,
    "l3s-gn1": iter_l3s_gn1,
    "trafilatura-dev": iter_snippet_set,
    "fundus": iter_cleaneval,
    "msv-big9": iter_cleaneval,
    "msv-chaos": iter_cleaneval,
}


def gold_source(dataset: str) -> str:
    """The annotation campaign a gold set comes from; a held-out model is trained without all of it.

    CleanEval's dev and final sets were annotated together, as were msv-big9 and msv-chaos (one
    team, one guide): a model that saw one of a pair has learned the other's conventions.
    """
    for prefix, source in (("cleaneval-", "cleaneval"), ("msv-", "msv")):
        if dataset.startswith(prefix):
            return source
    return dataset


def iter_dataset(name: str, gold_dir: Path | str, max_pages: int = 0) -> Iterator[GoldPage]:
    """Pages of the dataset ``gold_dir/name`` in a stable order; ``max_pages`` > 0 keeps a prefix.

    A missing folder, or one that yields no page, raises: a score over 0 pages is no score."""
    if name not in READERS:
        raise ValueError(f"unknown dataset {name!r} (known: {', '.join(READERS)})")
    root = Path(gold_dir) / name
    if not root.is_dir():
        raise FileNotFoundError(f"gold set {name}: no folder {root} (config key evaluate.gold_dir)")
    pages = READERS[name](root, name)
    return _at_least_one(islice(pages, max_pages) if max_pages > 0 else pages, root)


def _at_least_one(pages: Iterator[GoldPage], root: Path) -> Iterator[GoldPage]:
    count = 0
    for count, page in enumerate(pages, 1):  # noqa: B007 - the count is read after the loop
        yield page
    if count == 0:
        raise ValueError(f"gold set {root}: no pages in it (config key evaluate.gold_dir)")
