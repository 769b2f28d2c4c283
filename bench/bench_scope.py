"""The two scopes of `extract.comments`, measured leave-one-source-out against the peers of each.

For each scope (false: the article; true: all running text, reader comments included) the `best`
preset's model is trained on the gold sets labelled for that scope (`training.weighted_table`),
once per gold source without it, and scored on that source's sets beside the peers its users
would pick for that scope (`extractors.SCOPE_PEERS`): trafilatura with ``include_comments``
matching the scope, readability-lxml and resiliparse's main content for the article. Variants:

* ``legacy``: one model for both scopes, as shipped before the scopes: every gold set's labels
  as they are (L3S-GN1's five content classes, CleanEval's comments as content).
* ``scoped``: one model per scope, each from its scope's labels (``training.in_scope``).

One whole source (``--kept-out``, CleanPortalEval by default) is kept out of every choice: no
model used for a choice is trained on it, and its figure is computed once, with ``--final``,
after the choices are made (docs/extraction-scope.md). Run by hand (minutes on two cores):

    PYTHONPATH=. python bench/bench_scope.py --cache /tmp/scope-cache
    PYTHONPATH=. python bench/bench_scope.py --cache /tmp/scope-cache --final

Scores: bag-of-words F1 where a set has gold text (a character of Chinese, Japanese or Thai is a
token of its own), snippet F1 on trafilatura-dev; a scope's figure is the mean over its sets.
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from corpusbuilder.evaluation.extractors import EXTRACTORS, SCOPE_PEERS, learned_with
from corpusbuilder.evaluation.gold import READERS, fits_scope, gold_source, iter_dataset
from corpusbuilder.evaluation.metrics import scores
from corpusbuilder.evaluation.scores import Tally, evaluate_pages
from corpusbuilder.evaluation.training import (
    TrainParams,
    fit,
    training_blocks,
    training_pages,
    weighted_table,
)
from corpusbuilder.extraction.model import BlockModel

REPO = Path(__file__).resolve().parents[1]
GOLD = REPO.parent / "shared" / "datasets" / "boilerplate"
SCOPES = {"article": False, "comments": True}
WITHOUT_SPACES = ("ja", "zh", "ko")

log = logging.getLogger("bench_scope")


def blocks_of(dataset: str, comments: bool | None, cache: Path) -> dict[str, np.ndarray]:
    """A gold set's blocks (training.training_blocks), read for a scope where the set annotates
    comments apart, cached in ``cache`` by set and reading (delete it when the blocks change)."""
    reading = "any" if comments is None else ("comments" if comments else "article")
    path = cache / f"{dataset}.{reading}.npz"
    if not path.is_file():
        pages = training_pages(iter_dataset(dataset, GOLD, comments=comments))
        np.savez_compressed(path, dataset=np.array(dataset), **training_blocks(pages))
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


# On a machine shared by many, a fit of the shipped settings took half an hour: --quick scores
# the recipes with fewer trees and bins (the same for every variant), and says so in the results.
QUICK = TrainParams(max_iter=100, learning_rate=0.15, max_bins=63)


def save_record(path: Path, run: str, key: str, record: dict) -> None:
    """Write ``record`` at ``[run][key]`` of the JSON file ``path``, read again just before, so
    that runs in parallel do not drop each other's records. A record already there moves into
    the new one's ``earlier`` list: a figure scored once (the kept-out source) stays on file
    after the next model is scored."""
    report = json.loads(path.read_text()) if path.is_file() else {}
    previous = report.setdefault(run, {}).get(key)
    if previous is not None:
        record["earlier"] = [
            {k: v for k, v in previous.items() if k != "earlier"},
            *previous.get("earlier", []),
        ]
    report[run][key] = record
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")


def held_out_model(path: Path, table, params: TrainParams, source: str) -> BlockModel:
    """The model trained on ``table`` without ``source``, fitted once (the legacy one serves
    both scopes) and kept in the cache."""
    if params != TrainParams():
        path = path.with_name(f"quick-{path.name}")
    if not path.is_file():
        fit(table, params, without=source).save(path)
    return BlockModel.load(path)


def figure(tally: Tally, dataset: str) -> float:
    """A set's F1: bag of words, or snippets where the set has them."""
    counts = tally.snippets if dataset == "trafilatura-dev" else tally.bag
    return scores(counts).f1


