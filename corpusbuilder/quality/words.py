"""Words as datatrove's English word splitter (spaCy's tokenizer) cuts them, on the shard
vocabulary of `corpusbuilder.tokenise`, and what the signals read of each word type."""

from __future__ import annotations

import itertools
import re
import unicodedata
from typing import cast

import numpy as np

from corpusbuilder.common import stoplists
from corpusbuilder.common.scripts import NO_SPACE_CHAR
from corpusbuilder.tokenise import Vocabulary

try:
    # compiled from _cut.pyx at build time (imported by its own name: importing it from the
    # package would make the package's import of this module a cycle)
    import corpusbuilder.quality._cut as _cut
except ImportError:  # built without a C compiler: the Python versions, same values
    _cut = None

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
        # not Vocabulary's __init__, which compiles the tokeniser's pattern (0.3 s) for nothing
        self.cjk_chars = True
        self.max_memo = 1_000_000
        self.types: dict[str, int] = {}
        self._memo: dict[str, tuple[int, ...]] = {}
        self._find = web_words  # type: ignore[assignment]  # a findall of its own

    def learn(self, splits: list[list[str]]) -> bool:
        """Cut every whitespace chunk of ``splits`` (a shard's texts' ``split()``) not in the
        memo yet, so that the memo holds them all (False: they would not fit, nothing done).
        Most new chunks are letters or digits, or such with one mark before or after ("said,",
        "(see"), or hyphenated: their words are what `web_words` would cut, taken here without
        normalising and matching each (`_quick_words`); the rest go to `web_words`."""
        memo, types = self._memo, self.types
        new = [c for c in dict.fromkeys(itertools.chain.from_iterable(splits)) if c not in memo]
        if len(memo) + len(new) >= self.max_memo:
            return False  # the memo would be cleared on the way
        plain = [c.isalnum() and _plain(c) for c in new]
        simple = [c for c, p in zip(new, plain) if p]
        ids = [types.setdefault(c, len(types)) for c in simple]
        memo.update(zip(simple, zip(ids)))  # (zip makes the 1-tuples in C)
        for chunk in itertools.compress(new, [not p for p in plain]):
            self.cut_new(chunk)
        return True

    def cut_new(self, chunk: str) -> tuple[int, ...]:
        """The type ids of a chunk not in the memo, cut and stored there: `_quick_words` where
        it can, `web_words` on the prepared chunk where it cannot."""
        types = self.types
        if chunk.isalnum() and _plain(chunk):
            words: tuple[str, ...] = (chunk,)
        else:
            words = _quick_words(chunk)
            if not words:
                return self._tokenise_chunk(chunk)
        if len(self._memo) >= self.max_memo:
            self._memo.clear()
        ids = self._memo[chunk] = tuple([types.setdefault(w, len(types)) for w in words])
        return ids


def _quick_words(chunk: str) -> tuple[str, ...]:
    """What `web_words` cuts of a chunk that is letters and digits, or such words joined by
    single hyphens ("well-known", "COVID-19"), with at most one mark before it ("(see") and one
    after it ("said,", 'it"'); ``()`` for any other chunk (or one preparing would change)."""
    start = 1 if chunk[0] in _SIMPLE_PREFIXES else 0
    end = len(chunk) - 1 if chunk[-1] in _SIMPLE_SUFFIXES else len(chunk)
    core = chunk[start:end]
    if end < len(chunk) and (
        chunk[start:] in ABBREVIATIONS or (chunk[-1] == "." and len(core) < 2)
    ):
        return ()  # an abbreviation keeps its full stop ("Mr.", "A.")
    if not core or not _plain(chunk):
        return ()
    if core.isalnum():
        words: tuple[str, ...] = (core,)
    else:
        parts = core.split("-")
        if len(parts) < 2 or not all(part.isalnum() for part in parts):
            return ()
        words = tuple(itertools.chain.from_iterable((part, "-") for part in parts))[:-1]
    return (*chunk[:start], *words, *chunk[end:])


def _plain(chunk: str) -> bool:
    """Does preparing ``chunk`` (`corpusbuilder.tokenise.prepare_text`) leave it as it is."""
    return chunk.isascii() or (
        unicodedata.is_normalized("NFC", chunk) and not NO_SPACE_CHAR.search(chunk)
    )


