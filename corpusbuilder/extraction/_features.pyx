# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The `best` preset's block features, compiled: the rows of
:func:`corpusbuilder.extraction.classifier.block_features`, to the bit.

One of the extraction's compiled modules (with _walk, _trees and _classes), built by setup.py
when a C compiler and Python's headers are at hand; without it
:mod:`corpusbuilder.extraction.classifier` computes them with numpy, with the same rows
(tests/test_fastpath.py holds the two to each other on every gold page).

Why the features are faster here: numpy spends microseconds on each of the few dozen small
arrays a page's features take, and the per-block parts (lower-casing, legal phrases, title
words, the containers' paths) were Python loops. Here each block is read once and its row
written in place; the sums keep numpy's order (_sums.pxd) and the logarithms are numpy's, so
the rows are the same to the bit.
"""

from cpython.unicode cimport (
    Py_UNICODE_ISDECIMAL,
    Py_UNICODE_ISSPACE,
    PyUnicode_DATA,
    PyUnicode_GET_LENGTH,
    PyUnicode_KIND,
    PyUnicode_READ,
    PyUnicode_READ_CHAR,
)
from libc.math cimport ceil, isnan, signbit
from libc.string cimport memcmp

import numpy as np

cimport cython

from corpusbuilder.extraction._sums cimport _pairwise_sum
from corpusbuilder.extraction._text cimport _as_str


# The features feature_rows computes, by the names corpusbuilder.extraction.classifier gives them. A
# block's own values, which its neighbours' columns repeat ...
cdef enum:
    LOG_WORDS, LOG_CHARS, STOPWORD_DENSITY, STOPWORD_DENSITY_VS_PAGE, LINK_DENSITY, MEAN_WORD_LENGTH, TEXT_DENSITY,
    MEAN_SENTENCE_WORDS, SENTENCE_ENDS_PER_WORD, ENDS_WITH_STOP, CAPITALISED_PER_WORD, DIGITS_PER_WORD,
    SEPARATORS_PER_WORD, TAGS_PER_WORD, HEADING, DEPTH, TITLE_OVERLAP, LEGAL_PHRASES, CF_BAD, CF_SHORT,
    CF_NEAR_GOOD, CF_GOOD, JUSTEXT_GOOD, BLOCK_VALUES
_BLOCK_VALUE_NAMES = (
    "log_words", "log_chars", "stopword_density", "stopword_density_vs_page", "link_density", "mean_word_length",
    "text_density", "mean_sentence_words", "sentence_ends_per_word", "ends_with_stop", "capitalised_per_word",
    "digits_per_word", "separators_per_word", "tags_per_word", "heading", "depth", "title_overlap", "legal_phrases",
    "cf_bad", "cf_short", "cf_near_good", "cf_good", "justext_good",
)
# ... the page's view of each block ...
cdef enum:
    POSITION, WORDS_BEFORE_SHARE, WORD_SHARE, LOG_PAGE_BLOCKS, PAGE_GOOD_SHARE, IN_TOP_CONTAINER,
    TOP_PREFIX_SHARE, BLOCKS_FROM_TOP, AFTER_TITLE_HEADING
_PAGE_VALUE_NAMES = (
    "position", "words_before_share", "word_share", "log_page_blocks", "page_good_share", "in_top_container",
    "top_prefix_share", "blocks_from_top", "after_title_heading",
)
# ... and what the blocks sharing its container hold together.
cdef enum:
    CONTAINER_WORD_SHARE, CONTAINER_LOG_BLOCKS, CONTAINER_LINK_DENSITY, CONTAINER_STOPWORD_DENSITY_VS_PAGE,
    CONTAINER_JUSTEXT_GOOD_SHARE, CONTAINER_VALUES
_CONTAINER_VALUE_NAMES = ("word_share", "log_blocks", "link_density", "stopword_density_vs_page", "justext_good_share")


cdef class FeatureTables:
    """What :func:`feature_rows` reads of :mod:`corpusbuilder.extraction.classifier`, made once: the
    character classes, the legal phrases, numpy's log1p of small counts, jusText's class names
    and the column of each feature. A feature the classifier names that this module does not
    compute (or the other way round) is refused here, not computed wrong later."""

    cdef const unsigned char[::1] classes
    cdef unsigned char space, sentence_end, sentence_final, separator, capital, digit
    cdef tuple phrases
    # per code point below U+0100: bit k when phrase k starts with it / has it second (or is
    # that one code point)
    cdef unsigned int phrase_firsts[256]
    cdef unsigned int phrase_seconds[256]
    cdef unsigned int single_code_phrases
    cdef int year_phrase
    cdef const double[::1] log1p_table
    cdef object log1p
    cdef str bad_class, short_class, near_good_class, good_class
    cdef double wrap_columns
    cdef Py_ssize_t width, highest_level
    cdef Py_ssize_t[::1] block_columns, page_columns, hint_bits, hint_columns, near_hint_columns
    cdef Py_ssize_t[::1] neighbour_offsets, neighbour_sources, container_levels
    cdef Py_ssize_t[:, ::1] neighbour_columns, container_columns

    def __init__(self, const unsigned char[::1] classes not None, tuple bits not None, tuple phrases not None,
                 str year_phrase not None, const double[::1] log1p_table not None, log1p,
                 tuple justext_classes not None, double wrap_columns, tuple feature_names not None,
                 dict hint_bits not None, tuple neighbour_offsets not None, tuple neighbour_features not None,
                 tuple container_levels not None, tuple container_features not None):
        self.classes = classes
        self.space, self.sentence_end, self.sentence_final, self.separator, self.capital, self.digit = bits
        if len(phrases) > 32 or not all(phrase and max(map(ord, phrase[:2])) < 256 for phrase in phrases):
            raise ValueError("legal phrases: at most 32, their first two code points below U+0100")
        self.phrases = phrases
        self.single_code_phrases = 0
        for code in range(256):
            self.phrase_firsts[code] = self.phrase_seconds[code] = 0
        for priority, phrase in enumerate(phrases):
            self.phrase_firsts[ord(phrase[0])] |= 1u << priority
            if len(phrase) == 1:
                self.single_code_phrases |= 1u << priority
            else:
                self.phrase_seconds[ord(phrase[1])] |= 1u << priority
        self.year_phrase = phrases.index(year_phrase)
        self.log1p_table = log1p_table
        self.log1p = log1p
        self.bad_class, self.short_class, self.near_good_class, self.good_class = justext_classes
        self.wrap_columns = wrap_columns
        self.width = len(feature_names)
        computed = [*_BLOCK_VALUE_NAMES, *(f"hint_{name}" for name in hint_bits),
                    *(f"near_hint_{name}" for name in hint_bits),
                    *(f"{name}@{offset:+d}" for offset in neighbour_offsets for name in neighbour_features),
                    *_PAGE_VALUE_NAMES,
                    *(f"container{level}_{name}" for level in container_levels for name in _CONTAINER_VALUE_NAMES)]
        unknown = set(feature_names) ^ set(computed)
        if (unknown or len(computed) != len(feature_names) or not set(neighbour_features) <= set(_BLOCK_VALUE_NAMES)
                or container_features != _CONTAINER_VALUE_NAMES or not all(level > 0 for level in container_levels)):
            raise ValueError(f"the compiled features are not the classifier's: {sorted(unknown)}")
        column = {name: index for index, name in enumerate(feature_names)}
        def columns(names):
            return np.array([column[name] for name in names], dtype=np.intp)
        self.block_columns = columns(_BLOCK_VALUE_NAMES)
        self.page_columns = columns(_PAGE_VALUE_NAMES)
        self.hint_bits = np.array(list(hint_bits.values()), dtype=np.intp)
        self.hint_columns = columns([f"hint_{name}" for name in hint_bits])
        self.near_hint_columns = columns([f"near_hint_{name}" for name in hint_bits])
        self.neighbour_offsets = np.array(neighbour_offsets, dtype=np.intp)
        self.neighbour_columns = np.array([columns([f"{name}@{offset:+d}" for name in neighbour_features])
                                           for offset in neighbour_offsets], dtype=np.intp).reshape(
                                               len(neighbour_offsets), len(neighbour_features))
        self.neighbour_sources = np.array([_BLOCK_VALUE_NAMES.index(name) for name in neighbour_features], dtype=np.intp)
        self.container_levels = np.array(container_levels, dtype=np.intp)
        self.highest_level = max(container_levels, default=0)
        self.container_columns = np.array([columns([f"container{level}_{name}" for name in _CONTAINER_VALUE_NAMES])
                                           for level in container_levels], dtype=np.intp).reshape(
                                               len(container_levels), CONTAINER_VALUES)


cdef int _character_counts(str text, FeatureTables tables, double* row) except -1:
    """A text's sentence ends, capitalised words, digits and separators (into the row's columns
    of them, which the caller divides by the words) and whether its last character may end a
    sentence: :func:`corpusbuilder.extraction.classifier._character_counts` for one text.

    A code point beyond the class table has its last entry's classes (none); the text's
    neighbours are the newlines that join the page's texts there, so its edges count as spaces.
    """
    cdef const unsigned char[::1] classes = tables.classes
    cdef Py_ssize_t j, length = PyUnicode_GET_LENGTH(text), last = classes.shape[0] - 1
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_UCS4 code
    cdef unsigned char here = 0, after
    cdef bint space_before = True, space_after
    cdef long long sentence_ends = 0, capitals = 0, digits = 0, separators = 0
    after = classes[min(<Py_ssize_t> PyUnicode_READ(kind, data, 0), last)] if length else tables.space
    for j in range(length):
        code = PyUnicode_READ(kind, data, j)
        here = after
        after = classes[min(<Py_ssize_t> PyUnicode_READ(kind, data, j + 1), last)] if j + 1 < length else tables.space
        space_after = (after & tables.space) != 0
        if here & tables.sentence_end and space_after:
            sentence_ends += 1
        if here & tables.capital and space_before:
            capitals += 1
        if here & tables.digit:
            digits += 1
        if here & tables.separator or (code == 45 and space_before and space_after):
            separators += 1
        space_before = (here & tables.space) != 0
    row[SENTENCE_ENDS_PER_WORD] = <double> sentence_ends
    row[CAPITALISED_PER_WORD] = <double> capitals
    row[DIGITS_PER_WORD] = <double> digits
    row[SEPARATORS_PER_WORD] = <double> separators
    row[ENDS_WITH_STOP] = 1.0 if length and here & tables.sentence_final else 0.0
    return 0


cdef inline unsigned long long _word_hash(int kind, const void* data, Py_ssize_t start, Py_ssize_t end) noexcept:
    """FNV-1a of a word's code points."""
    cdef unsigned long long value = 14695981039346656037ULL
    cdef Py_ssize_t k
    for k in range(start, end):
        value = (value ^ <unsigned long long> PyUnicode_READ(kind, data, k)) * 1099511628211ULL
    return value


