"""jusText's segmentation (thesis §2.7.1): an HTML page parsed, cleaned of what can never be
content and cut into blocks at block-level tags, each with the features classification reads.

Where the thesis text and the reference ``justext`` package 3.0.2 differ, this follows the
package: lengths are counted in characters, stop-word density is taken over ``text.split()``
lower-cased and ``body`` is a block tag. A block's words (``n_words``: the thesis presets' length
and the `best` preset's) count each character of a script written without spaces as one
(`common.scripts`): a Chinese paragraph is not one word. With ``structure_hints`` (the `best`
preset's reading) blocks are also cut at HTML5's block-level elements and carry the hints of
`hints`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from lxml import etree
from lxml.html.defs import block_tags as _FRAGMENT_BLOCK_TAGS  # div or span around a fragment

from corpusbuilder.common.scripts import NO_SPACE_SCRIPTS, in_script_units, script_units
from corpusbuilder.extraction.hints import element_hints
from corpusbuilder.extraction.nesting import parsed_within_depth

try:  # the compiled walk, built with the package where a C compiler was at hand (setup.py)
    # compiled from _walk.pyx at build time: mypy sees no module (and no stub) for it
    from corpusbuilder.extraction import _walk  # type: ignore[attr-defined]
except (ImportError, ValueError):  # ValueError: a C struct of lxml changed size
    _walk = None


@dataclass(slots=True)
class Block:
    """One text block of a page with the features Algorithm 2.2 reads (§2.7.2)."""

    text: str
    dom_path: str  # tag names from the root, dot-separated ("html.body.div.p")
    xpath: str  # "/html[1]/body[1]/div[2]/p[1]", positions among same-named siblings
    heading: bool  # inside h1…h6 (any "h<digit>" tag on the path)
    chars_in_links: int
    tags_count: int
    n_chars: int
    n_words: int  # length units: whitespace words, a character each in scripts without spaces
    n_stopwords: int
    link_density: float
    stopword_density: float
    hints: int = 0  # STRUCTURE_HINTS bits of the block's element and its ancestors
    near_hints: int = 0  # those of the block's element and its parent only
    cf_class: str = ""  # "bad" | "short" | "near-good" | "good"
    final_class: str = ""  # "good" | "bad"


# --- §2.7.1 parsing and preprocessing ----------------------------------------------------------

# The thesis' footnote 15 list plus `body`, as in the package: text directly in <body> is a block.
PARAGRAPH_TAGS = frozenset(
    {
        "body",
        "blockquote",
        "caption",
        "center",
        "col",
        "colgroup",
        "dd",
        "div",
        "dl",
        "dt",
        "fieldset",
        "form",
        "legend",
        "optgroup",
        "option",
        "p",
        "pre",
        "table",
        "td",
        "textarea",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
        "li",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
    }
)
# HTML's block-level elements that jusText's list (written before HTML5) lacks. The learned
# classifier's blocks break at them too: a <figcaption>, or an <aside> of teasers, then no longer
# shares a block with the article's text, and no block classifier can split a block (issue 18).
HTML5_BLOCK_TAGS = frozenset(
    {
        "address",
        "article",
        "aside",
        "details",
        "dialog",
        "figcaption",
        "figure",
        "footer",
        "header",
        "hgroup",
        "hr",
        "main",
        "nav",
        "ol",
        "section",
        "summary",
    }
)
LEARNED_PARAGRAPH_TAGS = PARAGRAPH_TAGS | HTML5_BLOCK_TAGS


def paragraph_tags(structure_hints: bool) -> frozenset[str]:
    """The tags a block breaks at: jusText's (and the package's) without structure hints; with
    them, as the learned classifier reads a page, HTML's other block-level elements too."""
    return LEARNED_PARAGRAPH_TAGS if structure_hints else PARAGRAPH_TAGS


# The package cleans pages with lxml_html_clean's Cleaner(scripts, comments, style, embedded,
# forms, kill_tags=head). Its effect, reproduced without copying or mutating the tree:
# these elements vanish with everything inside them (their tail text stays), and so does a
# <link rel=stylesheet> ...
_KILLED_TAGS = frozenset(
    {
        "head",
        "base",
        "script",
        "style",
        "applet",
        "button",
        "input",
        "select",
        "textarea",
    }
)
# ... and these lose only the tag: their text and children join the parent.
_UNWRAPPED_TAGS = frozenset({"form", "iframe", "embed", "layer", "object", "param"})

