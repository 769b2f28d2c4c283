"""The `best` preset's model: gradient-boosted trees stored as plain numpy arrays
(``models/best.npz``), and the decision it makes over a page's rows (:func:`page_features`).

The trees are walked compiled where ``corpusbuilder.extraction._trees`` is built (with
numpy's results bit for bit), else all at once in numpy; scikit-learn fits them
(``corpusbuilder.evaluation.training``, rule ``train``) and is never needed here.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np

from corpusbuilder.common.package_data import SHIPPED_MODEL
from corpusbuilder.contracts.tables import BAD, GOOD
from corpusbuilder.extraction.classifier import FEATURE_NAMES, block_features, block_words
from corpusbuilder.extraction.peers import (
    PEER_FEATURE_NAMES,
    PeerRuns,
    peer_features,
    peer_texts,
)
from corpusbuilder.extraction.segmentation import Block

try:  # the compiled tree walk, built with the package where a C compiler was at hand (setup.py)
    # compiled from _trees.pyx at build time: mypy sees no module (and no stub) for it
    from corpusbuilder.extraction import _trees  # type: ignore[attr-defined]
except (ImportError, ValueError):  # ValueError: a C struct of lxml changed size
    _trees = None


def known_feature_names(names: tuple[str, ...]) -> bool:
    """Whether ``names`` are this version's block features, then some peers' columns
    (`peers.PEER_FEATURE_NAMES`, in that order): what a model or training blocks may read."""
    peers = names[len(FEATURE_NAMES) :]
    return names[: len(FEATURE_NAMES)] == FEATURE_NAMES and peers == tuple(
        p for p in PEER_FEATURE_NAMES if p in peers
    )


def same_columns(names: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
    """The one column naming of blocks joined into a table (the plain block features when there
    are none); blocks made with different extract.peers are an error."""
    distinct = set(names)
    if len(distinct) > 1:
        raise ValueError(
            "blocks with different feature columns joined: some were made with another "
            "extract.peers; delete the older ones (results/train, results/adapt) and rerun"
        )
    return distinct.pop() if distinct else FEATURE_NAMES


# What a second stage reads of the first stage's probabilities besides the block's own rows
# (:func:`stage_context`; docs/extraction-scope.md, variants 11 and 27).
CONTEXT_NAMES = (
    "stage1",
    "stage1@-2",
    "stage1@-1",
    "stage1@+1",
    "stage1@+2",
    "stage1_page_mean",
    "stage1_page_good",
    "stage1_vs_page",
    "stage1_max_before3",
    "stage1_max_after3",
    "stage1_between",
    "stage1_max_before",
    "stage1_max_after",
)
# Trees at most this deep may be walked compiled as complete trees (BlockModel.complete_trees, 2 **
# depth leaves each: 16 KiB a tree at 10); deeper ones node by node (BlockModel.walks_complete).
COMPLETE_DEPTH = 10
CONTEXT_REACH = 3  # blocks on each side whose highest probability stage1_max_*3 read
SECOND_STAGE = "second_stage."  # the prefix of the second stage's arrays in a model file
# every array a stage of a model file holds ("trained_on" is optional: older files lack it)
_REQUIRED_ARRAYS = (
    "feature",
    "threshold",
    "left",
    "right",
    "value",
    "roots",
    "meta",
    "feature_names",
)


def _running_max_by_page(page: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """The running maximum within each page (``page`` non-decreasing) of float32 values given
    as their bits, all pages in one pass over integer keys: the page above the bits, which
    order as the values do for values >= 0. Exact for any number of pages, so a page read among
    thousands (training) reads as it does alone."""
    key = np.maximum.accumulate((page.astype(np.int64) << 32) | bits)
    return (key & 0xFFFFFFFF).astype(np.int32).view(np.float32)


def stage_context(probability: np.ndarray, words: np.ndarray, page: np.ndarray) -> np.ndarray:
    """Per block, what the first stage said of it and around it (:data:`CONTEXT_NAMES`): its
    probability, its two neighbours' on each side, its page's word-weighted mean and share of
    words above .5, its distance from that mean, the highest before and after it within
    :data:`CONTEXT_REACH` blocks and on the whole page, and the lower of the two near ones (a
    block between content). A neighbour past the page's edge reads -1. ``page`` numbers each
    block's page, non-decreasing: one call reads many pages at once."""
    p = np.asarray(probability, dtype=np.float64)
    page = np.asarray(page)
    words = np.asarray(words, dtype=np.float64)
    n = len(p)
    if n == 0:
        return np.zeros((0, len(CONTEXT_NAMES)), dtype=np.float32)
    index = np.arange(n)
    first_of_page = np.ones(n, dtype=bool)
    first_of_page[1:] = page[1:] != page[:-1]
    dense = np.cumsum(first_of_page) - 1  # pages numbered 0, 1, … as bincount wants them
    start = np.maximum.accumulate(np.where(first_of_page, index, 0))
    last_of_page = np.append(first_of_page[1:], True)
    end = np.minimum.accumulate(np.where(last_of_page, index, n)[::-1])[::-1]
    # neighbours at offsets -REACH … REACH in one gather, -1 past the page's edge
    offsets = np.arange(-CONTEXT_REACH, CONTEXT_REACH + 1)
    source = index[:, None] + offsets
    near = np.concatenate([np.full(CONTEXT_REACH, -1.0), p, np.full(CONTEXT_REACH, -1.0)])[
        source + CONTEXT_REACH
    ]
    near[(source < start[:, None]) | (source > end[:, None])] = -1.0
    # np.maximum.reduce over a few columns: axis=1 reductions of small rows cost more
    before = np.maximum.reduce([near[:, CONTEXT_REACH - k] for k in range(1, CONTEXT_REACH + 1)])
    after = np.maximum.reduce([near[:, CONTEXT_REACH + k] for k in range(1, CONTEXT_REACH + 1)])
    weight = np.maximum(words, 1.0)
    page_words = np.bincount(dense, weight)
    mean = (np.bincount(dense, weight * p) / page_words)[dense]
    good = (np.bincount(dense, weight * (p > 0.5)) / page_words)[dense]
    bits = p.astype(np.float32).view(np.int32).astype(np.int64)
    max_through = _running_max_by_page(dense, bits)
    max_from = _running_max_by_page(dense[-1] - dense[::-1], bits[::-1])[::-1]
    max_before = np.concatenate([[-1.0], max_through[:-1]])
    max_before[first_of_page] = -1.0
    max_after = np.concatenate([max_from[1:], [-1.0]])
    max_after[last_of_page] = -1.0
    centre = CONTEXT_REACH
    columns = (
        p,
        near[:, centre - 2],
        near[:, centre - 1],
        near[:, centre + 1],
        near[:, centre + 2],
        mean,
        good,
        p - mean,
        before,
        after,
        np.minimum(before, after),
        max_before,
        max_after,
    )
    table = np.empty((n, len(CONTEXT_NAMES)), dtype=np.float32)
    for column, values in enumerate(columns):  # column by column: column_stack costs more
        table[:, column] = values
    return table


