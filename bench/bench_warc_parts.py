"""Benchmark the `warc_parts` job: one reading of a WARC whole (no HTML work) that finds where its
parts begin — its CPU seconds per gzip'd byte and its peak RSS, which bench/project_scale.py
reads for the job a split WARC adds; beside it, extract's CPU seconds per gzip'd byte of the
SLURM scale run, the work it saves nothing of.

    python bench/bench_warc_parts.py [--parts 8] [WARC ...]   # → bench/results/warc_parts.json

By default the dev crawl's WARCs (../shared/datasets/crawl/dev); best of `--rounds`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from corpusbuilder.config import validate_config
from corpusbuilder.extraction.extract import ExtractParams
from corpusbuilder.extraction.warc_parts import index_parts

HERE = Path(__file__).resolve().parent
CRAWL = HERE.parent.parent / "shared" / "datasets" / "crawl" / "dev"
SCALE = HERE / "results" / "scale_slurm_partitioned.json"
OUT = HERE / "results" / "warc_parts.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("warcs", nargs="*", type=Path)
    parser.add_argument("--parts", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    warcs = args.warcs or sorted(CRAWL.glob("*.warc.gz"))
    if not warcs:
        parser.error(f"no WARCs given and none in {CRAWL}")
    params = ExtractParams.from_config(validate_config({})["extract"])
    size = sum(path.stat().st_size for path in warcs)
    best = float("inf")
    for _ in range(args.rounds):
        started = time.process_time()
        for path in warcs:
            index_parts(path, params, args.parts)
        best = min(best, time.process_time() - started)
    scale = json.loads(SCALE.read_text())
    extract = scale["rules"]["extract"]["cpu_time"] / scale["crawl"]["file_bytes"]
    result = {
        "date": datetime.date.today().isoformat(),
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE
        ).stdout.strip(),
        "how_run": "python bench/bench_warc_parts.py " + " ".join(argv or sys.argv[1:]),
        "warcs": [path.name for path in warcs],
        "gzip_bytes": size,
        "parts": args.parts,
        "cpu_s": round(best, 3),
        "s_per_gzip_byte": best / size,
        "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "extract_s_per_gzip_byte": extract,
        "share_of_extract": best / size / extract,
    }
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(
        f"{len(warcs)} WARCs, {size / 1e6:.1f} MB: {best:.2f} s of CPU, "
        f"{size / best / 1e6:.1f} MB/s, peak RSS {result['max_rss_mb']:.0f} MB; "
        f"{result['share_of_extract']:.3f} of extract's CPU a byte (scale run)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
