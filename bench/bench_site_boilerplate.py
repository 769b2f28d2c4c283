#!/usr/bin/env python3
"""Site-level boilerplate (Ikeda et al.) on the dev crawl: its cost next to extract, and whether it
helps jusText.

Cost: every shard is extracted (mode off) and then marked (the pass mode mark/combine adds:
read the shard's tables, FindOptimal per host, rewrite) in the same process; the ratio of the
two times is the overhead of turning the signal on.

Quality: pages whose truth (../shared/datasets/crawl/dev/truth.jsonl) is an original, a mirror or
a near copy have the gold of the original gold-set page (corpusbuilder.evaluation.site). Four
block selections (jusText, jusText+site = mode combine, jusText minus site, site only) are scored
with hosts grouped per shard, as the extract stage groups them, and over the whole crawl (what a
crawl-level pass would see); also on the near copies alone (the syndicate* hosts, which re-template
other sites' pages) and on the pages of multi-page hosts.

    python bench/bench_site_boilerplate.py                       # ../shared's dev crawl
    python bench/bench_site_boilerplate.py --json bench/results/site_boilerplate.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from corpusbuilder.evaluation.site import SCOPES, crawl_gold, score_variants, site_rows  # noqa: E402
from corpusbuilder.extract import ExtractParams, extract_shard, mark_site_boilerplate  # noqa: E402
from corpusbuilder.site_boilerplate import SiteBoilerplateParams, host_of, mark_blocks  # noqa: E402

DATASETS = REPO.parent / "shared" / "datasets"
GOLD_SETS = ("cleaneval-dev", "cleaneval-final", "cleanportaleval", "l3s-gn1", "trafilatura-dev")


def extract_and_mark(crawl: Path, workdir: Path, site: SiteBoilerplateParams) -> tuple[list[dict], pd.DataFrame, pd.DataFrame]:
    """Extract every shard (timed), then run the site pass on its tables (timed)."""
    timings, docs, blocks = [], [], []
    for warc in sorted(crawl.glob("*.warc.gz")):
        shard = warc.name.removesuffix(".warc.gz")
        docs_path, blocks_path = workdir / f"{shard}.docs.parquet", workdir / f"{shard}.blocks.parquet"
        started = time.perf_counter()
        extract_shard(warc, shard, docs_path, blocks_path, ExtractParams().with_preset("default"))
        extracted = time.perf_counter()
        mark_site_boilerplate(docs_path, blocks_path, replace(ExtractParams().with_preset("default"), site_boilerplate=site))
        marked = time.perf_counter()
        timings.append({"shard": shard, "extract_s": round(extracted - started, 2),
                        "site_pass_s": round(marked - extracted, 2)})
        docs.append(pd.read_parquet(docs_path))
        blocks.append(pd.read_parquet(blocks_path))
    return timings, pd.concat(docs, ignore_index=True), pd.concat(blocks, ignore_index=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--crawl", type=Path, default=DATASETS / "crawl" / "dev")
    parser.add_argument("--gold", type=Path, default=DATASETS / "boilerplate")
    parser.add_argument("--min-pages", type=int, default=SiteBoilerplateParams.min_pages_per_host)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    site = SiteBoilerplateParams(mode="mark", min_pages_per_host=args.min_pages)
    justext = ExtractParams().justext

    with tempfile.TemporaryDirectory() as tmp:
        timings, docs, blocks = extract_and_mark(args.crawl, Path(tmp), site)
    extract_s = sum(t["extract_s"] for t in timings)
    site_s = sum(t["site_pass_s"] for t in timings)
    gold = crawl_gold(args.crawl, args.gold, GOLD_SETS)
    whole = mark_blocks(blocks.drop(columns="site_boilerplate"), docs, site, justext)
    near = {d: g for d, g in gold.items() if host_of(docs.set_index("doc_id").at[d, "uri"]).startswith("syndicate")}

    rows = []
    for label, table, subset in (("per shard", blocks, gold), ("whole crawl", whole, gold),
                                 ("per shard, near copies", blocks, near), ("whole crawl, near copies", whole, near)):
        tallies, counts = score_variants(docs, table, subset, justext, site.min_pages_per_host,
                                         per_shard=label.startswith("per shard"))
        rows += [{"grouping": label, **row} for row in site_rows("dev-crawl", tallies, counts)]
    table = pd.DataFrame(rows)
    shown = ["grouping", "scope", "variant", "pages", "hosts", "marked_blocks", "word_precision", "word_recall",
             "word_f1", "snippet_f1"]
    print(table[shown].round(4).to_markdown(index=False))
    print(f"\nextract {extract_s:.1f} s, site pass {site_s:.1f} s: {100 * site_s / extract_s:.1f} % of extract "
          f"({len(gold)} pages with gold, {len(near)} near copies)")
    if args.json:
        args.json.write_text(json.dumps({
            "timings": timings, "extract_s": extract_s, "site_pass_s": site_s,
            "site_pass_pct_of_extract": round(100 * site_s / extract_s, 1), "pages_with_gold": len(gold),
            "scopes": SCOPES, "rows": table.round(4).to_dict("records"),
        }, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
