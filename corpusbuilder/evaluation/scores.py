"""Run extractors over the gold sets and write the evaluation tables (thesis §2.9, Fig. 2.7).

``results/stats/boilerplate.tsv`` — one row per (extractor, dataset), plus dataset "all"
micro-averaged over every page of the run; ``fragmentation.tsv`` — Table 2.11 per (extractor,
dataset); ``sweep.tsv`` / ``sweep.png`` — jusText's precision and recall as one threshold at a
time moves away from the default preset (Fig. 2.7 in small).
"""

from __future__ import annotations

import csv
import logging
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from corpusbuilder.common.identifiers import identify_sample
from corpusbuilder.common.io import atomic_path
from corpusbuilder.config import ConfigError, dataclass_values
from corpusbuilder.extraction.extract import ExtractParams
from corpusbuilder.extraction.justext import PRESETS, JustextParams
from corpusbuilder.extraction.model import BlockModel, load_model
from corpusbuilder.extraction.peers import require_peers

from .extractors import (
    EXTRACTORS,
    Extraction,
    Extractor,
    PreparedPage,
    available,
    decoded_html,
    justext_kept,
    learned_with,
    prepare_page,
)
from .gold import READERS, GoldPage, gold_source, iter_dataset
from .metrics import (
    Counts,
    aligned_word_counts,
    bag_of_words_counts,
    fragmentation,
    scores,
    snippet_counts,
)

log = logging.getLogger(__name__)

# Scored on each gold set with a model held out from its source: `best` as trained, and
# `best-adapted` after self-training on the set's pages (evaluation.training.self_train).
ADAPTED = "best-adapted"
LEARNED = ("best", ADAPTED)


@dataclass(frozen=True)
class EvaluateConfig:
    """The workflow's `evaluate` config section."""

    gold_dir: Path = Path("../shared/datasets/boilerplate")
    datasets: tuple[str, ...] = tuple(READERS)
    extractors: tuple[str, ...] = (*LEARNED, *(name for name in EXTRACTORS if name not in LEARNED))
    max_pages: int = 0  # per dataset; 0 = all
    sweep_dataset: str = "cleaneval-dev"

    @classmethod
    def from_config(cls, section: dict) -> EvaluateConfig:
        values = dataclass_values(cls, section)
        config = replace(
            cls(**values),
            gold_dir=Path(values.get("gold_dir", cls.gold_dir)),
            datasets=tuple(values.get("datasets", cls.datasets)),
            extractors=tuple(values.get("extractors", cls.extractors)),
        )
        unknown = [d for d in (*config.datasets, config.sweep_dataset) if d not in READERS]
        unknown += [e for e in config.extractors if e not in EXTRACTORS and e not in LEARNED]
        if unknown:
            raise ValueError(f"evaluate: unknown dataset or extractor: {', '.join(unknown)}")
        return config


@dataclass
class Tally:
    """One extractor's counts over a set of pages (sums, so tallies add up: micro-averaging)."""

    pages: int = 0
    failures: int = 0  # pages whose extractor raised (scored as empty output)
    words: Counts = Counts()
    bag: Counts = Counts()
    snippets: Counts = Counts()
    fragments: list[list[int]] | None = field(default_factory=list)
    seconds: float = 0.0

    def __add__(self, other: Tally) -> Tally:
        both = (
            None
            if self.fragments is None or other.fragments is None
            else self.fragments + other.fragments
        )
        return Tally(
            self.pages + other.pages,
            self.failures + other.failures,
            self.words + other.words,
            self.bag + other.bag,
            self.snippets + other.snippets,
            both,
            self.seconds + other.seconds,
        )


def score_page(tally: Tally, page: GoldPage, extraction: Extraction) -> None:
    """Add one page's counts: text measures where the page has gold text,
    snippets where it has snippets."""
    tally.pages += 1
    if page.gold_text is not None:
        tally.words += aligned_word_counts(extraction.text, page.gold_text)
        tally.bag += bag_of_words_counts(extraction.text, page.gold_text)
    if page.with_snippets or page.without_snippets:
        tally.snippets += snippet_counts(extraction.text, page.with_snippets, page.without_snippets)
    if extraction.fragments is None:
        tally.fragments = None
    elif tally.fragments is not None:
        tally.fragments.append(extraction.fragments)


