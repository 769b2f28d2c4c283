# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The quality stage's hot loops, compiled: the word cut of a shard's texts and the per-line
tests of each document (Gopher's quality and line repetition signals, C4's, FineWeb's).

Built by setup.py beside the extract stage's walks; without it `corpusbuilder.quality.signals`
runs its Python and numpy versions, which are the reference: tests/test_quality_fastpath.py
holds the two to each other on every document of the dev crawl and on hand-made texts.

Why it is faster: the Python versions visit each whitespace chunk to look it up, each new chunk
to cut it, and each line of each document several times (once per signal set, through regular
expressions and lists of line strings). Here a text is read once per pass where CPython keeps
its code points; a chunk becomes a str only to be looked up in the shard's memo, and a line
only where a signal compares or lower-cases it. Whatever is rare or subtle — a chunk that is
not ASCII, or not letters and digits with a mark before or after it; a line with a citation
mark; a text with line breaks other than "\\n" — is handed to the Python version.
"""

import numpy as np

from cpython.unicode cimport (
    Py_UNICODE_ISALNUM,
    Py_UNICODE_ISDECIMAL,
    Py_UNICODE_ISSPACE,
    PyUnicode_DATA,
    PyUnicode_GET_LENGTH,
    PyUnicode_KIND,
    PyUnicode_READ,
    PyUnicode_Substring,
)
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp


cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object)


cdef uint64_t _FNV_OFFSET = 0xCBF29CE484222325, _FNV_PRIME = 0x100000001B3
# Fibonacci hashing: a table's slot is the top bits of a hash times this
cdef uint64_t _GOLDEN = 0x9E3779B97F4A7C15


cdef inline bint _ascii_alnum(Py_UCS4 ch) noexcept:
    return (48 <= ch <= 57) or (65 <= ch <= 90) or (97 <= ch <= 122)


cdef inline bint _breaks_line(Py_UCS4 ch) noexcept:
    """A line break of str.splitlines other than "\\n"."""
    return ch == 13 or ch == 11 or ch == 12 or 28 <= ch <= 30 or ch == 0x85 or ch == 0x2028 or ch == 0x2029


cdef object _grown(object array, Py_ssize_t size):
    if size <= len(array):
        return array
    bigger = np.empty(max(size, 2 * len(array)), np.int64)
    bigger[: len(array)] = array
    return bigger


cdef inline object _type_id(dict types, object word):
    found = types.get(word)
    if found is None:
        found = len(types)
        types[word] = found
    return found


cdef inline bint _preparing_keeps(Py_UCS4 ch) noexcept:
    """Does `tokenise.prepare_text` leave every chunk of such code points as it is: below
    U+0300 but the soft hyphen, or general punctuation's dashes, quotes and ellipsis (every
    string of them is NFC, none is invisible or of a script without spaces)."""
    return (ch < 0x300 and ch != 0xAD) or 0x2010 <= ch <= 0x2027


cdef inline bint _letter(Py_UCS4 ch) noexcept:
    """``[^\\W\\d_]`` of Python's re."""
    return Py_UNICODE_ISALNUM(ch) and not Py_UNICODE_ISDECIMAL(ch) and ch != 95