cdef inline unsigned long long _bloom_bits(unsigned long long word_hash) noexcept:
    """Two of 64 bits per word: a word whose bits a filter lacks is not among its words."""
    return (1ULL << (word_hash & 63)) | (1ULL << ((word_hash >> 6) & 63))


cdef unsigned long long _title_filter(title_words) except? 0:
    """The bloom bits of the title's words (each a str, else TypeError)."""
    cdef unsigned long long bits = 0
    cdef str word
    for value in title_words:
        word = _as_str(value)
        bits |= _bloom_bits(_word_hash(PyUnicode_KIND(word), PyUnicode_DATA(word), 0, PyUnicode_GET_LENGTH(word)))
    return bits


cdef Py_ssize_t _title_words_in(str text, title_words, unsigned long long title_filter) except -1:
    """How many of a text's whitespace words (``str.split``) are in ``title_words``; a word
    becomes a str and is looked up only when ``title_filter`` (:func:`_title_filter`) holds its
    bits, so most words of a page are never made into objects."""
    cdef Py_ssize_t j = 0, start, length = PyUnicode_GET_LENGTH(text), found = 0
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef unsigned long long bits
    while j < length:
        while j < length and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, j)):
            j += 1
        start = j
        while j < length and not Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, j)):
            j += 1
        if j > start:
            bits = _bloom_bits(_word_hash(kind, data, start, j))
            if bits & title_filter == bits and text[start:j] in title_words:
                found += 1
    return found


