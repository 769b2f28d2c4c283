"""The `best` preset's features: what a learned block classifier reads of jusText's blocks, cut
at HTML5's block elements too.

jusText (thesis §2.7) decides from three features and fixed thresholds. Kohlschütter et al.
(``001_624bfa154ca76c9e.txt``) show that a handful of shallow features of a block and its
neighbours — word count, text density, link density, average word and sentence length, capital
and full-stop ratios, the tag around it, its position — separate content from boilerplate
well when a classifier learns how to combine them. This module computes those features on the
blocks jusText's segmentation already gives (§2.7.1; also cut at HTML5's block-level elements,
``segmentation.HTML5_BLOCK_TAGS``), adds what the markup says
(``hints.STRUCTURE_HINTS``: navigation, comment and article containers), and jusText's own
context-free and context-sensitive classes. `model` scores the rows with a small ensemble of
gradient-boosted trees stored as plain numpy arrays (``models/best.npz``).

Inference needs numpy only (the features run compiled where
``corpusbuilder.extraction._features`` is built, with the same results); scikit-learn is needed
only to retrain (``corpusbuilder.evaluation.training``, rule ``train``).
"""

from __future__ import annotations

from functools import lru_cache
from operator import attrgetter, methodcaller

import numpy as np

from corpusbuilder.contracts.tables import BAD, GOOD, NEAR_GOOD, SHORT
from corpusbuilder.extraction.hints import HINT_BITS
from corpusbuilder.extraction.justext import PRESETS, JustextParams, classify
from corpusbuilder.extraction.segmentation import Block

try:  # the compiled features, built with the package where a C compiler was at hand (setup.py)
    # compiled from _features.pyx at build time: mypy sees no module (and no stub) for it
    from corpusbuilder.extraction import _features  # type: ignore[attr-defined]
except (ImportError, ValueError):  # ValueError: a C struct of lxml changed size
    _features = None

# jusText's verdicts enter as features; preset C is the thesis' best single setting (Table 2.8).
FEATURE_JUSTEXT: JustextParams = PRESETS["C"]
# Kohlschütter's text density wraps text at 80 columns.
WRAP_COLUMNS = 80
NEIGHBOUR_OFFSETS = (-2, -1, 1, 2)

# Character classes as bits of a lookup table over code points (anything beyond it has none).
_SPACE, _SENTENCE_END, _SENTENCE_FINAL, _SEPARATOR, _CAPITAL, _DIGIT = (1 << i for i in range(6))
_CLASS_MEMBERS = {
    _SPACE: " \n",  # blocks are whitespace-normalised: only spaces and newlines remain
    _SENTENCE_END: ".!?…",
    _SENTENCE_FINAL: '.!?…"”',
    _SEPARATOR: "|•·»«›‹/>",
    _CAPITAL: "".join(
        map(
            chr,
            [
                *range(65, 91),
                *range(192, 215),
                *range(216, 223),
                *range(913, 938),
                *range(1040, 1072),
            ],
        )
    ),
    _DIGIT: "0123456789",
}
_CHAR_CLASSES = np.zeros(
    0x2040, dtype=np.uint8
)  # the last entry (U+203F) stays 0 for clipped codes
for _bit, _members in _CLASS_MEMBERS.items():
    _CHAR_CLASSES[[ord(c) for c in _members]] |= _bit
