#!/usr/bin/env python3
"""What the Python API costs over the extract stage's own code, measured in the same process:

- page: ``corpusbuilder.clean_html(body)`` against the extract stage's own call for a record,
  ``extraction.extract.clean_page(body, http_charset, params)`` with the settings resolved once
  and the charset of the record's HTTP header, on the same HTML responses of a WARC, alternating
  page by page; CPU time (``time.process_time``), median of rounds. Beside them, ``core``: what
  bench_extract.py times as `best` (parse, segmentation, the learned classes of the page already
  decoded, with one stop list): the stage also decodes the bytes, guesses the page's language for
  its stop list and keeps jusText's context-free classes, so ``core`` is faster than both.
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
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))
from run_all import machine_info  # noqa: E402

import corpusbuilder  # noqa: E402
from corpusbuilder.api import extract_params  # noqa: E402
from corpusbuilder.common.stoplists import load_stoplist  # noqa: E402
from corpusbuilder.download.sources import shard_name  # noqa: E402
from corpusbuilder.extraction.classifier import page_title  # noqa: E402
from corpusbuilder.extraction.extract import clean_page, extract_shard  # noqa: E402
from corpusbuilder.extraction.model import classify_learned, load_model  # noqa: E402
from corpusbuilder.extraction.segmentation import parse_html, segment_blocks  # noqa: E402
from corpusbuilder.extraction.warc import iter_warc_records  # noqa: E402

RESULTS = HERE / "results" / "api.json"
DEV_WARC = REPO.parent / "shared" / "datasets" / "crawl" / "dev" / "crawl-01.warc.gz"
SAMPLE_WARC = REPO / "resources" / "sample" / "sample-00.warc.gz"


@dataclass(frozen=True)
class Response:
    body: bytes
    http_charset: str | None  # the record's Content-Type charset, which the stage passes on
    html: str  # the body decoded, as `core` starts from it


def page_bodies(warc: Path, limit: int) -> list[Response]:
    """The first ``limit`` HTML bodies of the WARC that clean (not binary, not too many blocks)."""
    params, bodies = extract_params(), []
    for record in iter_warc_records(warc, params):
        try:
            if record.body and len(bodies) < limit:
                page = clean_page(record.body, record.http_charset, params)
                bodies.append(Response(record.body, record.http_charset, page.html))
        except ValueError:
            continue
    return bodies


def page_rounds(bodies: list[Response], rounds: int) -> dict:
    """CPU seconds of each way over all pages, per round; the ways alternate page by page, in an
    order that rotates from round to round."""
    params = extract_params()
    model, english = load_model(params.model_file), load_stoplist("English")

    def core(html: str) -> list[str]:
        root = parse_html(html)
        return classify_learned(segment_blocks(root, english, True), page_title(root), model)

    ways = {
        "api": lambda page: corpusbuilder.clean_html(page.body),
        "stage": lambda page: clean_page(page.body, page.http_charset, params),
        "core": lambda page: core(page.html),
    }
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    for round_ in range(rounds):
        spent = dict.fromkeys(ways, 0.0)
        order = [*ways][round_ % len(ways) :] + [*ways][: round_ % len(ways)]
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
        **(
            {"ratio_core_over_api": round(median["core"] / median["api"], 3)}
            if "core" in median
            else {}
        ),
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
    corpusbuilder.clean_html(bodies[0].body)  # the model and stop lists loaded before timing
    pages = summary(page_rounds(bodies, args.rounds), len(bodies))
    warc_seconds, documents = warc_rounds(args.warc, args.warc_rounds)
    result = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "commit": subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip(),
        "warc": args.warc.name,
        "page": {"pages": len(bodies), "rounds": args.rounds, **pages},
        "warc_run": {"documents": documents, **summary(warc_seconds, documents)},
        "machine": machine_info(),
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"pages/s (CPU): {pages['per_second']}, stage/api {pages['ratio_stage_over_api']}, "
        f"core/api {pages['ratio_core_over_api']}"
    )
    print(
        f"WARC documents/s (CPU): {result['warc_run']['per_second']}, "
        f"stage/api {result['warc_run']['ratio_stage_over_api']} ({documents} documents)"
    )


if __name__ == "__main__":
    main()