cdef Py_ssize_t _phrase_end(int kind, const void* data, Py_ssize_t at, Py_ssize_t length, str phrase) noexcept:
    """Where ``phrase`` ends if the text holds it at ``at``, else -1."""
    cdef Py_ssize_t k, size = PyUnicode_GET_LENGTH(phrase)
    if at + size > length:
        return -1
    for k in range(1, size):  # the first code point chose the phrase
        if PyUnicode_READ(kind, data, at + k) != PyUnicode_READ_CHAR(phrase, k):
            return -1
    return at + size


cdef Py_ssize_t _legal_phrases_in(str text, FeatureTables tables) noexcept:
    """How many legal phrases a lower-cased text holds, as
    :func:`corpusbuilder.extraction.classifier._legal_phrase_starts` finds them: leftmost first, the earlier
    phrase where two start together, none inside another's match."""
    cdef Py_ssize_t at, length = PyUnicode_GET_LENGTH(text), covered_to = 0, found = 0, end, k
    cdef int kind = PyUnicode_KIND(text), priority
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_UCS4 code, second
    cdef unsigned int candidates
    for at in range(length):
        if at < covered_to:
            continue
        code = PyUnicode_READ(kind, data, at)
        if code >= 256:
            continue
        second = PyUnicode_READ(kind, data, at + 1) if at + 1 < length else 256
        candidates = tables.phrase_firsts[code] & (
            tables.single_code_phrases | (tables.phrase_seconds[second] if second < 256 else 0))
        priority = 0
        while candidates:
            if candidates & 1:
                end = _phrase_end(kind, data, at, length, <str> tables.phrases[priority])
                if end >= 0 and priority == tables.year_phrase:  # counts only with a four-digit year after it
                    if end + 4 > length:
                        end = -1
                    else:
                        for k in range(end, end + 4):
                            if not Py_UNICODE_ISDECIMAL(PyUnicode_READ(kind, data, k)):
                                end = -1
                                break
                        else:
                            end += 4
                if end >= 0:
                    found += 1
                    covered_to = end
                    break
            candidates >>= 1
            priority += 1
    return found