_HEADING_IN_PATH = re.compile(r"\bh\d\b")
_WHITESPACE_WITH_NEWLINE = re.compile(r"[^\S\n\r]*[\n\r]\s*")
_WHITESPACE_WITHOUT_NEWLINE = re.compile(r"[^\S\n]+")
_LOOKS_LIKE_FULL_HTML = re.compile(r"^\s*<(?:html|!doctype)", re.I)
_LOOKS_LIKE_FULL_HTML_BYTES = re.compile(rb"^\s*<(?:html|!doctype)", re.I)


def _parsed(html: str | bytes):
    """(libxml2's document or None, the input it read): a str libxml2 refuses is read as UTF-8;
    a page nested too deep for libxml2 is read flattened (`nesting`), or TooDeepError."""
    return parsed_within_depth(_parsed_as_it_is, html)


def _parsed_as_it_is(html: str | bytes):
    # collect_ids: libxml2 would hash every id attribute for lookups by id, which nothing here makes
    parser = etree.HTMLParser(collect_ids=False, huge_tree=True)
    try:
        return etree.fromstring(html, parser), html
    except ValueError:
        # A str with an XML encoding declaration (or unencodable surrogates): the package
        # re-encodes it as UTF-8 and lets libxml2 read the bytes.
        if not isinstance(html, str):
            return None, html
        html = html.encode("utf8", "replace")
        try:
            return etree.fromstring(html, parser), html
        except (ValueError, etree.LxmlError):
            return None, html
    except etree.LxmlError:
        return None, html


def _runaway_title_patterns(text: type):
    """(title start tag, title end tag, any tag's start, the end tag to insert) for str or bytes."""
    encode = str.encode if text is bytes else str
    return (
        re.compile(encode(r"<title\b[^>]*>"), re.I),
        re.compile(encode(r"</title[\s/>]"), re.I),
        re.compile(encode(r"<[a-z/!]"), re.I),
        encode("</title>"),
    )


_RUNAWAY_TITLE_PATTERNS = {text: _runaway_title_patterns(text) for text in (str, bytes)}


def _runaway_title_closed(html: str | bytes) -> str | bytes | None:
    """The page with a ``</title>`` put before the first tag after its <title>, when the title is
    never closed; None when it is closed, or nothing follows it.

    libxml2, like HTML5, reads everything up to ``</title>`` as the title's text, so a page whose
    end tag was lost (crawls hold them; eight L3S-GN1 pages, whose annotators saw their articles)
    parses as one long title and no body. Browsers of the time closed the title at the next tag.
    """
    start_tag, end_tag, tag_start, closing = _RUNAWAY_TITLE_PATTERNS[
        str if isinstance(html, str) else bytes
    ]
    start = start_tag.search(html)
    if start is None or end_tag.search(html, start.end()):
        return None
    inner_tag = tag_start.search(html, start.end())
    if inner_tag is None:
        return None
    cut = inner_tag.start()
    return html[:cut] + closing + html[cut:]


def parse_html(html: str | bytes, close_runaway_title: bool = True):
    """Parse a page into an lxml element the way ``lxml.html.fromstring`` does (§2.7.1).

    Returns None when there is nothing to parse; never raises on malformed, binary-ish or empty
    input, only TooDeepError for a page nested too deep even flattened (`nesting`). A full
    document gives its <html> root; a fragment gives its single element, or a <div>/<span>
    around its parts, as lxml.html does, so block paths match the package's.
    Plain etree elements (not lxml.html's) keep the later tree walk cheap.

    `close_runaway_title`: a <title> never closed swallows the rest of the page as its text
    (:func:`_runaway_title_closed`); the page is parsed again with the title closed where its
    text meets the first tag. False keeps what the ``justext`` package (lxml) does: no blocks.
    """
    doc, html = _parsed(html)
    if doc is None:
        return None
    if close_runaway_title:
        title = doc.find("head/title")
        if title is not None and title.text and "<" in title.text:
            repaired = _runaway_title_closed(html)
            if repaired is not None:
                doc, html = _parsed(repaired)
                if doc is None:
                    return None
    if isinstance(html, str):
        looks_full = _LOOKS_LIKE_FULL_HTML.match(html) is not None
    else:
        looks_full = _LOOKS_LIKE_FULL_HTML_BYTES.match(html) is not None
    if looks_full or doc.find("head") is not None:
        return doc
    body = doc.find("body")
    if body is None:
        return doc
    if len(body) == 1 and not (body.text or "").strip() and not (body[0].tail or "").strip():
        return body[0]
    body.tag = "div" if any(el.tag in _FRAGMENT_BLOCK_TAGS for el in body.iter()) else "span"
    return body


