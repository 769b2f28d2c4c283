"""Benchmark the quality stage against the extract stage: CPU time on the dev crawl, as a ratio.

Issue 41's target: the quality stage costs at most 10 % of the extract stage's CPU time. Each
shard of the dev crawl (../shared/datasets/crawl/dev) is extracted here (`extract_shard`, the
configured defaults) and every page extract cleaned with a good block is then scored
(`quality_table`, every rule set) — more documents than the stage sees in the workflow, where
language filtering and de-duplication come first, so the ratio is an upper bound. Both run in
this process, timed with ``time.process_time`` (CPU time, so other load on the machine matters
less), ``--rounds`` times; the medians are reported.

    python bench/bench_quality.py                 # writes bench/results/quality.json
    python bench/bench_quality.py --shards 1 --rounds 1 --out -
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from corpusbuilder.contracts.corpus import EXPORT_COLUMNS, kept_documents
from corpusbuilder.contracts.survivors import read_survivors
from corpusbuilder.contracts.tables import ShardTables
from corpusbuilder.extraction.extract import ExtractParams, extract_shard
from corpusbuilder.quality import QualityParams, quality_table

REPO = Path(__file__).resolve().parents[1]
CRAWL = REPO.parent / "shared" / "datasets" / "crawl" / "dev"


def shard_times(warc: Path, workdir: Path) -> dict:
    """CPU seconds of extracting one WARC and of scoring its documents."""
    docs, blocks = workdir / f"{warc.stem}.docs.parquet", workdir / f"{warc.stem}.blocks.parquet"
    start = time.process_time()
    extract_shard([(warc.name, warc)], warc.stem, docs, blocks, ExtractParams.from_config({}))
    extract = time.process_time() - start
    documents = [
        (doc.id, doc.language, doc.text)
        for doc in kept_documents(read_survivors(ShardTables(docs, blocks), EXPORT_COLUMNS))
    ]
    start = time.process_time()
    table = quality_table(documents, QualityParams())
    quality = time.process_time() - start
    return {"extract_s": extract, "quality_s": quality, "documents": len(table)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "quality.json"))
    args = parser.parse_args()
    warcs = sorted(CRAWL.glob("crawl-*.warc.gz"))[: args.shards]
    if not warcs:
        sys.exit(f"no dev crawl at {CRAWL}")
    rounds = []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as workdir:
            per_shard = [shard_times(warc, Path(workdir)) for warc in warcs]
        rounds.append(
            {key: sum(shard[key] for shard in per_shard) for key in per_shard[0]}
            | {"per_shard": per_shard}
        )
    extract = statistics.median(r["extract_s"] for r in rounds)
    quality = statistics.median(r["quality_s"] for r in rounds)
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    result = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "commit": commit,
        "crawl": [warc.name for warc in warcs],
        "documents": rounds[0]["documents"],
        "timing": "CPU time (process_time) of the whole dev crawl, median of rounds",
        "extract_cpu_s": round(extract, 2),
        "quality_cpu_s": round(quality, 2),
        "quality_share_of_extract": round(quality / extract, 4),
        "target": 0.10,
        "rounds": rounds,
    }
    text = json.dumps(result, indent=2)
    if args.out == "-":
        print(text)
    else:
        Path(args.out).write_text(text + "\n")
        print(
            f"quality {quality:.2f} s / extract {extract:.2f} s = {quality / extract:.1%} "
            f"({result['documents']} documents) -> {args.out}"
        )


if __name__ == "__main__":
    main()