cdef tuple _quick_ids(str chunk, int kind, void* data, dict types, frozenset abbreviations):
    """`words._quick_words` of a chunk that preparing keeps (`_preparing_keeps`), as type ids;
    None where it would give ``()``."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(chunk), start = 0, end = n, i, part
    cdef Py_UCS4 ch
    if PyUnicode_READ(kind, data, 0) in '("\u201c\u00ab':
        start = 1
    if PyUnicode_READ(kind, data, n - 1) in '.,;:!?)"\u201d\u00bb':
        end = n - 1
    if start >= end:
        return None
    if end < n and (
        (PyUnicode_READ(kind, data, n - 1) == 46 and end - start < 2)
        or PyUnicode_Substring(chunk, start, n) in abbreviations
    ):
        return None
    ids = []
    if start:
        ids.append(_type_id(types, PyUnicode_Substring(chunk, 0, 1)))
    part = start
    for i in range(start, end + 1):
        ch = PyUnicode_READ(kind, data, i) if i < end else 45
        if ch == 45:  # a part ends at a hyphen or the core's end
            if i == part:
                return None  # an empty part: "a--b", "-a"
            ids.append(_type_id(types, PyUnicode_Substring(chunk, part, i)))
            if i < end:
                ids.append(_type_id(types, "-"))
            part = i + 1
        elif not Py_UNICODE_ISALNUM(ch):
            return None
    if end < n:
        ids.append(_type_id(types, PyUnicode_Substring(chunk, n - 1, n)))
    return tuple(ids)


cdef bint _initials(int kind, void* data, Py_ssize_t start, Py_ssize_t end) noexcept:
    """Is text[start:end] letters each followed by a full stop ("U.S.", "e.g.")."""
    cdef Py_ssize_t i
    if end - start < 2 or (end - start) % 2:
        return False
    for i in range(start, end, 2):
        if not _letter(PyUnicode_READ(kind, data, i)) or PyUnicode_READ(kind, data, i + 1) != 46:
            return False
    return True


cdef inline bint _apostrophe(Py_UCS4 ch) noexcept:
    return ch == 39 or ch == 0x2019


cdef Py_ssize_t _clitic(int kind, void* data, Py_ssize_t start, Py_ssize_t end) noexcept:
    """Where the contraction's clitic ("n't", "'s", "'re", ...) ends text[start:end], after a
    letter (`words._CLITIC`, case-insensitive); ``end`` if none does."""
    cdef unsigned int a = 0, b = 0, c = <unsigned int> PyUnicode_READ(kind, data, end - 1)
    c |= 32
    if end - start >= 3:
        a = <unsigned int> PyUnicode_READ(kind, data, end - 3)
        b = <unsigned int> PyUnicode_READ(kind, data, end - 2)
    if end - start >= 4 and _letter(PyUnicode_READ(kind, data, end - 4)):
        if (a | 32) == 110 and _apostrophe(b) and c == 116:  # n't
            return end - 3
        if _apostrophe(a) and (
            ((b | 32) == 114 and c == 101)  # 're
            or ((b | 32) == 118 and c == 101)  # 've
            or ((b | 32) == 108 and c == 108)  # 'll
        ):
            return end - 3
    if end - start >= 3 and _letter(a) and _apostrophe(b) and (c == 115 or c == 100 or c == 109):
        return end - 2  # 's 'd 'm
    return end


cdef tuple _web_ids(str chunk, int kind, void* data, dict types, frozenset abbreviations):
    """`words.web_words` of a chunk that preparing keeps (`_preparing_keeps`), as type ids; None
    for one with a long s (which re's case-insensitive "s" of a clitic matches)."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(chunk), start = 0, end = n, i, step, stem, piece
    cdef Py_UCS4 ch
    for i in range(n):
        if PyUnicode_READ(kind, data, i) == 0x17F:
            return None
    for i in range(n):
        if Py_UNICODE_ISALNUM(PyUnicode_READ(kind, data, i)):
            break
    else:
        return (_type_id(types, chunk),)
    ids, suffix = [], []
    while start < end:
        ch = PyUnicode_READ(kind, data, start)
        if Py_UNICODE_ISALNUM(ch) or ch == 45:
            break
        step = start + 1
        if ch == 46 and start + 1 < n and PyUnicode_READ(kind, data, start + 1) == 46:
            while step < n and PyUnicode_READ(kind, data, step) == 46:  # an ellipsis
                step += 1
        ids.append(_type_id(types, PyUnicode_Substring(chunk, start, step)))
        start = step
    while end > start:
        ch = PyUnicode_READ(kind, data, end - 1)
        if Py_UNICODE_ISALNUM(ch) or ch == 45:
            break
        if _initials(kind, data, start, end) or PyUnicode_Substring(chunk, start, end) in abbreviations:
            break
        step = end - 1
        if ch == 46 and end - 2 >= start and PyUnicode_READ(kind, data, end - 2) == 46:
            while step > start and PyUnicode_READ(kind, data, step - 1) == 46:  # an ellipsis
                step -= 1
        suffix.append(_type_id(types, PyUnicode_Substring(chunk, step, end)))
        end = step
    if end > start:
        core = PyUnicode_Substring(chunk, start, end)
        if "@" in core or "www." in core or "http://" in core or "https://" in core or (
            "ftp://" in core
        ):
            ids.append(_type_id(types, core))
        else:
            stem = _clitic(kind, data, start, end)
            piece = start
            for i in range(start + 1, stem - 1):  # a hyphen between letters or digits
                if PyUnicode_READ(kind, data, i) == 45 and Py_UNICODE_ISALNUM(
                    PyUnicode_READ(kind, data, i - 1)
                ) and Py_UNICODE_ISALNUM(PyUnicode_READ(kind, data, i + 1)):
                    ids.append(_type_id(types, PyUnicode_Substring(chunk, piece, i)))
                    ids.append(_type_id(types, "-"))
                    piece = i + 1
            if stem > piece:
                ids.append(_type_id(types, PyUnicode_Substring(chunk, piece, stem)))
            if stem < end:
                ids.append(_type_id(types, PyUnicode_Substring(chunk, stem, end)))
    ids.extend(reversed(suffix))
    return tuple(ids)


def read_types(list new, Py_ssize_t done, dict lower, int64_t[::1] length, uint8_t[::1] word,
               uint8_t[::1] alpha, int64_t[::1] folded):
    """`words.TokenTypes.update` of the types ``new`` (numbered from ``done``): the length and
    lower-cased form of each, and ``word`` and ``alpha`` of those ASCII letters and digits (most
    of them; the form is the type itself unless it has a capital); the positions in ``new`` of
    the others, whose flags `update` reads with str methods."""
    cdef Py_ssize_t i, k, n
    cdef int kind
    cdef void* data
    cdef Py_UCS4 ch
    cdef bint capital, digits
    cdef str type_
    rest = []
    for i in range(len(new)):
        type_ = new[i]
        n = PyUnicode_GET_LENGTH(type_)
        length[done + i] = n
        capital, digits = False, True
        if n and PyUnicode_IS_ASCII(type_):
            kind, data = PyUnicode_KIND(type_), PyUnicode_DATA(type_)
            for k in range(n):
                ch = PyUnicode_READ(kind, data, k)
                if not _ascii_alnum(ch):
                    break
                capital = capital or 65 <= ch <= 90
                digits = digits and ch <= 57
            else:
                word[done + i], alpha[done + i] = 1, not digits
                folded[done + i] = _type_id(lower, type_.lower() if capital else type_)
                continue
        rest.append(i)
        folded[done + i] = _type_id(lower, type_.lower())
    return rest


cdef tuple _cut(str chunk, bint plain, dict types, frozenset abbreviations):
    """The type ids of a new chunk where the compiled cut can take it (None: the Python cut's):
    ASCII letters and digits alone (``plain``, most new chunks) are one word, the chunk
    itself; `_quick_ids`, else `_web_ids`, cut a chunk that preparing keeps."""
    cdef int kind = PyUnicode_KIND(chunk)
    cdef void* data = PyUnicode_DATA(chunk)
    cdef Py_ssize_t k
    if plain:
        return (_type_id(types, chunk),)
    if not PyUnicode_IS_ASCII(chunk):
        for k in range(PyUnicode_GET_LENGTH(chunk)):
            if not _preparing_keeps(PyUnicode_READ(kind, data, k)):
                return None
    found = _quick_ids(chunk, kind, data, types, abbreviations)
    return _web_ids(chunk, kind, data, types, abbreviations) if found is None else found


cdef struct _Slot:
    uint64_t key  # a hash of the chunk's code points
    int64_t at  # where its type ids, then its code points, are in the pool (-1: an empty slot)
    int64_t ids  # how many type ids


cdef class _Chunks:
    """The chunks a `cut_texts` call has met, found by a 64-bit hash of their code points
    without making a str of them: an open-addressing table of slots, each chunk's type ids and
    code points one run in a pool (a chunk met again costs a slot and a run read in cache
    lines, not a str, a dict's and a tuple's and its ints' objects)."""

    cdef _Slot* slots
    cdef Py_ssize_t size, used, pool_used
    cdef int shift
    cdef int64_t[::1] pool

    def __cinit__(self):
        self._allocate(1 << 16)
        self.pool = np.empty(1 << 20, np.int64)

    def __dealloc__(self):
        free(self.slots)

    cdef void _allocate(self, Py_ssize_t size):
        cdef Py_ssize_t k
        self.slots = <_Slot*> malloc(size * sizeof(_Slot))
        if self.slots == NULL:
            raise MemoryError()
        for k in range(size):
            self.slots[k].at = -1
        self.size, self.shift = size, 64
        while size > 1:
            size >>= 1
            self.shift -= 1

    cdef Py_ssize_t _slot(self, uint64_t key, int kind, void* data, Py_ssize_t start,
                          Py_ssize_t end) noexcept:
        """The slot of text[start:end] (its code points in ``data``), or the empty one where it
        goes."""
        cdef uint64_t at = (key * _GOLDEN) >> self.shift
        cdef Py_ssize_t k, size = end - start
        cdef _Slot* slot
        while True:
            slot = &self.slots[at]
            if slot.at < 0:
                return at
            if slot.key == key and self.pool[slot.at + slot.ids] == size:
                for k in range(size):
                    if self.pool[slot.at + slot.ids + 1 + k] != PyUnicode_READ(kind, data, start + k):
                        break
                else:
                    return at
            at = (at + 1) & (self.size - 1)

    cdef void add(self, Py_ssize_t at, uint64_t key, int kind, void* data, Py_ssize_t start,
                  Py_ssize_t end, tuple found):
        """Put text[start:end] and its type ids in the empty slot ``at`` (`_slot`)."""
        cdef Py_ssize_t k, need = len(found) + 1 + end - start
        cdef _Slot* old
        cdef Py_ssize_t old_size
        if self.pool_used + need > len(self.pool):
            self.pool = _grown(np.asarray(self.pool), self.pool_used + need)
        self.slots[at].key, self.slots[at].at = key, self.pool_used
        self.slots[at].ids = len(found)
        for k in range(len(found)):
            self.pool[self.pool_used + k] = found[k]
        self.pool[self.pool_used + len(found)] = end - start
        for k in range(end - start):
            self.pool[self.pool_used + len(found) + 1 + k] = PyUnicode_READ(kind, data, start + k)
        self.pool_used += need
        self.used += 1
        if 2 * self.used > self.size:  # rehash into twice the slots
            old, old_size = self.slots, self.size
            self._allocate(2 * old_size)
            for k in range(old_size):
                if old[k].at >= 0:
                    at = (old[k].key * _GOLDEN) >> self.shift
                    while self.slots[at].at >= 0:
                        at = (at + 1) & (self.size - 1)
                    self.slots[at] = old[k]
            free(old)


def cut_texts(list texts, dict memo, dict types, object cut_new, Py_ssize_t max_memo,
              frozenset abbreviations):
    """The word type ids of a shard's ``texts`` (`words.WordVocabulary`'s memo and types):
    (ids of every text in a row, each text's first id's offset (and the end), the offset of
    each "\\n"-separated piece of each text within its text's ids (and the text's end), each
    text's first piece's offset in those). A chunk not in ``memo`` is cut here when it is ASCII
    and what `words._quick_words` cuts (letters and digits, or such joined by hyphens, with one
    mark before or after), else by ``cut_new`` (which stores it in the memo)."""
    cdef Py_ssize_t total = 0, tokens = 0, pieces = 0, n, i, j, doc
    cdef int kind
    cdef void* data
    cdef Py_UCS4 ch
    cdef Py_ssize_t slot, at, count, k
    cdef uint64_t key
    cdef str text
    cdef int64_t[::1] ids_view, starts_view
    cdef _Chunks met = _Chunks()
    cdef bint known = len(memo) > 0  # else every chunk the memo holds is one met here
    cdef bint plain  # ASCII letters and digits alone
    for text in texts:
        total += PyUnicode_GET_LENGTH(text)
    ids = np.empty(total // 2 + 1024, np.int64)
    starts = np.empty(total // 16 + 2 * len(texts) + 1024, np.int64)
    ids_view, starts_view = ids, starts
    doc_offsets = np.zeros(len(texts) + 1, np.int64)
    doc_pieces = np.zeros(len(texts) + 1, np.int64)
    for doc in range(len(texts)):
        text = texts[doc]
        n, kind, data = PyUnicode_GET_LENGTH(text), PyUnicode_KIND(text), PyUnicode_DATA(text)
        doc_start = tokens
        if pieces + 1 >= len(starts):
            starts = _grown(starts, pieces + 2)
            starts_view = starts
        starts_view[pieces] = 0
        pieces += 1
        i = 0
        while i < n:
            ch = PyUnicode_READ(kind, data, i)
            if ch == 10:
                if pieces + 1 >= len(starts):
                    starts = _grown(starts, pieces + 2)
                    starts_view = starts
                starts_view[pieces] = tokens - doc_start
                pieces += 1
                i += 1
                continue
            if Py_UNICODE_ISSPACE(ch):
                i += 1
                continue
            j, key, plain = i, _FNV_OFFSET, True  # FNV-1a over the chunk's code points
            while j < n:
                ch = PyUnicode_READ(kind, data, j)
                if Py_UNICODE_ISSPACE(ch):
                    break
                key = (key ^ <uint64_t> ch) * _FNV_PRIME
                plain = plain and _ascii_alnum(ch)
                j += 1
            slot = met._slot(key, kind, data, i, j)
            if met.slots[slot].at >= 0:  # met before: its ids from the pool
                at, count = met.slots[slot].at, met.slots[slot].ids
                if tokens + count > len(ids):
                    ids = _grown(ids, tokens + count)
                    ids_view = ids
                for k in range(count):
                    ids_view[tokens + k] = met.pool[at + k]
                tokens += count
                i = j
                continue
            chunk = PyUnicode_Substring(text, i, j)
            found = memo.get(chunk) if known else None
            if found is None:
                found = _cut(chunk, plain, types, abbreviations)
                if found is None:
                    found = cut_new(chunk)  # which stores it in the memo
                else:
                    if len(memo) >= max_memo:
                        memo.clear()
                    memo[chunk] = found
            met.add(slot, key, kind, data, i, j, found)
            if tokens + len(<tuple> found) > len(ids):
                ids = _grown(ids, tokens + len(<tuple> found))
                ids_view = ids
            for type_id in <tuple> found:
                ids_view[tokens] = type_id
                tokens += 1
            i = j
        starts_view[pieces] = tokens - doc_start
        pieces += 1
        doc_offsets[doc + 1] = tokens
        doc_pieces[doc + 1] = pieces
    return ids[:tokens], doc_offsets, starts[:pieces], doc_pieces


cdef struct _Item:
    uint64_t key  # a hash of the item's code points
    Py_ssize_t start, end  # where it is in the text (start -1: an empty slot)


cdef class _Repeats:
    """Items (pieces of one text) equal to an earlier one, and their characters
    (`signals.duplicates`): an open-addressing table of the items met, compared in place."""

    cdef _Item* slots
    cdef Py_ssize_t size
    cdef int shift, kind
    cdef const char* data
    cdef public Py_ssize_t items, count, chars

    def __cinit__(self, Py_ssize_t capacity, str text):
        cdef Py_ssize_t k
        self.size, self.shift = 16, 60
        while self.size < 2 * capacity:
            self.size, self.shift = 2 * self.size, self.shift - 1
        self.slots = <_Item*> malloc(self.size * sizeof(_Item))
        if self.slots == NULL:
            raise MemoryError()
        for k in range(self.size):
            self.slots[k].start = -1
        self.kind, self.data = PyUnicode_KIND(text), <const char*> PyUnicode_DATA(text)

    def __dealloc__(self):
        free(self.slots)

    cdef void add(self, Py_ssize_t start, Py_ssize_t end) noexcept:
        cdef uint64_t key = _FNV_OFFSET, at
        cdef Py_ssize_t k
        cdef _Item* slot
        for k in range(start, end):
            key = (key ^ <uint64_t> PyUnicode_READ(self.kind, self.data, k)) * _FNV_PRIME
        self.items += 1
        at = (key * _GOLDEN) >> self.shift
        while True:
            slot = &self.slots[at]
            if slot.start < 0:
                slot.key, slot.start, slot.end = key, start, end
                return
            if slot.key == key and slot.end - slot.start == end - start and memcmp(
                self.data + slot.start * self.kind, self.data + start * self.kind,
                (end - start) * self.kind
            ) == 0:
                self.count += 1
                self.chars += end - start
                return
            at = (at + 1) & (self.size - 1)


cdef _Repeats _runs_split(str text, int kind, void* data, Py_ssize_t start, Py_ssize_t end,
                          Py_ssize_t run, Py_ssize_t capacity):
    """The duplicates of the pieces of text[start:end] between runs of at least ``run``
    newlines (`signals.line_repetition_signals`' re.split)."""
    cdef _Repeats repeats = _Repeats(capacity, text)
    cdef Py_ssize_t i = start, j, piece = start
    while i < end:
        if PyUnicode_READ(kind, data, i) != 10:
            i += 1
            continue
        j = i
        while j < end and PyUnicode_READ(kind, data, j) == 10:
            j += 1
        if j - i >= run:
            repeats.add(piece, i)
            piece = j
        i = j
    repeats.add(piece, end)
    return repeats


# what `LineTests` reads of a type, one bit each
cdef enum:
    _WORD = 1
    _ALPHA = 2
    _PUNCT = 4
    _TERMINAL = 8


# the signals `LineTests.score` writes, in its row's order
COLUMNS = (
    "words", "mean_word_length", "symbol_word_ratio", "bullet_lines", "ellipsis_lines",
    "alpha_words", "stop_words", "dup_line_frac", "dup_para_frac", "dup_line_char_frac",
    "dup_para_char_frac", "c4_punct_lines", "c4_sentences", "c4_lorem_ipsum",
    "c4_curly_bracket", "c4_javascript_lines", "c4_policy_lines", "fineweb_line_punct_ratio",
    "fineweb_short_line_ratio", "fineweb_char_dup_ratio", "fineweb_newline_ratio",
)


cdef class LineTests:
    """Every signal of `COLUMNS` of a document, given its type ids and pieces (`cut_texts`) and
    what the signals read of each type (`words.TokenTypes`)."""

    cdef const int64_t[::1] length, folded
    cdef const uint8_t[::1] flags, terminal_char  # flags: per type, _WORD | _ALPHA | ...
    cdef int64_t[::1] stamp
    cdef object c4, citation
    cdef Py_ssize_t short_line, min_words, max_word_length
    cdef bint javascript, policy, citations
    cdef tuple policy_phrases

    def __init__(self, types, stop_forms, terminal_char, c4, Py_ssize_t short_line, citation,
                 tuple policy_phrases):
        self.length, self.folded = types.length, types.folded
        self.flags = (
            types.word * _WORD + types.alpha * _ALPHA + types.punct * _PUNCT
            + types.terminal * _TERMINAL
        ).astype(np.uint8)
        self.terminal_char = terminal_char
        self.stamp = np.full(stop_forms, -1, np.int64)
        self.short_line, self.min_words = short_line, c4.min_words_per_line
        self.max_word_length = c4.max_word_length
        self.javascript, self.policy, self.citations = c4.javascript, c4.policy, c4.remove_citations
        self.citation, self.policy_phrases = citation, policy_phrases

    cdef Py_ssize_t _sentences(self, const int64_t[::1] ids, Py_ssize_t start, Py_ssize_t end):
        """`signals.line_sentences` of one line's tokens."""
        cdef Py_ssize_t count = end > start, k
        cdef bint since = False
        cdef uint8_t flags
        for k in range(start, end):
            flags = self.flags[ids[k]]
            if not flags & _PUNCT:
                count += since
                since = (flags & _TERMINAL) != 0
            elif flags & _TERMINAL:
                since = True
        return count

    def score(self, str text, const int64_t[::1] ids, const int64_t[::1] starts,
              const uint8_t[::1] stop, Py_ssize_t doc, double[::1] row):
        """Write the document's signals into ``row``; False (nothing written) for a text with
        line breaks other than "\\n", which the Python version reads."""
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, k, a, b, start, end, piece = 0
        cdef int kind = PyUnicode_KIND(text)
        cdef void* data = PyUnicode_DATA(text)
        cdef Py_UCS4 ch, last
        cdef Py_ssize_t hashes = 0, ellipses = 0, dots = 0, tokens = len(ids)
        cdef Py_ssize_t words = 0, word_chars = 0, alpha = 0, stops = 0
        cdef Py_ssize_t bullets = 0, ellipsis_lines = 0, splitlines
        cdef Py_ssize_t c4_lines = 0, c4_punct = 0, sentences = 0, lorem = 0, curly = 0
        cdef Py_ssize_t javascript = 0, policy = 0
        cdef Py_ssize_t fw_lines = 0, fw_punct = 0, fw_short = 0, run = 0
        cdef Py_ssize_t newlines = 0
        cdef uint8_t flags
        cdef _Repeats fineweb, lines, paragraphs
        for i in range(n):
            ch = PyUnicode_READ(kind, data, i)
            if _breaks_line(ch):
                return False
            newlines += ch == 10
            if ch == 35:  # #
                hashes += 1
            elif ch == 0x2026:  # …
                ellipses += 1
            if ch == 46:  # "..." counted as str.count counts it: a run of k full stops has k // 3
                run += 1
            else:
                dots += run // 3
                run = 0
        dots += run // 3
        fineweb = _Repeats(newlines + 1, text)
        for k in range(tokens):
            flags = self.flags[ids[k]]
            if flags & _WORD:
                words += 1
                word_chars += self.length[ids[k]]
            alpha += (flags & _ALPHA) != 0
            if stop[self.folded[ids[k]]] and self.stamp[self.folded[ids[k]]] != doc:
                self.stamp[self.folded[ids[k]]] = doc
                stops += 1
        start = 0
        while start <= n:
            end = start
            while end < n and PyUnicode_READ(kind, data, end) != 10:
                end += 1
            a, b = start, end
            while a < b and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, a)):
                a += 1
            while b > a and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, b - 1)):
                b -= 1
            if a < b:
                ch, last = PyUnicode_READ(kind, data, a), PyUnicode_READ(kind, data, b - 1)
                bullets += ch == 0x2022 or ch == 45
                ellipsis_lines += last == 0x2026 or (
                    b - a >= 3 and last == 46 and PyUnicode_READ(kind, data, b - 2) == 46
                    and PyUnicode_READ(kind, data, b - 3) == 46
                )
                fw_lines += 1
                last = PyUnicode_READ(kind, data, end - 1)
                fw_punct += last < len(self.terminal_char) and self.terminal_char[last]
                fw_short += end - start <= self.short_line
                fineweb.add(start, end)
                c4_lines += 1
                sentences += self._c4_line(text, kind, data, a, b, ids, starts[piece],
                                           starts[piece + 1], &c4_punct, &lorem, &curly,
                                           &javascript, &policy)
            piece += 1
            start = end + 1
        lines = _runs_split(text, kind, data, 0, n, 1, newlines + 1)
        a, b = 0, n
        while a < b and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, a)):
            a += 1
        while b > a and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, b - 1)):
            b -= 1
        paragraphs = _runs_split(text, kind, data, a, b, 2, newlines + 1)
        # str.splitlines: no line after a final "\n" (nor in an empty text)
        splitlines = max(piece - (n == 0 or PyUnicode_READ(kind, data, n - 1) == 10), 1)
        size = max(n, 1)
        values = (
            words, word_chars / words if words else 0.0, max(hashes, dots + ellipses) / max(tokens, 1),
            bullets / splitlines, ellipsis_lines / splitlines, alpha / max(tokens, 1), stops,
            lines.count / lines.items, paragraphs.count / paragraphs.items, lines.chars / size,
            paragraphs.chars / size, c4_punct / max(c4_lines, 1), sentences, lorem, curly,
            javascript, policy, fw_punct / max(fw_lines, 1), fw_short / max(fw_lines, 1),
            fineweb.chars / max(n - (piece - 1), 1), (piece - 1) / max(tokens, 1),
        )
        for k in range(len(values)):
            row[k] = values[k]
        return True

    cdef Py_ssize_t _c4_line(self, str text, int kind, void* data, Py_ssize_t a, Py_ssize_t b,
                             const int64_t[::1] ids, Py_ssize_t first, Py_ssize_t stop,
                             Py_ssize_t* punct, Py_ssize_t* lorem, Py_ssize_t* curly,
                             Py_ssize_t* javascript, Py_ssize_t* policy):
        """C4's tests of one stripped line, text[a:b] (`signals.c4_signals`): its sentences if
        C4 keeps it, else 0, counting its other signals on the way."""
        cdef Py_ssize_t i, chunks = 0, longest = 0, size = 0, sentences
        cdef Py_UCS4 ch, last = PyUnicode_READ(kind, data, b - 1)
        cdef bint bracket = False
        punct[0] += last in ".?!\"'"
        for i in range(a, b + 1):
            ch = PyUnicode_READ(kind, data, i) if i < b else 32
            if Py_UNICODE_ISSPACE(ch):
                if size:
                    chunks += 1
                    longest = max(longest, size)
                size = 0
            else:
                size += 1
                bracket |= ch == 91  # [
        if b - a > self.max_word_length and longest > self.max_word_length:
            return 0
        if self.citations and bracket:
            line, counted = self.citation(PyUnicode_Substring(text, a, b))
            if not line.endswith((".", "?", "!", '"', "'")) or line.endswith("..."):
                return 0
            sentences = -1 if counted is None else counted  # None: no citation, counted here
        else:
            if not (last in ".?!\"'") or (
                last == 46 and b - a >= 3 and PyUnicode_READ(kind, data, b - 2) == 46
                and PyUnicode_READ(kind, data, b - 3) == 46
            ):
                return 0
            line, sentences = None, -1
        if chunks < self.min_words:
            return 0
        if line is None:
            line = PyUnicode_Substring(text, a, b)
        if sentences < 0:
            sentences = self._sentences(ids, first, stop)
        lowered = line.lower()
        if "lorem ipsum" in lowered:
            lorem[0] = 1
        if self.javascript and "javascript" in lowered:
            javascript[0] += 1
            return 0
        if "{" in line:
            curly[0] = 1
        if self.policy and any(phrase in lowered for phrase in self.policy_phrases):
            policy[0] += 1
            return 0
        return sentences