@lru_cache(maxsize=128)
def _lowercased(stoplist: frozenset[str]) -> frozenset[str]:
    return frozenset(word.lower() for word in stoplist)


@lru_cache(maxsize=128)
def _stop_words(stoplist: frozenset[str]) -> _walk.StopWords:
    """The lower-cased list as the compiled walk looks words up in it."""
    return _walk.StopWords(_lowercased(stoplist))


def _normalize_whitespace(text: str) -> str:
    """Each whitespace run of a stripped text becomes one newline if it holds a line break, else
    one space. Without a carriage return, that is each line's words joined by spaces and the
    lines that hold any joined by newlines: str methods, which are
    faster than regex substitution."""
    if "\r" in text:
        return _WHITESPACE_WITHOUT_NEWLINE.sub(" ", _WHITESPACE_WITH_NEWLINE.sub("\n", text))
    if "\n" in text:
        return "\n".join(
            [line for line in [" ".join(line.split()) for line in text.split("\n")] if line]
        )
    return " ".join(text.split())


def _collapsed_length(text: str) -> int:
    """len(text) once each whitespace run is one space, for a text that is not all whitespace."""
    return len(" ".join(text.split())) + text[0].isspace() + text[-1].isspace()


# Path strings are remembered for ancestors at most this many steps above a block: enough for
# any page libxml2 builds (it caps nesting at 256), while a pathologically deep tree is never
# asked for a string per ancestor, which would be quadratic.
_MAX_REMEMBERED_STEPS = 256


def _path_features(node: list, structure_hints: bool) -> tuple[str, str, bool, int]:
    """(dom_path, xpath, heading, hints) of a path node, a [tag, position, parent, element,
    features] chain from the root.

    ``heading`` is whether any tag on the path holds a word "h<digit>" (the package searches the
    dotted path; dots are word boundaries, so testing each tag on its own is the same).
    ``hints``: the STRUCTURE_HINTS bits of the path's elements (0 without ``structure_hints``).
    A node keeps its features (slot 4: these four and its own element's hint bits, None until
    asked) once they are worked out, so sibling blocks share their ancestors' instead of
    re-joining the whole path, and elements that never start a block holding text (most inline
    ones) never have their class and id read.
    """
    steps = []
    dom_path, xpath, heading, hints = "", "", False, 0
    while node is not None:
        if node[4] is not None:
            dom_path, xpath, heading, hints, _ = node[4]
            break
        steps.append(node)
        node = node[2]
    steps.reverse()
    remember = len(steps) <= _MAX_REMEMBERED_STEPS
    if not remember:
        dom_tail = ".".join(step[0] for step in steps)
        heading = heading or _HEADING_IN_PATH.search(dom_tail) is not None
        dom_path = f"{dom_path}.{dom_tail}" if dom_path else dom_tail
        xpath = f"{xpath}/" + "/".join(f"{step[0]}[{step[1]}]" for step in steps)
    for step in steps:
        tag = step[0]
        own_hints = (
            element_hints(tag, step[3].get("class"), step[3].get("id")) if structure_hints else 0
        )
        hints |= own_hints
        if remember:
            dom_path = f"{dom_path}.{tag}" if dom_path else tag
            xpath = f"{xpath}/{tag}[{step[1]}]"
            heading = heading or _heading_tag(tag)
            step[4] = (dom_path, xpath, heading, hints, own_hints)
    return dom_path, (xpath or "/"), heading, hints


@lru_cache(maxsize=4096)
def _heading_tag(tag: str) -> bool:
    """Whether a tag holds a word "h<digit>", as the package's search
    of the dotted path finds it."""
    return _HEADING_IN_PATH.search(tag) is not None


def _word_counts(text: str, stoplist: frozenset[str]) -> tuple[int, int]:
    """A text's words (``text.lower().split()``) and how many of them the
    lower-cased stop list holds."""
    words = text.lower().split()
    return len(words), sum(map(stoplist.__contains__, words))