def evaluate_pages(
    pages: Iterable[GoldPage],
    extractors: Sequence[Extractor],
    params: ExtractParams = ExtractParams(),
    by_language: dict[str, dict[str, Tally]] | None = None,
) -> dict[str, Tally]:
    """Run every extractor on every page and tally its scores and time (and, given
    ``by_language``, its scores per guessed page language: {language: {extractor: Tally}}).

    Decoding is timed for every extractor, block preparation (parse, language, segmentation)
    only for those that read blocks, each reading's for its own readers, so seconds per extractor
    are what running it alone would cost.
    An external extractor that raises scores an empty output for the page and is counted in
    ``failures``; our own extractors' errors propagate, since they are bugs.
    """
    tallies = {extractor.name: Tally() for extractor in extractors}
    readings = sorted({e.reading for e in extractors if e.reading is not None})
    # the language model loads once per process, not inside the first page of whichever extractor
    # guesses first (our readings, or the justext package picking its stop list)
    identify_sample("warm up")
    for page in pages:
        started = time.perf_counter()
        html = decoded_html(page, params)
        decode_seconds = time.perf_counter() - started
        # Without a block extractor the page is not parsed, language-guessed or segmented (its
        # per-language tallies fall under "unknown"), but the peers still need its text: an
        # empty page here once scored every peer 0 when none of ours was chosen.
        prepared: dict[str | None, PreparedPage] = {
            None: PreparedPage(html, None, [], "", params=params)
        }
        prepare_seconds: dict[str | None, float] = {None: 0.0}
        for reading in readings:
            started = time.perf_counter()
            prepared[reading] = prepare_page(html, params, reading)
            prepare_seconds[reading] = time.perf_counter() - started
        language = prepared[readings[0]].language if readings else ""
        for extractor in extractors:
            tally = tallies[extractor.name]
            started = time.perf_counter()
            try:
                extraction = extractor.run(prepared[extractor.reading])
            except Exception as error:  # noqa: BLE001 - third-party code, see docstring
                if extractor.module is None:
                    raise
                log.warning(
                    "%s failed on %s %s: %r", extractor.name, page.dataset, page.page_id, error
                )
                tally.failures += 1
                extraction = Extraction("")
            tally.seconds += (
                time.perf_counter() - started + decode_seconds + prepare_seconds[extractor.reading]
            )
            score_page(tally, page, extraction)
            if by_language is not None:
                tallies_of_language = by_language.setdefault(language or "unknown", {})
                score_page(
                    tallies_of_language.setdefault(extractor.name, Tally(fragments=None)),
                    page,
                    extraction,
                )
    return tallies


def resolve_extractors(names: Iterable[str]) -> list[Extractor]:
    """The named extractors that can run here; an optional one not
    installed is skipped with a note."""
    chosen = []
    for name in names:
        if available(name):
            chosen.append(EXTRACTORS[name])
        else:
            log.info(
                "extractor %s skipped: package %s not installed", name, EXTRACTORS[name].module
            )
    return chosen


@dataclass
class Evaluation:
    """Tallies per dataset, then per extractor; and per dataset, page language, extractor."""

    results: dict[str, dict[str, Tally]]
    by_language: dict[str, dict[str, dict[str, Tally]]]


def learned_for(
    dataset: str,
    held_out: Mapping[str, BlockModel] | None,
    name: str = "best",
    comments: bool = True,
) -> Extractor:
    """The learned extractor ``name`` as scored on ``dataset``: with its model held out from the
    set's gold source. Without held-out models, `best` is the model shipped for the scope of
    ``comments``, named "best (in-sample)" when it learned from that source, since its score then
    says nothing about unseen pages; `best-adapted` has no such stand-in."""
    source = gold_source(dataset)
    if held_out is None:
        if name == ADAPTED:
            raise ValueError(
                f"evaluate: {ADAPTED} is scored only with models held out from each source and "
                "adapted to its pages (rule adapt_held_out)"
            )
        model = load_model(ExtractParams(comments=comments).model_file)
        return learned_with(
            model, "best (in-sample)" if source in model.trained_on else "best", comments
        )
    if source not in held_out:
        raise ValueError(
            f"evaluate: no {name} model held out from {source} (the source of {dataset})"
        )
    if source in held_out[source].trained_on:
        raise ValueError(f"evaluate: the {name} model held out from {source} was trained on it")
    return learned_with(held_out[source], name, comments)