cdef Py_ssize_t _container_end(str path, Py_ssize_t end) noexcept:
    """Where ``path[:end].rpartition("/")[0]`` ends: at the last "/" before ``end``, or at 0."""
    cdef int kind = PyUnicode_KIND(path)
    cdef const void* data = PyUnicode_DATA(path)
    cdef Py_ssize_t k = end - 1
    while k > 0 and PyUnicode_READ(kind, data, k) != 47:
        k -= 1
    return max(k, 0)


cdef bint _same_prefix(str one, str other, Py_ssize_t end) noexcept:
    cdef int kind = PyUnicode_KIND(one), other_kind = PyUnicode_KIND(other)
    cdef const void* data = PyUnicode_DATA(one)
    cdef const void* other_data = PyUnicode_DATA(other)
    cdef Py_ssize_t k
    if kind == other_kind:
        return memcmp(data, other_data, end * kind) == 0
    for k in range(end):
        if PyUnicode_READ(kind, data, k) != PyUnicode_READ(other_kind, other_data, k):
            return False
    return True


cdef int _number_containers(list xpaths, const Py_ssize_t[::1] ends, Py_ssize_t[::1] container) except -1:
    """Numbers the distinct prefixes ``xpaths[i][:ends[i]]`` (the paths of the blocks'
    containers): ``container[i]`` is block i's. Open addressing on FNV-1a of a prefix's length
    and last code points: containers differ at their ends (``div[3]``, ``div[4]``), and a shared
    hash costs a comparison, never a wrong number."""
    cdef Py_ssize_t count = len(xpaths), size = 16, i, slot, numbered = 0
    cdef unsigned long long value
    cdef str xpath
    while size < 2 * count:
        size *= 2
    cdef Py_ssize_t[::1] first = np.full(size, -1, dtype=np.intp)  # per slot: the first block with its prefix
    for i in range(count):
        xpath = <str> xpaths[i]
        value = _word_hash(PyUnicode_KIND(xpath), PyUnicode_DATA(xpath), max(ends[i] - 24, 0), ends[i])
        slot = (value ^ <unsigned long long> ends[i] * 1099511628211ULL) & (size - 1)
        while first[slot] >= 0 and not (ends[first[slot]] == ends[i]
                                         and _same_prefix(<str> xpaths[first[slot]], xpath, ends[i])):
            slot = (slot + 1) & (size - 1)
        if first[slot] < 0:
            first[slot] = i
            container[i] = numbered
            numbered += 1
        else:
            container[i] = container[first[slot]]
    return 0


