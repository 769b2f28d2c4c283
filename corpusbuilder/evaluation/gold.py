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
# The annotators' classes (thesis §2.8.3): 1 headline, 2 full text, 3 supplemental (captions and
# the like), 4 related content (links to other articles), 5 user comments. The article is 1-3;
# the scope that keeps reader comments adds 5 (related links are lists of links, which neither
# scope keeps). Without a scope, all five are content, as Kohlschütter's "any content".
ARTICLE_CLASSES = frozenset({"x-nc-sel1", "x-nc-sel2", "x-nc-sel3"})
WITH_COMMENTS_CLASSES = ARTICLE_CLASSES | {"x-nc-sel5"}


def l3s_classes(comments: bool | None) -> frozenset[str]:
    """The L3S-GN1 classes that are content in a scope (None: every content class)."""
    if comments is None:
        return CONTENT_CLASSES
    return WITH_COMMENTS_CLASSES if comments else ARTICLE_CLASSES


# How each gold set annotates reader comments: as content, as boilerplate, or apart (its own
# class, so each scope reads its gold). CleanEval's guidelines remove only quotes of earlier
# posts, so discussions are content; Fundus' parsers and the hand-copied MSV texts hold the
# article alone; trafilatura's "without" snippets and CleanPortalEval's gold leave comments out;
# L3S-GN1 has a class for them. Measured in docs/extraction-scope.md: the words of blocks in
# comment containers that the gold keeps.
COMMENTS_IN_GOLD: dict[str, str] = {
    "cleaneval-dev": "content",
    "cleaneval-final": "content",
    "cleanportaleval": "boilerplate",
    "l3s-gn1": "apart",
    "trafilatura-dev": "boilerplate",
    "fundus": "boilerplate",
    "msv-big9": "boilerplate",
    "msv-chaos": "boilerplate",
}


def fits_scope(dataset: str, comments: bool) -> bool:
    """Whether a gold set's annotation is the scope's: every set for the scope it annotates,
    L3S-GN1 for both."""
    return COMMENTS_IN_GOLD[dataset] in ("apart", "content" if comments else "boilerplate")


_NOT_TEXT = frozenset({"script", "style", "noscript"})


def l3s_gold_text(annotated_html: bytes, classes: frozenset[str] = CONTENT_CLASSES) -> str:
    """The text the annotators put in ``classes`` (default: every content class), in order.

    Annotations nest (a headline inside a full-text span); a text node has the class of its
    innermost annotated element, the one the annotation tool meant (thesis §2.8.3). One line per
    outermost annotated element; text outside any annotated element (including that of class
    x-nc-sel0) is boilerplate.
    """
    root = etree.fromstring(annotated_html, etree.HTMLParser(encoding="utf-8"))
    if root is None:
        return ""
    lines: list[str] = []
    parts: list[str] = []
    stack: list[str | None] = []  # per open element, the innermost class around its text
    walker = etree.iterwalk(root, events=("start", "end", "comment", "pi"))
    for event, node in walker:
        current = stack[-1] if stack else None
        if event in ("comment", "pi"):
            if current in classes:
                parts.append(node.tail or "")
        elif event == "start":
            visible = node.tag not in _NOT_TEXT
            if not visible:
                walker.skip_subtree()  # its end event still comes, with its tail
            inner = _annotation(node) or current
            stack.append(inner)
            if visible and inner in classes:
                if node.tag in _LINE_BREAKING:
                    parts.append("\n")
                parts.append(node.text or "")
        else:
            inner = stack.pop()
            outer = stack[-1] if stack else None
            if inner in classes and node.tag in _LINE_BREAKING:
                parts.append("\n")
            if inner is not None and outer is None:  # an outermost annotated element ends
                if parts:
                    lines.append("".join(parts))
                parts = []
            if outer in classes:
                parts.append(node.tail or "")
    return "\n".join(lines)


def _annotation(element) -> str | None:
    """The L3S-GN1 class an element is annotated with (x-nc-sel0…5), if any."""
    found = [c for c in (element.get("class") or "").split() if c.startswith("x-nc-sel")]
    return found[-1] if found else None


# Tags that end a line of text: without the break, "<h1>Title</h1><p>Text" would read "TitleText".
_LINE_BREAKING = PARAGRAPH_TAGS | {"br", "hr"}


def iter_l3s_gn1(
    root: Path, dataset: str = "l3s-gn1", classes: frozenset[str] = CONTENT_CLASSES
) -> Iterator[GoldPage]:
    """L3S-GN1: ``original/<uuid>.html`` as input, gold text read from ``annotated/<uuid>.html``
    (the text of ``classes``: :func:`l3s_classes` gives a scope's)."""
    root = Path(root)
    urls = l3s_urls(root / "url-mapping.txt")
    for html_path in sorted((root / "original").glob("*.html")):
        annotated = root / "annotated" / html_path.name
        if not annotated.is_file():
            continue
        gold = l3s_gold_text(annotated.read_bytes(), classes)
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


def iter_dataset(
    name: str, gold_dir: Path | str, max_pages: int = 0, comments: bool | None = None
) -> Iterator[GoldPage]:
    """Pages of the dataset ``gold_dir/name`` in a stable order; ``max_pages`` > 0 keeps a prefix.
    ``comments``: the scope whose gold a set that annotates comments apart (L3S-GN1) gives; the
    other sets' gold is what they annotate (:data:`COMMENTS_IN_GOLD`).

    A missing folder, or one that yields no page, raises: a score over 0 pages is no score."""
    if name not in READERS:
        raise ValueError(f"unknown dataset {name!r} (known: {', '.join(READERS)})")
    root = Path(gold_dir) / name
    if not root.is_dir():
        raise FileNotFoundError(f"gold set {name}: no folder {root} (config key evaluate.gold_dir)")
    reader = READERS[name]
    if reader is iter_l3s_gn1:
        pages = iter_l3s_gn1(root, name, l3s_classes(comments))
    else:
        pages = reader(root, name)
    return _at_least_one(islice(pages, max_pages) if max_pages > 0 else pages, root)


def _at_least_one(pages: Iterator[GoldPage], root: Path) -> Iterator[GoldPage]:
    count = 0
    for count, page in enumerate(pages, 1):  # noqa: B007 - the count is read after the loop
        yield page
    if count == 0:
        raise ValueError(f"gold set {root}: no pages in it (config key evaluate.gold_dir)")
