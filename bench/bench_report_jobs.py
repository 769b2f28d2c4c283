"""Peak memory of the report's page jobs and the funnel's, each step in a fresh interpreter, on a
workflow build (the dev crawl's, built to results/report.html):

    python bench/bench_report_jobs.py --build DIR [--commit c4aaa72]

Steps: `report_shard` (summarise_shard, each shard), `report_summary` (merge_summaries of the
shards' files), `report` (render_report from the small files), `funnel_shard` (count_shard, each
shard) and `funnel` (the shards' counts added up). Each prints the interpreter's peak RSS after
its imports (pandas, pyarrow, matplotlib among them) and after the step; what the step holds is
the difference, set against the shard's documents and tokens to project it. The job logs'
`resources:` lines carry the same peaks with Snakemake's script wrapper (211 MB here), which hides
steps this small.

Results go to bench/results/report_jobs.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "results" / "report_jobs.json"

PRELUDE = """
import json, resource, sys
from pathlib import Path
from corpusbuilder.contracts.files import FILES
from corpusbuilder.contracts.tables import ShardTables
from corpusbuilder.contracts.reportfiles import read_page_summary
from corpusbuilder.report.summary import merge_summaries, summarise_shard
from corpusbuilder.report.html_report import ReportFiles, render_report
from corpusbuilder.funnel import FunnelCounts, count_shard, read_counts
from corpusbuilder.report.rendering import _pyplot
import pandas, pyarrow.parquet
_pyplot()  # the libraries every step imports when first called: part of the baseline
build = Path(sys.argv[1]); shard = sys.argv[2]; shards = sys.argv[3].split(",")
def tables(name):
    return ShardTables(*(build / getattr(FILES, s).format(shard=name)
        for s in ("docs", "blocks", "language", "exact", "dedup")), name,
        build / FILES.quality.format(shard=name))
peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
before = peak()
"""

STEPS = {
    "report_shard": "summarise_shard(tables(shard))",
    "report_summary": (
        "merge_summaries(read_page_summary(build / FILES.report_shard_summary.format(shard=s)) "
        "for s in shards)"
    ),
    "report": (
        "render_report(ReportFiles(*(build / getattr(FILES, f) for f in ('funnel_full', "
        "'duplicates', 'stage_times', 'summary', 'report_summary')), "
        "skipped=build / FILES.skipped))"
    ),
    "funnel_shard": "count_shard(tables(shard))",
    "funnel": (
        "sum((read_counts(build / FILES.funnel_counts.format(shard=s)) for s in shards), "
        "FunnelCounts())"
    ),
}
PER_SHARD = ("report_shard", "funnel_shard")


def run(step: str, build: Path, shard: str, shards: list[str]) -> dict:
    code = PRELUDE + STEPS[step] + "\nprint(json.dumps([before, peak()]))"
    result = subprocess.run(
        [sys.executable, "-c", code, str(build), shard, ",".join(shards)],
        capture_output=True,
        text=True,
        check=True,
    )
    before, after = json.loads(result.stdout.strip().splitlines()[-1])
    return {"modules_mb": round(before), "peak_mb": round(after), "held_mb": round(after - before)}


def shard_size(build: Path, shard: str) -> dict:
    import pyarrow.parquet as pq

    from corpusbuilder.contracts.files import FILES

    docs = pq.ParquetFile(build / FILES.docs.format(shard=shard)).metadata.num_rows
    blocks = pq.ParquetFile(build / FILES.blocks.format(shard=shard)).metadata.num_rows
    tables = sum(
        (build / getattr(FILES, stage).format(shard=shard)).stat().st_size
        for stage in ("docs", "blocks", "language", "exact", "dedup", "quality")
    )
    return {"documents": docs, "blocks": blocks, "tables_mb": round(tables / 2**20, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, required=True)
    parser.add_argument("--commit", default="")
    args = parser.parse_args()
    build = args.build.resolve()
    shards = sorted(p.name.split(".")[0] for p in (build / "work" / "extract").glob("*.docs.*"))
    found: dict = {"build": str(args.build), "commit": args.commit, "steps": {}}
    for step in STEPS:
        if step in PER_SHARD:
            found["steps"][step] = {
                shard: {**shard_size(build, shard), **run(step, build, shard, shards)}
                for shard in shards
            }
        else:
            found["steps"][step] = {"shards": len(shards), **run(step, build, "", shards)}
        print(step, json.dumps(found["steps"][step]), flush=True)
    OUT.write_text(json.dumps(found, indent=1) + "\n")
    print(f"{OUT} written")


if __name__ == "__main__":
    main()