@dataclass(frozen=True)
class BlockModel:
    """Gradient-boosted trees as flat arrays: node i tests ``feature[i] <= threshold[i]``.

    ``left``/``right`` index the next node (a leaf points to itself); ``value`` is a leaf's
    contribution to the log-odds; ``roots`` are the trees' first nodes. Blocks whose probability
    of being content is at least ``threshold_good`` are kept (``threshold`` holds the nodes'
    split values); with a ``second_stage``, the probability it gives (:meth:`page_probabilities`).
    """

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    roots: np.ndarray
    depth: int
    baseline: float
    threshold_good: float
    feature_names: tuple[str, ...]
    trained_on: tuple[str, ...] = ()  # the gold sources it learned from: it is never scored on them
    # Trees that decide again from the rows and these trees' probabilities in their page's
    # context (:func:`stage_context`); None: these trees decide (train.stages).
    second_stage: BlockModel | None = None

    @property
    def peers(self) -> tuple[str, ...]:
        """The peers whose coverage of each block the model reads after the block features
        (extract.peers; `peers.PEER_FEATURE_NAMES`), in that order; () for the plain model."""
        return self.feature_names[len(FEATURE_NAMES) :]

    @cached_property
    def children(self) -> np.ndarray:
        """Node i's right child at 2 i, its left child at 2 i + 1 (built once per model), as intp:
        numpy would convert narrower indices on every gather."""
        return np.column_stack([self.right, self.left]).ravel().astype(np.intp)

    @cached_property
    def feature_index(self) -> np.ndarray:
        """``feature`` as intp, for the same reason."""
        return self.feature.astype(np.intp)

    @cached_property
    def float32_threshold(self) -> np.ndarray:
        """Split values as float32, each rounded down: a float32 feature x satisfies
        ``x <= threshold`` exactly when it satisfies ``x <= float32_threshold``, so the float32
        rows `block_features` gives are compared without widening them."""
        narrow = self.threshold.astype(np.float32)
        return np.where(narrow > self.threshold, np.nextafter(narrow, np.float32(-np.inf)), narrow)

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """P(content) per row of ``features``: the leaves' values summed as log-odds."""
        if len(features) == 0:
            return np.zeros(0)
        if features.ndim != 2 or features.shape[1] <= self.highest_feature_column:
            raise ValueError(
                f"features of shape {features.shape}: the model reads column "
                f"{self.highest_feature_column}"
            )
        return 1.0 / (1.0 + np.exp(-(self.baseline + self._leaf_sums(features))))

    def page_probabilities(
        self, features: np.ndarray, words: np.ndarray, page: np.ndarray | None = None
    ) -> np.ndarray:
        """P(content) per block: these trees' :meth:`probabilities`, or, with a second stage, its
        reading of them in their page's context. ``words``: each block's words (the page's
        mean weighs them); ``page``: each block's page, non-decreasing (None: all one page)."""
        first = self.probabilities(features)
        if self.second_stage is None:
            return first
        page = np.zeros(len(first), dtype=np.int64) if page is None else page
        context = stage_context(first, words, page).astype(features.dtype)
        return self.second_stage.probabilities(np.column_stack([features, context]))

    @cached_property
    def highest_feature_column(self) -> int:
        """The highest feature column a split reads."""
        return int(self.feature.max(initial=0))

    def _leaf_sums(self, features: np.ndarray) -> np.ndarray:
        """Each row's leaf values summed over the trees in numpy's pairwise order, whose rounding
        the shipped model's outputs were taken with: compiled for the float32 rows
        `block_features` gives, when the compiled module is there, else summed along the rows of
        the C-ordered (rows × trees) values."""
        if _trees is not None and features.dtype == np.float32 and self.value.dtype == np.float64:
            rows = np.ascontiguousarray(features)
            if self.walks_complete:
                return _trees.complete_tree_sums(rows, *self.complete_trees, self.depth)
            return _trees.tree_sums(
                rows,
                self.feature_index,
                self.float32_threshold,
                self.children,
                self.root_index,
                self.depth,
                self.value,
            )
        return self.value[self._leaves(features)].sum(axis=1)

    @cached_property
    def walks_complete(self) -> bool:
        """Whether the compiled walk reads the trees laid out complete: where that layout is no
        larger than the node-by-node one, as the point of it is less model read per page. About
        16 bytes a place of a complete tree (a split's int32 feature and float32 value, a
        leaf's float64) against 36 a node (its intp feature, float32 threshold, two intp
        children and float64 value); sparse deep trees (31 leaves at depth 10) stay node by
        node."""
        complete_bytes = len(self.roots) * (16 << self.depth)
        return self.depth <= COMPLETE_DEPTH and complete_bytes <= 36 * len(self.feature)

    @cached_property
    def complete_trees(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The trees as complete binary trees of ``depth`` levels, for the compiled walk: per
        tree, its splits' features (int32) and float32 values in level order, node i's children
        at 2 i + 1 (left) and 2 i + 2, then the value of each of its 2 ** depth leaves.

        A leaf above the last level stands in for a subtree whose every path ends at it (its
        split reads column 0, and either way leads to it), so each row reaches the leaf value
        the node-by-node walk reaches, NaN or not.
        """
        trees, inner = len(self.roots), (1 << self.depth) - 1
        feature = np.zeros((trees, max(inner, 1)), dtype=np.int32)
        split = np.zeros((trees, max(inner, 1)), dtype=np.float32)
        nodes = self.root_index[:, None]  # the node at each place of the level, per tree
        for level in range(self.depth):
            places = slice((1 << level) - 1, (2 << level) - 1)
            feature[:, places] = np.where(self.left[nodes] == nodes, 0, self.feature[nodes])
            split[:, places] = self.float32_threshold[nodes]
            nodes = np.stack([self.left[nodes], self.right[nodes]], axis=2).reshape(trees, -1)
        return feature, split, np.ascontiguousarray(self.value[nodes])

    @cached_property
    def root_index(self) -> np.ndarray:
        """``roots`` as intp."""
        return self.roots.astype(np.intp)

    def _leaves(self, features: np.ndarray) -> np.ndarray:
        """The leaf each row reaches in each tree (rows × trees): all trees walked at once, one
        level per step.

        Flat indexing: a row's feature f sits at ``row * width + f``, and node i's children at
        ``children[2 i + go_left]``, so each level is four gathers over (rows × trees), done with
        ``np.take`` into buffers allocated once; every index is in range, and ``mode="clip"``
        spares numpy the check and the copy ``mode="raise"`` makes.
        """
        if features.dtype == np.float32:
            flat, threshold = np.ascontiguousarray(features).ravel(), self.float32_threshold
        else:
            flat, threshold = (
                np.ascontiguousarray(features, dtype=np.float64).ravel(),
                self.threshold,
            )
        row_starts = (np.arange(len(features), dtype=np.intp) * features.shape[1])[:, None]
        nodes = np.repeat(self.root_index[None, :], len(features), axis=0)
        index = np.empty_like(nodes)
        values = np.empty(nodes.shape, dtype=flat.dtype)
        split_values = np.empty(nodes.shape, dtype=flat.dtype)
        go_left = np.empty(nodes.shape, dtype=bool)
        for _ in range(self.depth):
            np.take(self.feature_index, nodes, out=index, mode="clip")
            index += row_starts
            np.take(flat, index, out=values, mode="clip")
            np.take(threshold, nodes, out=split_values, mode="clip")
            np.less_equal(values, split_values, out=go_left)
            np.multiply(nodes, 2, out=index)
            index += go_left
            np.take(self.children, index, out=nodes, mode="clip")
        return nodes

    def _arrays(self, prefix: str = "") -> dict[str, np.ndarray]:
        arrays = {
            "feature": self.feature,
            "threshold": self.threshold,
            "left": self.left,
            "right": self.right,
            "value": self.value,
            "roots": self.roots,
            "meta": np.array([self.depth, self.baseline, self.threshold_good]),
            "feature_names": np.array(self.feature_names),
            "trained_on": np.array(self.trained_on, dtype=str),
        }
        arrays = {prefix + key: value for key, value in arrays.items()}
        if self.second_stage is not None:
            arrays.update(self.second_stage._arrays(prefix + SECOND_STAGE))
        return arrays

    def save(self, path: Path | str) -> None:
        # numpy's stub reads the arrays' names as possibly its allow_pickle flag: they never are
        np.savez_compressed(path, **self._arrays())  # type: ignore[arg-type]

    @classmethod
    def load(cls, path: Path | str) -> BlockModel:
        if Path(path).is_file() and not zipfile.is_zipfile(path):
            raise ValueError(f"{path}: not a model file (a .npz archive written by train)")
        with np.load(path) as data:
            # any array of the second stage's makes the file one of two stages, all of whose
            # arrays it must then hold
            two_stages = any(key.startswith(SECOND_STAGE) for key in data)
            prefixes = ("", SECOND_STAGE) if two_stages else ("",)
            missing = [
                prefix + key
                for prefix in prefixes
                for key in _REQUIRED_ARRAYS
                if prefix + key not in data
            ]
            if missing:
                raise ValueError(
                    f"{path}: a model file lacks {', '.join(missing)}; retrain it (snakemake train)"
                )
            model = cls._of_arrays(data, path)
            names = model.feature_names
            if not known_feature_names(names):
                raise ValueError(
                    f"{path}: model was trained on other features than this version "
                    "computes; retrain it (snakemake train)"
                )
            if two_stages:
                second = cls._of_arrays(data, path, SECOND_STAGE)
                if second.feature_names != names + CONTEXT_NAMES:
                    raise ValueError(
                        f"{path}: the second stage reads other columns than this version gives "
                        "it; retrain it (snakemake train)"
                    )
                model = replace(model, second_stage=second)
            return model

    @classmethod
    def _of_arrays(cls, data, path: Path | str, prefix: str = "") -> BlockModel:
        depth, baseline, threshold_good = data[prefix + "meta"]
        trained_on = prefix + "trained_on"
        model = cls(
            data[prefix + "feature"],
            data[prefix + "threshold"].astype(np.float64),
            data[prefix + "left"],
            data[prefix + "right"],
            data[prefix + "value"],
            data[prefix + "roots"],
            int(depth),
            float(baseline),
            float(threshold_good),
            tuple(str(n) for n in data[prefix + "feature_names"]),
            tuple(str(s) for s in data[trained_on]) if trained_on in data else (),
        )
        if model.highest_feature_column >= len(model.feature_names):
            raise ValueError(
                f"{path}: the trees read column {model.highest_feature_column}, but the model "
                f"names {len(model.feature_names)} features; retrain it (snakemake train)"
            )
        return model


@lru_cache(maxsize=4)
def load_model(path: Path | None = None) -> BlockModel:
    """A model file, loaded once per process; None = the one inside the package
    (``models/best.npz``)."""
    return BlockModel.load(SHIPPED_MODEL if path is None else path)


def classify_learned(
    blocks: list[Block],
    title: str = "",
    model: BlockModel | None = None,
    peers: np.ndarray | None = None,
) -> list[str]:
    """``good`` or ``bad`` per block, as the `best` preset decides. ``peers``: the blocks'
    `peers.peer_features` for ``model.peers``, which only a model of extract.peers reads."""
    model = model or load_model()
    features = block_features(blocks, title)
    if peers is not None and not model.peers:
        raise ValueError("peer features given to a model that reads none (extract.peers: none)")
    if model.peers:
        peers = None if peers is None else np.asarray(peers, dtype=features.dtype)
        if peers is None or peers.shape != (len(blocks), len(model.peers)):
            raise ValueError(
                f"the model reads the coverage by {', '.join(model.peers)} (extract.peers) of "
                "each block: pass peers.peer_features"
            )
        features = np.column_stack([features, peers])
    # only a second stage reads the words (its page mean weighs them): not counted for one stage
    words = block_words(blocks) if model.second_stage is not None else np.zeros(0)
    keep = model.page_probabilities(features, words) >= model.threshold_good
    return [GOOD if k else BAD for k in keep]


def page_peer_features(
    blocks: list[Block],
    html: str,
    peers: tuple[str, ...],
    comments: bool = True,
    peer_runs: PeerRuns | None = None,
) -> np.ndarray | None:
    """The blocks' coverage by each of ``peers`` (extract.peers), run on the page's decoded
    ``html`` (trafilatura keeps comments as ``comments`` says; counted into ``peer_runs``); None
    when ``peers`` is empty. What the extract stage, the training blocks and the self-training
    sample all read."""
    if not peers:
        return None
    return peer_features([b.text for b in blocks], peer_texts(html, comments, peers, peer_runs))


def page_features(
    blocks: list[Block],
    title: str,
    html: str,
    peers: tuple[str, ...],
    comments: bool = True,
    peer_runs: PeerRuns | None = None,
) -> np.ndarray:
    """A page's rows as a model reading ``peers`` takes them: `classifier.block_features`, then
    :func:`page_peer_features`' columns (counted into ``peer_runs``)."""
    features = block_features(blocks, title)
    extra = page_peer_features(blocks, html, peers, comments, peer_runs)
    return features if extra is None else np.column_stack([features, extra]).astype(features.dtype)


def classify_page(
    blocks: list[Block],
    title: str,
    html: str,
    model: BlockModel,
    comments: bool = True,
    peer_runs: PeerRuns | None = None,
) -> list[str]:
    """:func:`classify_learned` on a page's blocks, the peers run on its decoded ``html`` first
    when the model reads them (:func:`page_peer_features`, counted into ``peer_runs``)."""
    return classify_learned(
        blocks, title, model, page_peer_features(blocks, html, model.peers, comments, peer_runs)
    )