def _make_block(
    text: str,
    n_words: int,
    n_stopwords: int,
    chars_in_links: int,
    tags_count: int,
    path_node,
    structure_hints: bool,
) -> Block:
    """Features of one block from its text, stripped, whitespace-normalised and not empty, and
    its word counts (:func:`_word_counts`), each computed once (§2.7.2)."""
    dom_path, xpath, heading, hints = _path_features(path_node, structure_hints)
    near_hints = _near_hints(path_node) if structure_hints else 0
    n_chars = len(text)
    return Block(
        text,
        dom_path,
        xpath,
        heading,
        chars_in_links,
        tags_count,
        n_chars,
        n_words,
        n_stopwords,
        chars_in_links / n_chars,
        n_stopwords / n_words,
        hints,
        near_hints,
    )


def _close_block(
    blocks: list[Block],
    text_nodes: list[str],
    chars_in_links: int,
    tags_count: int,
    path_node,
    stoplist: frozenset[str],
    structure_hints: bool,
) -> None:
    """The Python walk's end of a block: its pieces joined and normalised; no block without text."""
    text = _normalize_whitespace("".join(text_nodes).strip())
    if text:
        blocks.append(
            _make_block(
                text,
                *_word_counts(text, stoplist),
                chars_in_links,
                tags_count,
                path_node,
                structure_hints,
            )
        )


def _near_hints(node: list) -> int:
    """STRUCTURE_HINTS bits of a path node's element and its parent: a class on <body> or a
    page-wide wrapper sets ``hints`` on every block; these say what is close around the block.
    Read from the features :func:`_path_features` left on the nodes, where it left them."""
    bits = 0
    for _ in range(2):
        if node is None:
            break
        remembered = node[4]
        bits |= (
            remembered[4]
            if remembered is not None
            else element_hints(node[0], node[3].get("class"), node[3].get("id"))
        )
        node = node[2]
    return bits


def count_stopwords(
    blocks: list[Block], stoplist: frozenset[str], tokens: Callable[[str], list[str]]
) -> None:
    """Recount each block's stop words, in place, with another list and other units (``tokens``
    of a block's text: the letters of a language written without spaces, say)."""
    stoplist = _lowercased(stoplist)
    for block in blocks:
        units = tokens(block.text)
        block.n_stopwords = sum(map(stoplist.__contains__, units))
        block.stopword_density = block.n_stopwords / len(units) if units else 0.0


def segment_blocks(root, stoplist: frozenset[str], structure_hints: bool = True) -> list[Block]:
    """Preprocess the page, cut it into blocks and compute each block's features (§2.7.1).

    One iterative walk over the tree (no recursion, so any nesting depth is fine) that leaves the
    tree untouched. Preprocessing happens during the walk: killed elements' subtrees are skipped,
    unwrapped elements are walked through without a tag of their own, and text that the
    package's Cleaner would merge into one text node (across comments and removed elements) is
    buffered and handed on as one piece, because whether a piece is blank — and so ignored — is
    judged per piece.

    A new block starts at every start and end of a block-level tag and at every second
    consecutive <br>; blocks whose text is empty once whitespace is stripped are dropped.

    ``structure_hints=False`` is jusText's own reading, the package's blocks: every block's
    ``hints`` stay 0 (jusText's classes never read them, and reading the elements' class and id is
    a good part of the walk) and blocks break only at PARAGRAPH_TAGS. With them, as the learned
    classifier reads a page, blocks break at HTML5_BLOCK_TAGS too (:func:`paragraph_tags`).

    With the compiled module (``corpusbuilder.extraction._walk``) the walk runs over libxml2's
    nodes, with the same blocks; a page holding a node it does not model takes the walk below.
    """
    if root is None:
        return []
    root_tag = root.tag
    if not isinstance(root_tag, str) or root_tag in _KILLED_TAGS:
        return []
    if _walk is not None:
        try:
            return _walk.segment_walk(
                root,
                _block_maker(),
                _stop_words(stoplist),
                structure_hints,
                _tags(structure_hints),
            )
        except _walk.Unsupported:
            pass
    return _segment_blocks_python(root, stoplist, structure_hints)


