# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The `best` preset's hot loops, compiled: jusText's segmentation walk (§2.7.1) over libxml2's
nodes, the character and title-word counts of the block features and the walk of the
gradient-boosted trees.

Built by setup.py when a C compiler and Python's headers are at hand; without them the package
installs all the same and :mod:`corpusbuilder.justext` and :mod:`corpusbuilder.classifier` run
their Python and numpy versions, which give the same blocks, features and probabilities
(tests/test_fastpath.py holds the two to each other on every gold page).

Why the segmentation is faster here: lxml's ``iterwalk`` makes a Python object of every element
and copies its text and tail into new strings at each event, and the Python loop then merges
the pieces. Here the text nodes are read where libxml2 keeps them and merged in one UTF-8 buffer,
which is normalised and counted in place; only what a block keeps (its text, one str, and its
path) becomes Python objects. Only libxml2's structs are read — no libxml2 function is called,
so this module does not link against the libxml2 inside lxml's own extension.
"""

from cpython.unicode cimport (
    Py_UNICODE_ISSPACE,
    PyUnicode_DATA,
    PyUnicode_GET_LENGTH,
    PyUnicode_KIND,
    PyUnicode_READ,
)
from libc.stdlib cimport free, realloc
from libc.string cimport memcmp, memcpy, strcmp, strlen

cimport lxml.includes.etreepublic as cetree
from lxml.includes.tree cimport (
    XML_CDATA_SECTION_NODE,
    XML_COMMENT_NODE,
    XML_ELEMENT_NODE,
    XML_TEXT_NODE,
    XML_XINCLUDE_END,
    XML_XINCLUDE_START,
    xmlAttr,
    xmlNode,
)

import numpy as np
from lxml import etree

# The walk reads lxml's element structs and libxml2's nodes as the headers of the lxml it was
# built against lay them out; another lxml at run time makes the import fail, and the package
# then runs its Python walks.
if etree.__version__ != cetree.LXML_VERSION_STRING.decode():
    raise ImportError(f"corpusbuilder._fastpath was built against lxml {cetree.LXML_VERSION_STRING.decode()}, "
                      f"not {etree.__version__}: reinstall corpusbuilder to rebuild it")
cetree.import_lxml__etree()


class Unsupported(Exception):
    """The page holds a node this walk does not model (a processing instruction, CDATA, an
    element in a namespace …): the caller runs the Python walk on it instead."""


cdef class ElementAttributes:
    """An element's attributes as the path features read them: ``get`` as lxml's ``Element.get``
    for a name without a namespace. Holds the page's root so the document outlives it."""

    cdef xmlNode* c_node
    cdef object owner

    def get(self, str name, default=None):
        cdef bytes key = name.encode("utf8")
        cdef xmlAttr* attribute = self.c_node.properties
        cdef xmlNode* value
        cdef bytearray text
        while attribute is not NULL:
            if attribute.ns is NULL and strcmp(<const char*> attribute.name, key) == 0:
                value = attribute.children
                if value is not NULL and value.next is NULL and value.type == XML_TEXT_NODE:
                    return _utf8(value.content)
                text = bytearray()  # what xmlNodeListGetString joins: the text children
                while value is not NULL:
                    if value.type != XML_TEXT_NODE:
                        raise Unsupported("an attribute value that is not plain text")
                    text += value.content[:strlen(<const char*> value.content)]
                    value = value.next
                return text.decode("utf8")
            attribute = attribute.next
        return default


cdef inline str _utf8(const unsigned char* text):
    return (<const char*> text)[:strlen(<const char*> text)].decode("utf8")


cdef ElementAttributes _attributes(xmlNode* c_node, object owner):
    cdef ElementAttributes attributes = ElementAttributes.__new__(ElementAttributes)
    attributes.c_node = c_node
    attributes.owner = owner
    return attributes


cdef struct Buffer:
    char* data
    size_t length
    size_t capacity


