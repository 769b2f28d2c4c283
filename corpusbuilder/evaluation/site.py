"""Does site-level boilerplate (Ikeda et al., `corpusbuilder.site_boilerplate`) help jusText?

Pages are grouped by host as the extract stage groups them, each host's blocks are marked, and
four block selections are scored with the gold-set measures of `report.py` (micro-averaged):

- ``justext``: jusText alone (the preset's final classes);
- ``justext+site``: mode ``combine`` — marked blocks enter Algorithm 2.3 as bad;
- ``justext-minus-site``: jusText's good blocks minus the marked ones (marked after the
  context-sensitive pass, so nothing around them changes);
- ``site-only``: every block but the marked ones (Ikeda et al. alone, no jusText).

Each is reported over all pages of a set and over the pages on hosts with at least
``min_pages_per_host`` pages (scope ``multi-page hosts``), the only pages the signal can change.

Gold sets: hosts come from the pages' URLs (CleanEval's wrapper ids, L3S-GN1's url-mapping.txt).
The dev crawl (``crawl_gold``): every response record whose truth is an original, a mirror or a
near copy has the gold of the original page it was built from.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

import pandas as pd

from corpusbuilder.extract import ExtractParams, iter_warc_records
from corpusbuilder.justext import GOOD, JustextParams, classify
from corpusbuilder.site_boilerplate import SiteBoilerplateParams, combined_classes, host_of, mark_blocks

from .extractors import decoded_html, extraction_of_blocks, prepare_page
from .gold import GoldPage, iter_dataset, unwrap_cleaneval_input
from .report import EvaluateConfig, Tally, _measured, score_page

log = logging.getLogger(__name__)

VARIANTS = ("justext", "justext+site", "justext-minus-site", "site-only")
SCOPES = ("all pages", "multi-page hosts")
SITE_COLUMNS = (
    "dataset", "scope", "variant", "pages", "hosts", "marked_blocks",
    "word_precision", "word_recall", "word_f1", "bow_precision", "bow_recall", "bow_f1",
    "snippet_precision", "snippet_recall", "snippet_f1",
)


def page_tables(pages: Sequence[GoldPage], justext: JustextParams,
                params: ExtractParams = ExtractParams()) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Gold pages as extract's docs and blocks tables (doc_id = position in `pages`)."""
    docs, blocks = [], []
    for index, page in enumerate(pages):
        prepared = prepare_page(decoded_html(page, params), params).blocks
        cf, final = classify(prepared, justext)
        docs.append({"doc_id": str(index), "uri": page.url or "", "outcome": "ok"})
        blocks.extend({"doc_id": str(index), "block_index": i, "text": b.text, "n_chars": b.n_chars,
                       "heading": b.heading, "cf_class": c, "final_class": f}
                      for i, (b, c, f) in enumerate(zip(prepared, cf, final)))
    columns = ["doc_id", "block_index", "text", "n_chars", "heading", "cf_class", "final_class"]
    return pd.DataFrame(docs, columns=["doc_id", "uri", "outcome"]), pd.DataFrame(blocks, columns=columns)


def variant_keeps(page_blocks: pd.DataFrame, justext: JustextParams) -> dict[str, list[bool]]:
    """One page's blocks (extract's columns, `site_boilerplate` marked) → kept flags per variant."""
    marked = page_blocks["site_boilerplate"].tolist()
    jt = (page_blocks["final_class"] == GOOD).tolist()
    _, combined = combined_classes(page_blocks["cf_class"].tolist(), marked, page_blocks["n_chars"].tolist(),
                                   page_blocks["heading"].tolist(), justext)
    return {
        "justext": jt,
        "justext+site": [c == GOOD for c in combined],
        "justext-minus-site": [k and not m for k, m in zip(jt, marked)],
        "site-only": [not m for m in marked],
    }