@lru_cache(maxsize=2)
def _tags(structure_hints: bool) -> _walk.Tags:
    """The tags the compiled walk treats apart, as :func:`segment_blocks` reads the page; made
    once, as it remembers the element names it meets."""
    return _walk.Tags(paragraph_tags(structure_hints), _KILLED_TAGS, _UNWRAPPED_TAGS)


@lru_cache(maxsize=1)
def _block_maker() -> _walk.BlockMaker:
    """The compiled walk's maker of blocks, which does :func:`_make_block`'s work (and
    `in_script_units`') and calls :func:`_path_features` only for a path too deep to remember."""
    return _walk.BlockMaker(
        Block,
        _path_features,
        element_hints,
        _heading_tag,
        _MAX_REMEMBERED_STEPS,
        np.array(list(NO_SPACE_SCRIPTS.values()), dtype=np.uintc),
        script_units,
    )


def _segment_blocks_python(root, stoplist: frozenset[str], structure_hints: bool) -> list[Block]:
    """:func:`segment_blocks`' walk with lxml's ``iterwalk``, for a root that is an element whose
    tag is not killed; words counted in script units (`in_script_units`), as the compiled walk
    counts them."""
    stoplist = _lowercased(stoplist)
    block_tags = paragraph_tags(structure_hints)
    blocks: list[Block] = []

    # The path is a persistent [tag, position, parent, element, features] chain so a block can
    # keep the path at its start in O(1); its features are worked out only for blocks that end up
    # holding text.
    path_node = None
    open_elements: list[tuple] = []  # (path node, {child tag: count}) for each open element
    child_counts: dict[str, int] = {}  # same-named children seen so far under the open element

    # the block being filled: its text pieces, link characters, inline tags and starting path
    text_nodes: list[str] = []
    chars_in_links = 0
    tags_count = 0
    block_path = None
    in_link = False
    after_br = False
    pending = ""  # text pieces that form one text node once the page is cleaned

    walker = etree.iterwalk(root, events=("start", "end", "comment"))
    for event, el in walker:
        if event == "comment":
            tail = el.tail
            if tail:
                pending += tail
            continue
        tag = el.tag
        if tag in _KILLED_TAGS or (tag == "link" and "stylesheet" in el.get("rel", "").lower()):
            if event == "start":
                walker.skip_subtree()
            elif el.tail:
                pending += el.tail
            continue
        if tag in _UNWRAPPED_TAGS:
            if el is root:
                tag = "div"  # the Cleaner cannot unwrap the root, it renames it
            else:
                piece = el.text if event == "start" else el.tail
                if piece:
                    pending += piece
                continue

        # A kept element's start or end closes the text node before it; a blank node is ignored.
        if pending:
            if not pending.isspace():
                text_nodes.append(pending)
                if in_link:
                    # length once whitespace runs are collapsed, as the package counts it
                    chars_in_links += _collapsed_length(pending)
                after_br = False
            pending = ""

        if event == "start":
            if tag == "image":
                tag = "img"  # the Cleaner's normalisation of an IE quirk
            position = child_counts.get(tag, 0) + 1
            child_counts[tag] = position
            open_elements.append((path_node, child_counts))
            path_node = [tag, position, path_node, el, None]
            child_counts = {}
            new_block = tag in block_tags or (after_br and tag == "br")
            if new_block:
                if tag == "br":
                    tags_count -= 1  # the first <br> of a <br><br> separator is no inline tag
            else:
                after_br = tag == "br"
                if after_br:
                    text_nodes.append(" ")
                elif tag == "a":
                    in_link = True
                tags_count += 1
            pending = el.text or ""
        else:
            path_node, child_counts = open_elements.pop()
            new_block = tag in block_tags
            if tag == "a":
                in_link = False
            pending = el.tail or ""

        if new_block:
            if text_nodes:
                _close_block(
                    blocks,
                    text_nodes,
                    chars_in_links,
                    tags_count,
                    block_path,
                    stoplist,
                    structure_hints,
                )
                text_nodes = []
            chars_in_links = 0
            tags_count = 0
            block_path = path_node

    # the root's own tail is read too, as the package does (no link is open any more)
    if pending and not pending.isspace():
        text_nodes.append(pending)
    if text_nodes:
        _close_block(
            blocks, text_nodes, chars_in_links, tags_count, block_path, stoplist, structure_hints
        )
    return in_script_units(blocks)
