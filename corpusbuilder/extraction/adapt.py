"""Self-training the `best` preset on the crawl it is about to extract (rules ``adapt_sample``
and ``adapt``; config section ``adapt``).

The shipped classifier learned from eight gold sources; a crawl is a ninth that it never saw.
Rule ``adapt_sample`` draws pages from each shard at random and cuts them into blocks exactly as
the extract stage does; rule ``adapt`` lets the model label those blocks and refits it on the gold
blocks plus the ones it was sure of (``evaluation.training.self_train``). Extract then runs with
the adapted model. Not in the thesis: its classifier has no learned part to adapt.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from corpusbuilder.common.stoplists import writes_without_spaces
from corpusbuilder.extraction.classifier import FEATURE_NAMES, block_words
from corpusbuilder.extraction.extract import (
    ExtractParams,
    TooManyBlocksError,
    UndecodableError,
    WarcRecord,
    iter_warc_records,
    segmented_page,
)
from corpusbuilder.extraction.model import known_feature_names, page_features, same_columns
from corpusbuilder.extraction.peers import PeerRuns

log = logging.getLogger(__name__)


@dataclass
class UnlabelledBlocks:
    """Every block of some drawn pages, unlabelled: what self-training labels. ``page`` numbers
    each block's page among ``pages`` drawn, so pages are sampled whole; a drawn page that cannot
    be a target (no text, :func:`is_target`) counts as drawn and holds no block, so the crawl's
    sample and a gold source's are drawn and thinned alike."""

    features: np.ndarray
    words: np.ndarray
    page: np.ndarray
    pages: int
    feature_names: tuple[str, ...] = FEATURE_NAMES  # the block features, then extract.peers'

    @classmethod
    def of_pages(
        cls,
        pages: Sequence[tuple[np.ndarray, np.ndarray] | None],
        feature_names: tuple[str, ...] = FEATURE_NAMES,
    ) -> UnlabelledBlocks:
        """From ``(features, words)`` per drawn page, None for a page left out."""
        kept = [(i, page) for i, page in enumerate(pages) if page is not None]
        if any(f.shape[1] != len(feature_names) for _, (f, _) in kept):
            raise ValueError(f"pages' features are not {len(feature_names)} columns wide")
        return cls(
            np.concatenate([f for _, (f, _) in kept], dtype=np.float32)
            if kept
            else np.zeros((0, len(feature_names)), dtype=np.float32),
            np.concatenate([np.zeros(0), *(w for _, (_, w) in kept)], dtype=np.float64),
            np.concatenate(
                [np.zeros(0, np.int32), *(np.full(len(w), i, np.int32) for i, (_, w) in kept)]
            ),
            len(pages),
            feature_names,
        )

    @classmethod
    def joined(cls, parts: Sequence[UnlabelledBlocks]) -> UnlabelledBlocks:
        """Several parts as one, their pages numbered on."""
        empty = cls.of_pages([], same_columns(part.feature_names for part in parts))
        offsets = np.cumsum([0] + [part.pages for part in parts])
        return cls(
            np.concatenate([empty.features, *(p.features for p in parts)]),
            np.concatenate([empty.words, *(p.words for p in parts)]),
            np.concatenate([empty.page, *(p.page + o for p, o in zip(parts, offsets))]).astype(
                np.int32
            ),
            int(offsets[-1]),
            empty.feature_names,
        )

    @property
    def target_pages(self) -> int:
        """Drawn pages with blocks (not left out)."""
        return len(np.unique(self.page))

    def sample(self, pages: int, seed: int) -> UnlabelledBlocks:
        """The blocks of ``pages`` pages drawn at random (all of them when there are no more)."""
        if self.pages <= pages:
            return self
        chosen = np.zeros(self.pages, dtype=bool)
        chosen[np.random.default_rng(seed).choice(self.pages, pages, replace=False)] = True
        mine = chosen[self.page]
        renumbered = (np.cumsum(chosen) - 1).astype(np.int32)
        return UnlabelledBlocks(
            self.features[mine],
            self.words[mine],
            renumbered[self.page[mine]],
            pages,
            self.feature_names,
        )

    def save(self, path: Path | str) -> None:
        np.savez_compressed(
            path,
            features=self.features,
            words=self.words,
            page=self.page,
            pages=np.array(self.pages),
            feature_names=np.array(self.feature_names),
        )

    @classmethod
    def load(cls, path: Path | str) -> UnlabelledBlocks:
        with np.load(path) as data:
            names = tuple(str(n) for n in data["feature_names"])
            if (
                "pages" not in data.files
                or not known_feature_names(names)
                or data["features"].shape[1] != len(names)
            ):
                raise ValueError(
                    f"{path}: blocks of an older format or feature set; delete it and rerun"
                )
            return cls(data["features"], data["words"], data["page"], int(data["pages"]), names)


def is_target(language: str) -> bool:
    """Whether pages of ``language`` can be self-training targets. Not those of a language
    written without spaces: blocks weigh their whitespace words, which there say nothing of a
    block's length, and the model's confident labels of such pages drift to boilerplate round by
    round (fundus' Japanese pages: F1 .695 held out, .265 after adapting to all of fundus' pages,
    .762 with them left out)."""
    return not writes_without_spaces(language)


def sample_pages(
    warcs: Iterable[Path], pages: int, seed: int | Sequence[int], params: ExtractParams
) -> list[WarcRecord]:
    """``pages`` records drawn uniformly from the pages (records with a body to clean) of the
    WARCs, in one pass (reservoir sampling, Vitter's algorithm R)."""
    rng = np.random.default_rng(seed)
    chosen: list[WarcRecord] = []
    seen = 0
    for path in warcs:
        for record in iter_warc_records(path, params):
            if record.body is None:
                continue
            seen += 1
            if len(chosen) < pages:
                chosen.append(record)
            elif (slot := int(rng.integers(seen))) < pages:
                chosen[slot] = record
    log.info("%d pages drawn from %d", len(chosen), seen)
    return chosen


def crawl_blocks(
    records: Sequence[WarcRecord], params: ExtractParams
) -> tuple[UnlabelledBlocks, dict[str, int]]:
    """The blocks' features of the drawn pages, segmented as the extract stage segments them, and
    the pages left out (drawn, with no block) by reason: those the extract stage skips too, and
    those :func:`is_target` refuses."""
    pages: list[tuple[np.ndarray, np.ndarray] | None] = []
    skipped: dict[str, int] = {}
    runs = PeerRuns()
    for record in records:
        assert record.body is not None, "sample_pages draws records with a body only"
        try:
            page = segmented_page(record.body, record.http_charset, params)
        except (UndecodableError, TooManyBlocksError) as error:
            reason = str(error).split(":", 1)[0]
        except (OSError, MemoryError):
            raise
        except Exception as error:  # noqa: BLE001 - one hostile page must not stop the sample
            log.exception("record %d: segmentation failed", record.record_index)
            reason = f"error-{type(error).__name__}"
        else:
            if not page.blocks:
                reason = "no-text"
            elif not is_target(page.language):
                reason = "language-without-spaces"
            else:
                features = page_features(
                    page.blocks, page.title, page.html, params.peer_columns, params.comments, runs
                )
                pages.append((features, block_words(page.blocks)))
                continue
        skipped[reason] = skipped.get(reason, 0) + 1
        pages.append(None)
    runs.check("the self-training sample")
    return UnlabelledBlocks.of_pages(pages, params.feature_names), skipped