cdef double _log1p_count(FeatureTables tables, double count) except? -1.0:
    """numpy's log1p of a count: numpy's, not libm's, as the two differ in the last bit. The
    table holds the small counts; anything else (a large count, or what a hand-made block may
    hold: a negative, fractional or negative-zero one, NaN) goes to numpy."""
    if 0.0 <= count < tables.log1p_table.shape[0] and count == <double> <Py_ssize_t> count and not signbit(count):
        return tables.log1p_table[<Py_ssize_t> count]
    return tables.log1p(count)


cdef Py_ssize_t _top_container(list xpaths, Py_ssize_t top, Py_ssize_t[::1] shared) except -1:
    """How many leading xpath steps each block shares with the container of block ``top``, and
    how many steps that container has: :func:`corpusbuilder.extraction.classifier._top_container_steps`,
    which compares each "xpath/" with the container's "/s1/…/sk/" over the longest "xpath/"'s
    width, and counts the steps whose closing "/" lies within the code points they share."""
    steps = [step for step in (<str> xpaths[top]).split("/") if step]
    container = steps[:max(len(steps) - 1, 0)]  # no negative index: this module does not wrap them around
    cdef str prefix = "".join([f"/{step}" for step in container]) + "/"
    cdef Py_ssize_t count = len(xpaths), i, common, length, width = 0
    cdef str xpath
    for i in range(count):
        width = max(width, PyUnicode_GET_LENGTH(<str> xpaths[i]) + 1)
    width = min(width, PyUnicode_GET_LENGTH(prefix))
    cdef int kind = PyUnicode_KIND(prefix), xpath_kind
    cdef const void* data = PyUnicode_DATA(prefix)
    cdef const void* xpath_data
    cdef Py_ssize_t[::1] closed = np.zeros(width + 1, dtype=np.intp)  # steps closed within the first c code points
    for common in range(2, width + 1):
        closed[common] = closed[common - 1] + (PyUnicode_READ(kind, data, common - 1) == 47)
    for i in range(count):
        xpath = <str> xpaths[i]
        xpath_kind = PyUnicode_KIND(xpath)
        xpath_data = PyUnicode_DATA(xpath)
        length = PyUnicode_GET_LENGTH(xpath)
        common = 0
        while (common < width and common < length
               and PyUnicode_READ(xpath_kind, xpath_data, common) == PyUnicode_READ(kind, data, common)):
            common += 1
        if common == length and common < width and PyUnicode_READ(kind, data, common) == 47:
            common += 1  # the "/" after the xpath
        shared[i] = closed[common]
    return len(container)


