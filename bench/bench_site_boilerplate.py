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
import hashlib
import json
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from corpusbuilder.evaluation.gold import GoldPage, iter_dataset, unwrap_cleaneval_input  # noqa: E402
from corpusbuilder.evaluation.site import SCOPES, score_variants, site_rows  # noqa: E402
from corpusbuilder.extraction.extract import (
    ExtractParams,
    extract_shard,
    iter_warc_records,
    mark_site_boilerplate,
)  # noqa: E402
from corpusbuilder.extraction.site_boilerplate import SiteBoilerplateParams, host_of, mark_blocks  # noqa: E402

DATASETS = REPO.parent / "shared" / "datasets"
GOLD_SETS = ("cleaneval-dev", "cleaneval-final", "cleanportaleval", "l3s-gn1", "trafilatura-dev")


def _sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def crawl_gold(crawl_dir: Path, gold_dir: Path, datasets: Iterable[str]) -> dict[str, GoldPage]:
    """doc_id (as extract names it) → gold, for the dev crawl's originals, mirrors and near copies.

    truth.jsonl gives each record's kind and the sha1 of its body; an original's body is a gold
    page's file (CleanEval's with its wrapper), a mirror's the same bytes, a near copy names the
    original it re-templates (its ~3 % edited words count against every variant alike).
    """
    gold_by_hash = {
        _sha1(page.html): page for dataset in datasets for page in iter_dataset(dataset, gold_dir)
    }
    truth = [
        json.loads(line) for line in (Path(crawl_dir) / "truth.jsonl").read_text().splitlines()
    ]
    sha1_of_id = {record["id"]: record["sha1"] for record in truth if "id" in record}
    copied = {
        "original": lambda record: record["sha1"],
        "mirror": lambda record: record["sha1"],
        "near": lambda record: sha1_of_id[record["of"][0]],
    }
    # (shard, uri as warcio normalises it) → sha1 of the original body the record copies
    source = {
        (record["shard"], record["uri"].strip().replace(" ", "%20")): copied[record["kind"]](record)
        for record in truth
        if record["kind"] in copied
    }
    unwrapped = {}  # sha1 of a crawled body → sha1 of the page inside CleanEval's wrapper
    wanted = {}
    for warc in sorted(Path(crawl_dir).glob("*.warc.gz")):
        shard = warc.name.removesuffix(".warc.gz")
        for record in iter_warc_records(warc, ExtractParams()):
            # every original is a source itself, so the bodies outside `source` are never looked up
            if record.body is None or (shard, record.uri) not in source:
                continue
            unwrapped[_sha1(record.body)] = _sha1(unwrap_cleaneval_input(record.body)[0])
            wanted[f"{shard}:{record.record_index}"] = source[shard, record.uri]
    return {
        doc_id: gold_by_hash[unwrapped[raw]]
        for doc_id, raw in wanted.items()
        if raw in unwrapped and unwrapped[raw] in gold_by_hash
    }


def extract_and_mark(
    crawl: Path, workdir: Path, site: SiteBoilerplateParams
) -> tuple[list[dict], pd.DataFrame, pd.DataFrame]:
    """Extract every shard (timed), then run the site pass on its tables (timed)."""
    timings, docs, blocks = [], [], []
    for warc in sorted(crawl.glob("*.warc.gz")):
        shard = warc.name.removesuffix(".warc.gz")
        docs_path, blocks_path = (
            workdir / f"{shard}.docs.parquet",
            workdir / f"{shard}.blocks.parquet",
        )
        started = time.perf_counter()
        extract_shard(
            [(shard, warc)], shard, docs_path, blocks_path, ExtractParams().with_preset("default")
        )
        extracted = time.perf_counter()
        mark_site_boilerplate(
            docs_path,
            blocks_path,
            replace(ExtractParams().with_preset("default"), site_boilerplate=site),
        )
        marked = time.perf_counter()
        timings.append(
            {
                "shard": shard,
                "extract_s": round(extracted - started, 2),
                "site_pass_s": round(marked - extracted, 2),
            }
        )
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
    near = {
        d: g
        for d, g in gold.items()
        if host_of(docs.set_index("doc_id").at[d, "uri"]).startswith("syndicate")
    }

    rows = []
    for label, table, subset in (
        ("per shard", blocks, gold),
        ("whole crawl", whole, gold),
        ("per shard, near copies", blocks, near),
        ("whole crawl, near copies", whole, near),
    ):
        tallies, counts = score_variants(
            docs,
            table,
            subset,
            justext,
            site.min_pages_per_host,
            per_shard=label.startswith("per shard"),
        )
        rows += [{"grouping": label, **row} for row in site_rows("dev-crawl", tallies, counts)]
    table = pd.DataFrame(rows)
    shown = [
        "grouping",
        "scope",
        "variant",
        "pages",
        "hosts",
        "marked_blocks",
        "word_precision",
        "word_recall",
        "word_f1",
        "snippet_f1",
    ]
    print(table[shown].round(4).to_markdown(index=False))
    print(
        f"\nextract {extract_s:.1f} s, site pass {site_s:.1f} s: {100 * site_s / extract_s:.1f} % "
        f"of extract ({len(gold)} pages with gold, {len(near)} near copies)"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "timings": timings,
                    "extract_s": extract_s,
                    "site_pass_s": site_s,
                    "site_pass_pct_of_extract": round(100 * site_s / extract_s, 1),
                    "pages_with_gold": len(gold),
                    "scopes": SCOPES,
                    "rows": table.round(4).to_dict("records"),
                },
                indent=1,
            )
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
