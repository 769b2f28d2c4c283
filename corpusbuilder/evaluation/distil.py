"""Distilling the stacked model into `best` alone (config section ``train.distil``; not in the
thesis, whose classifier has no learned part).

`best` with ``extract.peers: all`` reads trafilatura's, readability-lxml's and resiliparse's
output as block features. It is the better extractor on pages it never saw, and about fifteen
times slower (docs/extraction-scope.md). Here it is the teacher of `best` alone: it labels the
blocks of pages nobody annotated, and those blocks join the gold blocks as one more source,
weighing ``weight`` gold sources, to fit the student, which reads the block features only. The
teacher's labels are its decisions at its own ``threshold_good`` (``hard``, what the workflow
uses), or its probabilities (``soft``, measured in bench/bench_distil.py: each block twice,
content weighted by the teacher's probability and boilerplate by its complement, so the student
learns how sure the teacher was). The student keeps the student's features and tree sizes, so
it extracts as fast as before.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from corpusbuilder.config import ConfigError, dataclass_values
from corpusbuilder.evaluation.training import (
    TrainingTable,
    TrainParams,
    fit_trees,
    gold_source_weight,
)
from corpusbuilder.extraction.adapt import UnlabelledBlocks
from corpusbuilder.extraction.model import BlockModel

TEACHERS = ("none", "peers-all")  # train.distil.teacher: none trains on the gold blocks alone
LABELS = ("hard", "soft")  # the teacher's labels: its decisions or its probabilities
TEACHER_GROUP = "teacher-labelled"  # the source name of the teacher's blocks in a table


@dataclass(frozen=True)
class DistilParams:
    """Which teacher labels the unlabelled pages, and how much its blocks weigh."""

    teacher: str = "none"
    weight: float = 1.0  # the teacher's blocks weigh this many gold sources
    pages: int = 500  # crawl pages drawn for the teacher to label (rule distil_sample)

    def __post_init__(self) -> None:
        if self.teacher not in TEACHERS:
            raise ConfigError(
                f"config key 'train.distil.teacher' must be one of {', '.join(TEACHERS)}, "
                f"not {self.teacher!r}"
            )
        if not self.weight > 0:
            raise ConfigError(f"config key 'train.distil.weight' must be > 0, not {self.weight!r}")

    @classmethod
    def from_config(cls, section: dict) -> DistilParams:
        return cls(**dataclass_values(cls, section))


def teacher_probabilities(teacher: BlockModel, pages: UnlabelledBlocks) -> np.ndarray:
    """The teacher's probability that each block of ``pages`` is content."""
    if pages.feature_names != teacher.feature_names:
        raise ConfigError(
            "config key 'train.distil': the teacher reads "
            f"{', '.join(teacher.peers) or 'no peer'} ({len(teacher.feature_names)} columns), "
            f"the pages to label carry {len(pages.feature_names)} columns: read them with the "
            "teacher's extract.peers"
        )
    return teacher.page_probabilities(pages.features, pages.words, pages.page)


def teacher_labels(teacher: BlockModel, pages: UnlabelledBlocks) -> np.ndarray:
    """1 content, 0 boilerplate for each block of ``pages``, as the teacher would extract it."""
    return (teacher_probabilities(teacher, pages) >= teacher.threshold_good).astype(np.int8)


def distilled_table(
    table: TrainingTable, pages: UnlabelledBlocks, content: np.ndarray, weight: float
) -> TrainingTable:
    """``table`` (the student's gold blocks) and the teacher-labelled ``pages`` as one more source
    weighing ``weight`` gold sources in all, each block its words' share of it. ``content``: each
    block's share labelled content, 1 or 0 (hard labels) or the teacher's probability (soft: a
    block is a content row of that share of its weight and a boilerplate row of the rest, and a
    hard label is one row, in the pages' order). The student reads the first of the pages'
    columns: the block features, before the peers'."""
    width = len(table.feature_names)
    if pages.feature_names[:width] != table.feature_names:
        raise ValueError(
            "the pages the teacher labelled do not start with the student's features "
            f"({width} columns)"
        )
    if len(content) != len(pages.words):
        raise ValueError(f"{len(content)} teacher labels for {len(pages.words)} blocks")
    content = np.asarray(content, dtype=np.float64)
    positive, negative = np.flatnonzero(content > 0), np.flatnonzero(content < 1)
    both = np.concatenate([positive, negative])
    order = np.argsort(both, kind="stable")  # a block's content row before its boilerplate row
    rows = both[order]
    labels = np.concatenate([np.ones(len(positive)), np.zeros(len(negative))])[order]
    share_of = np.where(labels == 1, content[rows], 1 - content[rows])
    words = pages.words.astype(np.float64)
    share = weight * gold_source_weight(table) / max(float(words.sum()), 1.0)
    pages_from = 0 if table.page is None else int(table.page.max(initial=-1)) + 1
    return TrainingTable(
        np.concatenate([table.features, pages.features[rows, :width]]).astype(np.float32),
        np.concatenate([table.labels, labels]).astype(np.int8),
        np.concatenate([table.weights, words[rows] * share_of * share]),
        np.concatenate([table.group, np.full(len(rows), TEACHER_GROUP, dtype=object)]),
        table.feature_names,
        None if table.words is None else np.concatenate([table.words, words[rows]]),
        None if table.page is None else np.concatenate([table.page, pages.page[rows] + pages_from]),
    )


def distil(
    table: TrainingTable,
    pages: UnlabelledBlocks,
    teacher: BlockModel,
    params: TrainParams,
    weight: float,
    without: str | None = None,
    labels: str = "hard",
) -> BlockModel:
    """The student: trees fitted on ``table``'s gold blocks (without the gold source
    ``without``) and ``pages``' blocks as ``teacher`` labels them, weighing ``weight`` gold
    sources (``train.distil.weight``), its ``labels`` hard or soft. A held-out student's teacher
    must be held out from the same source, and the pages hold none of that source's: the caller
    sees to both."""
    if params.stages != 1:
        raise ConfigError("config key 'train.distil' fits a student of one stage (train.stages: 1)")
    if labels not in LABELS:
        raise ValueError(f"the teacher's labels are one of {', '.join(LABELS)}, not {labels!r}")
    soft = labels == "soft"
    content = teacher_probabilities(teacher, pages) if soft else teacher_labels(teacher, pages)
    return fit_trees(distilled_table(table, pages, content, weight), params, without=without)
