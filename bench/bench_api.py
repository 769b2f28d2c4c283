#!/usr/bin/env python3
"""What the Python API costs over the extract stage's own code, measured in the same process:

- page: ``corpusbuilder.clean_html(body)`` against ``extraction.extract.clean_page`` with the
  settings resolved once (what the stage calls for each record), on the same HTML responses of a
  WARC, the two alternating page by page; CPU time (``time.process_time``), median of rounds.
- warc: ``corpusbuilder.iter_documents(warc)`` (documents in memory) against ``extract_shard``
  (the stage: docs and blocks tables written to Parquet) on the same WARC, alternating per round.

Ratio = stage CPU time ÷ API CPU time (> 1: the API is faster). Both run the `best` preset, the
default. The WARC is a dev-crawl shard from ../shared, else the bundled sample.

    python bench/bench_api.py                   # crawl-01, 3 rounds of pages, 1 of the WARC
    python bench/bench_api.py --warc resources/sample/sample-00.warc.gz --rounds 1

Results go to bench/results/api.json (the machine description beside them).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))
from run_all import machine_info  # noqa: E402

import corpusbuilder  # noqa: E402
from corpusbuilder.api import extract_params  # noqa: E402
from corpusbuilder.download.sources import shard_name  # noqa: E402
from corpusbuilder.extraction.extract import clean_page, extract_shard  # noqa: E402
from corpusbuilder.extraction.warc import iter_warc_records  # noqa: E402

RESULTS = HERE / "results" / "api.json"
DEV_WARC = REPO.parent / "shared" / "datasets" / "crawl" / "dev" / "crawl-01.warc.gz"
SAMPLE_WARC = REPO / "resources" / "sample" / "sample-00.warc.gz"


def page_bodies(warc: Path, limit: int) -> list[bytes]:
    """The first ``limit`` HTML bodies of the WARC that clean (not binary, not too many blocks)."""
    params, bodies = extract_params(), []
    for record in iter_warc_records(warc, params):
        try:
            if record.body and len(bodies) < limit:
                clean_page(record.body, None, params)
                bodies.append(record.body)
        except ValueError:
            continue
    return bodies


def page_rounds(bodies: list[bytes], rounds: int) -> dict:
    """CPU seconds of each way over all pages, per round; the two alternate page by page."""
    params = extract_params()
    ways = {
        "api": lambda body: corpusbuilder.clean_html(body),
        "stage": lambda body: clean_page(body, None, params),
    }
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    for round_ in range(rounds):
        spent = dict.fromkeys(ways, 0.0)
        order = list(ways) if round_ % 2 == 0 else list(reversed(ways))
        for body in bodies:
            for name in order:
                started = time.process_time()
                ways[name](body)
                spent[name] += time.process_time() - started
        for name in ways:
            seconds[name].append(spent[name])
    return seconds


def warc_rounds(warc: Path, rounds: int) -> tuple[dict, int]:
    """CPU seconds of iter_documents and of extract_shard over the WARC, per round."""
    seconds: dict[str, list[float]] = {"api": [], "stage": []}
    documents = 0
    name = shard_name(str(warc))
    with tempfile.TemporaryDirectory() as scratch:
        paths = Path(scratch) / "docs.parquet", Path(scratch) / "blocks.parquet"
        for round_ in range(rounds):
            for way in ("api", "stage") if round_ % 2 == 0 else ("stage", "api"):
                started = time.process_time()
                if way == "api":
                    documents = sum(1 for _ in corpusbuilder.iter_documents(warc))
                else:
                    extract_shard([(name, warc)], name, *paths, extract_params())
                seconds[way].append(time.process_time() - started)
    return seconds, documents


def summary(seconds: dict, units: int) -> dict:
    median = {name: statistics.median(values) for name, values in seconds.items()}
    return {
        "cpu_seconds": seconds,
        "per_second": {name: round(units / value, 1) for name, value in median.items()},
        "ratio_stage_over_api": round(median["stage"] / median["api"], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warc", type=Path, default=DEV_WARC if DEV_WARC.exists() else SAMPLE_WARC)
    parser.add_argument("--limit", type=int, default=300, help="pages of the WARC timed one by one")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over the pages")
    parser.add_argument("--warc-rounds", type=int, default=1, help="rounds over the whole WARC")
    parser.add_argument("--json", type=Path, default=RESULTS)
    args = parser.parse_args()
    bodies = page_bodies(args.warc, args.limit)
    corpusbuilder.clean_html(bodies[0])  # the model and stop lists loaded before timing
    pages = summary(page_rounds(bodies, args.rounds), len(bodies))
    warc_seconds, documents = warc_rounds(args.warc, args.warc_rounds)
    result = {
        "warc": args.warc.name,
        "page": {"pages": len(bodies), "rounds": args.rounds, **pages},
        "warc_run": {"documents": documents, **summary(warc_seconds, documents)},
        "machine": machine_info(),
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(f"pages/s (CPU): {pages['per_second']}, stage/api {pages['ratio_stage_over_api']}")
    print(
        f"WARC documents/s (CPU): {result['warc_run']['per_second']}, "
        f"stage/api {result['warc_run']['ratio_stage_over_api']} ({documents} documents)"
    )


if __name__ == "__main__":
    main()
