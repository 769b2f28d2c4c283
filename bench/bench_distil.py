"""`train.distil`: the stacked model (`best` with `extract.peers: all`) as the teacher of `best`
alone, measured leave-one-source-out in both scopes against `best` alone without a teacher and
against trafilatura in the same scope (docs/extraction-scope.md's protocol, every source scored).

Pages the teacher labels (the unlabelled pool):

* every gold page, its gold labels unread (bench_peers' cache of the gold sets, read with every
  peer);
* the dev crawl's pages that are not a gold page's bytes (``near``: re-templated copies,
  ``aggregate``: index pages of several originals' first paragraphs, ``quote``: forum pages
  quoting one; the crawl's originals are the gold pages byte for byte and its mirrors their exact
  copies, so they add nothing to the pool).

For the fold scored on source S the teacher is fitted without S, and every pool page of S (its
gold pages, and each crawl page made from one of S's pages) is left out of the pool: the
student sees neither S's labels nor the teacher's view of S's pages, as on the held-out pages.
Each student (``--students``) is a variant: the teacher's labels hard (its decisions) or soft
(its probabilities, `distil.distilled_table`), the weight of its blocks in gold sources, the pool
of pages written with spaces only (``-spaced``, as the workflow's distil_sample draws it), and
the pool with S's own pages (``-own``, labels unread: the workflow's ``train.distil`` labels the
crawl it then extracts, where a shipped model never sees the pages it will extract).
Quick fits (bench_scope.QUICK) for teacher and students alike, unless ``--full``. Run by hand:

    PYTHONPATH=. python bench/bench_peers.py --cache /tmp/peers base   # reads the gold sets once
    PYTHONPATH=. python bench/bench_distil.py --cache /tmp/peers --students hard-w1 soft-w3-spaced

Scores: bag-of-words F1 (a character of Chinese, Japanese or Thai a token), snippet F1 on
trafilatura-dev; a scope's figure is the mean over its sets. Raw numbers: bench/results/distil.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import pickle
import re
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from corpusbuilder.common.stoplists import writes_without_spaces
from corpusbuilder.evaluation.distil import LABELS, distil, teacher_labels
from corpusbuilder.evaluation.extractors import (
    LEARNED_BLOCKS,
    Extraction,
    decoded_html,
    extraction_of_blocks,
    prepare_page,
)
from corpusbuilder.evaluation.gold import READERS, GoldPage, fits_scope, gold_source
from corpusbuilder.evaluation.metrics import scores
from corpusbuilder.evaluation.scores import Tally, score_page
from corpusbuilder.evaluation.training import TrainingTable, TrainParams, fit, weighted_table
from corpusbuilder.extraction.adapt import UnlabelledBlocks, is_target
from corpusbuilder.extraction.extract import ExtractParams
from corpusbuilder.extraction.model import BlockModel
from corpusbuilder.extraction.warc import iter_warc_records

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_peers import blocks_part, page_record, read_set, stacked, variants  # noqa: E402
from bench_scope import QUICK, REPO, figure, save_record  # noqa: E402

CRAWL = REPO.parent / "shared" / "datasets" / "crawl" / "dev"
NEW_PAGES = ("near", "aggregate", "quote")  # the crawl's kinds that are not a gold page's bytes

log = logging.getLogger("bench_distil")


def read_crawl(cache: Path) -> list[dict]:
    """The crawl's pages of :data:`NEW_PAGES`, read as bench_peers reads a gold page (no label),
    each with the ids of the originals it was made from (cached)."""
    path = cache / "crawl-dev.pkl"
    if path.is_file():
        with path.open("rb") as file:
            return pickle.load(file)
    truth = {}
    for line in (CRAWL / "truth.jsonl").read_text().splitlines():
        row = json.loads(line)
        truth[row["sha1"]] = row
    pages = []
    for warc in sorted(CRAWL.glob("*.warc.gz")):
        for record in iter_warc_records(warc, ExtractParams()):
            if record.body is None:
                continue
            row = truth.get(hashlib.sha1(record.body).hexdigest())
            if row is None or row["kind"] not in NEW_PAGES:
                continue
            gold = GoldPage("crawl-dev", record.uri, record.body, record.http_charset)
            pages.append({**page_record(gold), "of": list(row["of"]), "kind": row["kind"]})
            if len(pages) % 50 == 0:
                log.info("crawl: %d pages read", len(pages))
    with path.open("wb") as file:
        pickle.dump(pages, file)
    log.info("crawl: %d pages read", len(pages))
    return pages


def original_sources(cache: Path, sets: dict[str, list[dict]]) -> dict[int, str]:
    """The gold source of each crawl original's id (its bytes are a gold page's)."""
    by_sha1 = {
        hashlib.sha1(page["gold"].html).hexdigest(): gold_source(dataset)
        for dataset, pages in sets.items()
        for page in pages
    }
    return {
        row["id"]: by_sha1.get(row["sha1"], "unknown")
        for row in map(json.loads, (CRAWL / "truth.jsonl").read_text().splitlines())
        if row["kind"] == "original"
    }


def crawl_sources(page: dict, originals: dict[int, str]) -> set[str]:
    """The gold sources a crawl page was made from."""
    return {originals.get(number, "unknown") for number in page["of"]}


def language_of(page: dict) -> str:
    """The page's language as the extract stage guesses it."""
    return prepare_page(decoded_html(page["gold"]), reading=LEARNED_BLOCKS).language