_BLOCK_FEATURES = (
    "log_words",
    "log_chars",
    "stopword_density",
    "stopword_density_vs_page",
    "link_density",
    "mean_word_length",
    "text_density",
    "mean_sentence_words",
    "sentence_ends_per_word",
    "ends_with_stop",
    "capitalised_per_word",
    "digits_per_word",
    "separators_per_word",
    "tags_per_word",
    "heading",
    "depth",
    "title_overlap",
    "legal_phrases",
    "cf_bad",
    "cf_short",
    "cf_near_good",
    "cf_good",
    "justext_good",
    *(f"hint_{name}" for name in HINT_BITS),
    *(f"near_hint_{name}" for name in HINT_BITS),
)
# Words that mark a site's legal and service lines in the languages of the gold sets; content
# rarely says them (Kohlschütter's features are lexicon-free and miss a lone copyright line).
# Found with str.find, phrase by phrase: as one regex alternation they cost twice the time,
# since they start with letters so common that the regex tries them at most positions.
_LEGAL_PHRASES = (
    "©",
    "(c) ",
    "copyright",
    "rights reserved",
    "privacy",
    "cookie",
    "terms of use",
    "terms of service",
    "impressum",
    "datenschutz",
    "alle rechte",
    "nutzungsbedingungen",
    "derechos reservados",
    "aviso legal",
    "tous droits",
    "mentions légales",
    "wszelkie prawa",
    "polityka prywatności",
    "powered by",
)
_COPYRIGHT_BEFORE_YEAR = "(c) "  # counts only when a four-digit year follows
_COLUMN = {name: i for i, name in enumerate(_BLOCK_FEATURES)}
_NEIGHBOUR_FEATURES = ("log_words", "link_density", "stopword_density", "cf_good", "justext_good")
_PAGE_FEATURES = (
    "position",
    "words_before_share",
    "word_share",
    "log_page_blocks",
    "page_good_share",
    "in_top_container",
    "top_prefix_share",
    "blocks_from_top",
    "after_title_heading",
)
# The element around a block and the one around that: an article's paragraphs share a container
# full of long, link-free, stop-word-rich text; a menu's items share one full of links.
CONTAINER_LEVELS = (1, 2)
_CONTAINER_FEATURES = (
    "word_share",
    "log_blocks",
    "link_density",
    "stopword_density_vs_page",
    "justext_good_share",
)
FEATURE_NAMES: tuple[str, ...] = (
    *_BLOCK_FEATURES,
    *(f"{name}@{offset:+d}" for offset in NEIGHBOUR_OFFSETS for name in _NEIGHBOUR_FEATURES),
    *_PAGE_FEATURES,
    *(f"container{level}_{name}" for level in CONTAINER_LEVELS for name in _CONTAINER_FEATURES),
)


def _top_container_steps(xpaths: list[str], top: int) -> tuple[np.ndarray, int]:
    """How many leading xpath steps each block shares with the container of block ``top`` (its
    parent element's path), and how many steps that container has.

    The container spelled "/s1/…/sk/" is compared with every xpath followed by "/" as code
    points, all blocks at once: a block shares the steps whose closing "/" lies within the
    characters they have in common.
    """
    container = [step for step in xpaths[top].split("/") if step][:-1]
    prefix = "".join(f"/{step}" for step in container) + "/"
    codes = np.array([f"{xpath}/" for xpath in xpaths]).view(np.uint32).reshape(len(xpaths), -1)
    width = min(codes.shape[1], len(prefix))
    target = np.frombuffer(prefix.encode("utf-32-le"), dtype=np.uint32)[:width]
    agree = codes[:, :width] == target
    common = np.where(agree.all(axis=1), width, agree.argmin(axis=1))
    steps_closed = np.concatenate([[0, 0], np.cumsum(target[1:] == ord("/"))])  # by common length
    return steps_closed[common].astype(np.float64), len(container)


def _legal_phrase_starts(text: str) -> list[int]:
    """Where legal phrases start in ``text``, as one regex alternation of ``_LEGAL_PHRASES`` in
    their order would find them: leftmost first, the earlier phrase where two start together,
    none inside another's match."""
    matches = []
    for priority, phrase in enumerate(_LEGAL_PHRASES):
        start = text.find(phrase)
        while start >= 0:
            end = start + len(phrase)
            if phrase != _COPYRIGHT_BEFORE_YEAR:
                matches.append((start, priority, end))
            elif len(year := text[end : end + 4]) == 4 and year.isdecimal():  # as the regex \d{4}
                matches.append((start, priority, end + 4))
            start = text.find(phrase, start + 1)
    matches.sort()
    starts, covered_to = [], 0
    for start, _, end in matches:
        if start >= covered_to:
            starts.append(start)
            covered_to = end
    return starts


