# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# numpy's pairwise summation, which the tree walk (_trees.pyx) and the features (_features.pyx)
# both sum in: inline in each, so neither calls it through a pointer.


cdef inline double _pairwise_sum(const double* values, Py_ssize_t count) noexcept:
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