def evaluate(
    config: EvaluateConfig,
    held_out: Mapping[str, Mapping[str, BlockModel]] | None = None,
    comments: bool | None = None,
    params: ExtractParams = ExtractParams(),
) -> Evaluation:
    """Every configured extractor on every configured dataset. ``held_out`` maps each learned
    extractor (`best`, `best-adapted`) to its models by the gold source each was held out from
    (:func:`learned_for`). ``comments``: the scope of `extract.comments` the gold is read for
    where a set annotates comments apart (`gold.iter_dataset`). ``params``: how pages are read
    (decoding, the language guess, the stop list; `extract.READING_KEYS`)."""
    fixed = {
        e.name: e
        for e in resolve_extractors(name for name in config.extractors if name not in LEARNED)
    }
    names = [name for name in config.extractors if name in LEARNED or name in fixed]
    if held_out is None and ADAPTED in names:
        log.info(
            "extractor %s skipped: it is scored only with held-out models adapted to each source "
            "(rule adapt_held_out)",
            ADAPTED,
        )
        names.remove(ADAPTED)
    peers = {p for models in (held_out or {}).values() for m in models.values() for p in m.peers}
    try:  # the held-out models' peers run on every page: a missing one fails here, not mid-set
        require_peers(sorted(peers))
    except ImportError as error:
        raise ConfigError(f"config key 'extract.peers': the held-out models {error}") from None
    evaluation = Evaluation({}, {})
    for dataset in config.datasets:
        started = time.perf_counter()
        pages = iter_dataset(dataset, config.gold_dir, config.max_pages, comments)
        mine = [
            learned_for(
                dataset,
                None if held_out is None else held_out.get(name, {}),
                name,
                comments is not False,
            )
            if name in LEARNED
            else fixed[name]
            for name in names
        ]
        evaluation.results[dataset] = evaluate_pages(
            pages, mine, params, by_language=evaluation.by_language.setdefault(dataset, {})
        )
        count = next(iter(evaluation.results[dataset].values())).pages if mine else 0
        log.info(
            "%s: %d pages, %d extractors, %.1f s",
            dataset,
            count,
            len(mine),
            time.perf_counter() - started,
        )
    return evaluation


def with_overall(results: dict[str, dict[str, Tally]]) -> dict[str, dict[str, Tally]]:
    """The per-dataset tallies plus dataset "all": each extractor's
    tallies summed (micro-average)."""
    overall: dict[str, Tally] = {}
    for tallies in results.values():
        for name, tally in tallies.items():
            overall[name] = overall[name] + tally if name in overall else tally
    return {**results, "all": overall} if len(results) > 1 else dict(results)


# --- tables -------------------------------------------------------------------------------------

BOILERPLATE_COLUMNS = (
    "extractor",
    "dataset",
    "pages",
    "failures",
    "word_precision",
    "word_recall",
    "word_f1",
    "word_f05",
    "bow_precision",
    "bow_recall",
    "bow_f1",
    "bow_f05",
    "snippet_precision",
    "snippet_recall",
    "snippet_f1",
    "seconds",
    "pages_per_second",
)
LANGUAGE_COLUMNS = ("language", *BOILERPLATE_COLUMNS[:-2])
FRAGMENTATION_COLUMNS = (
    "extractor",
    "dataset",
    "documents",
    "fragments",
    "mean_fragment_chars",
    "median_fragment_chars",
    "fragments_per_document",
)
SWEEP_COLUMNS = (
    "parameter",
    "value",
    "is_default",
    "pages",
    "word_precision",
    "word_recall",
    "word_f1",
    "word_f05",
    "bow_precision",
    "bow_recall",
    "bow_f1",
)


def _measured(prefix: str, counts: Counts, with_f05: bool = True) -> dict:
    """Scores of one measure, or nothing (blank cells) when no page had that kind of gold."""
    if counts.gold == 0 and counts.output == 0:
        return {}
    measured = scores(counts)
    row = {
        f"{prefix}_precision": measured.precision,
        f"{prefix}_recall": measured.recall,
        f"{prefix}_f1": measured.f1,
    }
    if with_f05:
        row[f"{prefix}_f05"] = measured.f05
    return row


def boilerplate_rows(results: dict[str, dict[str, Tally]]) -> list[dict]:
    rows = []
    for dataset, tallies in results.items():
        for name, tally in tallies.items():
            rows.append(
                {
                    "extractor": name,
                    "dataset": dataset,
                    "pages": tally.pages,
                    "failures": tally.failures,
                    **_measured("word", tally.words),
                    **_measured("bow", tally.bag),
                    **_measured("snippet", tally.snippets, with_f05=False),
                    "seconds": tally.seconds,
                    "pages_per_second": tally.pages / tally.seconds if tally.seconds else math.nan,
                }
            )
    return rows


def language_rows(by_language: dict[str, dict[str, dict[str, Tally]]]) -> list[dict]:
    """boilerplate_rows per (dataset, page language), the language in its own column."""
    return [
        {"language": language, **row}
        for dataset, languages in by_language.items()
        for language, tallies in sorted(languages.items())
        for row in boilerplate_rows({dataset: tallies})
    ]


