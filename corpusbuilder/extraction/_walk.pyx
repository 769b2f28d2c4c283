# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The `best` preset's segmentation walk, compiled: jusText's segmentation (§2.7.1, at the block
tags it is given) over libxml2's nodes.

One of the extraction's compiled modules (with _trees, _features and _classes), built by setup.py
when a C compiler and Python's headers are at hand; without it
:mod:`corpusbuilder.extraction.segmentation` runs its Python walk, which gives the same blocks
(tests/test_fastpath.py holds the two to each other on every gold page).

Why the segmentation is faster here: lxml's ``iterwalk`` makes a Python object of every element
and copies its text and tail into new strings at each event, and the Python loop then merges
the pieces. Here the text nodes are read where libxml2 keeps them and merged in one UTF-8 buffer
(the helpers of _text.pxd), which is normalised and counted in place; only what a block keeps
(its text, one str, and its path) becomes Python objects. Only libxml2's structs are read — no
libxml2 function is called, so this module does not link against the libxml2 inside lxml's own
extension.
"""

from libc.stdlib cimport free
from libc.string cimport memcmp, strcmp, strlen

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

from corpusbuilder.extraction._text cimport (
    Buffer,
    _append,
    _blank,
    _collapsed_length,
    _fnv1a,
    _normalized,
    _reserve,
    _utf8,
)


# The walk reads lxml's element structs and libxml2's nodes as the headers of the lxml it was
# built against lay them out; another lxml at run time makes the import fail, and the package
# then runs its Python walks.
if etree.__version__ != cetree.LXML_VERSION_STRING.decode():
    raise ImportError(f"corpusbuilder.extraction._walk was built against lxml {cetree.LXML_VERSION_STRING.decode()}, "
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


cdef ElementAttributes _attributes(xmlNode* c_node, object owner):
    cdef ElementAttributes attributes = ElementAttributes.__new__(ElementAttributes)
    attributes.c_node = c_node
    attributes.owner = owner
    return attributes


cdef inline int _append_text_node(Buffer* buffer, const xmlNode* c_node) except -1:
    return _append(buffer, <const char*> c_node.content, strlen(<const char*> c_node.content))


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
