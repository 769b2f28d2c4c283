# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# The text helpers the compiled modules share, inline in each module that cimports them (a cdef
# function called from another module goes through a pointer): the UTF-8 buffers the walk
# (_walk.pyx) gathers, tests and normalises a block's text in, FNV-1a of bytes, and the check
# that a value is a str the loops of _features.pyx and _classes.pyx may read code point by code
# point.

from libc.stdlib cimport realloc
from libc.string cimport memcpy, strlen


cdef inline str _utf8(const unsigned char* text):
    return (<const char*> text)[:strlen(<const char*> text)].decode("utf8")


cdef inline str _as_str(object value):
    """A str the loops may read code point by code point (a str subclass is one too)."""
    if not isinstance(value, str):
        raise TypeError(f"expected str, not {type(value).__name__}")
    return <str> value


cdef struct Buffer:
    char* data
    size_t length
    size_t capacity


cdef inline int _reserve(Buffer* buffer, size_t needed) except -1:
    cdef char* grown
    if needed > buffer.capacity:
        grown = <char*> realloc(buffer.data, needed * 2 + 64)
        if grown is NULL:
            raise MemoryError()
        buffer.data = grown
        buffer.capacity = needed * 2 + 64
    return 0


cdef inline int _append(Buffer* buffer, const char* text, size_t size) except -1:
    _reserve(buffer, buffer.length + size)
    memcpy(buffer.data + buffer.length, text, size)
    buffer.length += size
    return 0


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


cdef inline bint _blank(const Buffer* text) noexcept:
    """str.isspace of the text (True for none, where the Python walk has no piece at all)."""
    cdef size_t i = 0, step
    cdef const unsigned char* data = <const unsigned char*> text.data
    while i < text.length:
        step = _space_at(data + i, text.length - i)
        if step == 0:
            return False
        i += step
    return True


cdef inline size_t _collapsed_length(const Buffer* text) noexcept:
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


cdef inline int _normalized(const Buffer* text, Buffer* out) except -1:
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
