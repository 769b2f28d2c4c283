#!/usr/bin/env python3
"""Document metadata (corpusbuilder.extraction.metadata) against trafilatura's, and its cost.

- agreement: on every page of the gold sets in ../shared/datasets/boilerplate (all of them;
  their HTML only, the gold texts are not read), the metadata the extract stage gives a page
  (``clean_page(body, charset, params, url=...)``: decoded and parsed once, as in the workflow)
  against ``trafilatura.extract_metadata(text, default_url=url)`` on the same decoded text.
  Title: where trafilatura finds one, the share where ours agrees: both the same after
  normalising (HTML entities decoded, typographic quotes as ASCII ones, case folded, white
  space one space), or one of them
  equal to a run of the other's parts cut at a title separator (" | ", " - ", " – ", " — ",
  " : ", " · ", " » ", " / "; what cuts a site's name off "Headline | Site"). Exact agreement
  (normalised equality) beside it. Date: where both find one, the share of the same
  YYYY-MM-DD. Author and site name the same way as titles, for information.
- cost: CPU time (``time.process_time``) of ``clean_page`` on the same pages with the metadata
  and without it (``extract.extract_metadata`` swapped for one that reads nothing), the two
  alternating page by page in one process, their order flipped each round; the median round.
  Also ``extract_metadata`` alone on each page's parsed tree.

    python bench/bench_metadata.py                           # every gold page, 3 cost rounds
    python bench/bench_metadata.py --limit 5 --rounds 1 --json /tmp/m.json   # a quick run

Results go to bench/results/metadata.json (the machine description beside them).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from html import unescape
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))
from run_all import machine_info  # noqa: E402

from corpusbuilder.api import extract_params  # noqa: E402
from corpusbuilder.evaluation.gold import READERS, iter_dataset  # noqa: E402
from corpusbuilder.extraction import extract  # noqa: E402
from corpusbuilder.extraction.metadata import NO_METADATA, extract_metadata  # noqa: E402
from corpusbuilder.extraction.segmentation import parse_html  # noqa: E402

RESULTS = HERE / "results" / "metadata.json"
GOLD = REPO.parent / "shared" / "datasets" / "boilerplate"
SEPARATOR = re.compile(r"(\s+(?:[|\-–—·•»:/]|::)\s+)")


# typographic quotes as the ASCII ones: a page's <title> and its <h1> often differ in them alone
QUOTES = str.maketrans("\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f", "''''" + '""""')


def normalised(text: str) -> str:
    return " ".join(unescape(text).translate(QUOTES).casefold().split())


def parts_runs(text: str) -> set[str]:
    """Every run of consecutive parts of ``text`` cut at its title separators, normalised."""
    pieces = SEPARATOR.split(normalised(text))
    parts, separators = pieces[::2], pieces[1::2]
    runs = set()
    for start in range(len(parts)):
        for end in range(start + 1, len(parts) + 1):
            run = parts[start]
            for index in range(start + 1, end):
                run += separators[index - 1] + parts[index]
            runs.add(run)
    return runs


def agree(ours: str, theirs: str) -> bool:
    """Equal once normalised, or one a run of the other's separator-cut parts."""
    a, b = normalised(ours), normalised(theirs)
    return a == b or a in parts_runs(theirs) or b in parts_runs(ours)


def trafilatura_metadata(text: str, url: str | None) -> dict:
    from trafilatura import extract_metadata as theirs

    found = theirs(text, default_url=url)
    return {
        "title": found.title,
        "author": found.author,
        "date": found.date,
        "sitename": found.sitename,
    }


def compare(pages: list[tuple[str, object, dict]]) -> dict:
    """Agreement of ours (Metadata) with trafilatura's (dict), over (set, ours, theirs)."""
    result: dict[str, dict] = {}
    for field, their_field in (
        ("title", "title"),
        ("author", "author"),
        ("sitename", "sitename"),
        ("published", "date"),
    ):
        counts = {
            "pages": len(pages),
            "trafilatura_finds": 0,
            "we_find": 0,
            "both_find": 0,
            "agree": 0,
            "agree_exactly": 0,
            "only_trafilatura": 0,
            "only_ours": 0,
        }
        examples = []
        for dataset, ours, theirs in pages:
            mine, their = getattr(ours, field), theirs[their_field]
            counts["trafilatura_finds"] += bool(their)
            counts["we_find"] += bool(mine)
            counts["only_trafilatura"] += bool(their) and not mine
            counts["only_ours"] += bool(mine) and not their
            if mine and their:
                counts["both_find"] += 1
                same = mine == their if field == "published" else agree(mine, their)
                counts["agree"] += same
                counts["agree_exactly"] += normalised(mine) == normalised(their)
                if not same and len(examples) < 15:
                    examples.append({"set": dataset, "ours": mine, "trafilatura": their})
        # the title's target is over every page trafilatura finds one on (ours missing: a miss)
        base = counts["trafilatura_finds"] if field == "title" else counts["both_find"]
        counts["agreement"] = round(counts["agree"] / base, 4) if base else None
        counts["agreement_base"] = (
            "pages trafilatura finds one on" if field == "title" else "pages both find one on"
        )
        result[field] = {**counts, "disagreements": examples}
    return result


