"""Numbering values in Arrow, where a stage would reach for pandas' ``factorize``: a job that
needs nothing else of pandas then runs without importing it (`lazy_pandas`)."""

from __future__ import annotations

import numpy as np


def factorize(values) -> tuple[np.ndarray, np.ndarray]:
    """(each value's code, the distinct values: objects of strings, a numpy array of numbers),
    numbered in order of first appearance and a null -1, as pandas' ``factorize`` numbers them.
    ``values``: strings as a sequence, a numpy object array, an Arrow or a pandas column; or a
    numpy array of numbers. The codes are int32 (a dictionary's indices): a byte less a token
    than int64's on a shard of 17 M tokens."""
    import pyarrow as pa  # here: the tokeniser's callers outside a stage do not load it

    if isinstance(values, np.ndarray) and values.dtype != object:
        array = pa.array(values)  # numbers (hashes), as they are
    elif isinstance(values, (pa.Array, pa.ChunkedArray)):
        array = values.cast(pa.large_string())  # before combining: offsets may pass 2**31
    else:
        array = pa.array(values, pa.large_string())
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    encoded = array.dictionary_encode()
    indices = encoded.indices.fill_null(-1) if encoded.indices.null_count else encoded.indices
    return np.asarray(indices), encoded.dictionary.to_numpy(zero_copy_only=False)