cdef class _Counts:
    """An open-addressing table of 64-bit n-gram hashes: each one's count and first position.
    A stamp marks the entries of the current use, so that a table is emptied in no time."""

    cdef uint64_t[::1] keys
    cdef int64_t[::1] stamps, counts, firsts
    cdef int64_t stamp
    cdef uint64_t mask
    cdef int shift

    def __init__(self, Py_ssize_t items):
        cdef Py_ssize_t size = 16
        while size < 2 * items:
            size *= 2
        self.keys = np.zeros(size, np.uint64)
        self.stamps = np.full(size, -1, np.int64)
        self.counts, self.firsts = np.zeros(size, np.int64), np.zeros(size, np.int64)
        self.stamp = -1

    cdef void clear(self, Py_ssize_t items) noexcept:
        """Empty, for at most ``items`` keys (a table as small as they need, kept in cache)."""
        cdef uint64_t size = 16
        while size < 2 * <uint64_t> items:
            size *= 2
        self.mask, self.shift = size - 1, 64
        while size > 1:
            size >>= 1
            self.shift -= 1
        self.stamp += 1

    cdef Py_ssize_t slot(self, uint64_t key) noexcept:
        """The entry of ``key``: its own, or the empty one where it goes."""
        cdef uint64_t at = (key * _GOLDEN) >> self.shift
        while self.stamps[at] == self.stamp and self.keys[at] != key:
            at = (at + 1) & self.mask
        return at

    cdef int64_t add(self, uint64_t key, int64_t position) noexcept:
        """Count ``key`` once more; its count."""
        cdef Py_ssize_t at = self.slot(key)
        if self.stamps[at] != self.stamp:
            self.stamps[at], self.keys[at] = self.stamp, key
            self.counts[at], self.firsts[at] = 0, position
        self.counts[at] += 1
        return self.counts[at]