@cython.cdivision(True)  # a division by zero gives inf or NaN, as numpy's does
def feature_rows(FeatureTables tables not None, list blocks not None, list cf_classes not None,
                 list final_classes not None, title_words not None):
    """:func:`corpusbuilder.extraction.classifier.block_features` given jusText's classes of the blocks (as
    ``classify`` with ``FEATURE_JUSTEXT`` gives them) and the page title's lower-cased words:
    the same float32 rows, to the bit.

    Sums are numpy's: its pairwise order for ``sum`` and ``average``, its sequential one for
    ``cumsum`` and ``bincount``; log1p is numpy's (:func:`_log1p_count`).
    """
    cdef Py_ssize_t count = len(blocks), i, j, k, column, level, long_blocks = 0, first_title_heading = -1
    if count == 0 or len(cf_classes) != count or len(final_classes) != count:
        raise ValueError(f"{count} blocks, {len(cf_classes)} and {len(final_classes)} classes: one each, at least one")
    values_array = np.empty((count, BLOCK_VALUES), dtype=np.float64)
    cdef double[:, ::1] values = values_array
    cdef double[:, ::1] scratch = np.empty((5, count), dtype=np.float64)
    cdef double[::1] words = scratch[0], weighted = scratch[1], long_words = scratch[2], long_weighted = scratch[3]
    cdef double[::1] chars = scratch[4]
    cdef long long[:, ::1] hints = np.empty((count, 2), dtype=np.int64)
    cdef double* row
    cdef double lines
    cdef str text, cf
    cdef unsigned long long title_filter = _title_filter(title_words)
    xpaths = []
    for i in range(count):
        block = blocks[i]
        row = &values[i, 0]
        text = _as_str(block.text)
        xpath = _as_str(block.xpath)
        xpaths.append(xpath)
        words[i] = block.n_words
        chars[i] = block.n_chars
        row[STOPWORD_DENSITY] = block.stopword_density
        row[LINK_DENSITY] = block.link_density
        row[TAGS_PER_WORD] = <double> block.tags_count / words[i]
        row[HEADING] = block.heading
        hints[i, 0] = block.hints
        hints[i, 1] = block.near_hints
        _character_counts(text, tables, row)
        row[MEAN_SENTENCE_WORDS] = words[i] / max(1.0, row[SENTENCE_ENDS_PER_WORD])
        row[SENTENCE_ENDS_PER_WORD] /= words[i]
        row[CAPITALISED_PER_WORD] /= words[i]
        row[DIGITS_PER_WORD] /= words[i]
        row[SEPARATORS_PER_WORD] /= words[i]
        lowered = text.lower()
        row[TITLE_OVERLAP] = _title_words_in(lowered, title_words, title_filter) / words[i] if title_words else 0.0
        row[LEGAL_PHRASES] = _legal_phrases_in(lowered, tables)
        row[DEPTH] = xpath.count("/")
        cf = _as_str(cf_classes[i])
        row[CF_BAD] = cf == tables.bad_class
        row[CF_SHORT] = cf == tables.short_class
        row[CF_NEAR_GOOD] = cf == tables.near_good_class
        row[CF_GOOD] = cf == tables.good_class
        row[JUSTEXT_GOOD] = _as_str(final_classes[i]) == tables.good_class
        row[LOG_WORDS] = _log1p_count(tables, words[i])
        row[LOG_CHARS] = _log1p_count(tables, chars[i])
        row[MEAN_WORD_LENGTH] = chars[i] / words[i]
        lines = ceil(chars[i] / tables.wrap_columns)
        row[TEXT_DENSITY] = words[i] / (lines if lines > 1.0 or isnan(lines) else 1.0)  # np.maximum keeps a NaN
        if words[i] >= 10:
            long_words[long_blocks] = words[i]
            long_weighted[long_blocks] = row[STOPWORD_DENSITY] * words[i]
            long_blocks += 1
        if row[HEADING] > 0 and row[TITLE_OVERLAP] >= 0.5 and first_title_heading < 0:
            first_title_heading = i

    # the page's stop-word density: np.average over blocks of ten words or more, else np.mean
    cdef double page_stop
    if long_blocks:
        page_stop = (0.0 + _pairwise_sum(&long_weighted[0], long_blocks)) / (0.0 + _pairwise_sum(&long_words[0], long_blocks))
    else:
        for i in range(count):
            weighted[i] = values[i, STOPWORD_DENSITY]
        page_stop = (0.0 + _pairwise_sum(&weighted[0], count)) / count
    cdef double total_words = 0.0 + _pairwise_sum(&words[0], count)
    for i in range(count):
        weighted[i] = values[i, JUSTEXT_GOOD] * words[i]
    cdef double page_good_share = (0.0 + _pairwise_sum(&weighted[0], count)) / total_words
    # readability's idea: the container of the most content-like block holds the article (the
    # first maximum, as np.argmax; a NaN is a maximum there)
    cdef Py_ssize_t top = 0
    cdef double best = words[0] * values[0, STOPWORD_DENSITY] * (1.0 - values[0, LINK_DENSITY]), score
    for i in range(1, count):
        if isnan(best):
            break
        score = words[i] * values[i, STOPWORD_DENSITY] * (1.0 - values[i, LINK_DENSITY])
        if isnan(score) or score > best:
            top, best = i, score
    cdef Py_ssize_t[::1] shared = np.empty(count, dtype=np.intp)
    cdef Py_ssize_t container_steps = _top_container(xpaths, top, shared)

    rows = np.empty((count, tables.width), dtype=np.float32)
    cdef float[:, ::1] out = rows
    cdef double cumulative = 0.0, log_page_blocks = _log1p_count(tables, count)
    for i in range(count):
        values[i, STOPWORD_DENSITY_VS_PAGE] = values[i, STOPWORD_DENSITY] - page_stop
    for i in range(count):
        row = &values[i, 0]
        for k in range(BLOCK_VALUES):
            out[i, tables.block_columns[k]] = <float> row[k]
        for k in range(tables.hint_bits.shape[0]):
            out[i, tables.hint_columns[k]] = (hints[i, 0] & tables.hint_bits[k]) != 0
            out[i, tables.near_hint_columns[k]] = (hints[i, 1] & tables.hint_bits[k]) != 0
        for j in range(tables.neighbour_offsets.shape[0]):
            k = i + tables.neighbour_offsets[j]
            for column in range(tables.neighbour_columns.shape[1]):
                out[i, tables.neighbour_columns[j, column]] = (
                    <float> values[k, tables.neighbour_sources[column]] if 0 <= k < count else -1.0)
        cumulative += words[i]
        out[i, tables.page_columns[POSITION]] = <float> (<double> i / max(1, count - 1))
        out[i, tables.page_columns[WORDS_BEFORE_SHARE]] = <float> ((cumulative - words[i]) / total_words)
        out[i, tables.page_columns[WORD_SHARE]] = <float> (words[i] / total_words)
        out[i, tables.page_columns[LOG_PAGE_BLOCKS]] = <float> log_page_blocks
        out[i, tables.page_columns[PAGE_GOOD_SHARE]] = <float> page_good_share
        out[i, tables.page_columns[IN_TOP_CONTAINER]] = shared[i] == container_steps
        out[i, tables.page_columns[TOP_PREFIX_SHARE]] = <float> (<double> shared[i] / max(1, container_steps))
        out[i, tables.page_columns[BLOCKS_FROM_TOP]] = min(max(i - top, -20), 20)
        out[i, tables.page_columns[AFTER_TITLE_HEADING]] = (i >= first_title_heading) if first_title_heading >= 0 else -1.0

    # containers: the element one level above a block's path, the one above that, ...
    cdef Py_ssize_t[::1] ends = np.empty(count, dtype=np.intp), container = np.empty(count, dtype=np.intp)
    cdef double[:, ::1] sums = np.empty((5, count), dtype=np.float64)  # per container, in bincount's order
    for i in range(count):
        ends[i] = PyUnicode_GET_LENGTH(<str> xpaths[i])
    for level in range(1, tables.highest_level + 1):
        for i in range(count):
            ends[i] = _container_end(<str> xpaths[i], ends[i])
        for j in range(tables.container_levels.shape[0]):
            if tables.container_levels[j] == level:
                break
        else:
            continue
        _number_containers(xpaths, ends, container)
        sums[:, :] = 0.0
        for i in range(count):
            k = container[i]
            sums[0, k] += words[i]
            sums[1, k] += 1.0
            sums[2, k] += words[i] * values[i, LINK_DENSITY]
            sums[3, k] += words[i] * values[i, STOPWORD_DENSITY]
            sums[4, k] += words[i] * values[i, JUSTEXT_GOOD]
        for i in range(count):
            k = container[i]
            out[i, tables.container_columns[j, CONTAINER_WORD_SHARE]] = <float> (sums[0, k] / total_words)
            out[i, tables.container_columns[j, CONTAINER_LOG_BLOCKS]] = <float> _log1p_count(tables, sums[1, k])
            out[i, tables.container_columns[j, CONTAINER_LINK_DENSITY]] = <float> (sums[2, k] / sums[0, k])
            out[i, tables.container_columns[j, CONTAINER_STOPWORD_DENSITY_VS_PAGE]] = <float> (sums[3, k] / sums[0, k] - page_stop)
            out[i, tables.container_columns[j, CONTAINER_JUSTEXT_GOOD_SHARE]] = <float> (sums[4, k] / sums[0, k])
    return rows
