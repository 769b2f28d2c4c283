"""Decoding a page body into text: byte-order marks, UTF-8, declared charsets, detection.

A crawl written by strangers declares wrong charsets, serves binaries as text/html and cuts pages
inside a character; each case is decoded defensively or refused with `UndecodableError`.
"""

from __future__ import annotations

import codecs
import re
import string

_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE
)
_CONTROL_BYTES = bytes(set(range(0x20)) - {0x09, 0x0A, 0x0C, 0x0D, 0x1B})
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


class UndecodableError(ValueError):
    """The body is binary or no charset turns it into text."""


def _codec(name: str | None) -> str | None:
    if not name:
        return None
    try:
        return codecs.lookup(name.strip().lower()).name
    except LookupError:
        return None


def control_byte_share(body: bytes, sample: int = 8192) -> float:
    """Share of C0 control bytes (but tab, newlines, form feed, escape) in the body's head."""
    head = body[:sample]
    return (len(head) - len(head.translate(None, _CONTROL_BYTES))) / max(1, len(head))


def decode_html(
    body: bytes, http_charset: str | None, max_control_share: float = 0.02
) -> tuple[str, str, str]:
    """Decode a page body: returns (text, codec name, where the charset came from).

    Order: byte-order mark; valid UTF-8 (a declaration is often wrong, valid multi-byte UTF-8
    by chance almost never is); the HTTP header charset; the `<meta>` charset; detection by
    charset-normalizer. A declared charset is used only if it decodes the body strictly, so a
    page served as "utf-8" in Latin-1 bytes still comes out readable.
    """
    for bom, name in _BOMS:
        if body.startswith(bom):
            return body.decode(name, errors="replace"), name, "bom"
    if control_byte_share(body) > max_control_share:
        raise UndecodableError("binary")
    declared = [("http", _codec(http_charset))]
    meta = _META_CHARSET.search(body[:4096])
    declared.append(("meta", _codec(meta.group(1).decode("ascii") if meta else None)))
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        source = next((s for s, c in declared if c == "utf-8"), "utf8-valid")
        return text, "utf-8", source
    for source, charset in declared:
        if charset and charset != "utf-8":
            try:
                return body.decode(charset), charset, source
            except (UnicodeDecodeError, LookupError):
                continue
    lenient = _decode_utf8_leniently(body)
    if lenient is not None:
        return lenient, "utf-8", "utf8-lenient"
    return _decode_detected(body)


# A UTF-8 page with a stray byte, or cut off inside its last character, keeps its text when no more
# than one byte in this many is broken; each broken byte becomes U+FFFD (counted in the docs row).
LENIENT_UTF8_BYTES_PER_ERROR = 1000


def _decode_utf8_leniently(body: bytes) -> str | None:
    """The body as UTF-8 with its few broken bytes replaced, when it is UTF-8 — it holds more
    valid multi-byte characters than broken bytes — and the broken bytes are rare; else None. A
    page in a one-byte code page (whatever its declaration says) has a broken "byte" at every
    accented letter and no valid multi-byte character: it goes to detection."""
    text = body.decode("utf-8", errors="replace")
    broken = replaced_characters(text) - body.count(b"\xef\xbf\xbd")
    if broken > max(1, len(body) // LENIENT_UTF8_BYTES_PER_ERROR):
        return None
    multibyte = sum(1 for ch in text if ord(ch) > 127 and ch != "\ufffd")
    return text if multibyte > broken else None


def replaced_characters(text: str) -> int:
    return text.count("\ufffd")


# Code pages whose text is within this much chaos (charset-normalizer's mess ratio) of the cleanest
# decode are a near tie: on a short page several decode almost equally cleanly.
NEAR_TIE_CHAOS = 0.1
# The page's text, roughly (it is not parsed yet), to guess its language from: tags dropped, and
# script and style bodies up to their first "<". Neither pattern reads past the next "<", so
# hostile markup costs linear time.
_SCRIPT = re.compile(r"<(?:script|style)\b[^<>]*>[^<]*", re.IGNORECASE)
_TAG = re.compile(r"<[^<>]*>")
_LANGUAGE_SAMPLE_CHARS = 2000
# Words are cut at ASCII white space only: a code page that reads a byte as a control character or
# a symbol must not cut a word into stop words ("fans…was", "eröffnet").
_WORD = re.compile(r"[^\t\n\f\r ]+")
_WORD_EDGE = string.punctuation + "\xa0«»‹›‚„“”‘’–—…¡¿"


def _decode_detected(body: bytes) -> tuple[str, str, str]:
    """Detection by charset-normalizer; a near tie is decided by words.

    Among the code pages that decode the page about equally cleanly, the one whose text has the
    most stop words of the page's language wins: a Czech page reads "ještě", "před" in
    windows-1250 and "ještì", "pøed" in windows-1252; a French one "à", "déjà" in windows-1252
    and "ą", "déją" in windows-1257. Where the words do not decide (a short page, a language
    without a stop list), windows-1252 wins: it is what undeclared Western pages overwhelmingly
    are (and the WHATWG default); else the cleanest decode.
    """
    from charset_normalizer import from_bytes

    matches = list(from_bytes(body[:65536]))
    if not matches:
        raise UndecodableError("undecodable")
    cleanest = min(matches, key=lambda match: match.chaos)
    near = [m for m in matches if m.chaos <= cleanest.chaos + NEAR_TIE_CHAOS]
    decoded: dict[str, str] = {}
    visible: dict[str, str] = {}

    def visible_text(name: str) -> str:
        """The whole page's text in a code page, tags and script bodies dropped, once each."""
        if name not in visible:
            decoded[name] = body.decode(name, errors="replace")
            visible[name] = _TAG.sub(" ", _SCRIPT.sub(" ", decoded[name]))
        return visible[name]

    # charset-normalizer folds windows-1252 into a match that decodes its sample to the same
    # text; it is named so where the whole page reads the same in both
    names = [
        "cp1252"
        if "cp1252" in m.could_be_from_charset
        and visible_text("cp1252") == visible_text(m.encoding)
        else m.encoding
        for m in near
    ]
    stoplist = _page_stoplist(visible_text(cleanest.encoding)) if len(near) > 1 else frozenset()
    words = [_stop_words(visible_text(n), stoplist) if stoplist else 0 for n in names]
    # The most stop words; on a tie windows-1252; then the least chaos (then the order of
    # charset-normalizer's matches).
    name = max(zip(words, names, near), key=lambda c: (c[0], c[1] == "cp1252", -c[2].chaos))[1]
    text = decoded[name] if name in decoded else body.decode(name, errors="replace")
    return text, _codec(name) or name, "detected"


def _page_stoplist(visible: str) -> frozenset[str]:
    """The stop list of the language py3langid guesses for a page's visible text; empty if
    none."""
    from corpusbuilder.common import stoplists
    from corpusbuilder.common.identifiers import identify_sample

    code, _ = identify_sample(" ".join(visible.split())[:_LANGUAGE_SAMPLE_CHARS])
    return stoplists.stoplist_for(code)[1] if code else frozenset()


def _stop_words(text: str, stoplist: frozenset[str]) -> int:
    if not stoplist:
        return 0
    return sum(1 for word in _WORD.findall(text.lower()) if word.strip(_WORD_EDGE) in stoplist)