def ngram_signals(const uint64_t[::1] keys, const int64_t[::1] lengths,
                  const int64_t[::1] doc_offsets, const int64_t[::1] sizes):
    """`ngrams.shard_ngram_signals`, document by document: ``top_{2,3,4}gram_char_frac`` and
    ``dup_{5..10}gram_char_frac`` (columns) of each document (rows). As there, an n-gram is
    counted only where its (n-1)-gram repeats, by its 64-bit hash; a repeat of n >= 5 is found
    reading left to right, as datatrove's find_all_duplicate reads it."""
    cdef Py_ssize_t docs = len(doc_offsets) - 1, doc, longest = 0, first, tokens, n, k, i
    cdef Py_ssize_t candidates, repeated, best_first
    cdef int64_t count, best, total, free, position
    for doc in range(docs):
        longest = max(longest, doc_offsets[doc + 1] - doc_offsets[doc])
    out = np.zeros((docs, 9))
    cdef double[:, ::1] values = out
    cdef uint64_t[::1] hashes = np.zeros(longest + 1, np.uint64)
    cdef int64_t[::1] at = np.zeros(longest + 1, np.int64), ends = np.zeros(longest + 1, np.int64)
    cdef _Counts counts = _Counts(longest), seen = _Counts(longest)
    for doc in range(docs):
        first, tokens = doc_offsets[doc], doc_offsets[doc + 1] - doc_offsets[doc]
        ends[0] = 0
        for k in range(tokens):
            hashes[k] = keys[first + k]
            ends[k + 1] = ends[k] + lengths[first + k]
        candidates = 0
        for k in range(tokens - 1):
            at[candidates] = k
            candidates += 1
        for n in range(2, 11):
            if tokens < n:
                break
            for k in range(candidates):  # the n-grams' hashes from the (n-1)-grams'
                i = at[k]
                hashes[i] = hashes[i] * _FNV_PRIME ^ keys[first + i + n - 1]
            counts.clear(candidates)
            for k in range(candidates):
                counts.add(hashes[at[k]], at[k])
            repeated = 0
            best, best_first = 1, 0  # with no repeat, the top n-gram is the first, once
            for k in range(candidates):
                i = at[k]
                count = counts.counts[counts.slot(hashes[i])]
                if count > 1:
                    at[repeated] = i
                    repeated += 1
                    if n < 5:
                        position = counts.firsts[counts.slot(hashes[i])]
                        if count > best or (count == best and position < best_first):
                            best, best_first = count, position
            if n < 5:
                values[doc, n - 2] = (ends[best_first + n] - ends[best_first] + n - 1) * best
            else:
                seen.clear(repeated)
                total, free = 0, 0
                for k in range(repeated):
                    i = at[k]
                    if i < free:
                        continue
                    if seen.stamps[seen.slot(hashes[i])] == seen.stamp:
                        total += ends[i + n] - ends[i]
                        free = i + n
                    else:
                        seen.add(hashes[i], i)
                values[doc, n - 2] = total
            candidates = 0  # the (n+1)-grams that may repeat start at a repeated n-gram
            for k in range(repeated):
                if at[k] + n + 1 <= tokens:
                    at[candidates] = at[k]
                    candidates += 1
        for n in range(9):
            values[doc, n] /= sizes[doc]
    return out
