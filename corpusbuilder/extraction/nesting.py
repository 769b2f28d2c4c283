"""Pages nested deeper than libxml2 reads (§2.7.1's parsing, on hostile input).

libxml2 stops reading an HTML document nested deeper than 256 elements (2,048 with huge_tree)
and drops everything after that point, text included. Such a page is read again without its most
repeated tag: a hundred thousand nested <div>s hold no structure a reader would miss.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Callable

MAX_FLATTENINGS = 3  # tags dropped, one name at a time, before the page is given up as too deep
LIBXML2_MAX_DEPTH = 2048  # with huge_tree
_TAG_NAME = re.compile(r"<\s*/?\s*([A-Za-z][A-Za-z0-9]*)")


class TooDeepError(ValueError):
    """A page nested deeper than libxml2 reads even once its most repeated tags are dropped."""


def parsed_within_depth(parse: Callable, html: str | bytes):
    """``parse(html)`` — (document or None, the input it read) — of the page, or of the page
    without its most repeated tags when libxml2 stopped at its depth limit; TooDeepError when
    that does not help within MAX_FLATTENINGS."""
    for _ in range(MAX_FLATTENINGS):
        doc, html = parse(html)
        if not hit_depth_limit(doc):
            return doc, html
        html = without_most_repeated_tag(html)
    doc, html = parse(html)
    if hit_depth_limit(doc):
        raise TooDeepError(
            f"too-deep: elements nested beyond libxml2's limit of {LIBXML2_MAX_DEPTH}"
        )
    return doc, html


def without_most_repeated_tag(html: str | bytes) -> str:
    """The page with every start and end tag of its most frequent element name made a space."""
    text = html if isinstance(html, str) else html.decode("utf-8", "replace")
    names = collections.Counter(name.lower() for name in _TAG_NAME.findall(text))
    if not names:
        return text
    name = names.most_common(1)[0][0]
    return re.sub(rf"<\s*/?\s*{name}\b[^>]*>", " ", text, flags=re.IGNORECASE)


def hit_depth_limit(doc) -> bool:
    """Whether libxml2 stopped at its depth limit: it stops in the last element it opened."""
    depth, node = 0, doc
    while node is not None and len(node) and depth < LIBXML2_MAX_DEPTH:
        node, depth = node[-1], depth + 1
    return depth >= LIBXML2_MAX_DEPTH - 2
