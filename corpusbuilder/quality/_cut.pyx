# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The quality stage's word cut, compiled: the word type ids of a shard's texts, and what the
signals read of the common types.

Built by setup.py beside the extract stage's walks; without it `corpusbuilder.quality.signals`
runs its Python and numpy versions, which are the reference: tests/test_quality_fastpath.py
holds the two to each other on every document of the dev crawl and on hand-made texts.

Why it is faster: the Python version visits each whitespace chunk to look it up in the shard's
memo, and makes a str of each new chunk, each of its words and a tuple of their ids. Here a text
is read once where CPython keeps its code points; a chunk, and a word of a new chunk, are found
by a hash of their code points in compiled tables (`_Table`), and a word becomes a str only the
first time it is met, to be numbered in the shard's type dictionary, which the Python consumers
share. A chunk that preparing would change (not NFC, invisible characters, scripts without
spaces) is handed to the Python cut.
"""

import numpy as np

from cpython.dict cimport PyDict_SetDefault
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

from corpusbuilder.quality._hashing cimport fib_slot, fnv_offset, fnv_step


cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object)


cdef extern from *:
    void __builtin_prefetch(const void* address) noexcept nogil  # GCC's and clang's


cdef inline bint _ascii_alnum(Py_UCS4 ch) noexcept:
    return (48 <= ch <= 57) or (65 <= ch <= 90) or (97 <= ch <= 122)


cdef object _grown(object array, Py_ssize_t size):
    """``array`` (int64) with room for at least ``size`` entries, doubling."""
    if size <= len(array):
        return array
    bigger = np.empty(max(size, 2 * len(array)), np.int64)
    bigger[: len(array)] = array
    return bigger


cdef inline object _type_id(dict types, object word):
    """The id of ``word`` in ``types`` (a new one, the next number, if it has none), in one
    probe of the dictionary."""
    return <object> PyDict_SetDefault(types, word, len(types))


cdef inline bint _preparing_keeps(Py_UCS4 ch) noexcept:
    """Does `tokenise.prepare_text` leave every chunk of such code points as it is: below
    U+0300 but the soft hyphen, or general punctuation's dashes, quotes and ellipsis (every
    string of them is NFC, none is invisible or of a script without spaces)."""
    return (ch < 0x300 and ch != 0xAD) or 0x2010 <= ch <= 0x2027


cdef inline bint _letter(Py_UCS4 ch) noexcept:
    """``[^\\W\\d_]`` of Python's re."""
    return Py_UNICODE_ISALNUM(ch) and not Py_UNICODE_ISDECIMAL(ch) and ch != 95


cdef inline uint64_t _hash(int kind, void* data, Py_ssize_t start, Py_ssize_t end) noexcept:
    """FNV-1a of text[start:end]'s code points."""
    cdef uint64_t key = fnv_offset()
    cdef Py_ssize_t k
    for k in range(start, end):
        key = fnv_step(key, PyUnicode_READ(kind, data, k))
    return key


cdef bint _contains(int kind, void* data, Py_ssize_t start, Py_ssize_t end, const char* pattern,
                    Py_ssize_t size) noexcept:
    """Is the ASCII ``pattern`` (``size`` characters) in text[start:end]."""
    cdef Py_ssize_t i, k
    for i in range(start, end - size + 1):
        for k in range(size):
            if PyUnicode_READ(kind, data, i + k) != <Py_UCS4> pattern[k]:
                break
        else:
            return True
    return False


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


cdef struct _Slot:
    uint64_t key  # a hash of the item's code points
    int64_t at  # where its type ids, then its code points, are in the pool (-1: an empty slot)
    int64_t ids  # how many type ids


