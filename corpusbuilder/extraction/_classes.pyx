# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""jusText's classification of a page's blocks, compiled: the context-free classes of Algorithm
2.2 and the final classes Algorithm 2.3 and the package's heading rule resolve from them
(§2.7.2–2.7.3).

One of the extraction's compiled modules (with _walk, _trees and _features), built by setup.py
when a C compiler and Python's headers are at hand; without it
:func:`corpusbuilder.extraction.justext.classify` runs its Python functions, which give the same
classes (tests/test_fastpath.py holds the two to each other on every gold page).
"""

import numpy as np

from corpusbuilder.extraction._text cimport _as_str


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
        text = _as_str(block.text)
        stop_density = block.stopword_density
        if block.link_density > max_link_density:
            cf[i] = CLASS_BAD
        elif "\xa9" in text or "&copy" in text:
            cf[i] = CLASS_BAD
        elif "select" in _as_str(block.dom_path):
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
