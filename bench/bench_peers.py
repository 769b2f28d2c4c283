"""`extract.peers`: the `best` preset with the peers' output as block features, measured
leave-one-source-out against the same preset without them and against the peers themselves.

Each gold set is read once (``--cache``): its pages cut into the `best` preset's blocks, with
their features, their labels from the gold (`training.block_labels`) and each block's coverage
by each peer's output (`extraction.peers.text_coverage`): trafilatura with and without comments,
readability-lxml, resiliparse's main content. Then, per scope, a model is fitted for each variant
(the peers' columns it reads) once per gold source without it, and scored on that source's sets.
The variants:

* ``base``: the 84 block features, as the `best` preset ships;
* ``res``: + resiliparse (the cheapest peer);
* ``traf``: + trafilatura, ``include_comments`` as the scope says;
* ``traf+read``: + readability-lxml;
* ``all3``: + all three.

``res`` is what ``extract.peers: resiliparse`` reads, ``all3`` what ``extract.peers: all`` reads.

The source kept out of every choice (CleanPortalEval) is scored once, with ``--final``;
``--ship`` writes the ``res`` and ``all3`` models trained on every other source into the
package. Quick fits (the settings of bench_scope.py --quick) unless ``--full``. Two more
designs, measured and not shipped: ``--adapt`` self-trains each held-out model on its source's
own pages (labels unread) as the workflow's ``adapt`` does; ``--scope-input`` fits one model for
both scopes with the scope as an input column. Run by hand,
about 15 minutes on two cores:

    PYTHONPATH=. python bench/bench_peers.py --cache /tmp/peers --scope article
    PYTHONPATH=. python bench/bench_peers.py --cache /tmp/peers --scope article --final all3
    PYTHONPATH=. python bench/bench_peers.py --cache /tmp/peers --ship corpusbuilder/models

Scores: bag-of-words F1 (a character of Chinese, Japanese or Thai a token), snippet F1 on
trafilatura-dev; a scope's figure is the mean over its sets.
"""

from __future__ import annotations

