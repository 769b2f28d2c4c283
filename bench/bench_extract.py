#!/usr/bin/env python3
"""Pages per second per core of the `best` preset and our jusText against the `justext`
package, trafilatura and resiliparse: the same pages, one process, CPU time.

Each extractor starts from the same decoded page (a str; decoding is left out because the
extractors would share it) and does its whole job on it:

- ``best``: parse + segmentation (§2.7.1) + the 84 block features + the gradient-boosted trees;
- ``best-python-walks``: the same with the Python versions of segmentation, features and trees, as a
  package built without a C compiler runs it (listed when the compiled modules are built);
- ``best-peers-resiliparse``, ``best-peers-all``: ``best`` with ``extract.peers`` (resiliparse,
  or it, trafilatura and readability-lxml, run on the page first, their output read as block
  features);
- ``justext-default``: parse + segmentation + Algorithms 2.2 and 2.3
  (thesis §2.7), the `default` preset;
- ``justext-package``: the reference ``justext`` 3.0.2 with the same stop list;
- ``trafilatura``, ``resiliparse``: their main-content extraction as the evaluation calls them;
- ``lxml-parse-only``: `best`'s parse alone (`segmentation.parse_html`, libxml2 through lxml), the
  floor of our extractors' time.

Stop words are counted with the package's English list on every page, for ours and the
package alike (the language guess that picks the list in the extract stage is left out).
Pages: L3S-GN1 originals, CleanEval-final inputs, fundus and msv-chaos pages from ../shared,
spread evenly over the four. Page by page, every extractor runs once, in an order that rotates
from page to page and round to round, so load from elsewhere on the machine hits all alike;
each call is timed in CPU time (``time.process_time``). The median of the rounds is reported,
and every speed also as a ratio to the package in the same round, which moves far less with
the machine's load than the absolute figures.

    python bench/bench_extract.py                # 300 pages, 3 rounds -> bench/results/extract.json
    python bench/bench_extract.py --limit 60 --rounds 1 --json /tmp/extract.json
    python bench/bench_extract.py --profile best # where the best preset's time goes (cProfile)
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import platform
import pstats
import statistics
import sys
import time
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

try:  # the peers it is measured against come from the `peers` extra
    import justext as reference
    import trafilatura
    from justext.core import decode_html
    from resiliparse.extract.html2text import extract_plain_text
except ModuleNotFoundError as missing:
    sys.exit(
        f"bench_extract: {missing.name} is not installed; the peers come with pip install -e "
        "'.[dev,peers]'"
    )

from corpusbuilder.common.package_data import shipped_peer_model  # noqa: E402
from corpusbuilder.extraction import (
    compiled_module_users,  # noqa: E402
    missing_compiled_modules,  # noqa: E402
    segmentation,  # noqa: E402
)
from corpusbuilder.extraction import justext as ours  # noqa: E402
from corpusbuilder.extraction.classifier import page_title  # noqa: E402
from corpusbuilder.extraction.model import (  # noqa: E402
    classify_learned,
    classify_page,
    load_model,
)

DEFAULT_SHARED = REPO.parent / "shared"
DEFAULT_JSON = REPO / "bench" / "results" / "extract.json"
DATASETS = ("l3s-gn1/original", "cleaneval-final/input", "fundus/input", "msv-chaos/input")
PACKAGE = "justext-package"


def page_paths(shared: Path, limit: int) -> list[Path]:
    """``limit`` pages, as even a share of each dataset as it has pages for, each share spread
    over its dataset in name order."""
    folders = [
        sorted((shared / "datasets" / "boilerplate" / folder).glob("*.html")) for folder in DATASETS
    ]
    folders = [paths for paths in folders if paths]
    paths = []
    for i, folder in enumerate(sorted(folders, key=len)):
        share = min(len(folder), (limit - len(paths)) // (len(folders) - i))
        paths += [folder[int(k * len(folder) / share)] for k in range(share)]
    return paths


def run_best(html: str, stoplist: frozenset[str]) -> list[str]:
    """The `best` preset on one page: parse, segment (§2.7.1), learned block classes."""
    root = segmentation.parse_html(html)
    return classify_learned(segmentation.segment_blocks(root, stoplist), page_title(root))


def run_best_with_peers(choice: str):
    """`best` with ``extract.peers``: the chosen peers run on the page, then their model."""

    learned = load_model(shipped_peer_model(choice, comments=True))

    def run(html: str, stoplist: frozenset[str]) -> list[str]:
        root = segmentation.parse_html(html)
        blocks = segmentation.segment_blocks(root, stoplist)
        return classify_page(blocks, page_title(root), html, learned)

    return run


# Where each compiled module is used (setup.py builds them; the module falls back to Python)
COMPILED_USERS = compiled_module_users()


@contextmanager
def python_walks():
    """Run as a package built without a C compiler runs: without corpusbuilder.extraction's
    compiled modules (_walk, _trees, _features, _classes)."""
    compiled = [getattr(module, name) for module, name in COMPILED_USERS]
    for module, name in COMPILED_USERS:
        setattr(module, name, None)
    try:
        yield
    finally:
        for (module, name), value in zip(COMPILED_USERS, compiled, strict=True):
            setattr(module, name, value)


def run_best_python(html: str, stoplist: frozenset[str]) -> list[str]:
    """`best` with the Python walks (segmentation, features and trees), same results."""
    with python_walks():
        return run_best(html, stoplist)


EXTRACTORS = {
    "best": run_best,
    **({"best-python-walks": run_best_python} if not missing_compiled_modules() else {}),
    "best-peers-resiliparse": run_best_with_peers("resiliparse"),
    "best-peers-all": run_best_with_peers("all"),
    "justext-default": ours.justext,
    PACKAGE: reference.justext,
    "trafilatura": lambda html, stoplist: trafilatura.extract(html),
    "resiliparse": lambda html, stoplist: extract_plain_text(html, main_content=True),
    # what every lxml-based extractor pays before it looks at the page: issue 58 item 7 asks
    # `best` for resiliparse's speed, whose whole extraction is a little slower than this alone
    "lxml-parse-only": lambda html, stoplist: segmentation.parse_html(html),
}


def usable_pages(pages: list[str], stoplist: frozenset[str]) -> tuple[list[str], int]:
    """Pages every extractor processes; also warms all of them up. The package raises on a few."""
    usable = []
    for html in pages:
        try:
            for run in EXTRACTORS.values():
                run(html, stoplist)
        except Exception:  # noqa: BLE001 — a page any extractor fails on is left out for all
            continue
        usable.append(html)
    return usable, len(pages) - len(usable)


def time_round(pages: list[str], stoplist: frozenset[str], round_index: int) -> dict[str, float]:
    """CPU seconds each extractor spends on all pages."""
    names = list(EXTRACTORS)
    seconds = dict.fromkeys(names, 0.0)
    clock = time.process_time
    for i, html in enumerate(pages):
        shift = (i + round_index) % len(names)
        for name in names[shift:] + names[:shift]:
            run = EXTRACTORS[name]
            start = clock()
            run(html, stoplist)
            seconds[name] += clock() - start
    return seconds


def machine_info() -> dict:
    return {
        "platform": platform.platform(),
        "processor": platform.processor(),
        "cpu_count": os.cpu_count(),
        "load_average": os.getloadavg(),
        "python": platform.python_version(),
        **{
            package: version(package)
            for package in ("lxml", "numpy", "jusText", "trafilatura", "resiliparse")
        },
    }


def profile(name: str, pages: list[str], stoplist: frozenset[str], top: int = 30) -> None:
    profiler = cProfile.Profile()
    run = EXTRACTORS[name]
    profiler.enable()
    for html in pages:
        run(html, stoplist)
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--limit", type=int, default=300, help="pages, spread over the datasets (default 300)"
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="timed rounds over all pages (default 3)"
    )
    parser.add_argument(
        "--shared", type=Path, default=DEFAULT_SHARED, help="the shared/ folder (default ../shared)"
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=DEFAULT_JSON,
        metavar="OUT",
        help=f"where to write the results (default {DEFAULT_JSON.relative_to(REPO)})",
    )
    parser.add_argument(
        "--profile", choices=sorted(EXTRACTORS), help="cProfile one extractor instead of timing"
    )
    args = parser.parse_args(argv)

    paths = page_paths(args.shared, args.limit)
    if not paths:
        parser.error(f"no pages under {args.shared / 'datasets' / 'boilerplate'}")
    stoplist = reference.get_stoplist("English")
    pages, failed = usable_pages([decode_html(path.read_bytes()) for path in paths], stoplist)
    print(
        f"{len(pages)} pages ({sum(map(len, pages)) / 1e6:.1f} M characters); "
        f"{failed} left out because an extractor raises on them"
    )
    if args.profile:
        profile(args.profile, pages, stoplist)
        return 0

    rounds = []
    for round_index in range(args.rounds):
        gc.collect()
        seconds = time_round(pages, stoplist, round_index)
        rounds.append(
            {
                "pages_per_s": {name: len(pages) / s for name, s in seconds.items()},
                "ratio_to_package": {name: seconds[PACKAGE] / s for name, s in seconds.items()},
            }
        )
        print(
            f"round {round_index + 1}: "
            + ", ".join(f"{name} {speed:.0f}" for name, speed in rounds[-1]["pages_per_s"].items())
            + " pages/s"
        )

    result = {
        "pages": len(pages),
        "skipped_pages": failed,
        "datasets": list(DATASETS),
        "timing": "CPU time (process_time) per call, median of rounds",
        "compiled_walks": not missing_compiled_modules(),
        "pages_per_s": {
            name: statistics.median(r["pages_per_s"][name] for r in rounds) for name in EXTRACTORS
        },
        "ratio_to_package": {
            name: statistics.median(r["ratio_to_package"][name] for r in rounds)
            for name in EXTRACTORS
        },
        "rounds": rounds,
        "machine": machine_info(),
    }
    print(f"\n{'extractor':<18} {'pages/s':>8} {'× package':>10}")
    for name in EXTRACTORS:
        print(
            f"{name:<18} {result['pages_per_s'][name]:>8.1f} "
            f"{result['ratio_to_package'][name]:>9.2f}×"
        )
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