cdef int _reserve(Buffer* buffer, size_t needed) except -1:
    cdef char* grown
    if needed > buffer.capacity:
        grown = <char*> realloc(buffer.data, needed * 2 + 64)
        if grown is NULL:
            raise MemoryError()
        buffer.data = grown
        buffer.capacity = needed * 2 + 64
    return 0


cdef int _append(Buffer* buffer, const char* text, size_t size) except -1:
    _reserve(buffer, buffer.length + size)
    memcpy(buffer.data + buffer.length, text, size)
    buffer.length += size
    return 0


cdef inline int _append_text_node(Buffer* buffer, const xmlNode* c_node) except -1:
    return _append(buffer, <const char*> c_node.content, strlen(<const char*> c_node.content))


cdef inline size_t _space_at(const unsigned char* text, size_t left) noexcept:
    """The bytes of the whitespace character (by str.isspace) that starts ``text``, 0 if it is
    none: ASCII's, U+0085, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000.
    UTF-8's lead bytes never occur inside a character, so any byte may be asked."""
    cdef unsigned char byte = text[0]
    if byte < 0x80:
        return byte == 0x20 or 0x09 <= byte <= 0x0D or 0x1C <= byte <= 0x1F
    if byte == 0xC2:
        return 2 if left >= 2 and (text[1] == 0x85 or text[1] == 0xA0) else 0
    if left < 3:
        return 0
    if byte == 0xE2:
        if text[1] == 0x80:
            return 3 if text[2] <= 0x8A or text[2] == 0xA8 or text[2] == 0xA9 or text[2] == 0xAF else 0
        return 3 if text[1] == 0x81 and text[2] == 0x9F else 0
    if byte == 0xE1:
        return 3 if text[1] == 0x9A and text[2] == 0x80 else 0
    if byte == 0xE3:
        return 3 if text[1] == 0x80 and text[2] == 0x80 else 0
    return 0


cdef bint _blank(const Buffer* text) noexcept:
    """str.isspace of the text (True for none, where the Python walk has no piece at all)."""
    cdef size_t i = 0, step
    cdef const unsigned char* data = <const unsigned char*> text.data
    while i < text.length:
        step = _space_at(data + i, text.length - i)
        if step == 0:
            return False
        i += step
    return True


cdef size_t _collapsed_length(const Buffer* text) noexcept:
    """justext._collapsed_length of a text that is not all whitespace: its code points, each
    whitespace run counted as one."""
    cdef size_t i = 0, step, length = 0
    cdef bint in_space = False
    cdef const unsigned char* data = <const unsigned char*> text.data
    while i < text.length:
        step = _space_at(data + i, text.length - i)
        if step:
            length += not in_space
            in_space = True
            i += step
        else:
            length += (data[i] & 0xC0) != 0x80  # not a continuation byte: a new code point
            in_space = False
            i += 1
    return length


cdef int _normalized(const Buffer* text, Buffer* out) except -1:
    """justext._normalize_whitespace of the stripped text into ``out``: each whitespace run that
    holds a line break (\\n or \\r) one newline, any other one space."""
    cdef size_t i = 0, step
    cdef bint in_space = False, line_break = False
    cdef const unsigned char* data = <const unsigned char*> text.data
    cdef char mark
    _reserve(out, text.length)
    out.length = 0
    while i < text.length:
        step = _space_at(data + i, text.length - i)
        if step:
            line_break = line_break or data[i] == 0x0A or data[i] == 0x0D
            in_space = True
            i += step
            continue
        if in_space and out.length:  # a run between two words; the stripped edges write nothing
            mark = b"\n" if line_break else b" "
            out.data[out.length] = mark
            out.length += 1
        in_space = line_break = False
        out.data[out.length] = data[i]
        out.length += 1
        i += 1
    return 0


cdef inline unsigned long long _fnv1a(const unsigned char* data, size_t length) noexcept:
    cdef unsigned long long value = 14695981039346656037ULL
    cdef size_t i
    for i in range(length):
        value = (value ^ data[i]) * 1099511628211ULL
    return value