import argparse
import json
import logging
import pickle
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from corpusbuilder.common.package_data import (
    SHIPPED_ARTICLE_MODEL,
    SHIPPED_MODEL,
    shipped_peer_model,
)
from corpusbuilder.evaluation.extractors import (
    LEARNED_BLOCKS,
    Extraction,
    decoded_html,
    extraction_of_blocks,
    prepare_page,
)
from corpusbuilder.evaluation.gold import (
    READERS,
    GoldPage,
    fits_scope,
    gold_source,
    iter_dataset,
)
from corpusbuilder.evaluation.scores import Tally, score_page
from corpusbuilder.evaluation.training import (
    AdaptParams,
    TrainingTable,
    TrainParams,
    block_labels,
    fit,
    self_train,
    weighted_table,
)
from corpusbuilder.extraction.adapt import UnlabelledBlocks
from corpusbuilder.extraction.classifier import (
    FEATURE_NAMES,
    block_features,
    block_words,
    page_title,
)
from corpusbuilder.extraction.model import BlockModel
from corpusbuilder.extraction.peers import (
    PEER_CHOICES,
    peer_texts,
    readability_text,
    text_coverage,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
# the gold sets, fit settings and scorer of the scopes' bench
from bench_scope import GOLD, QUICK, REPO, figure, save_record  # noqa: E402

KEPT_OUT = "cleanportaleval"
SCOPE_COLUMN = {False: 0.0, True: 1.0}  # extract.comments: the value of --scope-input's column


def trafilatura_of(comments: bool) -> str:
    """trafilatura as its users run it for the scope."""
    return "trafilatura" if comments else "trafilatura-article"


def variants(comments: bool) -> dict[str, list[str]]:
    traf = trafilatura_of(comments)
    return {
        "base": [],
        "res": ["resiliparse"],
        "traf": [traf],
        "traf+read": [traf, "readability"],
        "all3": [traf, "readability", "resiliparse"],  # the order of peers.PEER_FEATURE_NAMES
    }


log = logging.getLogger("bench_peers")


def page_record(gold: GoldPage) -> dict:
    """A page's blocks, features, labels (all unknown for a page without gold) and each peer's
    output and coverage of its blocks."""
    html = decoded_html(gold)
    page = prepare_page(html, reading=LEARNED_BLOCKS)
    texts = [block.text for block in page.blocks]
    article, readability_nodes, resiliparse = peer_texts(html, comments=False)
    try:
        readability = readability_text(html)
    except Exception:  # noqa: BLE001 - scored as keeping nothing, as peer_texts reads it
        readability = ""
    outputs = {
        "trafilatura-article": article,
        "trafilatura": peer_texts(html, True, ("in_trafilatura",))[0],
        "readability": readability,
        "resiliparse": resiliparse,
    }
    # the in_readability feature reads readability's text nodes (peers.readability_text_nodes)
    read_as_feature = {**outputs, "readability": readability_nodes}
    return {
        "gold": gold,
        "texts": texts,
        "features": block_features(page.blocks, page_title(page.root)),
        "labels": block_labels(page.blocks, gold),
        "words": block_words(page.blocks),
        "peers": {name: text_coverage(texts, text) for name, text in read_as_feature.items()},
        "peer_texts": outputs,
    }


def read_set(dataset: str, comments: bool, cache: Path) -> list[dict]:
    """A gold set's pages, blocks, labels and peer coverage (cached: the peers take minutes)."""
    reading = f"-{'comments' if comments else 'article'}" if dataset.startswith("l3s") else ""
    path = cache / f"{dataset}{reading}.pkl"
    if path.is_file():
        with path.open("rb") as file:
            return pickle.load(file)
    pages = [page_record(gold) for gold in iter_dataset(dataset, GOLD, comments=comments)]
    with path.open("wb") as file:
        pickle.dump(pages, file)
    log.info("%s: %d pages read", dataset, len(pages))
    return pages


def stacked(page: dict, peers: list[str], scope: float | None = None) -> np.ndarray:
    """A page's block features, its peers' columns, and (``--scope-input``) the scope's."""
    extra = [] if scope is None else [np.full(len(page["texts"]), scope, dtype=np.float32)]
    return np.column_stack(
        [page["features"].astype(np.float32)] + [page["peers"][name] for name in peers] + extra
    ).astype(np.float32)


# the feature each peer's output is read as (peers.PEER_FEATURE_NAMES)
FEATURE_OF = {
    "trafilatura": "in_trafilatura",
    "trafilatura-article": "in_trafilatura",
    "readability": "in_readability",
    "resiliparse": "in_resiliparse",
}


def blocks_part(
    dataset: str, pages: list[dict], peers: list[str], scope: float | None = None
) -> dict[str, np.ndarray]:
    """A set's blocks as `training.training_blocks` gives them: every block, the unknown ones
    labelled -1, each with its page."""
    names = (
        FEATURE_NAMES + tuple(FEATURE_OF[p] for p in peers) + (() if scope is None else ("scope",))
    )
    return {
        "dataset": np.array(dataset),
        "feature_names": np.array(names),
        "features": np.concatenate([stacked(p, peers, scope) for p in pages]),
        "labels": np.concatenate([p["labels"] for p in pages]),
        "words": np.concatenate([p["words"] for p in pages]),
        "page": np.concatenate([np.full(len(p["labels"]), i) for i, p in enumerate(pages)]),
    }


def without(table: TrainingTable, source: str) -> TrainingTable:
    return table.rows(table.group != source)


def adapted(
    model: BlockModel, table: TrainingTable, pages: list[dict], peers: list[str], params, source
) -> BlockModel:
    """``model`` self-trained on ``pages`` (the held-out source's, labels unread), as the
    workflow's ``adapt`` does with its defaults (training.self_train)."""
    target = UnlabelledBlocks.of_pages(
        [(stacked(page, peers), page["words"]) for page in pages], table.feature_names
    )
    return self_train(without(table, source), target, model, params, AdaptParams(), source)


def score_scope(
    comments: bool,
    cache: Path,
    final: bool,
    chosen: list[str],
    params: TrainParams,
    adapt: bool = False,
) -> dict[str, dict[str, float]]:
    sets = {d: read_set(d, comments, cache) for d in READERS}
    scored = [
        d for d in READERS if fits_scope(d, comments) and (gold_source(d) == KEPT_OUT) == final
    ]
    results: dict[str, dict[str, float]] = {d: {} for d in scored}
    for variant in chosen:
        peers = variants(comments)[variant]
        training = [blocks_part(d, sets[d], peers) for d in READERS if gold_source(d) != KEPT_OUT]
        table = weighted_table(training, comments)
        models = {}
        for dataset in scored:
            source = gold_source(dataset)
            if source not in models:  # the kept-out source is in no table: fit on all of it
                models[source] = fit(table, params, without=None if final else source)
                if adapt:
                    mine = [p for d in READERS if gold_source(d) == source for p in sets[d]]
                    models[source] = adapted(models[source], table, mine, peers, params, source)
            name = f"best-{variant}{'-adapted' if adapt else ''}"
            results[dataset][name] = scored_f1(models[source], sets[dataset], peers, dataset)
            log.info("%s %s: %.4f", name, dataset, results[dataset][name])
    for dataset in scored:
        for peer in (trafilatura_of(comments), "readability", "resiliparse"):
            tally = Tally()
            for page in sets[dataset]:
                score_page(tally, page["gold"], Extraction(page["peer_texts"][peer]))
            results[dataset][peer] = round(figure(tally, dataset), 4)
    return results


def scored_f1(model: BlockModel, pages: list[dict], peers: list[str], dataset: str, scope=None):
    tally = Tally()
    for page in pages:
        probability = model.page_probabilities(stacked(page, peers, scope), page["words"])
        keep = probability >= model.threshold_good
        score_page(tally, page["gold"], extraction_of_blocks(page["texts"], list(keep)))
    return round(figure(tally, dataset), 4)


def score_scope_input(
    cache: Path, chosen: list[str], params: TrainParams
) -> dict[str, dict[str, dict[str, float]]]:
    """One model for both scopes, the scope a column of its own (0 the article, 1 with
    comments), fitted on both scopes' labelled tables; scored leave-one-source-out in each."""
    results: dict[str, dict[str, dict[str, float]]] = {"article": {}, "comments": {}}
    sets = {
        comments: {d: read_set(d, comments, cache) for d in READERS} for comments in SCOPE_COLUMN
    }
    for variant in chosen:
        tables = [
            weighted_table(
                [
                    blocks_part(
                        d, sets[comments][d], variants(comments)[variant], SCOPE_COLUMN[comments]
                    )
                    for d in READERS
                    if gold_source(d) != KEPT_OUT
                ],
                comments,
            )
            for comments in SCOPE_COLUMN
        ]
        both = TrainingTable(
            *(
                np.concatenate([getattr(t, key) for t in tables])
                for key in ("features", "labels", "weights", "group")
            ),
            tables[0].feature_names,
        )
        models: dict[str, BlockModel] = {}
        for comments, scope in SCOPE_COLUMN.items():
            for dataset in [
                d for d in READERS if fits_scope(d, comments) and gold_source(d) != KEPT_OUT
            ]:
                source = gold_source(dataset)
                if source not in models:
                    models[source] = fit(both, params, without=source)
                peers = variants(comments)[variant]
                figure_ = scored_f1(models[source], sets[comments][dataset], peers, dataset, scope)
                results["comments" if comments else "article"].setdefault(dataset, {})[
                    f"best-{variant}+scope"
                ] = figure_
                log.info("%s+scope %s %s: %.4f", variant, comments, dataset, figure_)
    return results


SHIPPED = {"base": "none", "res": "resiliparse", "all3": "all"}  # variant: its extract.peers


def shipped_name(choice: str, comments: bool) -> str:
    """The package's model file of an extract.peers choice for a scope."""
    if choice == "none":
        return (SHIPPED_MODEL if comments else SHIPPED_ARTICLE_MODEL).name
    return shipped_peer_model(choice, comments).name


def ship(
    comments: bool, cache: Path, params: TrainParams, folder: Path, chosen: list[str]
) -> list[Path]:
    """The scope's models of the ``chosen`` variants' extract.peers, each trained on every gold
    source but the kept-out one."""
    written = []
    for variant in chosen:
        choice = SHIPPED[variant]
        peers = variants(comments)[variant]
        parts = [
            blocks_part(d, read_set(d, comments, cache), peers)
            for d in READERS
            if gold_source(d) != KEPT_OUT
        ]
        model = fit(weighted_table(parts, comments), params)
        assert model.peers == PEER_CHOICES[choice], (model.peers, choice)
        path = folder / shipped_name(choice, comments)
        model.save(path)
        written.append(path)
    return written


def record(path: Path, run: str, how: str, results: dict, commit: str, params) -> None:
    names = list(next(iter(results.values())))
    mean = {n: round(float(np.mean([r[n] for r in results.values()])), 4) for n in names}
    save_record(
        path,
        run,
        how,
        {
            "commit": commit,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "train_params": {"max_iter": params.max_iter, "max_bins": params.max_bins},
            "sets": results,
            "mean_f1": mean,
        },
    )
    print(run, how, json.dumps(mean), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, required=True, help="gold sets read with peers")
    parser.add_argument("--scope", choices=["article", "comments", "both"], default="both")
    parser.add_argument("--final", action="store_true", help="score the kept-out source, once")
    parser.add_argument("--full", action="store_true", help="the shipped fit settings")
    parser.add_argument(
        "--stages", type=int, choices=(1, 2), default=1, help="train.stages of every model"
    )
    parser.add_argument(
        "--ship",
        type=Path,
        help="write each scope's models of the variants given (default: res all3) here",
    )
    parser.add_argument(
        "--adapt", action="store_true", help="self-train each held-out model on its source's pages"
    )
    parser.add_argument(
        "--scope-input",
        action="store_true",
        help="one model for both scopes, the scope an input column (default variants: base all3)",
    )
    parser.add_argument("variants", nargs="*", default=[], help="default: all of them")
    parser.add_argument("--json", type=Path, default=REPO / "bench" / "results" / "peers.json")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    logging.getLogger("trafilatura").setLevel(logging.CRITICAL)
    logging.getLogger("readability").setLevel(logging.CRITICAL)
    args.cache.mkdir(parents=True, exist_ok=True)
    params = replace(TrainParams() if args.full else QUICK, stages=args.stages)
    scopes = [False, True] if args.scope == "both" else [args.scope == "comments"]
    if args.scope_input and args.stages == 2:
        parser.error("--scope-input fits one stage: its table joins two scopes' pages")
    if args.ship:
        chosen_ship = args.variants or ["res", "all3"]
        unknown = sorted(set(chosen_ship) - set(SHIPPED))
        if unknown:
            parser.error(f"--ship writes the models of {', '.join(SHIPPED)}, not {unknown}")
        for comments in scopes:
            print("shipped", *ship(comments, args.cache, params, args.ship, chosen_ship))
        return 0
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    fitting = ("full" if args.full else "quick") + ("+2stages" if args.stages == 2 else "")
    if args.scope_input:
        chosen = args.variants or ["base", "all3"]
        for scope, results in score_scope_input(args.cache, chosen, params).items():
            how = f"{fitting}+scope-input:{','.join(chosen)}"
            record(args.json, scope, how, results, commit, params)
    else:
        for comments in scopes:
            chosen = args.variants or list(variants(comments))
            results = score_scope(comments, args.cache, args.final, chosen, params, args.adapt)
            run = f"{'comments' if comments else 'article'}{'-final' if args.final else ''}"
            how = f"{fitting}{'+adapt' if args.adapt else ''}:{','.join(chosen)}"
            record(args.json, run, how, results, commit, params)
    return 0


if __name__ == "__main__":
    sys.exit(main())
