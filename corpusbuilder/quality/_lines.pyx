# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The quality stage's per-line tests of a document, compiled: Gopher's quality and line
repetition signals, C4's and FineWeb's (`signals.gopher_quality_signals`,
`signals.line_repetition_signals`, `signals.c4_signals`, `signals.fineweb_signals`).

Built by setup.py; without it `corpusbuilder.quality.signals` runs its Python versions, which are
the reference (tests/test_quality_fastpath.py holds the two equal). The Python versions read
each line of a document several times, once per signal set, through regular expressions and
lists of line strings; here a text is read where CPython keeps its code points, and a line
becomes a str only where a signal compares or lower-cases it. A text with line breaks other
than "\\n", and a C4 line with a citation mark, are handed to the Python versions.
"""

import numpy as np

from cpython.unicode cimport (
    Py_UNICODE_ISSPACE,
    PyUnicode_DATA,
    PyUnicode_GET_LENGTH,
    PyUnicode_KIND,
    PyUnicode_READ,
    PyUnicode_Substring,
)
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memset

from corpusbuilder.quality._hashing cimport fib_slot, fnv_offset, fnv_step


cdef inline uint32_t _ascii_lower(uint32_t code) noexcept:
    """An ASCII code point lower-cased (A-Z); 0 for any other than ASCII, which starts no
    phrase. (Not a Py_UCS4: Cython adds to a character as to a str.)"""
    if 65 <= code <= 90:
        return code + 32
    return code if code < 128 else 0


cdef inline bint _breaks_line(Py_UCS4 ch) noexcept:
    """A line break of str.splitlines other than "\\n"."""
    return ch == 13 or ch == 11 or ch == 12 or 28 <= ch <= 30 or ch == 0x85 or ch == 0x2028 or ch == 0x2029


cdef inline uint64_t _hash(int kind, const void* data, Py_ssize_t start, Py_ssize_t end) noexcept:
    """FNV-1a of text[start:end]'s code points."""
    cdef uint64_t key = fnv_offset()
    cdef Py_ssize_t k
    for k in range(start, end):
        key = fnv_step(key, PyUnicode_READ(kind, data, k))
    return key


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
        self.add_hashed(_hash(self.kind, self.data, start, end), start, end)

    cdef void add_hashed(self, uint64_t key, Py_ssize_t start, Py_ssize_t end) noexcept:
        """`add` text[start:end], whose `_hash` is ``key``."""
        cdef uint64_t at
        cdef _Item* slot
        self.items += 1
        at = fib_slot(key, self.shift)
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


cdef _Repeats _paragraphs(str text, int kind, void* data, Py_ssize_t start, Py_ssize_t end,
                          Py_ssize_t capacity):
    """The duplicates of the paragraphs of text[start:end], the pieces between runs of two
    newlines or more (`signals.line_repetition_signals`' re.split)."""
    cdef _Repeats repeats = _Repeats(capacity, text)
    cdef Py_ssize_t i = start, j, piece = start
    while i < end:
        if PyUnicode_READ(kind, data, i) != 10:
            i += 1
            continue
        j = i
        while j < end and PyUnicode_READ(kind, data, j) == 10:
            j += 1
        if j - i >= 2:
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
    cdef tuple policy_phrases, phrases
    # the phrases C4 looks for in a lower-cased line, "lorem ipsum", "javascript" and then the
    # policy phrases: each one's characters and length, and per two ASCII characters the
    # phrases that start with them, a bit each (two: most letters start a phrase)
    cdef const char* phrase[16]
    cdef Py_ssize_t phrase_size[16]
    cdef uint16_t starting[128][128]

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
        self.phrases = tuple(
            phrase.encode("ascii") for phrase in ("lorem ipsum", "javascript", *policy_phrases)
        )
        if len(self.phrases) > 16 or any(
            phrase != phrase.lower() or len(phrase) < 2 for phrase in self.phrases
        ):
            raise ValueError("C4's phrases are looked for as 16 lower-case ASCII ones at most")
        memset(self.starting, 0, sizeof(self.starting))
        for k in range(len(self.phrases)):
            self.phrase[k], self.phrase_size[k] = self.phrases[k], len(self.phrases[k])
            self.starting[self.phrases[k][0]][self.phrases[k][1]] |= 1 << k

    cdef uint16_t _phrases(self, int kind, void* data, Py_ssize_t a, Py_ssize_t b) noexcept:
        """The phrases (a bit each, in `phrases`' order) in the ASCII line text[a:b], lower-cased
        (of an ASCII str, ``lower`` changes A-Z alone): one pass, not a str and a search per
        phrase."""
        cdef uint16_t found = 0, candidates
        cdef Py_ssize_t i, m, k
        cdef uint32_t before, code = _ascii_lower(PyUnicode_READ(kind, data, a))
        for i in range(a, b - 1):  # the phrases that start at i
            before, code = code, _ascii_lower(PyUnicode_READ(kind, data, i + 1))
            candidates = self.starting[before][code] & ~found
            while candidates:
                k = 0
                while not (candidates >> k) & 1:
                    k += 1
                candidates &= candidates - 1
                if i + self.phrase_size[k] > b:
                    continue
                for m in range(2, self.phrase_size[k]):
                    if _ascii_lower(PyUnicode_READ(kind, data, i + m)) != <uint32_t> self.phrase[k][m]:
                        break
                else:
                    found |= 1 << k
        return found

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
        cdef uint64_t key
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
        fineweb, lines = _Repeats(newlines + 1, text), _Repeats(newlines + 1, text)
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
            # Gopher's lines split at runs of "\n": this line unless empty, but the first and
            # last are items even so (re.split); FineWeb's the lines not blank, hashed once
            if end > start or start == 0 or end == n:
                key = _hash(kind, data, start, end)
                lines.add_hashed(key, start, end)
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
                fineweb.add_hashed(key, start, end)
                c4_lines += 1
                sentences += self._c4_line(text, kind, data, a, b, ids, starts[piece],
                                           starts[piece + 1], &c4_punct, &lorem, &curly,
                                           &javascript, &policy)
            piece += 1
            start = end + 1
        a, b = 0, n
        while a < b and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, a)):
            a += 1
        while b > a and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, b - 1)):
            b -= 1
        paragraphs = _paragraphs(text, kind, data, a, b, newlines + 1)
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
        cdef bint bracket = False, ascii = True, braces = False
        cdef uint16_t found
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
                braces |= ch == 123  # {
                ascii &= ch < 128
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
        if sentences < 0:
            sentences = self._sentences(ids, first, stop)
        if line is None and ascii:  # no citation mark taken out: the phrases found here
            found = self._phrases(kind, data, a, b)
            if found & 1:
                lorem[0] = 1
            if self.javascript and found & 2:
                javascript[0] += 1
                return 0
            if braces:
                curly[0] = 1
            if self.policy and found >> 2:
                policy[0] += 1
                return 0
            return sentences
        if line is None:
            line = PyUnicode_Substring(text, a, b)
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
