# The hashes the compiled quality modules (_cut, _lines, _ngrams) share: FNV-1a over code points,
# and Fibonacci hashing of a 64-bit hash to a table's slot. (The constants are typed locals: a
# literal above 2 ** 63 in an expression would be computed with Python ints.)

from libc.stdint cimport uint64_t


cdef inline uint64_t fnv_offset() noexcept:
    cdef uint64_t offset = 0xCBF29CE484222325
    return offset


cdef inline uint64_t fnv_prime() noexcept:
    cdef uint64_t prime = 0x100000001B3
    return prime


cdef inline uint64_t fnv_step(uint64_t key, uint64_t value) noexcept:
    return (key ^ value) * fnv_prime()


cdef inline uint64_t fib_slot(uint64_t key, int shift) noexcept:
    """The slot of ``key`` in a table of 2 ** (64 - shift) slots: the top bits of its product
    with 2 ** 64 / the golden ratio (which spreads keys that differ in their low bits)."""
    cdef uint64_t golden = 0x9E3779B97F4A7C15
    return (key * golden) >> shift