cdef class StopWords:
    """A lower-cased stop list as the walk counts words against it: the ASCII words in a table of
    their bytes (open addressing on FNV-1a), so a word of ASCII letters is looked up without
    becoming a Python string; any other word is lower-cased and looked up in the set itself, as
    ``text.lower().split()`` and ``in`` do (lower-casing a non-ASCII word can make it ASCII: the
    Kelvin sign's "K" is "k")."""

    cdef readonly frozenset words
    cdef bytes keys  # the ASCII words, one after another
    cdef Py_ssize_t[:, ::1] slots  # per slot: offset in keys + 1 (0: empty), length
    cdef unsigned long long mask

    def __init__(self, frozenset words):
        self.words = words
        ascii_words = sorted(word.encode("ascii") for word in words if word.isascii())
        size = 16
        while size < 2 * len(ascii_words) + 1:
            size *= 2
        self.mask = size - 1
        self.keys = b"".join(ascii_words)
        slots = np.zeros((size, 2), dtype=np.intp)
        offset = 0
        for word in ascii_words:
            slot = _fnv1a(word, len(word)) & self.mask
            while slots[slot, 0]:
                slot = (slot + 1) & self.mask
            slots[slot] = offset + 1, len(word)
            offset += len(word)
        self.slots = slots

    cdef bint contains_ascii(self, const unsigned char* word, size_t length) noexcept:
        """Whether a word of ASCII characters, lower-cased already, is on the list."""
        cdef unsigned long long slot = _fnv1a(word, length) & self.mask
        cdef const unsigned char* keys = self.keys
        while self.slots[slot, 0]:
            if <size_t> self.slots[slot, 1] == length and memcmp(keys + self.slots[slot, 0] - 1, word, length) == 0:
                return True
            slot = (slot + 1) & self.mask
        return False

    cdef int count(self, const Buffer* text, Buffer* scratch, Py_ssize_t* words, Py_ssize_t* stop_words) except -1:
        """The words of a normalised text (runs between spaces and newlines) and how many are
        on the list, lower-cased."""
        cdef size_t i = 0, start
        cdef const unsigned char* data = <const unsigned char*> text.data
        cdef bint ascii
        cdef unsigned char byte
        words[0] = stop_words[0] = 0
        _reserve(scratch, text.length)
        while i < text.length:
            while i < text.length and (data[i] == 0x20 or data[i] == 0x0A):
                i += 1
            if i == text.length:
                break
            start = i
            ascii = True
            while i < text.length and data[i] != 0x20 and data[i] != 0x0A:
                byte = data[i]
                if byte >= 0x80:
                    ascii = False
                scratch.data[i - start] = byte + 32 if 0x41 <= byte <= 0x5A else byte
                i += 1
            words[0] += 1
            if ascii:
                stop_words[0] += self.contains_ascii(<const unsigned char*> scratch.data, i - start)
            else:
                stop_words[0] += (<str> text.data[start:i].decode("utf8")).lower() in self.words
        return 0


cdef class _Blocks:
    """The block being filled and the blocks made so far, as segment_blocks keeps them."""

    cdef Buffer pending  # text nodes that form one text node once the page is cleaned, UTF-8
    cdef Buffer text  # the block's text pieces, joined
    cdef Buffer normalized
    cdef Buffer scratch  # a word, lower-cased
    cdef bint has_text  # the Python walk's text_nodes is not empty
    cdef long chars_in_links, tags_count
    cdef object block_path
    cdef bint in_link, after_br
    cdef list blocks
    cdef object make_block
    cdef StopWords stop_words
    cdef bint structure_hints

    def __dealloc__(self):
        free(self.pending.data)
        free(self.text.data)
        free(self.normalized.data)
        free(self.scratch.data)

    cdef int close_text_node(self, bint count_links) except -1:
        """A kept element's start or end closes the text node before it; a blank one is ignored."""
        if not _blank(&self.pending):
            _append(&self.text, self.pending.data, self.pending.length)
            self.has_text = True
            if count_links and self.in_link:
                # length once whitespace runs are collapsed, as the package counts it
                self.chars_in_links += _collapsed_length(&self.pending)
            self.after_br = False
        self.pending.length = 0
        return 0

    cdef int add_break(self) except -1:
        """A single <br> joins its neighbours with a space."""
        _append(&self.text, " ", 1)
        self.has_text = True
        return 0

    cdef int close_block(self) except -1:
        cdef Py_ssize_t words, stop_words
        if self.has_text:
            _normalized(&self.text, &self.normalized)
            if self.normalized.length:
                self.stop_words.count(&self.normalized, &self.scratch, &words, &stop_words)
                block = self.make_block(self.normalized.data[:self.normalized.length].decode("utf8"), words,
                                        stop_words, self.chars_in_links, self.tags_count, self.block_path,
                                        self.structure_hints)
                self.blocks.append(block)
            self.text.length = 0
            self.has_text = False
        return 0