def _codepoints(texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The page's block texts as one code-point array (blocks joined by newlines), with each
    block's start and length in it."""
    joined = "\n".join(texts) + "\n"
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    starts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]])
    return np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32), starts, lengths


def _text_features(
    texts: list[str], words: np.ndarray, title_words: set[str]
) -> tuple[np.ndarray, ...]:
    """Character counts of every block (:func:`_character_counts`), and the legal-phrase count
    and title overlap: the share of a block's words (``words``: its length in script units) that
    are whitespace words of the title."""
    counts, final_stop = _character_counts(texts)
    # The word-level features read the page's lower-cased text at once: no match of
    # _LEGAL_PHRASES holds a newline, and splitting the newline-joined text gives each block's
    # whitespace words in turn (lower-casing may lengthen a text, as "İ" does, so the starts are
    # counted again).
    lowered = list(map(str.lower, texts))
    joined = "\n".join(lowered)
    lowered_lengths = np.fromiter(map(len, lowered), dtype=np.int64, count=len(lowered))
    lowered_starts = np.concatenate([[0], np.cumsum(lowered_lengths + 1)[:-1]])
    found = _legal_phrase_starts(joined)
    legal = np.bincount(
        np.searchsorted(lowered_starts, found, side="right") - 1, minlength=len(texts)
    ).astype(np.float64)
    title_overlap = np.zeros(len(texts))
    if title_words:
        page_words = joined.split()
        in_title = np.fromiter(
            map(title_words.__contains__, page_words), dtype=bool, count=len(page_words)
        )
        hits_before = np.concatenate([[0], np.cumsum(in_title)])
        # a block's whitespace words, which are its script units only where it has no script
        # written without spaces (common.scripts.in_script_units)
        word_counts = np.fromiter(
            (len(text.split()) for text in lowered), dtype=np.intp, count=len(lowered)
        )
        word_ends = np.cumsum(word_counts)
        title_overlap = (hits_before[word_ends] - hits_before[word_ends - word_counts]) / words
    return counts, final_stop, title_overlap, legal


