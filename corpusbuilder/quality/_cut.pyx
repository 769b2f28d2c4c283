# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The quality stage's word cut, compiled: the word type ids of a shard's texts, and what the
signals read of the common types.

Built by setup.py beside the extract stage's walks; without it `corpusbuilder.quality.signals`
runs its Python and numpy versions, which are the reference: tests/test_quality_fastpath.py
holds the two to each other on every document of the dev crawl and on hand-made texts.

Why it is faster: the Python version visits each whitespace chunk to look it up and each new
chunk to cut it. Here a text is read once where CPython keeps its code points; a chunk becomes
a str only to be looked up in the shard's memo. A chunk that preparing would change (not NFC,
invisible characters, scripts without spaces) is handed to the Python cut.
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

from corpusbuilder.quality._hashing cimport fib_slot, fnv_offset, fnv_step


cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object)


cdef inline bint _ascii_alnum(Py_UCS4 ch) noexcept:
    return (48 <= ch <= 57) or (65 <= ch <= 90) or (97 <= ch <= 122)



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
                    at = fib_slot(old[k].key, self.shift)
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
            j, key, plain = i, fnv_offset(), True  # FNV-1a over the chunk's code points
            while j < n:
                ch = PyUnicode_READ(kind, data, j)
                if Py_UNICODE_ISSPACE(ch):
                    break
                key = fnv_step(key, ch)
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
