"""Stage `quality`: per corpus document, the quality signals of the pipelines corpus users run
today, and the rules of each that the document fails.

The thesis stops at boilerplate and duplicates; Gopher, C4 and FineWeb go on to score what is
left and drop the worst. Each signal here is computed as its paper states it and as datatrove
(HuggingFace's implementation of all three, whose verdicts tests/test_quality.py compares) reads
it, on the document's exported text (its blocks joined by blank lines):

- Gopher quality filters (Rae et al. 2021, App. A, "Quality filtering"): ``words`` (tokens with
  a character that is not punctuation), ``mean_word_length`` (of those), ``symbol_word_ratio``
  (``#`` or ellipses per token, the larger), ``bullet_lines`` and ``ellipsis_lines`` (share of
  lines starting with a bullet, ending in an ellipsis), ``alpha_words`` (share of tokens with a
  letter), ``stop_words`` (distinct stop words of the document's language);
- Gopher repetition filters (App. A, Table A1): ``dup_line_frac`` / ``dup_para_frac`` (lines,
  paragraphs that repeat an earlier one) and their ``_char_frac`` (their characters over the
  text's), ``top_{2,3,4}gram_char_frac`` (characters of the most frequent n-gram, all its
  occurrences), ``dup_{5..10}gram_char_frac`` (characters in n-grams seen before);
- C4 (Raffel et al. 2020, §2.2 "Colossal Clean Crawled Corpus"): ``c4_punct_lines`` (share of
  lines ending in terminal punctuation), ``c4_sentences`` (in the lines C4 keeps),
  ``c4_lorem_ipsum`` and ``c4_curly_bracket`` (a kept line has one), ``c4_javascript_lines`` and
  ``c4_policy_lines`` (lines C4 removes for naming JavaScript or a cookie / terms policy);
- FineWeb (Penedo et al. 2024, §3.3 "Developing additional heuristic filters"):
  ``fineweb_line_punct_ratio`` (lines ending in terminal punctuation), ``fineweb_short_line_ratio``
  (lines of at most 30 characters), ``fineweb_char_dup_ratio`` (characters of repeated lines over
  the text's, newlines left out), ``fineweb_newline_ratio`` (newlines per token).

Words are the tokens of the project's tokeniser (`corpusbuilder.tokenise`, thesis §3.6), which
splits punctuation off words as datatrove's (spaCy's) does, but keeps ``don't`` and ``re-use``
whole. In scripts written without spaces (Chinese, Japanese, Thai, Lao, Khmer, Myanmar) every
character is a token, so a "word" is a character there: ``words`` counts characters, and
``mean_word_length`` is about 1, below Gopher's minimum of 3 — Gopher's word rules (and C4's
three words a line) were set for English and fail every such document; `quality.filter` should
not hold the gopher set for such a corpus. Stop words come from the project's stop lists for the
document's language (`corpusbuilder.common.stoplists`), compared lower-cased; a language without
a list has none, and fails ``gopher.min_stop_words``.

C4 drops lines as well as pages; here no text is changed: the lines C4 would remove count in
its signals, and only its page-level rules (``c4.min_sentences``, ``c4.lorem_ipsum``,
``c4.curly_bracket``) are rules. A rule is named ``<set>.<config key of its threshold>``.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd
import pyarrow as pa

from corpusbuilder.common import stoplists
from corpusbuilder.config import dataclass_values
from corpusbuilder.export import EXPORT_COLUMNS, kept_documents
from corpusbuilder.tables import QUALITY_SCHEMA, QUALITY_SIGNALS, ShardTables, read_survivors
from corpusbuilder.tokenise import Vocabulary

log = logging.getLogger(__name__)

RULE_SETS = ("gopher", "c4", "fineweb")


class _FromConfig:
    @classmethod
    def from_config(cls, section: dict):
        return cls(**dataclass_values(cls, section))


@dataclass(frozen=True)
class GopherParams(_FromConfig):
    """Gopher's thresholds (Rae et al. 2021, App. A and Table A1; datatrove's defaults)."""

    min_words: int = 50
    max_words: int = 100_000
    min_mean_word_length: float = 3
    max_mean_word_length: float = 10
    max_symbol_word_ratio: float = 0.1
    max_bullet_lines: float = 0.9
    max_ellipsis_lines: float = 0.3
    min_alpha_words: float = 0.8
    min_stop_words: int = 2
    max_dup_line_frac: float = 0.3
    max_dup_para_frac: float = 0.3
    max_dup_line_char_frac: float = 0.2
    max_dup_para_char_frac: float = 0.2
    max_top_2gram_char_frac: float = 0.2
    max_top_3gram_char_frac: float = 0.18
    max_top_4gram_char_frac: float = 0.16
    max_dup_5gram_char_frac: float = 0.15
    max_dup_6gram_char_frac: float = 0.14
    max_dup_7gram_char_frac: float = 0.13
    max_dup_8gram_char_frac: float = 0.12
    max_dup_9gram_char_frac: float = 0.11
    max_dup_10gram_char_frac: float = 0.10


@dataclass(frozen=True)
class C4Params(_FromConfig):
    """C4's page and line filters (Raffel et al. 2020, §2.2; datatrove's C4QualityFilter)."""

    min_sentences: int = 5
    lorem_ipsum: bool = True  # drop a page with "lorem ipsum"
    curly_bracket: bool = True  # drop a page with "{"
    min_words_per_line: int = 3  # a line with fewer is removed
    max_word_length: int = 1000  # a line with a longer word is removed
    javascript: bool = True  # a line naming JavaScript is removed
    policy: bool = True  # a line about cookies or terms of use is removed
    remove_citations: bool = True  # "[1]", "[edit]", "[citation needed]" go before the tests


@dataclass(frozen=True)
class FineWebParams(_FromConfig):
    """FineWeb's own filters (Penedo et al. 2024, §3.3; datatrove's FineWebQualityFilter)."""

    line_punct_ratio: float = 0.12  # minimum share of lines ending in terminal punctuation
    short_line_ratio: float = 0.67  # maximum share of short lines
    short_line_length: int = 30  # a line of at most this many characters is short
    char_dup_ratio: float = 0.01  # maximum share of characters in repeated lines
    newline_ratio: float = 0.3  # maximum newlines per word


@dataclass(frozen=True)
class QualityParams:
    """The quality stage (config section `quality`): the rule sets whose failures drop a
    document (``filter``; none by default, so the thesis' corpus is unchanged) and each set's
    thresholds."""

    filter: tuple[str, ...] = ()
    gopher: GopherParams = field(default_factory=GopherParams)
    c4: C4Params = field(default_factory=C4Params)
    fineweb: FineWebParams = field(default_factory=FineWebParams)

    @classmethod
    def from_config(cls, section: dict) -> QualityParams:
        return cls(
            filter=tuple(section.get("filter", ())),
            gopher=GopherParams.from_config(section.get("gopher", {})),
            c4=C4Params.from_config(section.get("c4", {})),
            fineweb=FineWebParams.from_config(section.get("fineweb", {})),
        )


@dataclass(frozen=True)
class Rule:
    """``<rule_set>.<name>``: the document fails when ``signal`` is below (``min``) or above
    (``max``) the threshold config key ``name``, or (``flag``, a switch) is not zero."""

    rule_set: str
    name: str
    signal: str
    kind: str

    @property
    def label(self) -> str:
        return f"{self.rule_set}.{self.name}"


def _gopher_rules() -> list[Rule]:
    signal_of = {"min_words": "words", "max_words": "words"}
    rules = []
    for key in (f.name for f in fields(GopherParams)):
        kind, signal = key.split("_", 1)
        rules.append(Rule("gopher", key, signal_of.get(key, signal), kind))
    return rules


RULES: tuple[Rule, ...] = (
    *_gopher_rules(),
    Rule("c4", "min_sentences", "c4_sentences", "min"),
    Rule("c4", "lorem_ipsum", "c4_lorem_ipsum", "flag"),
    Rule("c4", "curly_bracket", "c4_curly_bracket", "flag"),
    Rule("fineweb", "line_punct_ratio", "fineweb_line_punct_ratio", "min"),
    Rule("fineweb", "short_line_ratio", "fineweb_short_line_ratio", "max"),
    Rule("fineweb", "char_dup_ratio", "fineweb_char_dup_ratio", "max"),
    Rule("fineweb", "newline_ratio", "fineweb_newline_ratio", "max"),
)

# --------------------------------------------------------------------------- characters

# Terminal punctuation (FineWeb's line test, C4's sentence ends): the marks that end a sentence in
# the world's scripts, by their Unicode names, as datatrove's TERMINAL_PUNCTUATION lists them.
_TERMINAL_NAMES = ("FULL STOP", "QUESTION MARK", "EXCLAMATION MARK", "DANDA", "INTERROBANG")
TERMINAL_PUNCTUATION = frozenset(
    ch
    for ch in map(chr, range(0x20000))  # planes 0 and 1: the scripts with sentence marks
    if unicodedata.category(ch) == "Po"
    and any(name in unicodedata.name(ch, "") for name in _TERMINAL_NAMES)
    and not unicodedata.name(ch).startswith(("INVERTED", "PRESENTATION FORM", "ADLAM INITIAL"))
)
_TERMINAL_TUPLE = tuple(TERMINAL_PUNCTUATION)
# C4: a kept line ends in one of these, and not in an ellipsis
C4_END_MARKS = (".", "?", "!", '"', "'")
C4_CITATION = re.compile(r"\[\d*]|\[edit]|\[citation needed]")
C4_POLICY = (
    "terms of use",
    "privacy policy",
    "cookie policy",
    "uses cookies",
    "use of cookies",
    "use cookies",
)
BULLETS = ("•", "-")
ELLIPSES = ("...", "…")
_PARAGRAPH_BREAK = re.compile(r"\n{2,}")
_LINE_BREAKS = re.compile(r"\n+")


def _is_punctuation(ch: str) -> bool:
    """Unicode punctuation (spaCy's is_punct), or an invisible character."""
    return unicodedata.category(ch)[0] == "P" or ch.isspace() or ord(ch) < 32


def _is_symbol(ch: str) -> bool:
    """Punctuation or a symbol (``$``, ``+``, ``|``): datatrove's PUNCTUATION_SET, which a
    Gopher word has a character outside of."""
    return _is_punctuation(ch) or unicodedata.category(ch)[0] == "S"


# Words as spaCy's English tokenizer (datatrove's word splitter for English) cuts a whitespace
# chunk: punctuation and symbols come off its ends one at a time (an ellipsis whole), then a
# contraction's clitic ("n't", "'s") and the hyphens between letters; a chunk of punctuation only,
# a URL, an e-mail address, a number with inner ":" or "/" and an abbreviation stay whole.
_ELLIPSIS_START = re.compile(r"\.{2,}|…")
_ELLIPSIS_END = re.compile(r"(?:\.{2,}|…)$")
_CLITIC = re.compile(r"(?i)(?<=[^\W\d_])(?:n['’]t|['’](?:s|re|ve|ll|d|m))$")
_HYPHEN = re.compile(r"(?<=[^\W_])(-)(?=[^\W_])")
_WHOLE = re.compile(r"https?://|ftp://|www\.|@")
_INITIALS = re.compile(r"(?:[^\W\d_]\.)+")  # U.S., e.g., a.m., A.
ABBREVIATIONS = frozenset(
    "Mr. Mrs. Ms. Dr. St. Jr. Sr. Prof. Inc. Ltd. Co. Corp. vs. Mt. Gov. Sen. Rep. Gen. Col. Lt. "
    "Jan. Feb. Mar. Apr. Jun. Jul. Aug. Sep. Sept. Oct. Nov. Dec.".split()
)


def _peels(ch: str) -> bool:
    return not ch.isalnum() and ch != "-"


def web_words(chunk: str) -> list[str]:
    """The words of one whitespace chunk, cut as spaCy's English tokenizer cuts them."""
    if not any(ch.isalnum() for ch in chunk):
        return [chunk]
    start, end, prefix, suffix = 0, len(chunk), [], []
    while start < end and _peels(chunk[start]):
        found = _ELLIPSIS_START.match(chunk, start)
        step = found.end() if found else start + 1
        prefix.append(chunk[start:step])
        start = step
    while end > start and _peels(chunk[end - 1]):
        core = chunk[start:end]
        if core in ABBREVIATIONS or _INITIALS.fullmatch(core):
            break
        found = _ELLIPSIS_END.search(chunk, start, end)
        step = found.start() if found else end - 1
        suffix.append(chunk[step:end])
        end = step
    core = chunk[start:end]
    if not core:
        words = []
    elif _WHOLE.search(core):
        words = [core]
    else:
        clitic = _CLITIC.search(core)
        stem = core[: clitic.start()] if clitic else core
        words = [*(w for w in _HYPHEN.split(stem) if w), *([clitic.group()] if clitic else [])]
    return [*prefix, *words, *reversed(suffix)]


class WordVocabulary(Vocabulary):
    """The shard vocabulary of `corpusbuilder.tokenise` (its text preparation, one token per
    character of scripts without spaces, its memo of chunks), with `web_words` for words."""

    def __init__(self) -> None:
        super().__init__()
        self._find = web_words  # type: ignore[assignment]  # a findall of its own

    def _tokenise_chunk(self, chunk: str) -> tuple[int, ...]:
        # Most new chunks are an ASCII word, or one and a mark after it ("said,"): cut here what
        # `web_words` would cut, without normalising and matching each.
        if not chunk.isascii() or chunk in ABBREVIATIONS or len(self._memo) >= self.max_memo:
            return super()._tokenise_chunk(chunk)
        if chunk.isalpha():
            words: tuple[str, ...] = (chunk,)
        elif len(chunk) > 2 and chunk[-1] in _SIMPLE_SUFFIXES and chunk[:-1].isalpha():
            words = (chunk[:-1], chunk[-1])
        else:
            return super()._tokenise_chunk(chunk)
        types = self.types
        ids = self._memo[chunk] = tuple([types.setdefault(w, len(types)) for w in words])
        return ids


_SIMPLE_SUFFIXES = frozenset(".,;:!?)")


def _last(ordered: dict[str, int], known: int) -> list[str]:
    """The keys of ``ordered`` after its first ``known``, read from the end (from the start,
    every document would walk the whole vocabulary)."""
    return list(itertools.islice(reversed(ordered), len(ordered) - known))[::-1]


def _grown(array: np.ndarray, size: int) -> np.ndarray:
    """``array`` with room for at least ``size`` entries (doubling, so that growing by a few
    types per document costs amortised constant time)."""
    if len(array) >= size:
        return array
    bigger = np.zeros(max(size, 2 * len(array), 1024), array.dtype)
    bigger[: len(array)] = array
    return bigger


class TokenTypes:
    """Per word type of a shard's `WordVocabulary`: what the signals read of it, computed once
    per type."""

    def __init__(self) -> None:
        self.vocabulary = WordVocabulary()
        self.size = 0
        self.length = np.zeros(0, np.int64)
        self.word = np.zeros(0, bool)  # has a character that is not a symbol (Gopher's word)
        self.alpha = np.zeros(0, bool)  # has a letter
        self.punct = np.zeros(0, bool)  # all punctuation (spaCy's is_punct)
        self.terminal = np.zeros(0, bool)  # a sentence end mark
        self.key = np.zeros(0, np.uint64)  # a random odd 64-bit key, for n-gram hashes
        self.folded = np.zeros(0, np.int64)  # the id of its lower-cased form in `lower`
        self.lower: dict[str, int] = {}
        self._stop: dict[str, tuple[np.ndarray, int]] = {}  # stop list -> (in it?, forms known)
        self._rng = np.random.default_rng(0)
        self._stoplists: dict[str | None, tuple[str | None, frozenset[str]]] = {}

    def _update(self) -> None:
        done, total = self.size, len(self.vocabulary.types)
        if total == done:
            return
        new = _last(self.vocabulary.types, done)
        for name in ("length", "word", "alpha", "punct", "terminal", "key", "folded"):
            setattr(self, name, _grown(getattr(self, name), total))
        part = slice(done, total)
        self.length[part] = [len(t) for t in new]
        self.word[part] = [not all(map(_is_symbol, t)) for t in new]
        self.alpha[part] = [any(c.isalpha() for c in t) for t in new]
        self.punct[part] = [all(map(_is_punctuation, t)) for t in new]
        self.terminal[part] = [t in TERMINAL_PUNCTUATION for t in new]
        self.key[part] = self._rng.integers(0, 2**63, len(new), np.uint64) * np.uint64(2) + 1
        self.folded[part] = [self.lower.setdefault(t.lower(), len(self.lower)) for t in new]
        self.size = total

    def stop(self, language: str | None) -> np.ndarray:
        """Per lower-cased form: is it in the stop list of ``language``."""
        if language not in self._stoplists:
            self._stoplists[language] = stoplists.stoplist_for(language)
        name, words = self._stoplists[language]
        known, filled = self._stop.get(name or "", (np.zeros(0, bool), 0))
        if filled < len(self.lower):
            known = _grown(known, len(self.lower))
            known[filled : len(self.lower)] = [form in words for form in _last(self.lower, filled)]
            self._stop[name or ""] = (known, len(self.lower))
        return known

    def chunk_ids(self, text: str) -> list[tuple[int, ...]]:
        """The word type ids of each whitespace chunk of ``text``."""
        chunks = self.vocabulary.chunk_ids(text)
        self._update()
        return chunks

    def ids(self, text: str) -> np.ndarray:
        return flat_ids(self.chunk_ids(text))


def flat_ids(chunks: list[tuple[int, ...]]) -> np.ndarray:
    return np.fromiter(itertools.chain.from_iterable(chunks), np.int64, sum(map(len, chunks)))


# --------------------------------------------------------------------------- repetition


def duplicates(items: list[str]) -> tuple[int, int]:
    """(items equal to an earlier one, their characters): Gopher's duplicate lines and
    paragraphs (Rae et al. 2021, App. A, Table A1)."""
    seen: set[str] = set()
    count = chars = 0
    for item in items:
        if item in seen:
            count += 1
            chars += len(item)
        else:
            seen.add(item)
    return count, chars


_NGRAM_PRIME = np.uint64(0x100000001B3)


def ngram_hashes(keys: np.ndarray, n: int) -> np.ndarray:
    """A 64-bit hash of each n-gram of a token sequence (given as the tokens' random keys)."""
    hashes = keys[: len(keys) - n + 1].copy()
    for k in range(1, n):
        hashes = hashes * _NGRAM_PRIME ^ keys[k : len(keys) - n + 1 + k]
    return hashes


def top_ngram_chars(hashes: np.ndarray, chars: np.ndarray) -> int:
    """Characters of all occurrences of the most frequent n-gram (the earliest seen of equally
    frequent ones), each occurrence its ``chars``."""
    codes, _ = pd.factorize(hashes)  # numbered in order of first occurrence
    counts = np.bincount(codes)
    top = int(counts.argmax())
    return int(chars[int((codes == top).argmax())] * counts[top])


def duplicate_ngram_chars(hashes: np.ndarray, chars: np.ndarray, n: int) -> int:
    """Characters of the n-grams that repeat an earlier one, read left to right and skipping
    the n tokens of each repeat (so overlapping repeats count once), as datatrove's
    find_all_duplicate reads Gopher's "duplicate n-gram character fraction".

    Only the positions whose n-gram occurred before are visited in Python: one is a repeat
    when an earlier occurrence was read (not skipped) — the first one, unless a repeat's skip
    covers it, or a later one read since."""
    codes, uniques = pd.factorize(hashes)
    positions = np.arange(len(hashes))
    first = np.empty(len(uniques), np.int64)
    first[codes[::-1]] = positions[::-1]  # the last write of each code is its first position
    first_at = first[codes]
    later = np.flatnonzero(first_at < positions)
    read: set[int] = set()  # hashes of later occurrences read (not skipped)
    skip_starts: list[int] = []  # each repeat skips the n - 1 positions after it
    total, free = 0, 0
    for index in later.tolist():
        if index < free:
            continue
        value = int(hashes[index])
        origin = int(first_at[index])
        window = bisect.bisect_right(skip_starts, origin) - 1
        first_read = window < 0 or origin >= skip_starts[window] + n - 1
        if first_read or value in read:
            total += int(chars[index])
            skip_starts.append(index + 1)
            free = index + n
        else:
            read.add(value)
    return total


def repetition_signals(text: str, keys: np.ndarray, lengths: np.ndarray) -> dict[str, float]:
    """Gopher's repetition signals (Rae et al. 2021, App. A, Table A1) of a text and its
    tokens (random keys and lengths)."""
    size = max(len(text), 1)
    paragraphs = _PARAGRAPH_BREAK.split(text.strip())
    lines = _LINE_BREAKS.split(text)
    para_count, para_chars = duplicates(paragraphs)
    line_count, line_chars = duplicates(lines)
    signals = {
        "dup_para_frac": para_count / len(paragraphs),
        "dup_para_char_frac": para_chars / size,
        "dup_line_frac": line_count / len(lines),
        "dup_line_char_frac": line_chars / size,
    }
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    hashes = keys
    repeats = False
    for n in range(2, 11):
        if len(keys) < n:
            signals[f"top_{n}gram_char_frac" if n < 5 else f"dup_{n}gram_char_frac"] = 0.0
            continue
        # the n-grams' hashes from the (n-1)-grams' (`ngram_hashes`, one step at a time)
        hashes = hashes[:-1] * _NGRAM_PRIME ^ keys[n - 1 :]
        if n < 5:
            # an n-gram's characters as its words joined by spaces
            chars = offsets[n:] - offsets[:-n] + n - 1
            signals[f"top_{n}gram_char_frac"] = top_ngram_chars(hashes, chars) / size
            continue
        # no 5-gram repeats, so no longer one does
        repeats = repeats or (n == 5 and len(pd.unique(hashes)) < len(hashes))
        chars = offsets[n:] - offsets[:-n]  # the words joined without spaces
        signals[f"dup_{n}gram_char_frac"] = (
            duplicate_ngram_chars(hashes, chars, n) / size if repeats else 0.0
        )
    return signals


# --------------------------------------------------------------------------- signals


def sentence_count(ids: np.ndarray, types: TokenTypes) -> int:
    """Sentences as spaCy's sentencizer cuts them (C4 counts a line's sentences so): a token
    that is not punctuation opens one when a terminal mark came since the last such token."""
    if not len(ids):
        return 0
    terminal = np.cumsum(types.terminal[ids])
    opener = np.flatnonzero(~types.punct[ids])
    before = np.concatenate([[0], terminal[opener[:-1]]]) if len(opener) else opener
    return 1 + int(np.count_nonzero(terminal[opener] - types.terminal[ids][opener] > before))


def line_sentences(ids: np.ndarray, line_offsets: np.ndarray, types: TokenTypes) -> np.ndarray:
    """`sentence_count` of each line of a text at once, the lines given as offsets into the
    text's tokens ``ids``."""
    lines = len(line_offsets) - 1
    terminal = np.concatenate([[0], np.cumsum(types.terminal[ids])])
    opener = np.flatnonzero(~types.punct[ids])
    line = np.searchsorted(line_offsets, opener, side="right") - 1
    # what a terminal mark is looked for since: the opener before in the line, or its start
    since = np.where(
        np.concatenate([[False], line[1:] == line[:-1]]),
        np.concatenate([[0], opener[:-1]]),
        line_offsets[line],
    )
    cut = terminal[opener] - terminal[since] > 0
    return (np.diff(line_offsets) > 0) + np.bincount(line[cut], minlength=lines)


def c4_signals(
    text: str, chunks: list[tuple[int, ...]], ids: np.ndarray, types: TokenTypes, params: C4Params
):
    """C4's line and page tests (Raffel et al. 2020, §2.2), line by line as C4's code and
    datatrove's C4QualityFilter run them: a line is stripped, removed for a too long word, its
    citation marks removed, removed unless it ends in terminal punctuation (not an ellipsis) and
    has ``min_words_per_line`` words; of the rest, "lorem ipsum" fails the page, a line naming
    JavaScript is removed, a curly bracket fails the page, a cookie or terms-of-use line is
    removed, and the sentences of the lines left are counted. ``chunks`` are the word ids of
    the text's whitespace chunks, which the lines' chunks are runs of."""
    lines = [line.strip() for line in text.splitlines()]
    nonempty = [line for line in lines if line]
    signals = {
        "c4_punct_lines": sum(line.endswith(C4_END_MARKS) for line in nonempty)
        / max(len(nonempty), 1),
        "c4_sentences": 0,
        "c4_lorem_ipsum": 0,
        "c4_curly_bracket": 0,
        "c4_javascript_lines": 0,
        "c4_policy_lines": 0,
    }
    split = [line.split() for line in lines]
    chunk_offsets = np.concatenate([[0], np.cumsum([len(c) for c in chunks])])
    line_offsets = chunk_offsets[np.concatenate([[0], np.cumsum([len(w) for w in split])])]
    sentences = line_sentences(ids, line_offsets, types).tolist()
    for number, (line, words) in enumerate(zip(lines, split)):
        if len(line) > params.max_word_length and max(map(len, words)) > params.max_word_length:
            continue
        if params.remove_citations and "[" in line:
            line = C4_CITATION.sub("", line)
            sentences[number] = sentence_count(types.ids(line), types)
        if not line.endswith(C4_END_MARKS) or line.endswith("..."):
            continue
        if len(words) < params.min_words_per_line:
            continue
        lowered = line.lower()
        if "lorem ipsum" in lowered:
            signals["c4_lorem_ipsum"] = 1
        if params.javascript and "javascript" in lowered:
            signals["c4_javascript_lines"] += 1
            continue
        if "{" in line:
            signals["c4_curly_bracket"] = 1
        if params.policy and any(phrase in lowered for phrase in C4_POLICY):
            signals["c4_policy_lines"] += 1
            continue
        signals["c4_sentences"] += sentences[number]
    return signals


def fineweb_signals(text: str, tokens: int, params: FineWebParams) -> dict[str, float]:
    """FineWeb's filters (Penedo et al. 2024, §3.3) over the text's non-blank lines."""
    lines = [line for line in text.split("\n") if line.strip()]
    count = max(len(lines), 1)
    return {
        "fineweb_line_punct_ratio": sum(line.endswith(_TERMINAL_TUPLE) for line in lines) / count,
        "fineweb_short_line_ratio": sum(len(line) <= params.short_line_length for line in lines)
        / count,
        "fineweb_char_dup_ratio": duplicates(lines)[1] / max(len(text) - text.count("\n"), 1),
        "fineweb_newline_ratio": text.count("\n") / max(tokens, 1),
    }


def gopher_quality_signals(
    text: str, ids: np.ndarray, types: TokenTypes, language: str | None
) -> dict[str, float]:
    """Gopher's quality signals (Rae et al. 2021, App. A, "Quality filtering")."""
    tokens = max(len(ids), 1)
    words = ids[types.word[ids]]
    lines = text.splitlines() or [""]
    folded = types.folded[ids]
    return {
        "words": len(words),
        "mean_word_length": float(types.length[words].mean()) if len(words) else 0.0,
        "symbol_word_ratio": max(text.count("#"), text.count("...") + text.count("…")) / tokens,
        "bullet_lines": sum(line.lstrip().startswith(BULLETS) for line in lines) / len(lines),
        "ellipsis_lines": sum(line.rstrip().endswith(ELLIPSES) for line in lines) / len(lines),
        "alpha_words": int(np.count_nonzero(types.alpha[ids])) / tokens,
        "stop_words": len(np.unique(folded[types.stop(language)[folded]])),
    }


def document_signals(
    text: str, language: str | None, types: TokenTypes, params: QualityParams
) -> dict[str, float]:
    """Every signal of `QUALITY_SIGNALS` for one document's text."""
    chunks = types.chunk_ids(text)
    ids = flat_ids(chunks)
    return {
        **gopher_quality_signals(text, ids, types, language),
        **repetition_signals(text, types.key[ids], types.length[ids]),
        **c4_signals(text, chunks, ids, types, params.c4),
        **fineweb_signals(text, len(ids), params.fineweb),
    }


# --------------------------------------------------------------------------- verdicts


def rule_failures(signals: pd.DataFrame, params: QualityParams) -> dict[str, np.ndarray]:
    """Per rule (by label, in `RULES` order): does each document (row of ``signals``) fail it."""
    failed = {}
    for rule in RULES:
        threshold = getattr(getattr(params, rule.rule_set), rule.name)
        values = signals[rule.signal].to_numpy()
        if rule.kind == "min":
            failed[rule.label] = values < threshold
        elif rule.kind == "max":
            failed[rule.label] = values > threshold
        else:
            failed[rule.label] = (values > 0) & bool(threshold)
    return failed


def quality_table(
    documents: Iterable[tuple[str, str | None, str]], params: QualityParams
) -> pd.DataFrame:
    """The quality table of a shard's documents, given as (doc_id, language, text): the signals,
    ``fails`` (every rule failed, of every set), ``dropped_by`` (the first rule of the
    `QualityParams.filter` sets failed; null when none is) and ``kept``."""
    types = TokenTypes()
    ids, rows = [], []
    for doc_id, language, text in documents:
        ids.append(doc_id)
        rows.append(document_signals(text, language, types, params))
    table = pd.DataFrame(rows, columns=list(QUALITY_SIGNALS))
    table.insert(0, "doc_id", pd.Series(ids, dtype=object))
    failed = rule_failures(table, params)
    labels = np.array(list(failed), dtype=object)
    matrix = np.column_stack(list(failed.values())) if len(table) else np.zeros((0, len(labels)))
    table["fails"] = [labels[row].tolist() for row in matrix.astype(bool)]
    filtering = np.array([rule.rule_set in params.filter for rule in RULES])
    dropping = matrix.astype(bool) & filtering
    table["dropped_by"] = [labels[row][0] if row.any() else None for row in dropping]
    table["kept"] = ~dropping.any(axis=1) if len(table) else np.ones(0, bool)
    return table


def score_shard(tables: ShardTables, params: QualityParams) -> pa.Table:
    """The quality table (QUALITY_SCHEMA) of the documents of a shard that survive the stages
    before, scored on their text as the corpus carries it (`export.kept_documents`)."""
    documents = kept_documents(read_survivors(tables, EXPORT_COLUMNS))
    table = quality_table(((doc.id, doc.language, doc.text) for doc in documents), params)
    dropped = table["dropped_by"].value_counts()
    log.info(
        "%s: %d documents scored, %d dropped by %s%s",
        tables.name,
        len(table),
        int(dropped.sum()),
        "+".join(params.filter) or "no filter",
        "".join(f"; {rule} {count}" for rule, count in dropped.items()),
    )
    return pa.Table.from_pandas(table, schema=QUALITY_SCHEMA, preserve_index=False)