def page_language(page: dict) -> str:
    """:func:`language_of`, guessed once per page (the pools of every fold ask again)."""
    if "language" not in page:
        page["language"] = language_of(page)
    return page["language"]


def scored(extractions, pages: list[dict], dataset: str, languages: list[str]):
    """The set's F1 of the pages' ``extractions``, and per language written without spaces."""
    tally, by_language = Tally(), dict[str, Tally]()
    for page, language, extraction in zip(pages, languages, extractions):
        score_page(tally, page["gold"], extraction)
        if writes_without_spaces(language):
            score_page(by_language.setdefault(language, Tally()), page["gold"], extraction)
    return figure(tally, dataset), {k: scores(t.bag).f1 for k, t in by_language.items()}


def kept(model, pages: list[dict], peers: list[str]):
    """Each page's extraction by ``model`` reading ``peers``."""
    for page in pages:
        probability = model.page_probabilities(stacked(page, peers), page["words"])
        yield extraction_of_blocks(page["texts"], list(probability >= model.threshold_good))


@dataclass(frozen=True)
class Student:
    """One student variant: the teacher's ``labels`` (distil.LABELS), the ``weight`` of its
    blocks in gold sources, whether the pool keeps only pages written with spaces (``spaced``,
    as the workflow's distil_sample does), and whether it keeps the scored source's own pages
    (``own``, labels unread: the workflow's ``train.distil`` labels the crawl it then extracts;
    a shipped model has not seen the pages it will extract, so ``own`` is not its protocol)."""

    labels: str
    weight: float
    spaced: bool = False
    own: bool = False

    @classmethod
    def parse(cls, spec: str) -> Student:
        """``hard-w3``, ``soft-w1``, ``soft-w3-spaced``, ``soft-w3-spaced-own``..."""
        found = re.fullmatch(r"([a-z]+)-w([0-9.]+)(-spaced)?(-own)?", spec)
        if not found or found[1] not in LABELS:
            raise argparse.ArgumentTypeError(
                f"a student is LABELS-wWEIGHT[-spaced][-own], not {spec!r}"
            )
        return cls(found[1], float(found[2]), bool(found[3]), bool(found[4]))

    @property
    def pool(self) -> tuple[bool, bool]:
        return self.spaced, self.own

    @property
    def name(self) -> str:
        return (
            f"student-{self.labels}-w{self.weight:g}"
            f"{'-spaced' if self.spaced else ''}{'-own' if self.own else ''}"
        )


def pool(
    sets: dict[str, list[dict]],
    crawl: list[dict],
    originals: dict[int, str],
    peers: list[str],
    names: tuple[str, ...],
    source: str,
    pages: int,
    seed: int,
    spaced: bool = False,
    own: bool = False,
) -> UnlabelledBlocks:
    """The pages the fold's teacher labels: every gold page and crawl page not of ``source``
    (``own``: of every source; ``spaced``: of those, the pages of languages written with spaces
    only), ``pages`` of them drawn at random (0: all)."""
    mine = [
        page
        for dataset, of_set in sets.items()
        if own or gold_source(dataset) != source
        for page in of_set
    ] + [page for page in crawl if own or source not in crawl_sources(page, originals)]
    if spaced:
        mine = [page for page in mine if is_target(page_language(page))]
    blocks = UnlabelledBlocks.of_pages([(stacked(p, peers), p["words"]) for p in mine], names)
    return blocks.sample(pages, seed) if pages else blocks


def fitted_once(
    cache: Path, name: str, table: TrainingTable, params: TrainParams, source: str
) -> BlockModel:
    """``fit(table, params, without=source)``, kept in the cache: every run of the same settings
    has the same teacher and the same student before distillation."""
    path = (
        cache
        / "distil-models"
        / f"{name}-{params.max_iter}-{params.learning_rate:g}-{params.max_bins}.npz"
    )
    if not path.is_file():
        path.parent.mkdir(exist_ok=True)
        fit(table, params, without=source).save(path)
    return BlockModel.load(path)


