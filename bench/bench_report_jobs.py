"""Peak memory of the report's page jobs and the funnel's, each step in a fresh interpreter, on a
workflow build (the dev crawl's, built to results/report.html):

    python bench/bench_report_jobs.py --build DIR [--commit c4aaa72]
    python bench/bench_report_jobs.py --build DIR --merges-only --repeat 32  # a partitioned build

Steps: `report_shard` (summarise_shard, each shard), `report_summary` (merge_summaries of the
shards' files), `report` (render_report from the small files), `funnel_shard` (count_shard, each
shard: export's last step now) and `funnel` (the shards' counts added up). Each prints the
interpreter's peak RSS after its imports (pandas, pyarrow, matplotlib among them) and after the
step; what the step holds is the difference, set against the shard's documents and tokens to
project it. The job logs' `resources:` lines carry the same peaks with Snakemake's script
wrapper (211 MB here), which hides steps this small.

The corpus-wide jobs that read a small file a shard (`funnel` with its provenance record,
`report_summary`, `corpus_stats`'s merge, `dedup_merge`, `dedup_documents`) are measured again on
the shards' files (and the report's range counts) listed `--repeat` times: what one more shard
costs them in memory (`per_shard_mb`, the growth over the extra entries) and in CPU time
(`per_shard_s`), which bench/project_scale.py adds to the scale run's peak and time for the
shards of 10^11 and 10^12 words. `report_summary`'s is what any merge job of the page summaries'
tree (report.summary.merge_tree: no job reads more than 64) pays a file it reads, a merged file
costing what a shard's does (10,000 documents' signals either way): project_scale.py times each
merge job by the files it reads. `corpus_stats`' step reads every shard's part of the
resemblance sample (the file a shard it opens), but pairs no signatures: the sample is
`report.resemblance_sample` 10-gram occurrences whatever the shards, held in the scale run's
peak; here each part is read whole and let go, so the step's growth is the files' reading
(an upper bound in time: at more shards each part is smaller) and no more memory.

Results go to bench/results/report_jobs.json (the merges under `merges`, kept when only they run).
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
from corpusbuilder.report.corpus_stats import merge_measures
from corpusbuilder.report.ngram_counts import DuplicateCounts
from corpusbuilder.contracts.reportfiles import read_range_counts, read_sample, read_shard_totals
from corpusbuilder.contracts.stamps import file_writer
from corpusbuilder.contracts.tokenfile import document_count
from corpusbuilder.common.provenance import provenance
from corpusbuilder.dedup.corpus import DedupStats
from corpusbuilder.dedup.partitioned import sum_stats
import pandas, pyarrow.parquet
_pyplot()  # the libraries every step imports when first called: part of the baseline
build = Path(sys.argv[1]); shard = sys.argv[2]; shards = sys.argv[3].split(",")
# the report's ranges follow the shards (sizing.SHARDS_PER_REPORT_RANGE): listed as often
repeat = int(sys.argv[4])
ranges = sorted((build / FILES.report_range_counts).parent.glob("*.json")) * repeat
def tables(name):
    return ShardTables(*(build / getattr(FILES, s).format(shard=name)
        for s in ("docs", "blocks", "language", "exact", "dedup")), name,
        build / FILES.quality.format(shard=name))
peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
before = peak()
started = cpu()
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
# Each step reads its files in the order listed; a shard listed again is read again (as another
# shard's files would be), its entries kept apart by their position.
MERGES = {
    "funnel": (
        "total = sum((read_counts(build / FILES.funnel_counts.format(shard=s)) for s in shards), "
        "FunnelCounts())\n"
        "writers = {stage: {f'{i}:{s}': file_writer(build / getattr(FILES, stage).format(shard=s))"
        " for i, s in enumerate(shards)} for stage in ('docs', 'language', 'exact', 'quality', "
        "'tokens')}\n"
        "record = provenance({}, None, writers)"
    ),
    "report_summary": STEPS["report_summary"],
    "corpus_stats": (
        "counts = [read_range_counts(path) for path in ranges]\n"
        "sampled = sum(len(read_sample(build / FILES.report_sample.format(shard=s))) "
        "for s in shards)\n"
        "merge_measures(pandas.read_csv(build / FILES.funnel, sep='\\t'), "
        "[read_shard_totals(build / FILES.report_totals.format(shard=s)) for s in shards], "
        "DuplicateCounts(), DuplicateCounts())"
    ),
    "dedup_merge": (
        "sum_stats([DedupStats(**json.loads((build / FILES.dedup_shard_stats.format(shard=s))"
        ".read_text())) for s in shards])"
    ),
    "dedup_documents": "[document_count(build / FILES.tokens.format(shard=s)) for s in shards]",
}


def run(step: str, build: Path, shard: str, shards: list[str], repeat: int = 1) -> dict:
    code = (
        PRELUDE
        + {**STEPS, **MERGES}[step]
        + "\nprint(json.dumps([before, peak(), cpu() - started]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(build), shard, ",".join(shards), str(repeat)],
        capture_output=True,
        text=True,
        check=True,
    )
    before, after, cpu_s = json.loads(result.stdout.strip().splitlines()[-1])
    held = round(after - before, 1)
    return {
        "modules_mb": round(before),
        "peak_mb": round(after),
        "held_mb": held,
        "cpu_s": round(cpu_s, 3),
    }


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
    parser.add_argument(
        "--repeat",
        type=int,
        default=16,
        help="the corpus-wide merges read every shard's files this many times too",
    )
    parser.add_argument(
        "--merges-only", action="store_true", help="measure the corpus-wide merges alone"
    )
    args = parser.parse_args()
    build = args.build.resolve()
    shards = sorted(p.name.split(".")[0] for p in (build / "work" / "extract").glob("*.docs.*"))
    found: dict = json.loads(OUT.read_text()) if args.merges_only and OUT.exists() else {}
    if not args.merges_only:
        found = {"build": str(args.build), "commit": args.commit, "steps": {}}
    found["merges"] = {"build": str(args.build), "commit": args.commit, "steps": {}}
    for step in MERGES:
        once, again = (run(step, build, "", shards * k, k) for k in (1, args.repeat))
        extra = len(shards) * (args.repeat - 1)
        found["merges"]["steps"][step] = {
            "shards": len(shards),
            "repeat": args.repeat,
            "once": once,
            "repeated": again,
            "per_shard_mb": max(again["held_mb"] - once["held_mb"], 0) / extra,
            "per_shard_s": max(again["cpu_s"] - once["cpu_s"], 0) / extra,
        }
        print(step, json.dumps(found["merges"]["steps"][step]), flush=True)
    for step in [] if args.merges_only else STEPS:
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