# a mark that comes off a chunk of letters and digits alone, as `web_words` cuts it
_SIMPLE_SUFFIXES = frozenset('.,;:!?)"”»')
_SIMPLE_PREFIXES = frozenset('("“«')


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

    def update(self) -> None:
        """Read what the signals read of the types the vocabulary learnt since the last call:
        the common ones, ASCII letters and digits, by the compiled `_cut.read_types` where
        it is built (else by maps of str methods, looping in C), the others character by
        character."""
        done, total = self.size, len(self.vocabulary.types)
        if total == done:
            return
        new = _last(self.vocabulary.types, done)
        count = len(new)
        for name in ("length", "word", "alpha", "punct", "terminal", "key", "folded"):
            setattr(self, name, _grown(getattr(self, name), total))
        part = slice(done, total)
        for flags in (self.word, self.alpha, self.punct, self.terminal):
            flags[part] = False
        self.key[part] = self._rng.integers(0, 2**63, count, np.uint64) * np.uint64(2) + 1
        if _cut is not None:
            views = (self.word.view(np.uint8), self.alpha.view(np.uint8), self.folded)
            rest = _cut.read_types(new, done, self.lower, self.length, *views)
            self._read_characters([new[i] for i in rest], np.array(rest, np.int64) + done)
        else:
            self.length[part] = np.fromiter(map(len, new), np.int64, count)
            self.folded[part] = [self.lower.setdefault(t.lower(), len(self.lower)) for t in new]
            self._read_characters(new, np.arange(done, total))
        self.size = total

    def _read_characters(self, new: list[str], at: np.ndarray) -> None:
        """``word``, ``alpha``, ``punct`` and ``terminal`` of the types ``new`` (ids ``at``): most
        are letters and digits (a word, not punctuation, with a letter unless ASCII digits
        alone); the character tests run on the others."""
        count = len(new)
        alnum = np.fromiter(map(str.isalnum, new), bool, count)
        ascii_alnum = alnum & np.fromiter(map(str.isascii, new), bool, count)
        other, rest = np.flatnonzero(~alnum), np.flatnonzero(alnum & ~ascii_alnum)
        at_ascii = np.flatnonzero(ascii_alnum)
        self.word[at] = alnum
        self.word[at[other]] = [not all(map(_is_symbol, new[i])) for i in other.tolist()]
        digits = np.fromiter(map(str.isdigit, [new[i] for i in at_ascii.tolist()]), bool)
        self.alpha[at[at_ascii]] = ~digits
        for index in (other, rest):
            self.alpha[at[index]] = [any(c.isalpha() for c in new[i]) for i in index.tolist()]
        self.punct[at[other]] = [all(map(_is_punctuation, new[i])) for i in other.tolist()]
        self.terminal[at[other]] = [new[i] in TERMINAL_PUNCTUATION for i in other.tolist()]

    def stop(self, language: str | None) -> np.ndarray:
        """Per lower-cased form: is it in the stop list of ``language``. Found by looking the
        list's few hundred words up among the forms, not the shard's ~60,000 forms in the list
        (a shard has a few languages, and each would read every form)."""
        if language not in self._stoplists:
            self._stoplists[language] = stoplists.stoplist_for(language)
        name, words = self._stoplists[language]
        known, filled = self._stop.get(name or "", (np.zeros(0, bool), 0))
        if filled < len(self.lower):
            known = _grown(known, len(self.lower))
            at = [i for i in map(self.lower.get, words) if i is not None and i >= filled]
            known[at] = True
            self._stop[name or ""] = (known, len(self.lower))
        return known

    def learn(self, texts: list[str]) -> list[list[tuple[int, ...]]]:
        """`chunk_ids` of each of a shard's ``texts``, their new chunks cut at once
        (`WordVocabulary.learn`)."""
        splits = [text.split() for text in texts]
        if self.vocabulary.learn(splits):
            get = self.vocabulary._memo.get
            chunks = [cast("list[tuple[int, ...]]", list(map(get, split))) for split in splits]
        else:  # chunk by chunk, clearing the memo on the way
            chunks = [self.vocabulary.chunk_ids(text) for text in texts]
        self.update()
        return chunks

    def chunk_ids(self, text: str) -> list[tuple[int, ...]]:
        """The word type ids of each whitespace chunk of ``text``."""
        chunks = self.vocabulary.chunk_ids(text)
        self.update()
        return chunks

    def ids(self, text: str) -> np.ndarray:
        return flat_ids(self.chunk_ids(text))


def flat_ids(chunks: list[tuple[int, ...]], count: int | None = None) -> np.ndarray:
    """The type ids of ``chunks`` in a row (``count`` of them, when known)."""
    if count is None:
        count = sum(map(len, chunks))
    return np.fromiter(itertools.chain.from_iterable(chunks), np.int64, count)