def fragmentation_rows(results: dict[str, dict[str, Tally]]) -> list[dict]:
    """Table 2.11 per (extractor, dataset), for extractors that report their kept blocks."""
    rows = []
    for dataset, tallies in results.items():
        for name, tally in tallies.items():
            if tally.fragments is None:
                continue
            summary = fragmentation(tally.fragments)
            rows.append(
                {
                    "extractor": name,
                    "dataset": dataset,
                    "documents": summary.documents,
                    "fragments": summary.fragments,
                    "mean_fragment_chars": summary.mean_length,
                    "median_fragment_chars": summary.median_length,
                    "fragments_per_document": summary.fragments_per_document,
                }
            )
    return rows


def _cell(value) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.4f}"
    return "" if value is None else str(value)


def write_tsv(rows: Iterable[dict], columns: Sequence[str], path: Path | str) -> None:
    """Rows as a tab-separated table with a header; missing or undefined values are empty cells."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow([_cell(row.get(column)) for column in columns])


# --- the parameter sweep (Fig. 2.7 in small) ----------------------------------------------------

# Around the default preset (lengths in characters, as the default counts them).
SWEEP_GRID: dict[str, tuple[float, ...]] = {
    "length_low": (0, 10, 30, 50, 70, 100, 150, 200),
    "length_high": (70, 100, 150, 200, 300, 400, 600),
    "stopwords_low": (0.0, 0.1, 0.2, 0.25, 0.3, 0.35, 0.4),
    "stopwords_high": (0.1, 0.2, 0.25, 0.3, 0.32, 0.35, 0.4, 0.5),
    "max_link_density": (0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0),
}
_PARTNERS = {"length_low": "length_high", "stopwords_low": "stopwords_high"}


def vary_one(base: JustextParams, parameter: str, value: float) -> JustextParams:
    """``base`` with one threshold changed; its low/high partner follows if the pair would cross.

    Algorithm 2.2 reads LOW ≤ HIGH (a block long enough for HIGH is long enough for LOW), so
    moving one past the other drags the other along instead of producing an incoherent pair.
    """
    varied = replace(base, **{parameter: type(getattr(base, parameter))(value)})
    for low, high in _PARTNERS.items():
        if getattr(varied, low) > getattr(varied, high):
            fixed = high if parameter == low else low
            varied = replace(varied, **{fixed: getattr(varied, parameter)})
    return varied


def sweep(
    pages: Sequence[GoldPage],
    grid: Mapping[str, Sequence[float]] = SWEEP_GRID,
    base: JustextParams = PRESETS["default"],
    params: ExtractParams = ExtractParams(),
) -> list[dict]:
    """jusText's scores on ``pages`` for each grid value of each threshold, the others at ``base``.

    Pages are segmented once: blocks do not depend on the thresholds, only their classes do.
    """
    prepared = [(page, prepare_page(decoded_html(page, params), params).blocks) for page in pages]
    rows = []
    for parameter, values in grid.items():
        for value in values:
            varied = vary_one(base, parameter, value)
            words, bag = Counts(), Counts()
            for page, blocks in prepared:
                kept = justext_kept(blocks, varied)
                text = "\n".join(block.text for block, keep in zip(blocks, kept) if keep)
                words += aligned_word_counts(text, page.gold_text or "")
                bag += bag_of_words_counts(text, page.gold_text or "")
            rows.append(
                {
                    "parameter": parameter,
                    "value": value,
                    "is_default": int(value == getattr(base, parameter)),
                    "pages": len(prepared),
                    **_measured("word", words),
                    **_measured("bow", bag, with_f05=False),
                }
            )
    return rows


def plot_sweep(rows: Sequence[dict], path: Path | str) -> None:
    """One panel per threshold: word-level precision and recall
    against its value, default marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    parameters = list(dict.fromkeys(row["parameter"] for row in rows))
    figure, axes = plt.subplots(
        1, len(parameters), figsize=(3.2 * len(parameters), 3.2), sharey=True, squeeze=False
    )
    for axis, parameter in zip(axes[0], parameters):
        mine = [row for row in rows if row["parameter"] == parameter]
        values = [row["value"] for row in mine]
        for measure, style in (("word_precision", "o-"), ("word_recall", "s--"), ("word_f1", "^:")):
            axis.plot(
                values,
                [row.get(measure, math.nan) for row in mine],
                style,
                label=measure.removeprefix("word_"),
                markersize=4,
            )
        for row in mine:
            if row["is_default"]:
                axis.axvline(row["value"], color="grey", linewidth=0.8)
        axis.set_title(parameter, fontsize=9)
        axis.grid(alpha=0.3)
    axes[0][0].set_ylabel("word-level score")
    axes[0][0].legend(fontsize=8)
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=110)
    plt.close(figure)