def score_variants(docs: pd.DataFrame, blocks: pd.DataFrame, gold: dict[str, GoldPage],
                   justext: JustextParams, min_pages: int, per_shard: bool = False) -> tuple[dict, dict]:
    """Tallies per scope and variant over the documents that have gold; and counts for the table.

    `blocks` must carry jusText's own classes (extract in mode off or mark) and the marks, made
    with hosts grouped across `docs` or, `per_shard`, within each shard (as extract does).
    """
    pages = docs[docs["outcome"] == "ok"].set_index("doc_id")
    host = pages["uri"].map(host_of)
    group = (pages["shard"] + " " + host).where(host != "", "") if per_shard else host
    scored = [d for d in pages.index if d in gold]
    pages_per_group = group[group != ""].value_counts()
    multi = {d for d in scored if pages_per_group.get(group[d], 0) >= min_pages}
    tallies = {scope: {variant: Tally() for variant in VARIANTS} for scope in SCOPES}
    marked = {scope: 0 for scope in SCOPES}
    by_doc = dict(tuple(blocks.groupby("doc_id", sort=False)))
    for doc_id in scored:
        page_blocks = by_doc.get(doc_id)
        if page_blocks is None:  # no text at all: every variant outputs nothing
            keeps, texts = {v: [] for v in VARIANTS}, []
        else:
            keeps, texts = variant_keeps(page_blocks, justext), page_blocks["text"].tolist()
        scopes = SCOPES if doc_id in multi else SCOPES[:1]
        for scope in scopes:
            marked[scope] += int(sum(not k for k in keeps["site-only"]))
            for variant in VARIANTS:
                score_page(tallies[scope][variant], gold[doc_id], extraction_of_blocks(texts, keeps[variant]))
    named = host[scored]
    hosts = {SCOPES[0]: named[named != ""].nunique(), SCOPES[1]: len({host[d] for d in multi})}
    return tallies, {"hosts": hosts, "marked_blocks": marked}


def site_rows(dataset: str, tallies: dict, counts: dict) -> list[dict]:
    rows = []
    for scope, by_variant in tallies.items():
        for variant, tally in by_variant.items():
            rows.append({"dataset": dataset, "scope": scope, "variant": variant, "pages": tally.pages,
                         "hosts": counts["hosts"][scope], "marked_blocks": counts["marked_blocks"][scope],
                         **_measured("word", tally.words, with_f05=False), **_measured("bow", tally.bag, with_f05=False),
                         **_measured("snippet", tally.snippets, with_f05=False)})
    return rows


def evaluate_gold_sets(config: EvaluateConfig, site: SiteBoilerplateParams, justext: JustextParams) -> list[dict]:
    """The site_boilerplate.tsv rows: every configured gold set, pages grouped by host across the set."""
    site = replace(site, mode="mark")
    rows = []
    for dataset in config.datasets:
        pages = list(iter_dataset(dataset, config.gold_dir, config.max_pages))
        docs, blocks = page_tables(pages, justext)
        blocks = mark_blocks(blocks, docs, site, justext)
        gold = {str(i): page for i, page in enumerate(pages)}
        tallies, counts = score_variants(docs, blocks, gold, justext, site.min_pages_per_host)
        rows += site_rows(dataset, tallies, counts)
        log.info("%s: %d pages, %d on hosts with %d+ pages", dataset, len(pages),
                 tallies[SCOPES[1]]["justext"].pages, site.min_pages_per_host)
    return rows


# --------------------------------------------------------------------------- the dev crawl


def _sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def crawl_gold(crawl_dir: Path, gold_dir: Path, datasets: Iterable[str]) -> dict[str, GoldPage]:
    """doc_id (as extract names it) → gold, for the dev crawl's originals, mirrors and near copies.

    truth.jsonl gives each record's kind and the sha1 of its body; an original's body is a gold
    page's file (CleanEval's with its wrapper), a mirror's the same bytes, a near copy names the
    original it re-templates (its ~3 % edited words count against every variant alike).
    """
    gold_by_hash = {_sha1(page.html): page for dataset in datasets for page in iter_dataset(dataset, gold_dir)}
    truth = [json.loads(line) for line in (Path(crawl_dir) / "truth.jsonl").read_text().splitlines()]
    sha1_of_id = {record["id"]: record["sha1"] for record in truth if "id" in record}
    copied = {"original": lambda record: record["sha1"], "mirror": lambda record: record["sha1"],
              "near": lambda record: sha1_of_id[record["of"][0]]}
    # (shard, uri as warcio normalises it) → sha1 of the original body the record copies
    source = {(record["shard"], record["uri"].strip().replace(" ", "%20")): copied[record["kind"]](record)
              for record in truth if record["kind"] in copied}
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
    return {doc_id: gold_by_hash[unwrapped[raw]] for doc_id, raw in wanted.items()
            if raw in unwrapped and unwrapped[raw] in gold_by_hash}