def segment_walk(cetree._Element root not None, make_block, StopWords stop_words not None, bint structure_hints,
                 paragraph_tags, killed_tags, unwrapped_tags):
    """The blocks of :func:`corpusbuilder.justext.segment_blocks` for a root that is an element
    whose tag is not killed; raises :class:`Unsupported` on a node it does not model.

    The Python walk's events map onto libxml2's node lists: its text, tail and comment-tail
    pieces are the text nodes between two kept elements' starts and ends, in document order;
    killed elements and comments are skipped with everything inside, and unwrapped elements
    are walked through without events of their own. The block's text is kept as UTF-8 bytes
    until it is whole and normalised: one str per block.

    The walk holds libxml2's nodes across its calls of ``make_block``, which must not change
    the tree (``_make_block`` only reads class and id through the path).
    """
    cdef xmlNode* c_root = root._c_node
    cdef xmlNode* c_node = c_root
    cdef xmlNode* c_parent = NULL
    cdef bint opening = True, new_block, closed_root = False
    cdef _Blocks state = _Blocks.__new__(_Blocks)
    state.blocks = []
    state.make_block = make_block
    state.stop_words = stop_words
    state.structure_hints = structure_hints

    if c_root.ns is not NULL:
        raise Unsupported("a root element in a namespace")
    tag = _utf8(c_root.name)
    if tag == "link":
        raise Unsupported("a <link> root")
    if tag in unwrapped_tags:
        tag = "div"  # the Cleaner cannot unwrap the root, it renames it

    # The path is the Python walk's [tag, position, parent, attributes, features] chain.
    path_node = None
    open_elements = []  # (path node, {child tag: count}) for each open kept element
    child_counts = {}
    descended = []  # per element walked into: its tag when kept, None when unwrapped
    while True:
        state.close_text_node(True)
        if opening:  # c_node: a kept element, tag its tag
            if tag == "image":
                tag = "img"  # the Cleaner's normalisation of an IE quirk
            position = child_counts.get(tag, 0) + 1
            child_counts[tag] = position
            open_elements.append((path_node, child_counts))
            path_node = [tag, position, path_node, _attributes(c_node, root), None]
            child_counts = {}
            new_block = tag in paragraph_tags or (state.after_br and tag == "br")
            if new_block:
                if tag == "br":
                    state.tags_count -= 1  # the first <br> of a <br><br> separator is no inline tag
            else:
                state.after_br = tag == "br"
                if state.after_br:
                    state.add_break()
                elif tag == "a":
                    state.in_link = True
                state.tags_count += 1
            descended.append(tag)
            c_parent = c_node
            c_node = c_node.children
        else:  # c_parent's children are done, tag its tag
            path_node, child_counts = open_elements.pop()
            new_block = tag in paragraph_tags
            if tag == "a":
                state.in_link = False
            if c_parent == c_root:
                closed_root = True
            else:
                c_node = c_parent.next
                c_parent = c_parent.parent
        if new_block:
            state.close_block()
            state.chars_in_links = 0
            state.tags_count = 0
            state.block_path = path_node
        if closed_root:
            break

        # on to the next kept element's start or end, gathering the text nodes on the way
        while True:
            while c_node is not NULL:
                if c_node.type == XML_TEXT_NODE:
                    _append_text_node(&state.pending, c_node)
                elif c_node.type == XML_ELEMENT_NODE:
                    if c_node.ns is not NULL:
                        raise Unsupported("an element in a namespace")
                    tag = _utf8(c_node.name)
                    if not (tag in killed_tags or (
                            tag == "link" and "stylesheet" in _attributes(c_node, root).get("rel", "").lower())):
                        if tag not in unwrapped_tags:
                            break
                        descended.append(None)
                        c_parent = c_node
                        c_node = c_node.children
                        continue
                elif c_node.type != XML_COMMENT_NODE:
                    raise Unsupported(f"a node of libxml2 type {c_node.type}")
                c_node = c_node.next
            if c_node is not NULL:
                opening = True
                break
            tag = descended.pop()
            if tag is not None:
                opening = False
                break
            c_node = c_parent.next  # an unwrapped element ends without an event
            c_parent = c_parent.parent

    # the root's own tail is read too, as the package does (no link is open any more)
    c_node = c_root.next
    while c_node is not NULL and c_node.type in (XML_TEXT_NODE, XML_CDATA_SECTION_NODE, XML_XINCLUDE_START,
                                                  XML_XINCLUDE_END):
        if c_node.type != XML_TEXT_NODE:  # lxml's tail takes CDATA too and skips XInclude marks
            raise Unsupported(f"a node of libxml2 type {c_node.type} after the root")
        _append_text_node(&state.pending, c_node)
        c_node = c_node.next
    state.close_text_node(False)
    state.close_block()
    return state.blocks