def _character_counts(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per text: sentence ends, capitalised words, digits and separators (texts × 4), counted over
    the page's code points at once, and whether its last character may end a sentence.

    Capitals are recognised in Latin, Greek and Cyrillic; a separator is one of
    ``_CLASS_MEMBERS[_SEPARATOR]`` or a dash between spaces.
    """
    codes, starts, lengths = _codepoints(texts)
    classes = _CHAR_CLASSES[np.minimum(codes, len(_CHAR_CLASSES) - 1)]
    space = (classes & _SPACE) != 0
    # every block ends in the newline that joins it to the next, a space to this test
    space_after = np.append(space[1:], True)
    space_before = np.concatenate([[True], space[:-1]])
    sentence_end = ((classes & _SENTENCE_END) != 0) & space_after
    word_start = ~space & space_before
    capital = word_start & ((classes & _CAPITAL) != 0)
    digit = (classes & _DIGIT) != 0
    separator = ((classes & _SEPARATOR) != 0) | ((codes == 45) & space_before & space_after)
    # summed per block along contiguous rows of bytes: a quarter of the time of (chars × 4) int64
    counts = np.add.reduceat(
        np.stack([sentence_end, capital, digit, separator]).view(np.uint8),
        starts,
        axis=1,
        dtype=np.int64,
    ).T
    final_stop = (classes[starts + lengths - 1] & _SENTENCE_FINAL) != 0
    return counts, final_stop


def _container_features(
    xpaths: list[str],
    words: np.ndarray,
    links: np.ndarray,
    stop: np.ndarray,
    page_stop: float,
    justext_good: np.ndarray,
) -> np.ndarray:
    """Per block, what the blocks sharing its container (the element ``level`` steps above it,
    for each of CONTAINER_LEVELS) hold together: their share of the page's words, how many they
    are, and their word-weighted link density, stop-word density against the page's, and share
    of words jusText keeps."""
    columns = []
    paths = xpaths
    for level in range(1, max(CONTAINER_LEVELS) + 1):
        paths = [path.rpartition("/")[0] for path in paths]  # one element further up
        if level not in CONTAINER_LEVELS:
            continue
        numbers: dict[str, int] = {}  # first-seen numbering: cheaper than sorting the strings
        container = np.fromiter(
            (numbers.setdefault(path, len(numbers)) for path in paths),
            dtype=np.intp,
            count=len(paths),
        )
        container_words = np.bincount(container, weights=words)[container]
        columns += [container_words / words.sum(), np.log1p(np.bincount(container)[container])]

        def container_mean(
            values: np.ndarray, container: np.ndarray = container, total=container_words
        ) -> np.ndarray:
            return np.bincount(container, weights=words * values)[container] / total

        columns += [
            container_mean(links),
            container_mean(stop) - page_stop,
            container_mean(justext_good),
        ]
    return np.column_stack(columns)


def block_words(blocks: list[Block]) -> np.ndarray:
    """Each block's whitespace words: a feature, and the weight a block has in training and in
    the evaluation, which counts words."""
    return np.array([b.n_words for b in blocks], dtype=np.float64)


# What block_features reads of each Block, gathered by C-level getters rather than a Python loop
# per attribute (numbers, and hint bits, which float64 holds exactly).
_BLOCK_NUMBERS = attrgetter(
    "n_words",
    "n_chars",
    "stopword_density",
    "link_density",
    "tags_count",
    "heading",
    "hints",
    "near_hints",
)
_TEXT = attrgetter("text")
_XPATH = attrgetter("xpath")
_PATH_DEPTH = methodcaller("count", "/")


def block_features(blocks: list[Block], title: str = "") -> np.ndarray:
    """One row of FEATURE_NAMES per block (float32); ``title`` is the page's <title> text."""
    if not blocks:
        return np.zeros((0, len(FEATURE_NAMES)), dtype=np.float32)
    cf, final = classify(blocks, FEATURE_JUSTEXT)
    title_words = set(title.lower().split())
    if _features is not None:
        return _features.feature_rows(_feature_tables(), blocks, cf, final, title_words)
    return _block_features_numpy(blocks, cf, final, title_words)


@lru_cache(maxsize=1)
def _feature_tables() -> _features.FeatureTables:
    """This module's tables and feature columns, as the compiled features read them. The
    logarithms of counts are numpy's (a table of the counts most blocks and pages have, and
    np.log1p beyond it): libm's log1p differs from numpy's in the last bit of some values."""
    log1p_of_counts = np.log1p(np.arange(1 << 16, dtype=np.float64))
    return _features.FeatureTables(
        _CHAR_CLASSES,
        (_SPACE, _SENTENCE_END, _SENTENCE_FINAL, _SEPARATOR, _CAPITAL, _DIGIT),
        _LEGAL_PHRASES,
        _COPYRIGHT_BEFORE_YEAR,
        log1p_of_counts,
        np.log1p,
        (BAD, SHORT, NEAR_GOOD, GOOD),
        WRAP_COLUMNS,
        FEATURE_NAMES,
        HINT_BITS,
        NEIGHBOUR_OFFSETS,
        _NEIGHBOUR_FEATURES,
        CONTAINER_LEVELS,
        _CONTAINER_FEATURES,
    )


def _block_features_numpy(
    blocks: list[Block], cf: list[str], final: list[str], title_words: set[str]
) -> np.ndarray:
    """block_features given jusText's classes and the title's words, in numpy."""
    count = len(blocks)
    numbers = np.array(list(map(_BLOCK_NUMBERS, blocks)), dtype=np.float64)
    words, chars, stop, links, tags, heading = numbers[:, :6].T
    hints, near_hints = numbers[:, 6:].astype(np.int64).T
    texts = list(map(_TEXT, blocks))
    xpaths = list(map(_XPATH, blocks))
    justext_good = np.array([c == GOOD for c in final], dtype=np.float64)
    cf_good = np.array([c == GOOD for c in cf], dtype=np.float64)

    counts, final_stop, title_overlap, legal = _text_features(texts, words, title_words)
    per_block = np.zeros((count, len(_BLOCK_FEATURES)))
    per_block[:, _COLUMN["mean_sentence_words"]] = words / np.maximum(1, counts[:, 0])
    per_block[:, _COLUMN["sentence_ends_per_word"]] = counts[:, 0] / words
    per_block[:, _COLUMN["ends_with_stop"]] = final_stop
    per_block[:, _COLUMN["capitalised_per_word"] : _COLUMN["separators_per_word"] + 1] = (
        counts[:, 1:4] / words[:, None]
    )
    per_block[:, _COLUMN["tags_per_word"]] = tags / words
    per_block[:, _COLUMN["heading"]] = heading
    per_block[:, _COLUMN["depth"]] = list(map(_PATH_DEPTH, xpaths))
    per_block[:, _COLUMN["title_overlap"]] = title_overlap
    per_block[:, _COLUMN["legal_phrases"]] = legal
    for column, cls in enumerate((BAD, SHORT, NEAR_GOOD, GOOD), start=_COLUMN["cf_bad"]):
        per_block[:, column] = [c == cls for c in cf]
    for column, bit in enumerate(HINT_BITS.values()):
        per_block[:, _COLUMN["hint_nav"] + column] = (hints & bit) != 0
        per_block[:, _COLUMN["near_hint_nav"] + column] = (near_hints & bit) != 0
    long_enough = words >= 10
    page_stop = (
        np.average(stop[long_enough], weights=words[long_enough])
        if long_enough.any()
        else stop.mean()
    )
    per_block[:, _COLUMN["log_words"]] = np.log1p(words)
    per_block[:, _COLUMN["log_chars"]] = np.log1p(chars)
    per_block[:, _COLUMN["stopword_density"]] = stop
    per_block[:, _COLUMN["stopword_density_vs_page"]] = stop - page_stop
    per_block[:, _COLUMN["link_density"]] = links
    per_block[:, _COLUMN["mean_word_length"]] = chars / words
    per_block[:, _COLUMN["text_density"]] = words / np.maximum(1.0, np.ceil(chars / WRAP_COLUMNS))
    per_block[:, _COLUMN["justext_good"]] = justext_good

    neighbour_source = np.column_stack(
        [per_block[:, _COLUMN["log_words"]], links, stop, cf_good, justext_good]
    )
    neighbours = []
    for offset in NEIGHBOUR_OFFSETS:
        shifted = np.full_like(neighbour_source, -1.0)  # -1: beyond the page's edge
        if offset < 0:
            shifted[-offset:] = neighbour_source[:offset]
        else:
            shifted[:-offset] = neighbour_source[offset:]
        neighbours.append(shifted)

    page = np.zeros((count, len(_PAGE_FEATURES)))
    index = np.arange(count)
    page[:, 0] = index / max(1, count - 1)
    page[:, 1] = (np.cumsum(words) - words) / words.sum()
    page[:, 2] = words / words.sum()
    page[:, 3] = np.log1p(count)
    page[:, 4] = np.average(justext_good, weights=words)
    # readability's idea: the container of the most content-like block holds the article
    top = int(np.argmax(words * stop * (1.0 - links)))
    shared, container_steps = _top_container_steps(xpaths, top)
    page[:, 5] = shared == container_steps
    page[:, 6] = shared / max(1, container_steps)
    page[:, 7] = np.clip(index - top, -20, 20)
    title_headings = np.flatnonzero(
        (per_block[:, _COLUMN["heading"]] > 0) & (per_block[:, _COLUMN["title_overlap"]] >= 0.5)
    )
    page[:, 8] = index >= title_headings[0] if len(title_headings) else -1.0
    containers = _container_features(xpaths, words, links, stop, page_stop, justext_good)
    return np.hstack([per_block, *neighbours, page, containers]).astype(np.float32)


def page_title(root) -> str:
    """The page's <title>, whitespace collapsed ("" for none)."""
    if root is None:
        return ""
    # the first <title> in document order, as ".//title" finds it, without ElementPath's Python
    title = next(root.iter("title"), None)
    return " ".join((title.text or "").split()) if title is not None else ""