def score_scope(
    comments: bool,
    cache: Path,
    params: TrainParams,
    students: list[Student],
    pages: int,
    only: list[str] | None = None,
) -> dict[str, dict]:
    """Each fold's figures, the folds of the gold sources ``only`` (None: every source)."""
    sets = {d: read_set(d, comments, cache) for d in READERS}
    crawl = read_crawl(cache)
    originals = original_sources(cache, sets)
    teacher_peers = variants(comments)["all3"]
    teacher_table = weighted_table(
        [blocks_part(d, sets[d], teacher_peers) for d in READERS], comments
    )
    student_table = weighted_table([blocks_part(d, sets[d], []) for d in READERS], comments)
    traf = "trafilatura" if comments else "trafilatura-article"
    results: dict[str, dict] = {}
    for source in dict.fromkeys(gold_source(d) for d in READERS if fits_scope(d, comments)):
        if only and source not in only:
            continue
        started = time.perf_counter()
        scope = "comments" if comments else "article"
        teacher = fitted_once(cache, f"{scope}-teacher-{source}", teacher_table, params, source)
        before = fitted_once(cache, f"{scope}-before-{source}", student_table, params, source)
        pools = {
            (spaced, own): pool(
                sets,
                crawl,
                originals,
                teacher_peers,
                teacher_table.feature_names,
                source,
                pages,
                1,
                spaced,
                own,
            )
            for spaced, own in dict.fromkeys(student.pool for student in students)
        }
        fitted = {
            student.name: distil(
                student_table,
                pools[student.pool],
                teacher,
                params,
                student.weight,
                source,
                student.labels,
            )
            for student in students
        }
        described = {}
        for (spaced, own), target in pools.items():
            labels = teacher_labels(teacher, target)
            described[f"{'spaced' if spaced else 'all'}{'-own' if own else ''}"] = {
                "pages": target.target_pages,
                "blocks": len(labels),
                "content_words": round(
                    float(target.words[labels == 1].sum() / max(target.words.sum(), 1)), 4
                ),
            }
        log.info(
            "%s without %s: pools %s, %.0f s",
            "comments" if comments else "article",
            source,
            described,
            time.perf_counter() - started,
        )
        for dataset in [d for d in READERS if fits_scope(d, comments) and gold_source(d) == source]:
            languages = [language_of(p) if dataset == "fundus" else "" for p in sets[dataset]]
            mine = sets[dataset]
            runs = {
                "teacher-peers-all": scored(
                    kept(teacher, mine, teacher_peers), mine, dataset, languages
                ),
                "student-before": scored(kept(before, mine, []), mine, dataset, languages),
                **{
                    name: scored(kept(student, mine, []), mine, dataset, languages)
                    for name, student in fitted.items()
                },
                traf: scored(
                    (Extraction(p["peer_texts"][traf]) for p in mine), mine, dataset, languages
                ),
            }
            results[dataset] = {
                "pages": len(sets[dataset]),
                "pools": described,
                "f1": {n: round(f, 4) for n, (f, _) in runs.items()},
                "without_spaces": {
                    language: {n: round(by[language], 4) for n, (_, by) in runs.items()}
                    for language in runs["student-before"][1]
                },
            }
            log.info("%s: %s", dataset, results[dataset]["f1"])
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, required=True, help="bench_peers' gold set cache")
    parser.add_argument("--scope", choices=["article", "comments", "both"], default="both")
    parser.add_argument(
        "--students",
        type=Student.parse,
        nargs="+",
        default=[Student("hard", 1.0, False)],
        help="LABELS-wWEIGHT[-spaced][-own]: hard or soft labels, the teacher's blocks weighing "
        "WEIGHT gold sources, the pool of pages written with spaces only, the pool with the "
        "scored source's own pages",
    )
    parser.add_argument("--pages", type=int, default=0, help="pool pages drawn (0: all)")
    parser.add_argument("--full", action="store_true", help="the shipped fit settings")
    parser.add_argument(
        "--sources", nargs="+", help="score these gold sources' folds only (a mean of some folds)"
    )
    parser.add_argument(
        "--trees",
        type=int,
        help="fewer trees than the quick fits, the learning rate raised to keep trees × rate",
    )
    parser.add_argument("--json", type=Path, default=REPO / "bench" / "results" / "distil.json")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    logging.getLogger("trafilatura").setLevel(logging.CRITICAL)
    logging.getLogger("readability").setLevel(logging.CRITICAL)
    params = TrainParams() if args.full else QUICK
    if args.trees:
        params = replace(
            params,
            max_iter=args.trees,
            learning_rate=params.learning_rate * params.max_iter / args.trees,
        )
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    scopes = ["article", "comments"] if args.scope == "both" else [args.scope]
    for scope in scopes:
        results = score_scope(
            scope == "comments", args.cache, params, args.students, args.pages, args.sources
        )
        names = list(next(iter(results.values()))["f1"])
        mean = {n: round(float(np.mean([r["f1"][n] for r in results.values()])), 4) for n in names}
        save_record(
            args.json,
            f"leave-one-source-out, {params.max_iter} trees",
            scope,
            {
                "commit": commit,
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "train_params": {
                    "max_iter": params.max_iter,
                    "learning_rate": params.learning_rate,
                    "max_bins": params.max_bins,
                },
                "students": [student.name for student in args.students],
                "pool_pages_asked": args.pages,
                "sources": args.sources or "all",
                "sets": results,
                "mean_f1": mean,
            },
        )
        print(scope, json.dumps(mean), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
