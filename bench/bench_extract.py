#!/usr/bin/env python3
"""Pages per second of our jusText (corpusbuilder.justext), or of the learned `best` preset
(``--preset best``: jusText's segmentation + corpusbuilder.classifier), against the reference
`justext` package.

Both run parse + preprocessing + segmentation + classification (thesis §2.7) on the same decoded
pages — L3S-GN1 originals and CleanEval inputs from ../shared — in the same process, page by
page, alternating which one goes first, so that load from elsewhere on the machine hits both
alike. Each round times every page once for each; the median round is reported.

    python bench/bench_extract.py                     # all pages, 3 rounds
    python bench/bench_extract.py --limit 200 --json bench.json
    python bench/bench_extract.py --limit 100 --profile   # where our time goes
    python bench/bench_extract.py --limit 400 --preset best --json bench/results/extract_best.json
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
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import justext as reference  # noqa: E402  (the package, a dev dependency)
from justext.core import decode_html  # noqa: E402

from corpusbuilder import justext as ours  # noqa: E402
from corpusbuilder.classifier import classify_learned, page_title  # noqa: E402

DEFAULT_SHARED = REPO.parent / "shared"


def page_paths(shared: Path) -> list[Path]:
    """L3S-GN1 originals, then CleanEval dev and final inputs, each in name order."""
    boilerplate = shared / "datasets" / "boilerplate"
    return (
        sorted((boilerplate / "l3s-gn1" / "original").glob("*.html"))
        + sorted((boilerplate / "cleaneval-dev" / "input").glob("*.html"))
        + sorted((boilerplate / "cleaneval-final" / "input").glob("*.html"))
    )


def evenly_spaced(items: list, limit: int | None) -> list:
    """A deterministic subset spread over all datasets rather than the first few of one."""
    if limit is None or limit >= len(items):
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def load_pages(paths: list[Path]) -> list[str]:
    """Decode each page once, as the package would (meta charset, else UTF-8), for both sides."""
    return [decode_html(path.read_bytes()) for path in paths]


def run_best(html: str, stoplist: frozenset[str]) -> list[str]:
    """The `best` preset on one page: parse, segment (§2.7.1), learned block classes."""
    root = ours.parse_html(html)
    return classify_learned(ours.segment_blocks(root, stoplist), page_title(root))


RUNNERS = {"justext": ours.justext, "best": run_best}


def usable_pages(pages: list[str], stoplist: frozenset[str], run_ours) -> tuple[list[str], int]:
    """Pages both implementations process; also warms both up. The package raises on a few."""
    usable = []
    for html in pages:
        try:
            reference.justext(html, stoplist)
        except Exception:  # noqa: BLE001 — any failure of the reference excludes the page
            continue
        run_ours(html, stoplist)
        usable.append(html)
    return usable, len(pages) - len(usable)


def time_round(pages: list[str], stoplist: frozenset[str], round_index: int, run_ours) -> tuple[float, float]:
    """Seconds spent by ours and by the package on all pages, alternating who goes first."""
    ours_seconds = 0.0
    reference_seconds = 0.0
    clock = time.perf_counter
    for i, html in enumerate(pages):
        if (i + round_index) % 2:
            start = clock()
            run_ours(html, stoplist)
            middle = clock()
            reference.justext(html, stoplist)
            end = clock()
            ours_seconds += middle - start
            reference_seconds += end - middle
        else:
            start = clock()
            reference.justext(html, stoplist)
            middle = clock()
            run_ours(html, stoplist)
            end = clock()
            reference_seconds += middle - start
            ours_seconds += end - middle
    return ours_seconds, reference_seconds


def machine_info() -> dict:
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "lxml": version("lxml"),
        "justext": version("jusText"),
    }


def profile_ours(pages: list[str], stoplist: frozenset[str], top: int, run_ours) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    for html in pages:
        run_ours(html, stoplist)
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="use N pages spread evenly over the datasets")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds over all pages (default 3)")
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="the shared/ folder (default ../shared)")
    parser.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the results as JSON")
    parser.add_argument("--profile", action="store_true", help="cProfile our implementation instead of timing")
    parser.add_argument("--preset", choices=sorted(RUNNERS), default="justext",
                        help="ours = jusText (default preset) or best (the learned classifier)")
    args = parser.parse_args(argv)

    paths = evenly_spaced(page_paths(args.shared), args.limit)
    if not paths:
        parser.error(f"no pages under {args.shared / 'datasets' / 'boilerplate'}")
    stoplist = reference.get_stoplist("English")
    run_ours = RUNNERS[args.preset]
    pages, failed = usable_pages(load_pages(paths), stoplist, run_ours)
    print(f"{len(pages)} pages ({sum(map(len, pages)) / 1e6:.1f} M characters); "
          f"{failed} skipped because the package raises on them")

    if args.profile:
        profile_ours(pages, stoplist, top=25, run_ours=run_ours)
        return 0

    rounds = []
    for round_index in range(args.rounds):
        gc.collect()
        ours_seconds, reference_seconds = time_round(pages, stoplist, round_index, run_ours)
        rounds.append({
            "ours_pages_per_s": len(pages) / ours_seconds,
            "justext_pages_per_s": len(pages) / reference_seconds,
            "ratio": reference_seconds / ours_seconds,
        })
        print(f"round {round_index + 1}: ours {rounds[-1]['ours_pages_per_s']:.1f} pages/s, "
              f"justext {rounds[-1]['justext_pages_per_s']:.1f} pages/s, ratio {rounds[-1]['ratio']:.2f}x")

    result = {
        "preset": args.preset,
        "pages": len(pages),
        "skipped_pages": failed,
        "rounds": rounds,
        "ours_pages_per_s": statistics.median(r["ours_pages_per_s"] for r in rounds),
        "justext_pages_per_s": statistics.median(r["justext_pages_per_s"] for r in rounds),
        "ratio": statistics.median(r["ratio"] for r in rounds),
        "machine": machine_info(),
    }
    print(f"median: ours {result['ours_pages_per_s']:.1f} pages/s, "
          f"justext {result['justext_pages_per_s']:.1f} pages/s, ratio {result['ratio']:.2f}x")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
