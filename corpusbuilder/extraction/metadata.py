"""A document's metadata from the page itself: title, author, date published, site name and
canonical URL.

Not in the thesis, whose corpora carry a document's URL alone; the web corpora built since
(SpiderLing's, the jusText-based ones) put the title on ``<doc>``, and trafilatura's
``with_metadata`` gives all five. They are read from the tree the extract stage has already
parsed, from what publishers write for machines — Open Graph (``og:*``,
``article:published_time``), schema.org in JSON-LD (``headline``, ``author``,
``datePublished``, ``publisher``) and in microdata (``itemprop``), Highwire's ``citation_*`` and
Dublin Core's ``dc.*`` meta tags, ``<link rel=canonical>``, ``<time datetime>`` — and, failing
those, from what a reader sees: ``<title>`` and the headings.

The title, in order of precedence: ``og:title`` (and ``twitter:title``), schema.org's
``headline``, ``citation_title`` and ``dc.title``; then the page's ``<h1>`` when it has only
one, or else the longest ``<h1>`` its ``<title>`` repeats; then ``<title>`` (the site's name cut
off when the page names its site); then the first ``<h1>``. The meta tags come first: they are
the headline as its publisher wrote it for others to show. Without them, a page's only ``<h1>``
is its heading, where ``<title>`` is the browser tab's, which mostly appends the site's name: on
the 169 gold pages of ../shared where the two differ, human annotators kept the ``<h1>`` as
content 124 times and the ``<title>`` 14 times; of a page's several ``<h1>``, the one its
``<title>`` repeats was content on 95 of 109 pages. Several ``<h1>`` and none repeated: the page
uses them for its logo and sections, and ``<title>`` is the document's. A page with neither
``<title>`` nor ``<h1>`` (CleanEval keeps pages cut down to their body) has the first ``<h2>``:
content on 27 of 40 such gold pages.

One walk over the tree in C (``iter`` of the few tags that can hold metadata), a JSON parse of
each JSON-LD script, the headings' text only for a page without title metadata: about 0.24 ms a
page, 5 % of the extract stage's time, most of it the walk (bench/bench_metadata.py,
docs/measurements.md).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date
from html import unescape
from urllib.parse import urljoin


@dataclass(frozen=True)
class Metadata:
    """What a page says about itself; None where it says nothing (readably)."""

    title: str | None = None
    author: str | None = None  # several are "; "-separated, as trafilatura gives them
    published: str | None = None  # the date published, ISO 8601: YYYY-MM-DD
    sitename: str | None = None
    canonical_url: str | None = None  # absolute, http(s)


NO_METADATA = Metadata()

# a field longer than this is cut at a word and ends with "…": a runaway <title> or an <h1>
# around a whole page would otherwise put megabytes into every format's <doc> line
MAX_CHARS = 500
# a longer "URL" is no address (cut, it would be a wrong one): dropped
MAX_URL_CHARS = 4096

# meta keys (a meta tag's property, name or itemprop, lower case; "ld:" the JSON-LD values
# read below; "time:" the <time> elements), each field's in order of precedence
TITLE_KEYS = (
    "og:title",
    "twitter:title",
    "ld:headline",
    "headline",
    "citation_title",
    "dc.title",
    "dcterms.title",
)
AUTHOR_KEYS = (
    "citation_author",
    "ld:author",
    "author",
    "article:author",
    "dc.creator",
    "dcterms.creator",
    "parsely-author",
    "sailthru.author",
    "byl",
)
PUBLISHED_KEYS = (
    "article:published_time",
    "ld:datepublished",
    "datepublished",
    "citation_publication_date",
    "citation_date",
    "citation_online_date",
    "dc.date.issued",
    "dcterms.issued",
    "dc.date",
    "dcterms.date",
    "dcterms.created",
    "og:published_time",
    "pubdate",
    "publishdate",
    "publish-date",
    "parsely-pub-date",
    "sailthru.date",
    "date",
    "time:pubdate",
    "time:first",  # the page's first <time datetime>: a last resort
)
SITENAME_KEYS = (
    "og:site_name",
    "ld:publisher",
    "ld:website",
    "application-name",
    "dc.publisher",
    "citation_journal_title",
)

# the <h1>s read (a page of hundreds uses them for everything); the shortest <h1> that counts
# as repeated by a <title> (a letter or an "At" is in most)
_MAX_H1S = 20
_MIN_REPEATED = 4
# the elements that can hold metadata, found in one walk in C
_TAGS = ("meta", "link", "script", "title", "h1", "time", "base")
# keys that repeat, a value each time (Highwire gives one author a tag)
_REPEATED = frozenset({"citation_author"})
# C0 and C1 control characters other than white space: no text holds them, and XML forbids most
_CONTROLS = dict.fromkeys([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0)])
# what cuts a <title> into the headline and the site's name; split keeps it, between the parts
_TITLE_SEPARATORS = re.compile(r"(\s+[|\-–—·•»:/]{1,2}\s+)")
_BY = re.compile(r"^by\s+", re.IGNORECASE)


def extract_metadata(root, url: str | None = None) -> Metadata:
    """The page's metadata, from its parsed tree ``root`` (`segmentation.parse_html`; None: no
    metadata); ``url``: where the page was fetched, against which a relative canonical link is
    resolved."""
    if root is None:
        return NO_METADATA
    found: dict[str, list[str]] = {}
    title = canonical = base = None
    h1s: list = []
    for element in root.iter(*_TAGS):
        tag = element.tag
        if tag == "meta":
            key = element.get("property") or element.get("name") or element.get("itemprop")
            content = element.get("content")
            if key and content:
                _found(found, key.lower(), content)
        elif tag == "script":
            if (
                element.text
                and (element.get("type") or "").strip().lower() == "application/ld+json"
            ):
                for key, value in json_ld_values(element.text):
                    _found(found, key, value)
        elif tag == "link":
            if canonical is None and "canonical" in (element.get("rel") or "").lower().split():
                canonical = element.get("href")
        elif tag == "time":
            when = element.get("datetime")
            if when:
                if element.get("itemprop") == "datePublished":
                    _found(found, "datepublished", when)
                elif element.get("pubdate") is not None:
                    _found(found, "time:pubdate", when)
                _found(found, "time:first", when)
        elif tag == "title":
            if title is None:
                title = element.text or ""
        elif tag == "h1":
            if len(h1s) < _MAX_H1S:
                h1s.append(element)
        elif base is None:
            base = element.get("href")
    sitename = _first(found, SITENAME_KEYS)
    return Metadata(
        title=_first(found, TITLE_KEYS) or _title_shown(root, h1s, title, sitename),
        author=_authors(found),
        published=next(
            filter(None, (iso_date(v) for k in PUBLISHED_KEYS for v in found.get(k, ()))), None
        ),
        sitename=sitename,
        canonical_url=_absolute_url(canonical, base, url)
        or _absolute_url(_first(found, ("og:url",)), base, url),
    )


def _found(found: dict[str, list[str]], key: str, value: str) -> None:
    """Keep a key's first value (all of a repeated key's)."""
    values = found.setdefault(key, [])
    if not values or key in _REPEATED:
        values.append(value)


def _first(found: dict[str, list[str]], keys: tuple[str, ...]) -> str | None:
    """The first value of the first of ``keys`` that says something once cleaned."""
    for key in keys:
        for value in found.get(key, ()):
            if cleaned := _clean(value):
                return cleaned
    return None


def _clean(value: str, limit: int = MAX_CHARS) -> str | None:
    """A value as a field holds it: entities a CMS left in decoded, control characters gone,
    white space one space, at most ``limit`` characters (cut at a word, with "…"); None when
    nothing is left."""
    value = value[: 4 * limit]  # bounds the work on a runaway value; the cut below decides
    if "&" in value:
        value = unescape(value)
    value = " ".join(value.translate(_CONTROLS).split())
    if len(value) > limit:
        value = value[:limit].rsplit(" ", 1)[0] + "…"
    return value or None


def _title_shown(root, h1_elements: list, title: str | None, sitename: str | None) -> str | None:
    """The title of a page without title metadata, from its headings and <title> (`_heading`);
    read only then, since most pages have the metadata."""
    h1s = [h for h in (_clean("".join(h1.itertext())) for h1 in h1_elements) if h]
    if found := _heading(h1s, _clean(title or ""), sitename):
        return found
    # neither <title> nor <h1>: the first <h2> that says something (see the module docstring)
    return next(filter(None, (_clean("".join(h2.itertext())) for h2 in root.iter("h2"))), None)


def _heading(h1s: list[str], title: str | None, sitename: str | None) -> str | None:
    """The title of a page without metadata (see the module's docstring): its only <h1>, the
    longest <h1> its <title> repeats, its <title> less the site's name, its first <h1>. An <h1>
    that is the site's name is its logo, never the title, and is cut off the <title>: the name
    the page gives its site, or the last part of a <title> whose other parts are longer ("A
    question - any ideas? - Forum"; in "Site - Headline" the headline is the longer)."""
    parts = _TITLE_SEPARATORS.split(title or "")
    sites = {sitename.casefold()} if sitename else set()
    if len(parts) > 1 and len("".join(parts[:-2])) > len(parts[-1]):
        sites.add(parts[-1].casefold())
    logos = [h1 for h1 in h1s if h1.casefold() in sites]
    if len(h1s) == 1 and not logos:
        return h1s[0]
    if title:
        folded = title.casefold()
        repeated = [
            h1
            for h1 in h1s
            if len(h1) >= _MIN_REPEATED and h1.casefold() in folded and h1 not in logos
        ]
        # the longest: a <title> repeats the site's name too, and a logo's <h1> holds it
        return max(repeated, key=len, default=None) or _without_sitename(
            parts, sitename or next(iter(logos), None)
        )
    return h1s[0] if h1s else None


def _without_sitename(parts: list[str], sitename: str | None) -> str:
    """A <title>, given cut at its separators, less the site's name that it adds before or
    after the headline ("Headline | Site"), when the site's name is known."""
    if sitename and len(parts) > 1:
        site = sitename.casefold()
        if parts[-1].casefold() == site:
            parts = parts[:-2]
        elif parts[0].casefold() == site:
            parts = parts[2:]
    return "".join(parts)


def _authors(found: dict[str, list[str]]) -> str | None:
    """The first of `AUTHOR_KEYS` that names a person: a profile's URL (``article:author``
    mostly is one) names none; "By " goes; several are "; "-separated."""
    for key in AUTHOR_KEYS:
        names = []
        for value in found.get(key, ()):
            name = _clean(_BY.sub("", value.strip()))
            if name and "://" not in name and not name.startswith("www."):
                names.append(name)
        if names:
            return _clean("; ".join(dict.fromkeys(names)))
    return None


def _absolute_url(href: str | None, base: str | None, url: str | None) -> str | None:
    """``href`` resolved against the page's <base href> and its own ``url``; None unless that
    gives an http(s) address."""
    if not href or len(href) > MAX_URL_CHARS:
        return None
    try:
        page = urljoin(url or "", base.strip()) if base else url or ""
        absolute = urljoin(page, href.strip())
    except ValueError:  # an address urllib cannot read ("http://[bad")
        return None
    absolute = absolute.translate(_CONTROLS).strip()
    if absolute.startswith(("http://", "https://")) and " " not in absolute:
        return absolute
    return None


# --------------------------------------------------------------------------- JSON-LD

# the schema.org types whose author and name are a document's, not a site's or a person's
_DOCUMENT_TYPE = re.compile(r"article|posting|report|webpage|creativework|recipe|review", re.I)


def json_ld_values(text: str) -> list[tuple[str, str]]:
    """("ld:<field>", value) pairs of one JSON-LD script: each object's headline,
    datePublished, authors and publisher's name, a WebSite's name; [] for a script that is not
    JSON (a page's fault, never an error)."""
    try:
        # strict=False: raw newlines and tabs inside strings, which CMSs write
        data = json.loads(text, strict=False)
    except (ValueError, RecursionError):
        return []
    values = []
    for item in _json_ld_objects(data):
        types = item.get("@type")
        kind = " ".join(types) if isinstance(types, list) else str(types or "")
        if isinstance(headline := item.get("headline"), str):
            values.append(("ld:headline", headline))
        if isinstance(published := item.get("datePublished"), str):
            values.append(("ld:datepublished", published))
        if "headline" in item or _DOCUMENT_TYPE.search(kind):
            names = _names(item.get("author"))
            if names:
                values.append(("ld:author", "; ".join(names)))
            values.extend(("ld:publisher", name) for name in _names(item.get("publisher"))[:1])
        elif kind == "WebSite" and isinstance(site := item.get("name"), str):
            values.append(("ld:website", site))
    return values


def _json_ld_objects(data) -> list[dict]:
    """The objects a JSON-LD script describes: itself, or those of its list or its @graph."""
    items = data if isinstance(data, list) else [data]
    objects = []
    for item in items:
        if isinstance(item, dict):
            objects.append(item)
            graph = item.get("@graph")
            if isinstance(graph, list):
                objects.extend(node for node in graph if isinstance(node, dict))
    return objects


def _names(value) -> list[str]:
    """The names of a schema.org author or publisher: a string, a Person or Organization with a
    name, or a list of them."""
    values = value if isinstance(value, list) else [value]
    names = []
    for item in values:
        name = item.get("name") if isinstance(item, dict) else item
        if isinstance(name, str) and name.strip():
            names.append(name)
    return names


# --------------------------------------------------------------------------- dates

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        1,
    )
    for name in names
}
_YMD = re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")
_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})(?:$|[T\s])")
_DMY = re.compile(r"(?<!\d)(\d{1,2})\.\s?(\d{1,2})\.\s?(\d{4})(?!\d)")
_D_MONTH_Y = re.compile(r"(?<!\d)(\d{1,2})(?:st|nd|rd|th)?\.?\s+([A-Za-z]{3,9})\.?,?\s+(\d{4})")
_MONTH_D_Y = re.compile(r"\b([A-Za-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})")


def iso_date(value: str) -> str | None:
    """A date as ISO's YYYY-MM-DD, from the forms pages write it in: ISO 8601 (with a time and
    zone after it, whose date is the one kept: the publisher's own), YYYY/MM/DD, YYYYMMDD,
    DD.MM.YYYY, "3 March 2015", "March 3, 2015" and RFC 2822's "Tue, 03 Mar 2015"; None for
    anything else, and for a day no calendar has (2015-02-30, 0000-00-00)."""
    value = value.strip()[:100]
    if match := _YMD.search(value) or _COMPACT.match(value):
        year, month, day = match.groups()
    elif match := _DMY.search(value):
        day, month, year = match.groups()
    elif (match := _D_MONTH_Y.search(value)) and match[2].lower() in _MONTHS:
        day, month, year = match[1], str(_MONTHS[match[2].lower()]), match[3]
    elif (match := _MONTH_D_Y.search(value)) and match[1].lower() in _MONTHS:
        day, month, year = match[2], str(_MONTHS[match[1].lower()]), match[3]
    else:
        return None
    try:
        found = date(int(year), int(month), int(day))
    except ValueError:
        return None
    return found.isoformat() if found.year >= 1000 else None