def score_scope(
    scope: str,
    cache: Path,
    kept_out: str,
    final: bool,
    params: TrainParams,
    chosen: tuple[str, ...] = ("legacy", "scoped"),
    only: tuple[str, ...] = (),
) -> dict[str, dict]:
    comments = SCOPES[scope]
    datasets = [d for d in READERS if fits_scope(d, comments) and (not only or d in only)]
    training_sets = [d for d in READERS if gold_source(d) != kept_out]
    variants = {
        "legacy": [blocks_of(d, None, cache) for d in training_sets],
        "scoped": [
            blocks_of(d, comments if d.startswith("l3s") else None, cache) for d in training_sets
        ],
    }
    tables = {
        "legacy": weighted_table(variants["legacy"]),
        "scoped": weighted_table(variants["scoped"], comments),
    }
    tables = {name: tables[name] for name in chosen}  # fitted in the order chosen
    scored = [d for d in datasets if (gold_source(d) == kept_out) == final]
    results: dict[str, dict] = {}
    for dataset in scored:
        source = gold_source(dataset)
        started = time.perf_counter()
        extractors = [
            learned_with(
                held_out_model(
                    # the kept-out source is in no table: its held-out model is the shipped one
                    cache / f"shipped-{scope}.npz"
                    if final and variant == "scoped"
                    else cache
                    / f"{variant}{'' if variant == 'legacy' else '-' + scope}.{source}.npz",
                    table,
                    params,
                    source,
                ),
                f"best-{variant}",
            )
            for variant, table in tables.items()
        ] + [EXTRACTORS[name] for name in SCOPE_PEERS[comments]]
        by_language: dict[str, dict[str, Tally]] = {}
        tallies = evaluate_pages(
            iter_dataset(dataset, GOLD, comments=comments), extractors, by_language=by_language
        )
        results[dataset] = {
            "pages": next(iter(tallies.values())).pages,
            "f1": {name: figure(t, dataset) for name, t in tallies.items()},
            "precision": {name: scores(t.bag).precision for name, t in tallies.items()},
            "recall": {name: scores(t.bag).recall for name, t in tallies.items()},
            "without_spaces": {
                language: {
                    "pages": next(iter(by_language[language].values())).pages,
                    "f1": {n: scores(t.bag).f1 for n, t in by_language[language].items()},
                }
                for language in WITHOUT_SPACES
                if language in by_language
            },
        }
        log.info(
            "%s %s: %s (%.0f s)",
            scope,
            dataset,
            {n: round(f, 3) for n, f in results[dataset]["f1"].items()},
            time.perf_counter() - started,
        )
    return results


SHIPPED_NAMES = {"article": "best-article.npz", "comments": "best.npz"}


def ship(scope: str, cache: Path, kept_out: str, params: TrainParams, folder: Path) -> Path:
    """The scope's model for the package: trained on every gold set but the kept-out source's,
    labelled for the scope (what ``--final`` scores on the kept-out source)."""
    comments = SCOPES[scope]
    parts = [
        blocks_of(d, comments if d.startswith("l3s") else None, cache)
        for d in READERS
        if gold_source(d) != kept_out
    ]
    path = folder / SHIPPED_NAMES[scope]
    held_out_model(cache / f"shipped-{scope}.npz", weighted_table(parts, comments), params, "")
    fitted = cache / f"{'' if params == TrainParams() else 'quick-'}shipped-{scope}.npz"
    path.write_bytes(fitted.read_bytes())
    return path


def mean_f1(results: dict[str, dict]) -> dict[str, float]:
    names = next(iter(results.values()))["f1"]
    return {n: float(np.mean([r["f1"][n] for r in results.values()])) for n in names}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, required=True, help="training blocks, per gold set")
    parser.add_argument("--kept-out", default="cleanportaleval", help="the source kept out")
    parser.add_argument("--final", action="store_true", help="score the kept-out source, once")
    parser.add_argument("--scope", choices=[*SCOPES, "both"], default="both")
    parser.add_argument(
        "--variants", nargs="+", choices=["legacy", "scoped"], default=["legacy", "scoped"]
    )
    parser.add_argument("--datasets", nargs="+", default=[], help="score only these sets")
    parser.add_argument("--quick", action="store_true", help="fewer trees and bins (QUICK)")
    parser.add_argument(
        "--ship", type=Path, help="write each scope's model for the package into this folder"
    )
    parser.add_argument("--json", type=Path, default=REPO / "bench" / "results" / "scope.json")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    args.cache.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    run = "final" if args.final else "leave-one-source-out"
    scopes = list(SCOPES) if args.scope == "both" else [args.scope]
    params = QUICK if args.quick else TrainParams()
    if args.ship:
        for scope in scopes:
            print("shipped", ship(scope, args.cache, args.kept_out, params, args.ship))
        return 0
    for scope in scopes:
        results = score_scope(
            scope,
            args.cache,
            args.kept_out,
            args.final,
            params,
            tuple(args.variants),
            tuple(args.datasets),
        )
        record = {
            "train_params": {"max_iter": params.max_iter, "max_bins": params.max_bins},
            "commit": commit,
            "date": time.strftime("%Y-%m-%d"),
            "kept_out": args.kept_out,
            "datasets": results,
            "mean_f1": mean_f1(results) if results else {},
        }
        save_record(args.json, run, scope, record)
        print(scope, json.dumps(record["mean_f1"], indent=1), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
