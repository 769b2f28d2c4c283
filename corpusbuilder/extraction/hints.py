"""Structure hints: what a page's markup says about a block beyond jusText's features.

The semantic elements and the class/id words templates use for navigation, comments and the
article itself. jusText ignores them; the learned classifier (`classifier`) reads them as
features, and the `best` preset's segmentation cuts blocks where they change.
"""

from __future__ import annotations

import re
from functools import lru_cache

# What a page's markup says about a block beyond jusText's features: the semantic elements and
# the class/id words templates use for navigation, comments and the article itself. jusText
# ignores them; the learned classifier (corpusbuilder.extraction.classifier) reads them as features.
# Per hint: its tags, the substrings of class or id that set it, and the words that set it only
# at a word boundary (a regex). Substrings are tested with `in`: a regex alternation tries every
# alternative at every position.
STRUCTURE_HINTS: dict[str, tuple[frozenset[str], tuple[str, ...], re.Pattern | None]] = {
    "nav": (
        frozenset({"nav", "menu"}),
        (
            "nav",
            "menu",
            "breadcrumb",
            "pagination",
            "pager",
            "toolbar",
            "tabs",
            "skip",
            "login",
            "search",
        ),
        None,
    ),
    "footer": (frozenset({"footer"}), ("foot", "copyright", "legal", "disclaimer", "bottom"), None),
    "header": (frozenset({"header"}), ("header", "masthead", "banner", "topbar", "logo"), None),
    "aside": (
        frozenset({"aside"}),
        (
            "side",
            "widget",
            "related",
            "recommend",
            "promo",
            "sponsor",
            "teaser",
            "popular",
            "trending",
            "advert",
            "newsletter",
            "subscribe",
            "cookie",
            "modal",
            "popup",
        ),
        re.compile(r"\bads?\b"),
    ),
    "comment": (
        frozenset(),
        ("comment", "reply", "respond", "discussion", "disqus", "forum"),
        None,
    ),
    "social": (
        frozenset({"figcaption"}),
        (
            "share",
            "social",
            "twitter",
            "facebook",
            "keyword",
            "categor",
            "byline",
            "author",
            "dateline",
            "caption",
            "credit",
        ),
        re.compile(r"\btags?\b|\bmeta\b"),
    ),
    "article": (
        frozenset({"article", "main"}),
        ("article", "content", "entry", "story", "blog", "detail", "artikel", "inhalt", "beitrag"),
        re.compile(r"\bpost|\bmain|\bbody|\btext|\bnews"),
    ),
    "list": (frozenset({"li", "ul", "ol", "dl", "dd", "dt", "option"}), (), None),
    "table": (frozenset({"td", "th", "tr", "table"}), (), None),
    "quote": (frozenset({"blockquote", "pre", "code"}), ("quote",), None),
    "paragraph": (frozenset({"p"}), (), None),
}
HINT_BITS: dict[str, int] = {name: 1 << i for i, name in enumerate(STRUCTURE_HINTS)}
_TAG_HINTS: dict[str, int] = {
    tag: sum(HINT_BITS[name] for name, (tags, _, _) in STRUCTURE_HINTS.items() if tag in tags)
    for tags, _, _ in STRUCTURE_HINTS.values()
    for tag in tags
}


# Whether a class or id word sets any hint at all, in one search (it matches exactly where one
# of the hints' substrings or boundary words does): most class words a crawl brings that the
# cache has not seen (hashed names such as "css-1dbjc4n") set none, and the search costs a third
# of the hint-by-hint tests.
_ANY_HINT = re.compile(
    "|".join(
        [
            *(
                re.escape(substring)
                for _, substrings, _ in STRUCTURE_HINTS.values()
                for substring in substrings
            ),
            *(
                boundary_words.pattern
                for _, _, boundary_words in STRUCTURE_HINTS.values()
                if boundary_words is not None
            ),
        ]
    )
)


# Bounded caches: pages of one site repeat their templates' class names, and sites share most
# class words ("container", "row", "clearfix"), while a crawl of a million sites must not grow
# the process without end.
@lru_cache(maxsize=200_000)
def word_hints(word: str) -> int:
    """STRUCTURE_HINTS bits that one whitespace-free word of a class or id sets."""
    if _ANY_HINT.search(word) is None:
        return 0
    bits = 0
    for name, (_, substrings, boundary_words) in STRUCTURE_HINTS.items():
        if any(substring in word for substring in substrings) or (
            boundary_words is not None and boundary_words.search(word)
        ):
            bits |= HINT_BITS[name]
    return bits


@lru_cache(maxsize=200_000)
def element_hints(tag: str, css_class: str | None, element_id: str | None) -> int:
    """STRUCTURE_HINTS bits of one element, from its tag and class + id.

    A hint's class/id test is met by "class id" as a whole exactly when one of its words meets
    it: no substring holds whitespace, and a word boundary falls where whitespace does.
    """
    bits = _TAG_HINTS.get(tag, 0)
    for attribute in (css_class, element_id):
        if attribute:
            for word in attribute.lower().split():
                bits |= word_hints(word)
    return bits