cdef class _Table:
    """Pieces of text (a `cut_texts` call's chunks, or its words) and their type ids, found by a
    64-bit hash of their code points without making a str of them: an open-addressing table of
    slots, each item's type ids and code points one run in a pool (an item met again costs a
    slot and a run read in cache lines, not a str, a dict's and a tuple's and its ints'
    objects)."""

    cdef _Slot* slots
    cdef Py_ssize_t size, used, pool_used
    cdef int shift
    cdef int64_t[::1] pool

    def __cinit__(self, Py_ssize_t chars):
        """Room to start with for the items of a text of ``chars`` characters (it grows)."""
        cdef Py_ssize_t size = 64
        while size < chars // 32:  # a text has a distinct chunk every ~45 characters
            size *= 2
        self._allocate(size)
        self.pool = np.empty(max(chars // 8, 1024), np.int64)

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

    cdef Py_ssize_t find(self, uint64_t key, int kind, void* data, Py_ssize_t start,
                         Py_ssize_t end) noexcept:
        """The slot of text[start:end] (its code points in ``data``), or the empty one where it
        goes."""
        cdef uint64_t at = fib_slot(key, self.shift)
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
                  Py_ssize_t end, const int64_t* ids, Py_ssize_t count):
        """Put text[start:end] and its ``count`` type ``ids`` in the empty slot ``at``
        (`find`)."""
        cdef Py_ssize_t k, need = count + 1 + end - start
        cdef _Slot* old
        cdef Py_ssize_t old_size
        if self.pool_used + need > len(self.pool):
            self.pool = _grown(np.asarray(self.pool), self.pool_used + need)
        self.slots[at].key, self.slots[at].at, self.slots[at].ids = key, self.pool_used, count
        for k in range(count):
            self.pool[self.pool_used + k] = ids[k]
        self.pool[self.pool_used + count] = end - start
        for k in range(end - start):
            self.pool[self.pool_used + count + 1 + k] = PyUnicode_READ(kind, data, start + k)
        self.pool_used += need
        self.used += 1
        if 2 * self.used > self.size:  # rehash into twice the slots
            old, old_size = self.slots, self.size
            self._allocate(2 * old_size)
            for k in range(old_size):
                if old[k].at >= 0:
                    at = fib_slot(old[k].key, self.shift)
                    while self.slots[at].at >= 0:
                        at = (at + 1) & (self.size - 1)
                    self.slots[at] = old[k]
            free(old)


cdef class _Cut:
    """The cut of a new chunk into words (`words.web_words`), each word's type id found in a
    `_Table` of the words met, and numbered in the shard's ``types`` (made a str) the first
    time."""

    cdef _Table words
    cdef dict types
    cdef object cut_new
    cdef frozenset abbreviations
    cdef int64_t[::1] spans, found  # the words' (start, end) in the text; their type ids

    def __init__(self, Py_ssize_t chars, dict types, object cut_new, frozenset abbreviations):
        if not all(abbreviation.endswith(".") for abbreviation in abbreviations):
            raise ValueError("the compiled cut looks an abbreviation up where a full stop ends it")
        self.words, self.types, self.cut_new = _Table(chars), types, cut_new
        self.abbreviations = abbreviations
        self.spans, self.found = np.empty(256, np.int64), np.empty(256, np.int64)

    cdef int64_t word_id(self, str text, int kind, void* data, Py_ssize_t start,
                         Py_ssize_t end, uint64_t key) except -1:
        """The type id of the word text[start:end], whose `_hash` is ``key``."""
        cdef Py_ssize_t slot = self.words.find(key, kind, data, start, end)
        cdef int64_t found
        if self.words.slots[slot].at >= 0:
            return self.words.pool[self.words.slots[slot].at]
        found = _type_id(self.types, PyUnicode_Substring(text, start, end))
        self.words.add(slot, key, kind, data, start, end, &found, 1)
        return found

    cdef Py_ssize_t chunk(self, str text, int kind, void* data, Py_ssize_t start,
                          Py_ssize_t end, uint64_t key, bint plain) except -1:
        """Cut the new chunk text[start:end] (its `_hash` ``key``): its type ids in ``found``,
        how many. ASCII letters and digits alone (``plain``, most new chunks) are one word, the
        chunk itself; `quick`, else `web`, cut a chunk that preparing keeps; the Python cut
        (``cut_new``) the others."""
        cdef Py_ssize_t k, count = -1
        if 4 * (end - start) + 8 > len(self.spans):
            self.spans = np.empty(8 * (end - start) + 16, np.int64)
            self.found = np.empty(8 * (end - start) + 16, np.int64)
        if plain:
            self.found[0] = self.word_id(text, kind, data, start, end, key)
            return 1
        for k in range(start, end):
            if not _preparing_keeps(PyUnicode_READ(kind, data, k)):
                break
        else:
            count = self.quick(text, kind, data, start, end)
            if count < 0:
                count = self.web(text, kind, data, start, end)
        if count < 0:
            ids = self.cut_new(PyUnicode_Substring(text, start, end))
            if len(ids) > len(self.found):
                self.found = np.empty(2 * len(ids), np.int64)
            for k in range(len(ids)):
                self.found[k] = ids[k]
            return len(ids)
        for k in range(count):
            start, end = self.spans[2 * k], self.spans[2 * k + 1]
            self.found[k] = self.word_id(text, kind, data, start, end, _hash(kind, data, start, end))
        return count

    cdef Py_ssize_t quick(self, str text, int kind, void* data, Py_ssize_t s,
                          Py_ssize_t e) except -2:
        """`words._quick_words` of the chunk text[s:e], as (start, end) in ``spans``: how many;
        -1 where it gives ``()``."""
        cdef Py_ssize_t start = s, end = e, i, part, count = 0
        cdef Py_UCS4 ch, last = PyUnicode_READ(kind, data, e - 1)
        if PyUnicode_READ(kind, data, s) in '("\u201c\u00ab':
            start = s + 1
        if last in '.,;:!?)"\u201d\u00bb':
            end = e - 1
        if start >= end:
            return -1
        if end < e and last == 46 and (
            end - start < 2 or PyUnicode_Substring(text, start, e) in self.abbreviations
        ):
            return -1
        if start > s:
            self.spans[0], self.spans[1], count = s, start, 1
        part = start
        for i in range(start, end + 1):
            ch = PyUnicode_READ(kind, data, i) if i < end else 45
            if ch == 45:  # a part ends at a hyphen or the core's end
                if i == part:
                    return -1  # an empty part: "a--b", "-a"
                self.spans[2 * count], self.spans[2 * count + 1] = part, i
                count += 1
                if i < end:
                    self.spans[2 * count], self.spans[2 * count + 1] = i, i + 1
                    count += 1
                part = i + 1
            elif not Py_UNICODE_ISALNUM(ch):
                return -1
        if end < e:
            self.spans[2 * count], self.spans[2 * count + 1] = end, e
            count += 1
        return count

    cdef Py_ssize_t web(self, str text, int kind, void* data, Py_ssize_t s,
                        Py_ssize_t e) except -2:
        """`words.web_words` of the chunk text[s:e], as (start, end) in ``spans``: how many; -1
        for one with a long s (which re's case-insensitive "s" of a clitic matches)."""
        cdef Py_ssize_t start = s, end = e, i, step, stem, piece, count = 0, suffixes = 0
        cdef Py_ssize_t back = len(self.spans) - 2  # suffixes go from the buffer's end down
        cdef Py_UCS4 ch
        for i in range(s, e):
            if PyUnicode_READ(kind, data, i) == 0x17F:
                return -1
        for i in range(s, e):
            if Py_UNICODE_ISALNUM(PyUnicode_READ(kind, data, i)):
                break
        else:
            self.spans[0], self.spans[1] = s, e
            return 1
        while start < end:
            ch = PyUnicode_READ(kind, data, start)
            if Py_UNICODE_ISALNUM(ch) or ch == 45:
                break
            step = start + 1
            if ch == 46 and start + 1 < e and PyUnicode_READ(kind, data, start + 1) == 46:
                while step < e and PyUnicode_READ(kind, data, step) == 46:  # an ellipsis
                    step += 1
            self.spans[2 * count], self.spans[2 * count + 1] = start, step
            count += 1
            start = step
        while end > start:
            ch = PyUnicode_READ(kind, data, end - 1)
            if Py_UNICODE_ISALNUM(ch) or ch == 45:
                break
            if _initials(kind, data, start, end) or (
                ch == 46 and PyUnicode_Substring(text, start, end) in self.abbreviations
            ):
                break
            step = end - 1
            if ch == 46 and end - 2 >= start and PyUnicode_READ(kind, data, end - 2) == 46:
                while step > start and PyUnicode_READ(kind, data, step - 1) == 46:  # an ellipsis
                    step -= 1
            self.spans[back - 2 * suffixes], self.spans[back - 2 * suffixes + 1] = step, end
            suffixes += 1
            end = step
        if end > start:
            if (
                _contains(kind, data, start, end, b"@", 1)
                or _contains(kind, data, start, end, b"www.", 4)
                or _contains(kind, data, start, end, b"http://", 7)
                or _contains(kind, data, start, end, b"https://", 8)
                or _contains(kind, data, start, end, b"ftp://", 6)
            ):
                self.spans[2 * count], self.spans[2 * count + 1] = start, end
                count += 1
            else:
                stem = _clitic(kind, data, start, end)
                piece = start
                for i in range(start + 1, stem - 1):  # a hyphen between letters or digits
                    if PyUnicode_READ(kind, data, i) == 45 and Py_UNICODE_ISALNUM(
                        PyUnicode_READ(kind, data, i - 1)
                    ) and Py_UNICODE_ISALNUM(PyUnicode_READ(kind, data, i + 1)):
                        self.spans[2 * count], self.spans[2 * count + 1] = piece, i
                        self.spans[2 * count + 2], self.spans[2 * count + 3] = i, i + 1
                        count += 2
                        piece = i + 1
                if stem > piece:
                    self.spans[2 * count], self.spans[2 * count + 1] = piece, stem
                    count += 1
                if stem < end:
                    self.spans[2 * count], self.spans[2 * count + 1] = stem, end
                    count += 1
        for i in range(suffixes - 1, -1, -1):  # the suffixes, last peeled last
            self.spans[2 * count] = self.spans[back - 2 * i]
            self.spans[2 * count + 1] = self.spans[back - 2 * i + 1]
            count += 1
        return count


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


def cut_texts(list texts, dict types, object cut_new, frozenset abbreviations):
    """The word type ids of a shard's ``texts`` (`words.WordVocabulary`'s ``types``): (ids of
    every text in a row, each text's first id's offset (and the end), the offset of each
    "\\n"-separated piece of each text within its text's ids (and the text's end), each text's
    first piece's offset in those). A chunk met before in the call is found in a `_Table`; a
    new one is cut by `_Cut`, or by ``cut_new`` (which stores it in the vocabulary's memo)
    where preparing would change it. The chunks cut here are not put in the memo: a Python
    consumer that meets one cuts it again, to the same ids.

    A text is read twice: once to find and hash its chunks, then to look them up, each chunk's
    slot and ids fetched into the cache while the chunks before it are looked up (a lookup is
    two reads at random places of tables larger than the cache: waiting for them was most of
    the time)."""
    cdef Py_ssize_t total = 0, longest = 0, tokens = 0, pieces = 0, n, i, j, c, k, doc
    cdef Py_ssize_t chunks, ends, slot, count, doc_start
    cdef int kind
    cdef void* data
    cdef Py_UCS4 ch
    cdef const int64_t* found
    cdef uint64_t key
    cdef bint plain  # ASCII letters and digits alone
    cdef str text
    cdef _Table met
    cdef _Cut cut
    cdef _Slot* ahead
    for text in texts:
        total += PyUnicode_GET_LENGTH(text)
        longest = max(longest, PyUnicode_GET_LENGTH(text))
    met, cut = _Table(total), _Cut(total, types, cut_new, abbreviations)
    # per chunk of a text: where it starts and ends, its hash, is it plain; where its ids start
    cdef int64_t[::1] bounds = np.empty(longest + 2, np.int64)
    cdef uint64_t[::1] keys = np.empty(longest // 2 + 1, np.uint64)
    cdef uint8_t[::1] plains = np.empty(longest // 2 + 1, np.uint8)
    cdef int64_t[::1] offsets = np.empty(longest // 2 + 2, np.int64)
    cdef int64_t[::1] piece_ends = np.empty(longest + 2, np.int64)  # in chunks
    ids = np.empty(total // 2 + 1024, np.int64)
    starts = np.empty(total + 2 * len(texts), np.int64)
    cdef int64_t[::1] ids_view = ids, starts_view = starts
    doc_offsets = np.zeros(len(texts) + 1, np.int64)
    doc_pieces = np.zeros(len(texts) + 1, np.int64)
    for doc in range(len(texts)):
        text = texts[doc]
        n, kind, data = PyUnicode_GET_LENGTH(text), PyUnicode_KIND(text), PyUnicode_DATA(text)
        chunks, ends, i, doc_start = 0, 0, 0, tokens
        while i < n:
            ch = PyUnicode_READ(kind, data, i)
            if ch == 10:
                piece_ends[ends] = chunks
                ends += 1
                i += 1
                continue
            if Py_UNICODE_ISSPACE(ch):
                i += 1
                continue
            j, key, plain = i, fnv_offset(), True  # FNV-1a over the chunk's code points
            while j < n:
                ch = PyUnicode_READ(kind, data, j)
                if Py_UNICODE_ISSPACE(ch):
                    break
                key = fnv_step(key, ch)
                plain = plain and _ascii_alnum(ch)
                j += 1
            bounds[2 * chunks], bounds[2 * chunks + 1] = i, j
            keys[chunks], plains[chunks] = key, plain
            chunks += 1
            i = j
        piece_ends[ends] = chunks
        ends += 1
        for c in range(chunks):
            if c + 16 < chunks:
                __builtin_prefetch(&met.slots[fib_slot(keys[c + 16], met.shift)])
            if c + 8 < chunks:
                ahead = &met.slots[fib_slot(keys[c + 8], met.shift)]
                if ahead.at >= 0:
                    __builtin_prefetch(&met.pool[ahead.at])
            i, j = bounds[2 * c], bounds[2 * c + 1]
            slot = met.find(keys[c], kind, data, i, j)
            if met.slots[slot].at >= 0:  # met before: its ids from the pool
                count, found = met.slots[slot].ids, &met.pool[met.slots[slot].at]
            else:
                count = cut.chunk(text, kind, data, i, j, keys[c], plains[c])
                found = &cut.found[0]
                met.add(slot, keys[c], kind, data, i, j, found, count)
            if tokens + count > len(ids):
                ids = _grown(ids, tokens + count)
                ids_view = ids
            offsets[c] = tokens - doc_start
            for k in range(count):
                ids_view[tokens + k] = found[k]
            tokens += count
        offsets[chunks] = tokens - doc_start
        starts_view[pieces] = 0
        for k in range(ends):
            starts_view[pieces + 1 + k] = offsets[piece_ends[k]]
        pieces += ends + 1
        doc_offsets[doc + 1] = tokens
        doc_pieces[doc + 1] = pieces
    return ids[:tokens], doc_offsets, starts[:pieces], doc_pieces