cdef enum:
    LANES = 8  # rows walked side by side


cdef double _pairwise_sum(const double* values, Py_ssize_t count) noexcept:
    """numpy's pairwise summation (``np.add.reduce`` of contiguous float64), in its order."""
    cdef double r[8]
    cdef double total
    cdef Py_ssize_t i, half
    if count < 8:
        total = 0.0
        for i in range(count):
            total += values[i]
        return total
    if count <= 128:
        for i in range(8):
            r[i] = values[i]
        i = 8
        while i < count - count % 8:
            r[0] += values[i]
            r[1] += values[i + 1]
            r[2] += values[i + 2]
            r[3] += values[i + 3]
            r[4] += values[i + 4]
            r[5] += values[i + 5]
            r[6] += values[i + 6]
            r[7] += values[i + 7]
            i += 8
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < count:
            total += values[i]
            i += 1
        return total
    half = count // 2
    half -= half % 8
    return _pairwise_sum(values, half) + _pairwise_sum(values + half, count - half)


def tree_sums(const float[:, ::1] features, const Py_ssize_t[::1] feature_index, const float[::1] threshold,
              const Py_ssize_t[::1] children, const Py_ssize_t[::1] roots, int depth, const double[::1] value):
    """Each row's leaf values summed over the trees, in numpy's order: the walk and the sum of
    :meth:`corpusbuilder.classifier.BlockModel._leaf_sums` for float32 rows.

    A step of one walk waits on the step before it (node, its feature, the comparison, the
    child), so LANES rows walk each tree side by side and their steps overlap; a leaf points to
    itself, so a walk that reaches one early stays there for the remaining levels. A row's leaf
    values are summed as soon as its LANES rows have walked every tree: no (rows × trees) array.
    """
    cdef Py_ssize_t rows = features.shape[0], trees = roots.shape[0], row, tree, start, lane, lanes
    cdef Py_ssize_t node[LANES]
    cdef int level
    sums = np.empty(rows, dtype=np.float64)
    cdef double[::1] out = sums
    cdef double[:, ::1] leaf_values = np.empty((LANES, trees), dtype=np.float64)
    for start in range(0, rows, LANES):
        lanes = min(LANES, rows - start)
        for tree in range(trees):
            for lane in range(lanes):
                node[lane] = roots[tree]
            for level in range(depth):
                for lane in range(lanes):
                    row = start + lane
                    node[lane] = children[2 * node[lane]
                                          + (features[row, feature_index[node[lane]]] <= threshold[node[lane]])]
            for lane in range(lanes):
                leaf_values[lane, tree] = value[node[lane]]
        for lane in range(lanes):
            # numpy's reduction adds the pairwise sum to 0.0 (so a sum of -0.0s is +0.0)
            out[start + lane] = 0.0 + _pairwise_sum(&leaf_values[lane, 0], trees)
    return sums


