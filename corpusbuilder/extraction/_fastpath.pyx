# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The `best` preset's hot loops, compiled: jusText's segmentation walk (§2.7.1, at the block tags
it is given) over libxml2's nodes, the block features and the walk of the gradient-boosted trees.

Built by setup.py when a C compiler and Python's headers are at hand; without them the package
installs all the same and :mod:`corpusbuilder.extraction.justext` and :mod:`corpusbuilder.extraction.classifier` run
their Python and numpy versions, which give the same blocks, features and probabilities
(tests/test_fastpath.py holds the two to each other on every gold page).

Why the segmentation is faster here: lxml's ``iterwalk`` makes a Python object of every element
and copies its text and tail into new strings at each event, and the Python loop then merges
the pieces. Here the text nodes are read where libxml2 keeps them and merged in one UTF-8 buffer,
which is normalised and counted in place; only what a block keeps (its text, one str, and its
path) becomes Python objects. Only libxml2's structs are read — no libxml2 function is called,
so this module does not link against the libxml2 inside lxml's own extension.

Why the features are: numpy spends microseconds on each of the few dozen small arrays a page's
features take, and the per-block parts (lower-casing, legal phrases, title words, the
containers' paths) were Python loops. Here each block is read once and its row written in
place; the sums keep numpy's order and the logarithms are numpy's, so the rows are the same
to the bit.
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

cimport cython

# The walk reads lxml's element structs and libxml2's nodes as the headers of the lxml it was
# built against lay them out; another lxml at run time makes the import fail, and the package
# then runs its Python walks.
if etree.__version__ != cetree.LXML_VERSION_STRING.decode():
    raise ImportError(f"corpusbuilder.extraction._fastpath was built against lxml {cetree.LXML_VERSION_STRING.decode()}, "
                      f"not {etree.__version__}: reinstall corpusbuilder to rebuild it")
cetree.import_lxml__etree()


class Unsupported(Exception):
    """The page holds a node this walk does not model (a processing instruction, CDATA, an
    element in a namespace …): the caller runs the Python walk on it instead."""


# One is made for every kept element (for the few whose class and id are read later), and
# dropped with the walk: kept off the garbage collector's lists (it holds only the root, so it
# is in no cycle; a field that could reach a block or a path node would need them back) and its
# memory reused.
@cython.no_gc
@cython.freelist(64)
cdef class ElementAttributes:
    """An element's attributes as the path features read them: ``get`` as lxml's ``Element.get``
    for a name without a namespace. Holds the page's root so the document outlives it."""

    cdef xmlNode* c_node
    cdef object owner

    def get(self, str name, default=None):
        value = self.value(name.encode("utf8"))
        return default if value is None else value

    cdef object value(self, const char* key):
        """The attribute ``key`` names (UTF-8), or None."""
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
        return None


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
    """segmentation._collapsed_length of a text that is not all whitespace: its code points, each
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
    """segmentation._normalize_whitespace of the stripped text into ``out``: each whitespace run that
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

    cdef int count(self, const Buffer* text, Buffer* scratch, Py_ssize_t* words, Py_ssize_t* stop_words,
                   bint* non_ascii) except -1:
        """The words of a normalised text (runs between spaces and newlines) and how many are
        on the list, lower-cased; and whether any word is not ASCII."""
        cdef size_t i = 0, start
        cdef const unsigned char* data = <const unsigned char*> text.data
        cdef bint ascii
        cdef unsigned char byte
        words[0] = stop_words[0] = 0
        non_ascii[0] = False
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
                non_ascii[0] = True
                stop_words[0] += (<str> text.data[start:i].decode("utf8")).lower() in self.words
        return 0


cdef class BlockMaker:
    """Makes a block as :func:`corpusbuilder.extraction.segmentation._make_block` does, from the classes and
    functions of :mod:`corpusbuilder.extraction.segmentation` given once. A block's path is worked out here from
    the nearest ancestor whose features are remembered, as ``path_features`` does; a path of
    more new steps than ``path_features`` remembers is left to it. A block's words are counted
    in script units (:func:`corpusbuilder.common.scripts.in_script_units`) here too, where its
    text is still bytes: most pages hold no character of a script written without spaces, and
    finding that out over the UTF-8 of their non-ASCII blocks spares a search of the whole
    page's text."""

    cdef object block_class, path_features, element_hints, heading_tag, script_units
    cdef Py_ssize_t max_remembered_steps
    cdef const unsigned int[:, ::1] no_space_ranges  # first and last code point of each script

    def __init__(self, block_class, path_features, element_hints, heading_tag, Py_ssize_t max_remembered_steps,
                 const unsigned int[:, ::1] no_space_ranges not None, script_units):
        self.block_class = block_class
        self.path_features = path_features
        self.element_hints = element_hints
        self.heading_tag = heading_tag
        self.max_remembered_steps = max_remembered_steps
        if no_space_ranges.shape[1] != 2:
            raise ValueError("no_space_ranges: a first and a last code point per script")
        for k in range(no_space_ranges.shape[0]):
            if no_space_ranges[k, 0] < 0x800:  # holds_no_space_script decodes no shorter UTF-8
                raise ValueError(f"no_space_ranges: U+{no_space_ranges[k, 0]:04X} is below U+0800")
        self.no_space_ranges = no_space_ranges
        self.script_units = script_units

    cdef bint holds_no_space_script(self, const Buffer* text) noexcept:
        """Whether a UTF-8 text holds a character of a script written without spaces. Every such
        script lies above U+07FF, where UTF-8 takes three or four bytes: only those are decoded."""
        cdef size_t i = 0
        cdef const unsigned char* data = <const unsigned char*> text.data
        cdef unsigned int code
        cdef Py_ssize_t k
        while i < text.length:
            if data[i] >= 0xF0 and i + 3 < text.length:
                code = ((data[i] & 0x07) << 18) | ((data[i + 1] & 0x3F) << 12) | ((data[i + 2] & 0x3F) << 6) | (
                    data[i + 3] & 0x3F)
                i += 4
            elif data[i] >= 0xE0 and i + 2 < text.length:
                code = ((data[i] & 0x0F) << 12) | ((data[i + 1] & 0x3F) << 6) | (data[i + 2] & 0x3F)
                i += 3
            else:
                i += 1
                continue
            for k in range(self.no_space_ranges.shape[0]):
                if self.no_space_ranges[k, 0] <= code <= self.no_space_ranges[k, 1]:
                    return True
        return False

    cdef object own_hints(self, list node):
        cdef ElementAttributes attributes = <ElementAttributes?> node[3]  # the compiled walk's nodes hold these
        return self.element_hints(node[0], attributes.value(b"class"), attributes.value(b"id"))

    cdef tuple path(self, object path_node, bint structure_hints):
        """(dom_path, xpath, heading, hints, …) of a path node, as ``path_features`` gives them
        (the remembered tuple itself where there is one, which holds one more item), each new
        step's features left on its node as ``path_features`` leaves them."""
        cdef list steps = []
        cdef list step
        cdef tuple remembered = None
        node = path_node
        while node is not None:
            remembered = (<list> node)[4]
            if remembered is not None:
                break
            steps.append(node)
            node = (<list> node)[2]
        if not steps:
            return remembered if remembered is not None else self.path_features(path_node, structure_hints)
        if len(steps) > self.max_remembered_steps:
            return self.path_features(path_node, structure_hints)
        if remembered is None:
            dom_path, xpath, heading, hints = "", "", False, 0
        else:
            dom_path, xpath, heading, hints = remembered[0], remembered[1], remembered[2], remembered[3]
        for index in range(len(steps) - 1, -1, -1):
            step = <list> steps[index]
            tag = step[0]
            own_hints = self.own_hints(step) if structure_hints else 0
            hints |= own_hints
            dom_path = f"{dom_path}.{tag}" if dom_path else tag
            xpath = f"{xpath}/{tag}[{step[1]}]"
            heading = heading or self.heading_tag(tag)
            remembered = (dom_path, xpath, heading, hints, own_hints)
            step[4] = remembered
        return remembered

    cdef object near_hints(self, object node):
        """:func:`corpusbuilder.extraction.segmentation._near_hints`: the hint bits of a path node's element and its parent."""
        bits = 0
        for _ in range(2):
            if node is None:
                break
            remembered = (<list> node)[4]
            bits |= remembered[4] if remembered is not None else self.own_hints(<list> node)
            node = (<list> node)[2]
        return bits

    cdef object make(self, const Buffer* utf8, Py_ssize_t n_words, Py_ssize_t n_stopwords, bint non_ascii,
                     long chars_in_links, long tags_count, object path_node, bint structure_hints):
        """The block of a normalised text (``utf8``) of ``n_words`` whitespace words, which stay
        what its stop-word density is taken over, as the package takes it."""
        cdef str text = utf8.data[:utf8.length].decode("utf8")
        cdef tuple path = self.path(path_node, structure_hints)
        near_hints = self.near_hints(path_node) if structure_hints else 0
        cdef Py_ssize_t n_chars = len(text)
        units = self.script_units(text) if non_ascii and self.holds_no_space_script(utf8) else n_words
        return self.block_class(text, path[0], path[1], path[2], chars_in_links, tags_count, n_chars, units,
                                n_stopwords, <double> chars_in_links / n_chars, <double> n_stopwords / n_words, path[3],
                                near_hints)


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
    cdef BlockMaker block_maker
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
        cdef bint non_ascii
        if self.has_text:
            _normalized(&self.text, &self.normalized)
            if self.normalized.length:
                self.stop_words.count(&self.normalized, &self.scratch, &words, &stop_words, &non_ascii)
                block = self.block_maker.make(&self.normalized, words, stop_words, non_ascii, self.chars_in_links,
                                              self.tags_count, self.block_path, self.structure_hints)
                self.blocks.append(block)
            self.text.length = 0
            self.has_text = False
        return 0


# What the walk needs to know of an element's tag, as bits
cdef enum:
    KILLED = 1  # removed with everything inside it
    UNWRAPPED = 2  # removed, its text and children kept
    PARAGRAPH = 4  # a block starts and ends at it
    LINK = 8  # <link>: removed when it is a stylesheet's
    IMAGE = 16  # <image>, which the Cleaner renames <img>
    BREAK = 32  # <br>
    ANCHOR = 64  # <a>

cdef enum:
    MAX_TAG_NAMES = 512  # element names a Tags remembers; a page of more made-up tags reads the rest each time


cdef class Tags:
    """The tags the walk treats apart (where blocks break, what the Cleaner removes or unwraps),
    and each element name met so far as one str with its kinds (the bits above), looked up by
    its UTF-8 bytes as libxml2 keeps it: a new str of every element's name, hashed into three
    sets and compared with four names, cost a tenth of the walk. Open addressing on FNV-1a."""

    cdef readonly frozenset paragraph_tags, killed_tags, unwrapped_tags
    cdef list names  # the strs, by number
    cdef int kinds[MAX_TAG_NAMES]
    cdef Buffer keys  # the names' bytes, one after another
    cdef Py_ssize_t slots[2 * MAX_TAG_NAMES][3]  # per slot: offset in keys + 1 (0: empty), length, number

    def __init__(self, frozenset paragraph_tags not None, frozenset killed_tags not None,
                 frozenset unwrapped_tags not None):
        self.paragraph_tags = paragraph_tags
        self.killed_tags = killed_tags
        self.unwrapped_tags = unwrapped_tags
        self.names = []
        self.keys.length = 0
        for slot in range(2 * MAX_TAG_NAMES):
            self.slots[slot][0] = 0

    def __dealloc__(self):
        free(self.keys.data)

    cdef int kinds_of(self, str tag) except -1:
        return ((KILLED if tag in self.killed_tags else 0) | (UNWRAPPED if tag in self.unwrapped_tags else 0)
                | (PARAGRAPH if tag in self.paragraph_tags else 0) | (LINK if tag == "link" else 0)
                | (IMAGE if tag == "image" else 0) | (BREAK if tag == "br" else 0) | (ANCHOR if tag == "a" else 0))

    cdef str tag(self, const unsigned char* name, int* kinds):
        """The str of an element's name, and its kinds into ``kinds``."""
        cdef size_t length = strlen(<const char*> name)
        cdef Py_ssize_t slot = _fnv1a(name, length) & (2 * MAX_TAG_NAMES - 1), number
        while self.slots[slot][0]:
            if (<size_t> self.slots[slot][1] == length
                    and memcmp(self.keys.data + self.slots[slot][0] - 1, name, length) == 0):
                number = self.slots[slot][2]
                kinds[0] = self.kinds[number]
                return <str> self.names[number]
            slot = (slot + 1) & (2 * MAX_TAG_NAMES - 1)
        tag = _utf8(name)
        kinds[0] = self.kinds_of(tag)
        number = len(self.names)
        if number < MAX_TAG_NAMES:
            self.slots[slot][0] = self.keys.length + 1
            self.slots[slot][1] = length
            self.slots[slot][2] = number
            _append(&self.keys, <const char*> name, length)
            self.names.append(tag)
            self.kinds[number] = kinds[0]
        return tag


def segment_walk(cetree._Element root not None, BlockMaker block_maker not None, StopWords stop_words not None,
                 bint structure_hints, Tags tags not None):
    """The blocks of :func:`corpusbuilder.extraction.segmentation.segment_blocks` for a root that is an element
    whose tag is not killed; raises :class:`Unsupported` on a node it does not model.

    The Python walk's events map onto libxml2's node lists: its text, tail and comment-tail
    pieces are the text nodes between two kept elements' starts and ends, in document order;
    killed elements and comments are skipped with everything inside, and unwrapped elements
    are walked through without events of their own. The block's text is kept as UTF-8 bytes
    until it is whole and normalised: one str per block.

    The walk holds libxml2's nodes while it makes blocks, which reads class and id through the
    path and must not change the tree (nor do the functions of ``block_maker``).
    """
    cdef xmlNode* c_root = root._c_node
    cdef xmlNode* c_node = c_root
    cdef xmlNode* c_parent = NULL
    cdef bint opening = True, new_block, closed_root = False
    cdef int kinds
    cdef _Blocks state = _Blocks.__new__(_Blocks)
    state.blocks = []
    state.block_maker = block_maker
    state.stop_words = stop_words
    state.structure_hints = structure_hints

    if c_root.ns is not NULL:
        raise Unsupported("a root element in a namespace")
    tag = tags.tag(c_root.name, &kinds)
    if kinds & LINK:
        raise Unsupported("a <link> root")
    if kinds & UNWRAPPED:
        tag = "div"  # the Cleaner cannot unwrap the root, it renames it
        kinds = tags.kinds_of(tag)

    # The path is the Python walk's [tag, position, parent, attributes, features] chain.
    path_node = None
    cdef list open_elements = []  # path node, {child tag: count}, for each open kept element
    # None until the element's first kept child: most elements (links, images, spans) have none
    cdef dict child_counts = None
    cdef list descended = []  # per element walked into: its kinds when kept, None when unwrapped
    while True:
        state.close_text_node(True)
        if opening:  # c_node: a kept element, tag its tag, kinds its kinds
            if kinds & IMAGE:
                tag = "img"  # the Cleaner's normalisation of an IE quirk
                kinds = tags.kinds_of(tag)
            if child_counts is None:
                child_counts = {}
            position = child_counts.get(tag, 0) + 1
            child_counts[tag] = position
            open_elements.append(path_node)
            open_elements.append(child_counts)
            path_node = [tag, position, path_node, _attributes(c_node, root), None]
            child_counts = None
            new_block = kinds & PARAGRAPH or (state.after_br and kinds & BREAK)
            if new_block:
                if kinds & BREAK:
                    state.tags_count -= 1  # the first <br> of a <br><br> separator is no inline tag
            else:
                state.after_br = kinds & BREAK
                if state.after_br:
                    state.add_break()
                elif kinds & ANCHOR:
                    state.in_link = True
                state.tags_count += 1
            descended.append(kinds)
            c_parent = c_node
            c_node = c_node.children
        else:  # c_parent's children are done, kinds its kinds
            child_counts = open_elements.pop()
            path_node = open_elements.pop()
            new_block = kinds & PARAGRAPH
            if kinds & ANCHOR:
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
                    tag = tags.tag(c_node.name, &kinds)
                    if not (kinds & KILLED or (
                            kinds & LINK and "stylesheet" in _attributes(c_node, root).get("rel", "").lower())):
                        if not kinds & UNWRAPPED:
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
            walked = descended.pop()
            if walked is not None:
                kinds = walked
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


def complete_tree_sums(const float[:, ::1] features, const int[:, ::1] split_feature,
                       const float[:, ::1] split_value, const double[:, ::1] leaf_value, int depth):
    """:func:`tree_sums` for trees laid out complete (``BlockModel.complete_trees``): per tree,
    ``split_feature`` and ``split_value`` of its 2 ** depth - 1 splits in level order and
    ``leaf_value`` of its 2 ** depth leaves.

    A step computes the next node from the comparison (2 i + 1 left, 2 i + 2 right) instead of
    loading it, and a tree's splits lie together: the walk touches about half the memory of the
    node-by-node one, which matters where the page before has pushed the model out of the cache.
    """
    cdef Py_ssize_t rows = features.shape[0], trees = split_feature.shape[0], row, tree, start, lane, lanes
    if not 0 <= depth < 31:
        raise ValueError(f"trees of depth {depth}")
    cdef Py_ssize_t inner = (1 << depth) - 1  # the splits of a tree; the leaves follow them in the walk's numbering
    if (split_value.shape[0] != trees or leaf_value.shape[0] != trees or split_feature.shape[1] < inner
            or split_value.shape[1] < inner or leaf_value.shape[1] != inner + 1):
        raise ValueError(f"complete trees of depth {depth}: {inner} splits and {inner + 1} leaves each")
    cdef Py_ssize_t node[LANES]
    cdef const int* f
    cdef const float* t
    cdef int level
    sums = np.empty(rows, dtype=np.float64)
    cdef double[::1] out = sums
    cdef double[:, ::1] leaf_values = np.empty((LANES, trees), dtype=np.float64)
    for start in range(0, rows, LANES):
        lanes = min(LANES, rows - start)
        for tree in range(trees):
            f = &split_feature[tree, 0]
            t = &split_value[tree, 0]
            for lane in range(lanes):
                node[lane] = 0
            for level in range(depth):
                for lane in range(lanes):
                    row = start + lane
                    node[lane] = 2 * node[lane] + 2 - (features[row, f[node[lane]]] <= t[node[lane]])
            for lane in range(lanes):
                leaf_values[lane, tree] = leaf_value[tree, node[lane] - inner]
        for lane in range(lanes):
            # numpy's reduction adds the pairwise sum to 0.0 (so a sum of -0.0s is +0.0)
            out[start + lane] = 0.0 + _pairwise_sum(&leaf_values[lane, 0], trees)
    return sums


def tree_sums(const float[:, ::1] features, const Py_ssize_t[::1] feature_index, const float[::1] threshold,
              const Py_ssize_t[::1] children, const Py_ssize_t[::1] roots, int depth, const double[::1] value):
    """Each row's leaf values summed over the trees, in numpy's order: the walk and the sum of
    :meth:`corpusbuilder.extraction.model.BlockModel._leaf_sums` for float32 rows, node by node
    (for trees too deep to lay out complete, :func:`complete_tree_sums`).

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
        word = _text(value)
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
        text = _text(block.text)
        xpath = _text(block.xpath)
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
        cf = _text(cf_classes[i])
        row[CF_BAD] = cf == tables.bad_class
        row[CF_SHORT] = cf == tables.short_class
        row[CF_NEAR_GOOD] = cf == tables.near_good_class
        row[CF_GOOD] = cf == tables.good_class
        row[JUSTEXT_GOOD] = _text(final_classes[i]) == tables.good_class
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


# jusText's classes as small integers while Algorithm 2.3 resolves them
cdef enum:
    CLASS_BAD, CLASS_SHORT, CLASS_NEAR_GOOD, CLASS_GOOD


cdef void _nearest_classes(const int[::1] classes, bint after, int[::1] good_or_bad, int[::1] non_short) noexcept:
    """:func:`corpusbuilder.extraction.justext._nearest_before`, or its mirror with ``after``: for each
    block, the class of the nearest good-or-bad block and of the nearest non-short block strictly
    before it (after it); the document's edge counts as bad."""
    cdef Py_ssize_t count = classes.shape[0], step, i
    cdef int last_good_or_bad = CLASS_BAD, last_non_short = CLASS_BAD
    for step in range(count):
        i = count - 1 - step if after else step
        good_or_bad[i], non_short[i] = last_good_or_bad, last_non_short
        if classes[i] == CLASS_GOOD or classes[i] == CLASS_BAD:
            last_good_or_bad = classes[i]
        if classes[i] != CLASS_SHORT:
            last_non_short = classes[i]


def justext_classes(blocks, params, tuple class_names not None):
    """:func:`corpusbuilder.extraction.justext.classify`: the context-free classes of Algorithm 2.2 and the
    final classes Algorithm 2.3 and the package's heading rule resolve from them (§2.7.2–2.7.3),
    as ``class_names`` (bad, short, near-good, good) lists.

    The same rules, comparisons and order as the Python functions it stands for
    (``classify_context_free``, ``_resolve_short``, ``_resolve_near_good``,
    ``_promote_headings``), over arrays of class codes instead of lists of strings.
    """
    cdef list page = blocks if type(blocks) is list else list(blocks)
    cdef Py_ssize_t count = len(page), i
    cdef bint by_words = params.length_unit == "words", no_headings = params.no_headings
    cdef double length_low = params.length_low, length_high = params.length_high
    cdef double stopwords_low = params.stopwords_low, stopwords_high = params.stopwords_high
    cdef double max_link_density = params.max_link_density, max_heading_distance = params.max_heading_distance
    cdef double length, stop_density
    cdef str text
    codes_array = np.empty((7, count), dtype=np.intc)
    cdef int[:, ::1] codes = codes_array
    cdef int[::1] cf = codes[0], short_resolved = codes[1], final = codes[2]
    cdef int[::1] good_or_bad_before = codes[3], non_short_before = codes[4]
    cdef int[::1] good_or_bad_after = codes[5], non_short_after = codes[6]
    cdef double[::1] n_chars = np.empty(count, dtype=np.float64)  # a hand-made block may hold a float
    cdef unsigned char[::1] heading = np.empty(count, dtype=np.uint8)
    cdef int cls, before, after
    cdef double gap
    cdef bint gap_known

    for i in range(count):  # Algorithm 2.2, with the package's © and <select> rules
        block = page[i]
        n_chars[i] = block.n_chars
        heading[i] = bool(block.heading)
        length = block.n_words if by_words else n_chars[i]
        text = _text(block.text)
        stop_density = block.stopword_density
        if block.link_density > max_link_density:
            cf[i] = CLASS_BAD
        elif "\xa9" in text or "&copy" in text:
            cf[i] = CLASS_BAD
        elif "select" in _text(block.dom_path):
            cf[i] = CLASS_BAD
        elif length < length_low:
            cf[i] = CLASS_BAD if block.chars_in_links > 0 else CLASS_SHORT
        elif stop_density >= stopwords_high:
            cf[i] = CLASS_GOOD if length > length_high else CLASS_NEAR_GOOD
        elif stop_density >= stopwords_low:
            cf[i] = CLASS_NEAR_GOOD
        else:
            cf[i] = CLASS_BAD

    # short blocks, all judged on the context-free classes: the nearest good-or-bad and
    # non-short blocks on either side
    _nearest_classes(cf, False, good_or_bad_before, non_short_before)
    _nearest_classes(cf, True, good_or_bad_after, non_short_after)
    for i in range(count):
        cls = cf[i]
        if cls == CLASS_SHORT:
            before, after = good_or_bad_before[i], good_or_bad_after[i]
            if before == after:
                cls = before
            elif ((before == CLASS_BAD and non_short_before[i] == CLASS_NEAR_GOOD)
                  or (after == CLASS_BAD and non_short_after[i] == CLASS_NEAR_GOOD)):
                cls = CLASS_GOOD
            else:
                cls = CLASS_BAD
        short_resolved[i] = cls

    # near-good blocks, left to right: the block before is resolved already
    _nearest_classes(short_resolved, True, good_or_bad_after, non_short_after)
    before = CLASS_BAD
    for i in range(count):
        cls = short_resolved[i]
        if cls == CLASS_NEAR_GOOD:
            cls = CLASS_BAD if before == CLASS_BAD and good_or_bad_after[i] == CLASS_BAD else CLASS_GOOD
        final[i] = cls
        before = cls

    if not no_headings:  # the package's heading rule, right to left over the characters to the next good block
        gap_known = False
        gap = 0
        for i in range(count - 1, -1, -1):
            cls = final[i]
            if (heading[i] and cls == CLASS_BAD and cf[i] != CLASS_BAD and gap_known
                    and gap <= max_heading_distance):
                final[i] = CLASS_GOOD
            if cls == CLASS_GOOD:
                gap_known, gap = True, 0
            elif gap_known:
                gap += n_chars[i]
    return [class_names[cf[i]] for i in range(count)], [class_names[final[i]] for i in range(count)]