def cost_rounds(pages: list[tuple[bytes, str | None, str | None]], rounds: int) -> dict:
    """CPU seconds over all pages of clean_page with and without the metadata, per round, and
    of extract_metadata alone on the parsed trees."""
    params = extract_params()
    with_it = extract.extract_metadata
    ways = {"with": with_it, "without": lambda root, url=None: NO_METADATA}
    seconds: dict[str, list[float]] = {"with": [], "without": [], "alone": []}
    texts = [extract.clean_page(b, c, params, url=u).html for b, c, u in pages]
    trees = [(parse_html(text), url) for text, (_, _, url) in zip(texts, pages)]
    try:
        for round_ in range(rounds):
            spent = {"with": 0.0, "without": 0.0}
            order = ["with", "without"] if round_ % 2 == 0 else ["without", "with"]
            for body, charset, url in pages:
                for way in order:
                    extract.extract_metadata = ways[way]
                    started = time.process_time()
                    extract.clean_page(body, charset, params, url=url)
                    spent[way] += time.process_time() - started
            for way, value in spent.items():
                seconds[way].append(value)
            started = time.process_time()
            for root, url in trees:
                extract_metadata(root, url)
            seconds["alone"].append(time.process_time() - started)
    finally:
        extract.extract_metadata = with_it
    median = {way: statistics.median(values) for way, values in seconds.items()}
    return {
        "pages": len(pages),
        "rounds": rounds,
        "cpu_seconds": seconds,
        "ms_per_page": {way: round(1000 * value / len(pages), 3) for way, value in median.items()},
        "share_of_extract": round((median["with"] - median["without"]) / median["without"], 4),
        "alone_share_of_extract": round(median["alone"] / median["without"], 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument("--gold", type=Path, default=GOLD, help="the gold sets' folder")
    parser.add_argument("--sets", nargs="+", default=list(READERS), choices=list(READERS))
    parser.add_argument("--limit", type=int, default=0, help="pages per set (0: all)")
    parser.add_argument(
        "--cost-pages", type=int, default=300, help="pages timed (spread evenly over all read)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the cost timing")
    parser.add_argument("--json", type=Path, default=RESULTS)
    args = parser.parse_args()

    params = extract_params()
    compared, bodies, skipped = [], [], 0
    per_set: dict[str, int] = {}
    for dataset in args.sets:
        for gold in iter_dataset(dataset, args.gold, args.limit):
            try:
                page = extract.clean_page(gold.html, gold.http_charset, params, url=gold.url)
            except ValueError:  # binary, too many blocks: no page for the stage either
                skipped += 1
                continue
            compared.append((dataset, page.metadata, trafilatura_metadata(page.html, gold.url)))
            bodies.append((gold.html, gold.http_charset, gold.url))
            per_set[dataset] = per_set.get(dataset, 0) + 1
    step = max(1, len(bodies) // args.cost_pages) if args.cost_pages else 1
    result = {
        "gold_sets": per_set,
        "skipped_pages": skipped,
        "agreement": compare(compared),
        "agreement_per_set": {
            dataset: {
                field: values["agreement"]
                for field, values in compare([p for p in compared if p[0] == dataset]).items()
            }
            for dataset in per_set
        },
        "cost": cost_rounds(bodies[::step][: args.cost_pages or None], args.rounds),
        "machine": machine_info(),
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    for field, values in result["agreement"].items():
        print(
            f"{field}: agreement {values['agreement']} over {values['agreement_base']} "
            f"(trafilatura finds {values['trafilatura_finds']}, we {values['we_find']}, "
            f"both {values['both_find']} of {values['pages']})"
        )
    cost = result["cost"]
    print(
        f"cost: {cost['ms_per_page']} ms a page; metadata {cost['share_of_extract']:.1%} of "
        f"extract (alone {cost['alone_share_of_extract']:.1%})"
    )


if __name__ == "__main__":
    main()