cdef inline str _text(object value):
    """A str the loops may read code point by code point (a str subclass is one too)."""
    if not isinstance(value, str):
        raise TypeError(f"expected str, not {type(value).__name__}")
    return <str> value


def character_counts(list texts, const unsigned char[::1] classes, unsigned char space, unsigned char sentence_end,
                     unsigned char sentence_final, unsigned char separator, unsigned char capital, unsigned char digit):
    """Per text: its (sentence ends, capitalised words, digits, separators) and whether its last
    character may end a sentence — :func:`corpusbuilder.classifier._character_counts`, text by text.

    ``classes`` holds each code point's class bits (codes beyond it: its last entry); a text's
    neighbours are the newlines that join the page's texts there, so the edges count as spaces.
    """
    cdef Py_ssize_t count = len(texts), i, j, length, last = classes.shape[0] - 1
    cdef Py_UCS4 code
    cdef unsigned char here = 0, after
    cdef bint space_before, space_after
    cdef int kind
    cdef void* data
    cdef str text
    counts = np.zeros((count, 4), dtype=np.int64)
    final_stop = np.zeros(count, dtype=np.uint8)
    cdef long long[:, ::1] out = counts
    cdef unsigned char[::1] final = final_stop
    for i in range(count):
        text = _text(texts[i])
        kind = PyUnicode_KIND(text)
        data = PyUnicode_DATA(text)
        length = PyUnicode_GET_LENGTH(text)
        space_before = True
        after = classes[min(<Py_ssize_t> PyUnicode_READ(kind, data, 0), last)] if length else space
        for j in range(length):
            code = PyUnicode_READ(kind, data, j)
            here = after
            after = classes[min(<Py_ssize_t> PyUnicode_READ(kind, data, j + 1), last)] if j + 1 < length else space
            space_after = (after & space) != 0
            if here & sentence_end and space_after:
                out[i, 0] += 1
            if here & capital and space_before:
                out[i, 1] += 1
            if here & digit:
                out[i, 2] += 1
            if here & separator or (code == 45 and space_before and space_after):
                out[i, 3] += 1
            space_before = (here & space) != 0
        if length:
            final[i] = (here & sentence_final) != 0
    return counts, final_stop.view(bool)


def title_word_counts(list texts, title_words):
    """Per text: how many of its whitespace words (``str.split``) are in ``title_words`` — the
    count behind :func:`corpusbuilder.classifier._text_features`' title overlap. A word is looked
    up only when some title word has its length."""
    cdef Py_ssize_t count = len(texts), i, j, start, length
    cdef int kind
    cdef void* data
    cdef str text
    cdef unsigned long long lengths = 0  # bit k: a title word of k code points (k < 63), bit 63: longer
    for word in title_words:
        lengths |= 1ULL << min(len(_text(word)), 63)
    counts = np.zeros(count, dtype=np.float64)
    cdef double[::1] out = counts
    for i in range(count):
        text = _text(texts[i])
        kind = PyUnicode_KIND(text)
        data = PyUnicode_DATA(text)
        length = PyUnicode_GET_LENGTH(text)
        j = 0
        while j < length:
            while j < length and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, j)):
                j += 1
            start = j
            while j < length and not Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, j)):
                j += 1
            if j > start and lengths >> min(j - start, 63) & 1 and text[start:j] in title_words:
                out[i] += 1
    return counts
