# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The `best` preset's walk of its gradient-boosted trees, compiled: each row's leaf values
summed over the trees, to the bit as numpy sums them.

One of the extraction's compiled modules (with _walk, _features and _classes), built by setup.py
when a C compiler and Python's headers are at hand; without it
:meth:`corpusbuilder.extraction.model.BlockModel._leaf_sums` walks the trees in numpy, with the
same sums (tests/test_fastpath.py holds the two to each other).
"""

import numpy as np

from corpusbuilder.extraction._sums cimport _pairwise_sum


cdef enum:
    LANES = 8  # rows walked side by side


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
