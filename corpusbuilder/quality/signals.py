"""The signals of one document's text: Gopher's quality and repetition signals (Rae et al.
2021, App. A), C4's (Raffel et al. 2020, §2.2) and FineWeb's (Penedo et al. 2024, §3.3)."""

from __future__ import annotations

import bisect
import re

import numpy as np
import pyarrow as pa

from corpusbuilder.common.arrays import factorize
from corpusbuilder.contracts.tables import QUALITY_COUNTS, QUALITY_SIGNALS
from corpusbuilder.quality.ngrams import NGRAM_PRIME as _NGRAM_PRIME
from corpusbuilder.quality.ngrams import NGRAM_SIGNALS, shard_ngram_signals
from corpusbuilder.quality.params import C4Params, FineWebParams, QualityParams
from corpusbuilder.quality.words import (
    ABBREVIATIONS,
    TERMINAL_PUNCTUATION,
    TokenTypes,
    _cut,
    flat_ids,
)

try:  # compiled from _lines.pyx and _ngrams.pyx at build time, as `words._cut`
    import corpusbuilder.quality._lines as _lines
    import corpusbuilder.quality._ngrams as _ngrams
except ImportError:  # built without a C compiler: the Python versions below, same values
    _lines = _ngrams = None

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
# Gopher's bullet and ellipsis lines, in a text whose lines end at "\n" (and no other line break
# of str.splitlines): a line's white space is [^\S\n] (re's \s is str.isspace's)
_OTHER_BREAKS = re.compile("[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
_BULLET_LINE = re.compile(r"^[^\S\n]*[•\-]", re.MULTILINE)
_ELLIPSIS_LINE = re.compile(r"(?:\.\.\.|…)[^\S\n]*$", re.MULTILINE)
_PARAGRAPH_BREAK = re.compile(r"\n{2,}")
_LINE_BREAKS = re.compile(r"\n+")


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


def ngram_hashes(keys: np.ndarray, n: int) -> np.ndarray:
    """A 64-bit hash of each n-gram of a token sequence (given as the tokens' random keys)."""
    hashes = keys[: len(keys) - n + 1].copy()
    for k in range(1, n):
        hashes = hashes * _NGRAM_PRIME ^ keys[k : len(keys) - n + 1 + k]
    return hashes


def top_ngram_chars(hashes: np.ndarray, chars: np.ndarray) -> int:
    """Characters of all occurrences of the most frequent n-gram (the earliest seen of equally
    frequent ones), each occurrence its ``chars``."""
    codes, _ = factorize(hashes)  # numbered in order of first occurrence
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
    codes, uniques = factorize(hashes)
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


def line_repetition_signals(text: str) -> dict[str, float]:
    """Gopher's duplicate line and paragraph signals (Rae et al. 2021, App. A, Table A1); its
    n-gram signals are a shard's at once (`corpusbuilder.quality.ngrams`)."""
    size = max(len(text), 1)
    paragraphs = _PARAGRAPH_BREAK.split(text.strip())
    lines = _LINE_BREAKS.split(text)
    para_count, para_chars = duplicates(paragraphs)
    line_count, line_chars = duplicates(lines)
    return {
        "dup_para_frac": para_count / len(paragraphs),
        "dup_para_char_frac": para_chars / size,
        "dup_line_frac": line_count / len(lines),
        "dup_line_char_frac": line_chars / size,
    }


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


def _code_points(test) -> np.ndarray:
    """Per code point: does ``test`` hold of its character (white space and line breaks are all
    below U+3001)."""
    table = np.zeros(0x110000, bool)
    table[[code for code in range(0x3001) if test(chr(code))]] = True
    return table


_SPACE = _code_points(str.isspace)
_LINE_BREAK = _code_points(lambda ch: len(f"a{ch}b".splitlines()) == 2)


def line_chunk_counts(text: str, lines: int) -> np.ndarray:
    """The whitespace chunks (``line.split()``) of each of the ``lines`` of ``text.splitlines()``,
    counted over the text's code points at once."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
    space = _SPACE[codes]
    starts = np.flatnonzero(~space & np.concatenate([[True], space[:-1]]))
    breaks = _LINE_BREAK[codes]
    breaks[1:] &= (codes[1:] != 10) | (codes[:-1] != 13)  # "\r\n" is one line break
    return np.bincount(np.cumsum(breaks)[starts], minlength=lines)


def without_citations(line: str, types: TokenTypes) -> tuple[str, int | None]:
    """A line without C4's citation marks, and its sentences; None for them when it had none
    (most lines with a "[": the count of the line's own tokens stands, no new cut needed)."""
    cleaned = C4_CITATION.sub("", line)
    if cleaned == line:
        return line, None
    return cleaned, sentence_count(types.ids(cleaned), types)


def c4_signals(
    text: str, chunk_offsets: np.ndarray, ids: np.ndarray, types: TokenTypes, params: C4Params
):
    """C4's line and page tests (Raffel et al. 2020, §2.2), line by line as C4's code and
    datatrove's C4QualityFilter run them: a line is stripped, removed for a too long word, its
    citation marks removed, removed unless it ends in terminal punctuation (not an ellipsis) and
    has ``min_words_per_line`` words; of the rest, "lorem ipsum" fails the page, a line naming
    JavaScript is removed, a curly bracket fails the page, a cookie or terms-of-use line is
    removed, and the sentences of the lines left are counted. ``chunk_offsets`` are where in
    ``ids`` each whitespace chunk of the text starts (and the last ends): a line's chunks are a
    run of them."""
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
    counts = line_chunk_counts(text, len(lines))
    line_offsets = chunk_offsets[np.concatenate([[0], np.cumsum(counts)])]
    sentences = line_sentences(ids, line_offsets, types).tolist()
    for number, (line, words) in enumerate(zip(lines, counts.tolist())):
        if (
            len(line) > params.max_word_length
            and max(map(len, line.split())) > params.max_word_length
        ):
            continue
        if params.remove_citations and "[" in line:
            line, counted = without_citations(line, types)
            if counted is not None:
                sentences[number] = counted
        if not line.endswith(C4_END_MARKS) or line.endswith("..."):
            continue
        if words < params.min_words_per_line:
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
        # (the marks are single characters, and a set finds one faster than a tuple's endswith)
        "fineweb_line_punct_ratio": sum(line[-1] in TERMINAL_PUNCTUATION for line in lines) / count,
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
    if _OTHER_BREAKS.search(text):
        bullet_lines = sum(line.lstrip().startswith(BULLETS) for line in lines)
        ellipsis_lines = sum(line.rstrip().endswith(ELLIPSES) for line in lines)
    else:  # lines end at "\n" alone: one search over the text for each
        bullet_lines = len(_BULLET_LINE.findall(text))
        ellipsis_lines = len(_ELLIPSIS_LINE.findall(text))
    folded = types.folded[ids]
    return {
        "words": len(words),
        "mean_word_length": float(types.length[words].mean()) if len(words) else 0.0,
        "symbol_word_ratio": max(text.count("#"), text.count("...") + text.count("…")) / tokens,
        "bullet_lines": bullet_lines / len(lines),
        "ellipsis_lines": ellipsis_lines / len(lines),
        "alpha_words": int(np.count_nonzero(types.alpha[ids])) / tokens,
        "stop_words": len(np.unique(folded[types.stop(language)[folded]])),
    }


def chunk_offsets(chunks: list[tuple[int, ...]]) -> np.ndarray:
    """Where each whitespace chunk's type ids start in the document's ids, and their end."""
    return np.concatenate([[0], np.cumsum(np.fromiter(map(len, chunks), np.int64, len(chunks)))])


def line_signals(
    text: str,
    language: str | None,
    ids: np.ndarray,
    offsets: np.ndarray,
    types: TokenTypes,
    params: QualityParams,
) -> dict[str, float]:
    """Every signal of `QUALITY_SIGNALS` of one document but its n-gram signals, given its type
    ids and its chunks' `chunk_offsets` in them."""
    return {
        **gopher_quality_signals(text, ids, types, language),
        **line_repetition_signals(text),
        **c4_signals(text, offsets, ids, types, params.c4),
        **fineweb_signals(text, len(ids), params.fineweb),
    }


# per code point of planes 0 and 1 (TERMINAL_PUNCTUATION's): is it terminal punctuation
_TERMINAL_CHARS = np.zeros(0x20000, np.uint8)
_TERMINAL_CHARS[[ord(ch) for ch in TERMINAL_PUNCTUATION]] = 1


def _compiled_rows(
    documents: list[tuple[str | None, str]], types: TokenTypes, params: QualityParams
) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """The signals but the n-gram ones of a shard's documents by the compiled loops
    (`_cut.cut_texts`, `_lines.LineTests`), by name, the shard's type ids and each document's
    offset in them."""
    vocabulary = types.vocabulary
    texts = [text for _, text in documents]
    ids, doc_offsets, starts, doc_pieces = _cut.cut_texts(
        texts, vocabulary.types, vocabulary.cut_new, ABBREVIATIONS
    )
    types.update()
    tests = _lines.LineTests(
        types,
        len(types.lower),
        _TERMINAL_CHARS,
        params.c4,
        params.fineweb.short_line_length,
        lambda line: without_citations(line, types),
        C4_POLICY,
    )
    rows = np.zeros((len(texts), len(_lines.COLUMNS)))
    for number, (language, text) in enumerate(documents):
        doc_ids = ids[doc_offsets[number] : doc_offsets[number + 1]]
        pieces = starts[doc_pieces[number] : doc_pieces[number + 1]]
        stop = types.stop(language).view(np.uint8)
        if not tests.score(text, doc_ids, pieces, stop, number, rows[number]):
            offsets = chunk_offsets(types.chunk_ids(text))
            row = line_signals(text, language, doc_ids, offsets, types, params)
            rows[number] = [row[name] for name in _lines.COLUMNS]
    return dict(zip(_lines.COLUMNS, rows.T)), ids, doc_offsets


def shard_signals(
    documents: list[tuple[str | None, str]], types: TokenTypes, params: QualityParams
) -> pa.Table:
    """Every signal of `QUALITY_SIGNALS` (columns: int64 for `QUALITY_COUNTS`, else float64,
    NaN a null) for each of a shard's documents (rows), given as (language, text): their words
    cut at once, their n-gram signals counted at once (`shard_ngram_signals`), the rest per
    document — by the compiled loops where they are built (`_compiled_rows`), else in Python
    (`TokenTypes.learn`, `line_signals`)."""
    texts = [text for _, text in documents]
    if _cut is not None and _lines is not None:
        columns, flat, doc_offsets = _compiled_rows(documents, types, params)
    else:
        chunks = types.learn(texts)
        offsets = [chunk_offsets(chunk) for chunk in chunks]
        ids = [flat_ids(chunk, int(at[-1])) for chunk, at in zip(chunks, offsets, strict=True)]
        records = [
            line_signals(text, language, ids[number], offsets[number], types, params)
            for number, (language, text) in enumerate(documents)
        ]
        columns = {
            name: np.array([record.get(name, np.nan) for record in records], dtype=float)
            for name in (records[0] if records else ())
        }
        doc_offsets = np.concatenate([[0], np.cumsum([len(i) for i in ids], dtype=np.int64)])
        flat = np.concatenate(ids) if ids else np.zeros(0, np.int64)
    sizes = np.array([max(len(text), 1) for text in texts], np.int64)
    if _ngrams is not None:
        values = _ngrams.ngram_signals(flat, types.key, types.length, doc_offsets, sizes)
        ngrams = dict(zip(NGRAM_SIGNALS, values.T))
    else:
        ngrams = shard_ngram_signals(types.key[flat], types.length[flat], doc_offsets, sizes)
    columns = {**columns, **ngrams}
    missing = np.full(len(texts), np.nan)
    return pa.table(
        {
            name: pa.array(np.asarray(columns.get(name, missing)).astype(np.int64))
            if name in QUALITY_COUNTS
            else pa.array(np.asarray(columns.get(name, missing), np.float64), from_pandas=True)
            for name in QUALITY_SIGNALS
        }
    )


def document_signals(
    text: str, language: str | None, types: TokenTypes, params: QualityParams
) -> dict[str, float]:
    """Every signal of `QUALITY_SIGNALS` for one document's text."""
    return shard_signals([(language, text)], types, params).to_pylist()[0]
