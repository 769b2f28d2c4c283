"""Training the `best` preset's block classifier from the gold sets (rule ``train``).

Gold sets give clean text per page, not a label per block, so blocks are labelled by aligning
the gold text (in `common.scripts` units: a character each in scripts without spaces) to the
blocks the `best` preset reads (jusText's segmentation, also cut at HTML5's
block-level elements): a block is content when most of its words sit in word
trigrams of the gold text (a short block: when its whole text appears in the gold text). The
snippet set labels a block content when it covers a snippet that must be kept, boilerplate when
it covers one that must not, and leaves the rest out. Blocks are weighted by their words, since
the evaluation counts words.

Models are judged leave-one-source-out: the evaluation scores each gold set with a model trained
without its whole source (:func:`gold_source`), so a score says how the classifier does on pages
from a source it never saw. Needs scikit-learn (the
``train`` extra); the fitted trees are exported to ``model.BlockModel``'s numpy arrays.

:func:`self_train` adapts a model to the pages it is about to extract (rules ``adapt`` and
``adapt_held_out``): the model labels those pages' blocks, its confident labels join the gold
blocks as one more source, the trees are refitted, and so on for a few rounds. No gold label of
the target pages is read, so the held-out evaluation can score it the way a crawl gets it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from corpusbuilder.common.scripts import unit_tokens
from corpusbuilder.config import ConfigError, dataclass_values
from corpusbuilder.evaluation.extractors import LEARNED_BLOCKS, decoded_html, prepare_page
from corpusbuilder.evaluation.gold import GoldPage, fits_scope, gold_source
from corpusbuilder.extraction.adapt import UnlabelledBlocks, is_target
from corpusbuilder.extraction.classifier import (
    FEATURE_NAMES,
    block_words,
    page_title,
)
from corpusbuilder.extraction.extract import ExtractParams
from corpusbuilder.extraction.model import (
    CONTEXT_NAMES,
    BlockModel,
    known_feature_names,
    page_features,
    same_columns,
    stage_context,
)
from corpusbuilder.extraction.peers import (
    LABEL_NGRAM,
    PeerRuns,
    contained,
    coverage,
    trigrams,
)
from corpusbuilder.extraction.segmentation import Block

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)

CONTENT_COVERAGE = 0.5  # share of a block's words in gold trigrams that makes it content


@dataclass(frozen=True)
class TrainParams:
    """Gradient boosting settings (scikit-learn's HistGradientBoostingClassifier) and the seed."""

    max_iter: int = 200
    learning_rate: float = 0.075
    max_depth: int = 6
    min_samples_leaf: int = 40
    l2_regularization: float = 1.0
    # Bins per feature. On a weighted table of up to 200,000 blocks scikit-learn finds each bin
    # edge with a call of its own that sorts the column again (at 255: ~8 s a fit of 600 blocks,
    # ~27 s of 200,000; a larger table is subsampled by weight and binned at once): tests of how
    # a fit behaves, on a few pages, use fewer.
    max_bins: int = 255
    seed: int = 1
    threshold_good: float = (
        0.6  # the best held-out mean F1 whose F0.5 is at least its F1: leaning to precision
    )
    # 2: a second set of trees decides again from the rows and the first trees' probabilities
    # in the page's context (`model.stage_context`), fitted on first-stage probabilities
    # cross-fitted by gold source (docs/extraction-scope.md, variant 27).
    stages: int = 1

    def __post_init__(self) -> None:
        if self.stages not in (1, 2):
            raise ConfigError(f"config key 'train.stages' must be 1 or 2, not {self.stages!r}")

    @classmethod
    def from_config(cls, section: dict) -> TrainParams:
        return cls(**dataclass_values(cls, section))


@dataclass(frozen=True)
class AdaptParams:
    """Self-training on the target pages (config section ``adapt``; not in the thesis, whose
    classifier has no learned part). Defaults: the best held-out mean F1 of the rounds tried
    (docs/best-preset.md, "Self-training on the crawl's own pages")."""

    rounds: int = 4  # label, refit; each round labels with the last round's model
    confidence: float = 0.8  # a block is a pseudo-label when p >= confidence or p <= 1 - confidence
    pages: int = 500  # target pages sampled (the crawl's, spread over its shards; a gold source's)

    @classmethod
    def from_config(cls, section: dict) -> AdaptParams:
        return cls(**dataclass_values(cls, section))


def block_labels(blocks: list[Block], page: GoldPage) -> np.ndarray:
    """1 content, 0 boilerplate, -1 unknown per block (see the module docstring).

    A snippet marks the blocks that hold most of it, or that it mostly covers (by trigrams)."""
    labels = np.full(len(blocks), -1, dtype=np.int8)
    if page.gold_text is not None:
        gold_words = unit_tokens(page.gold_text.lower())
        grams = trigrams(gold_words)
        spaced = f" {' '.join(gold_words)} "
        for i, block in enumerate(blocks):
            words = unit_tokens(block.text.lower())
            if len(words) >= LABEL_NGRAM:
                labels[i] = coverage(words, grams) >= CONTENT_COVERAGE
            else:
                labels[i] = contained(words, spaced)
        return labels
    block_grams = [trigrams(unit_tokens(block.text.lower())) for block in blocks]
    for label, snippets in ((1, page.with_snippets), (0, page.without_snippets)):
        for snippet in snippets:
            grams = trigrams(unit_tokens(snippet.lower()))
            for i, mine in enumerate(block_grams):
                if (
                    grams
                    and mine
                    and len(grams & mine) >= CONTENT_COVERAGE * min(len(grams), len(mine))
                ):
                    # a block holding both kinds of snippet teaches nothing: left out
                    labels[i] = label if labels[i] in (-1, label) else -2
    labels[labels == -2] = -1
    return labels


@dataclass
class TrainingPage:
    """A gold page cut into the `best` preset's blocks, with each block's features and label."""

    gold: GoldPage
    blocks: list[Block]
    features: np.ndarray
    labels: np.ndarray
    language: str = ""  # guessed, as the extract stage guesses it to pick the stop list
    feature_names: tuple[str, ...] = FEATURE_NAMES  # the block features, then extract.peers'


def training_pages(
    pages: Iterable[GoldPage], params: ExtractParams = ExtractParams()
) -> list[TrainingPage]:
    """Decode and segment each page as the extract stage does, then compute features (with the
    columns of ``params.peers``, run in the scope of ``params.comments``) and labels."""
    params.check_peers()
    prepared = []
    runs = PeerRuns()
    for number, gold in enumerate(pages, start=1):
        if number % (25 if params.peer_columns else 250) == 0:
            log.info("%s: %d pages segmented and labelled", gold.dataset, number)
        page = prepare_page(decoded_html(gold, params), params, LEARNED_BLOCKS)
        prepared.append(
            TrainingPage(
                gold,
                page.blocks,
                page_features(
                    page.blocks,
                    page_title(page.root),
                    page.html,
                    params.peer_columns,
                    params.comments,
                    runs,
                ),
                block_labels(page.blocks, gold),
                page.language,
                params.feature_names,
            )
        )
    runs.check(", ".join(sorted({page.gold.dataset for page in prepared})) or "gold pages")
    return prepared


def unlabelled_blocks(pages: Sequence[TrainingPage]) -> UnlabelledBlocks:
    """The gold pages as the held-out self-training's target, labels dropped: every block of each
    page in a language :func:`adapt.is_target` accepts, none of the others (drawn all the same,
    as the crawl's pages are)."""
    return UnlabelledBlocks.of_pages(
        [
            (page.features, block_words(page.blocks)) if is_target(page.language) else None
            for page in pages
        ],
        same_columns(page.feature_names for page in pages),
    )


@dataclass
class TrainingTable:
    """Features, labels (-1: unknown, weight 0) and weights of the gold pages' blocks, and the
    gold source of each; a second stage also reads each block's words and page (numbered on
    through the table, so a page's blocks are consecutive)."""

    features: np.ndarray
    labels: np.ndarray
    weights: np.ndarray
    group: np.ndarray
    feature_names: tuple[str, ...] = FEATURE_NAMES  # the features' columns, as a model names them
    words: np.ndarray | None = None
    page: np.ndarray | None = None

    def rows(self, keep: np.ndarray) -> TrainingTable:
        """The table of the rows ``keep`` selects."""
        return TrainingTable(
            self.features[keep],
            self.labels[keep],
            self.weights[keep],
            self.group[keep],
            self.feature_names,
            None if self.words is None else self.words[keep],
            None if self.page is None else self.page[keep],
        )


def _joined(arrays: list[np.ndarray], empty: np.ndarray) -> np.ndarray:
    """``np.concatenate``, or ``empty`` when there is nothing to join (a set of empty pages)."""
    return np.concatenate(arrays) if arrays else empty


def training_blocks(pages: Sequence[TrainingPage]) -> dict[str, np.ndarray]:
    """Every block of one gold set's pages as arrays, the unknown ones labelled -1 and each
    numbered with its page: a second stage reads a labelled block's neighbours whatever their
    label (what rule ``training_blocks`` stores)."""
    names = same_columns(page.feature_names for page in pages)
    return {
        "features": _joined([page.features for page in pages], np.zeros((0, len(names)))),
        "labels": _joined([page.labels for page in pages], np.zeros(0, dtype=np.int8)),
        "words": _joined([block_words(page.blocks) for page in pages], np.zeros(0)),
        "page": _joined(
            [np.full(len(page.labels), i, dtype=np.int32) for i, page in enumerate(pages)],
            np.zeros(0, dtype=np.int32),
        ),
        "feature_names": np.array(names),
    }


def write_training_blocks(pages: Sequence[TrainingPage], dataset: str, path: Path | str) -> None:
    # numpy's stub reads the arrays' names as possibly its allow_pickle flag: they never are
    np.savez_compressed(path, dataset=np.array(dataset), **training_blocks(pages))  # type: ignore[arg-type]


def read_training_table(paths: Iterable[Path | str], comments: bool | None = None) -> TrainingTable:
    """The blocks of several gold sets, each written by :func:`write_training_blocks`, for a
    scope (:func:`weighted_table`). Blocks written by an earlier version hold only the labelled
    blocks, without pages: they serve a first stage as they are, and a second stage asks for
    them to be made again."""
    parts = []
    for path in paths:
        with np.load(path) as data:
            if not known_feature_names(tuple(str(n) for n in data["feature_names"])):
                raise ValueError(f"{path}: blocks of an older feature set; delete it and rerun")
            parts.append({key: data[key] for key in data.files})
    return weighted_table(parts, comments)


def training_table(pages: Sequence[TrainingPage]) -> TrainingTable:
    """Every block of ``pages`` (of any gold sets), weighted as :func:`weighted_table` says (an
    unknown one weighs nothing)."""
    by_set: dict[str, list[TrainingPage]] = {}
    for page in pages:
        by_set.setdefault(page.gold.dataset, []).append(page)
    return weighted_table(
        [{"dataset": np.array(name), **training_blocks(mine)} for name, mine in by_set.items()]
    )


# A comment container's blocks shorter than this that a set labels boilerplate are its controls
# ("Reply", "Leave a Reply", "Name *"): boilerplate in both scopes, unlike a reader's comment.
# Kept, they cost nothing leave-one-source-out and stop the scope with comments keeping them
# (docs/extraction-scope.md, variant 8).
FORM_WORDS = 5


def in_scope(part: dict[str, np.ndarray], comments: bool) -> dict[str, np.ndarray]:
    """A gold set's blocks labelled as a scope reads them, when its annotators took reader
    comments the other way (`gold.COMMENTS_IN_GOLD`); L3S-GN1, which annotates comments apart, is
    labelled from the scope's gold when its blocks are made.

    - The article scope reads a set that keeps comments (CleanEval) with the blocks in its comment
      containers (the ``hint_comment`` feature) as boilerplate: they are the comments the article
      leaves out. Without them the article model saw few comments to leave out and kept most of
      L3S-GN1's (docs/extraction-scope.md, variant 25).
    - The scope with comments cannot read a set that drops comments so: its comment containers'
      blocks labelled boilerplate may be comments, which this scope keeps. They are unlabelled
      (-1), but for their short controls (:data:`FORM_WORDS`)."""
    if fits_scope(str(part["dataset"]), comments):
        return part
    labels = part["labels"]
    hinted = (part["features"][:, FEATURE_NAMES.index("hint_comment")] != 0) & (labels >= 0)
    if not comments:
        return {**part, "labels": np.where(hinted, 0, labels).astype(labels.dtype)}
    unknown = hinted & ~((labels == 0) & (part["words"] < FORM_WORDS))
    return {**part, "labels": np.where(unknown, -1, labels).astype(labels.dtype)}


def weighted_table(
    parts: Sequence[dict[str, np.ndarray]], comments: bool | None = None
) -> TrainingTable:
    """One table of the gold sets' blocks. A labelled block weighs its words, and every gold
    source weighs the same in total, so the small snippet set counts as much as the large
    CleanEval; an unknown block (label -1) weighs nothing. ``comments``: the scope to label for
    (:func:`in_scope`); None takes every label as it is. Every part names the same
    ``feature_names`` (absent: the plain block features) and numbers its blocks' ``page``s
    from 0 (absent from any: the table has no pages, and serves a first stage only)."""
    import pandas as pd

    feature_names = same_columns(
        tuple(str(n) for n in part.get("feature_names", FEATURE_NAMES)) for part in parts
    )
    if comments is not None:
        parts = [in_scope(part, comments) for part in parts]
    group = _joined(
        [
            np.full(len(part["labels"]), gold_source(str(part["dataset"])), dtype=object)
            for part in parts
        ],
        np.zeros(0, dtype=object),
    )
    labels = _joined([part["labels"] for part in parts], np.zeros(0)).astype(np.int8)
    words = _joined([part["words"] for part in parts], np.zeros(0)).astype(np.float64)
    known = labels >= 0
    weights = np.where(known, words, 0.0)
    sources = pd.unique(group[known])
    for name in sources:
        mine = group == name
        weights[mine] *= known.sum() / (weights[mine].sum() * len(sources))
    page = None  # parts without pages (blocks of a single page each) serve a first stage only
    if all("page" in part for part in parts):
        first = np.cumsum([0] + [int(part["page"].max(initial=-1)) + 1 for part in parts])
        page = _joined(
            [part["page"] + offset for part, offset in zip(parts, first)], np.zeros(0)
        ).astype(np.int64)
    return TrainingTable(
        _joined([part["features"] for part in parts], np.zeros((0, len(feature_names)))).astype(
            np.float32
        ),
        labels,
        weights,
        group,
        feature_names,
        words,
        page,
    )


def gold_source_weight(table: TrainingTable) -> float:
    """What one gold source weighs in all (`weighted_table`): a machine-labelled source's weight."""
    import pandas as pd

    known = table.labels >= 0
    return float(table.weights[known].sum() / max(len(pd.unique(table.group[known])), 1))


def self_train(
    table: TrainingTable,
    target: UnlabelledBlocks,
    model: BlockModel,
    params: TrainParams = TrainParams(),
    adapt: AdaptParams = AdaptParams(),
    target_name: str = "target",
) -> BlockModel:
    """``model`` adapted to the ``target`` pages by self-training (see the module docstring).

    Each round, ``model`` labels the blocks of ``adapt.pages`` sampled target pages; those it is
    sure of (``adapt.confidence``) join ``table`` as one more source, weighing what one gold
    source weighs, and the trees are refitted on it all. A model of two stages labels with both
    and refits its first; the second, fitted on the gold sources' cross-fitted probabilities,
    stays. Returns the last round's model."""
    if not target.feature_names == table.feature_names == model.feature_names:
        raise ConfigError(
            "config key 'extract.peers': the model to adapt reads "
            f"{', '.join(model.peers) or 'no peer'}, the gold blocks "
            f"{', '.join(table.feature_names[len(FEATURE_NAMES) :]) or 'no peer'}, the target "
            f"pages {', '.join(target.feature_names[len(FEATURE_NAMES) :]) or 'no peer'}; all "
            "three must be made with the same extract.peers (and extract.model read as many)"
        )
    target = target.sample(adapt.pages, params.seed)
    source_weight = gold_source_weight(table)
    group = f"self-labelled:{target_name}"
    for number in range(1, adapt.rounds + 1):
        probability = model.page_probabilities(target.features, target.words, target.page)
        sure = (probability >= adapt.confidence) | (probability <= 1 - adapt.confidence)
        words = target.words[sure]
        if not words.sum():
            log.warning(
                "round %d: no block of the %d target pages (of %d drawn) is labelled with "
                "confidence %.2f; the model stays as it is",
                number,
                target.target_pages,
                target.pages,
                adapt.confidence,
            )
            break
        labels = (probability[sure] >= adapt.confidence).astype(np.int8)
        log.info(
            "round %d: %d of %d target blocks self-labelled (%.0f %% of their words content)",
            number,
            int(sure.sum()),
            len(sure),
            100 * float(words[labels == 1].sum() / words.sum()),
        )
        first_stage = fit_trees(
            TrainingTable(
                np.concatenate([table.features, target.features[sure]]),
                np.concatenate([table.labels, labels]),
                np.concatenate([table.weights, words * (source_weight / words.sum())]),
                np.concatenate([table.group, np.full(len(labels), group, dtype=object)]),
                table.feature_names,
            ),
            params,
        )
        model = (
            first_stage
            if model.second_stage is None
            else replace(first_stage, second_stage=model.second_stage)
        )
    return model


def fit(
    table: TrainingTable, params: TrainParams = TrainParams(), without: str | None = None
) -> BlockModel:
    """The `best` preset's model of ``params.stages`` on the table, or on all of it but one gold
    source. Where fewer than two sources are left to cross-fit a second stage on (a held-out
    model of two gold sources), the first stage alone, with a warning."""
    if params.stages == 2:
        _words_and_pages(table)  # before the first stage's fit, not after it
    first_stage = fit_trees(table, params, without)
    if params.stages == 1:
        return first_stage
    if len(cross_fitted_sources(table, without)) < 2:
        log.warning(
            "train.stages: 2 needs first-stage probabilities cross-fitted by gold source, and "
            "the table%s holds one source: the model has one stage",
            f" without {without}" if without else "",
        )
        return first_stage
    return replace(
        first_stage,
        second_stage=fit_trees(second_stage_table(table, params, without), params, without),
    )


def _words_and_pages(table: TrainingTable) -> tuple[np.ndarray, np.ndarray]:
    """The blocks' words and pages a second stage reads; training blocks of an earlier version
    lack them."""
    if table.words is None or table.page is None:
        raise ValueError(
            "a second stage (train.stages: 2) reads each block's page, which training blocks "
            "of an earlier version lack: delete results/train/blocks and rerun"
        )
    return table.words, table.page


def cross_fitted_sources(table: TrainingTable, without: str | None) -> list[str]:
    """The gold sources a second stage's first-stage probabilities are cross-fitted over."""
    import pandas as pd

    return [s for s in pd.unique(table.group[table.labels >= 0]) if s != without]


def second_stage_table(
    table: TrainingTable, params: TrainParams, without: str | None = None
) -> TrainingTable:
    """The table with :func:`model.stage_context`'s columns after the features: each gold source's
    first-stage probabilities from trees fitted without it (and without ``without``), so the
    second stage learns how far to trust the first on pages it never saw, as it will be used."""
    words, page = _words_and_pages(table)
    sources = cross_fitted_sources(table, without)
    if len(sources) < 2:
        raise ConfigError(
            "config key 'train.stages': a second stage is fitted on first-stage probabilities "
            "cross-fitted by gold source, and needs at least two sources (train.datasets)"
        )
    context = np.zeros((len(table.labels), len(CONTEXT_NAMES)), dtype=np.float32)
    rest = table.rows(table.group != without) if without is not None else table
    for source in sources:
        log.info(
            "second stage: first-stage probabilities of %s, from trees fitted without it", source
        )
        mine = table.group == source
        try:
            first = fit_trees(rest, params, source).probabilities(table.features[mine])
        except ValueError as error:
            raise ValueError(
                f"second stage (train.stages: 2), first-stage trees fitted without {source} "
                f"to cross-fit its probabilities: {error}"
            ) from None
        context[mine] = stage_context(first, words[mine], page[mine])
    return TrainingTable(
        np.column_stack([table.features, context]),
        table.labels,
        table.weights,
        table.group,
        table.feature_names + CONTEXT_NAMES,
        table.words,
        table.page,
    )


def fit_trees(
    table: TrainingTable, params: TrainParams = TrainParams(), without: str | None = None
) -> BlockModel:
    """Gradient-boosted trees on the table's labelled blocks, or on all of them but one gold
    source's, as a BlockModel of one stage."""
    import pandas as pd

    try:
        from sklearn.ensemble import HistGradientBoostingClassifier
    except ImportError:
        raise ImportError(
            "training and adapting the best preset's model need scikit-learn: "
            "pip install 'corpusbuilder[train]'"
        ) from None

    mask = (table.group != without) & (table.labels >= 0)
    if not mask.any() or len(np.unique(table.labels[mask])) < 2:
        left = ", ".join(sorted(pd.unique(table.group[mask]))) or "none"
        raise ValueError(
            "training needs content and boilerplate blocks from at least one gold source"
            + (f" besides {without}" if without else "")
            + f"; the labelled blocks left come from: {left} (config key train.datasets)"
        )
    classifier = HistGradientBoostingClassifier(
        max_iter=params.max_iter,
        learning_rate=params.learning_rate,
        max_depth=params.max_depth,
        min_samples_leaf=params.min_samples_leaf,
        l2_regularization=params.l2_regularization,
        max_bins=params.max_bins,
        early_stopping=False,
        random_state=params.seed,
    )
    weights = table.weights[mask]
    if without is not None and (table.group == without).any():
        # weighted_table shared the weight out among every source, the one left out here too;
        # the rest are scaled to what weighted_table gives them alone, so that this model is
        # the one trained without that source's blocks (the trees' regularisation is absolute)
        weights = weights * (mask.sum() / weights.sum())
    log.info("fitting %d trees on %d blocks", params.max_iter, int(mask.sum()))
    classifier.fit(table.features[mask], table.labels[mask], sample_weight=weights)
    return export_trees(
        classifier, params, tuple(sorted(pd.unique(table.group[mask]))), table.feature_names
    )


def export_trees(
    classifier,
    params: TrainParams,
    trained_on: tuple[str, ...],
    feature_names: tuple[str, ...],
) -> BlockModel:
    """Flatten scikit-learn's fitted trees into BlockModel arrays (leaves point to themselves)."""
    feature, threshold, left, right, value, roots = [], [], [], [], [], []
    depth = 0
    offset = 0
    for (predictor,) in classifier._predictors:  # one tree per iteration for a binary target
        nodes = predictor.nodes
        size = len(nodes)
        leaf = nodes["is_leaf"].astype(bool)
        index = np.arange(size)
        feature.append(np.where(leaf, 0, nodes["feature_idx"]))
        threshold.append(np.where(leaf, np.inf, nodes["num_threshold"]))
        left.append(np.where(leaf, index, nodes["left"]) + offset)
        right.append(np.where(leaf, index, nodes["right"]) + offset)
        value.append(np.where(leaf, nodes["value"], 0.0))
        roots.append(offset)
        depth = max(depth, int(nodes["depth"].max()))
        offset += size
    return BlockModel(
        np.concatenate(feature).astype(np.int32),
        np.concatenate(threshold).astype(np.float64),
        np.concatenate(left).astype(np.int32),
        np.concatenate(right).astype(np.int32),
        np.concatenate(value).astype(np.float64),
        np.array(roots, dtype=np.int32),
        depth,
        float(np.ravel(classifier._baseline_prediction)[0]),
        params.threshold_good,
        feature_names,
        trained_on,
    )
