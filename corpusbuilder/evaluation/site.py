"""Does site-level boilerplate (Ikeda et al.,
`corpusbuilder.extraction.site_boilerplate`) help jusText?

Pages are grouped by host as the extract stage groups them, each host's blocks are marked, and
four block selections are scored with the gold-set measures of `scores.py` (micro-averaged):

- ``justext``: jusText alone (the preset's final classes);
- ``justext+site``: mode ``combine`` — marked blocks enter Algorithm 2.3 as bad;
- ``justext-minus-site``: jusText's good blocks minus the marked ones (marked after the
  context-sensitive pass, so nothing around them changes);
- ``site-only``: every block but the marked ones (Ikeda et al. alone, no jusText).

Each is reported over all pages of a set and over the pages on hosts with at least
``min_pages_per_host`` pages (scope ``multi-page hosts``), the only pages the signal can change.

Gold sets: hosts come from the pages' URLs (CleanEval's wrapper ids, L3S-GN1's url-mapping.txt).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from corpusbuilder.contracts.tables import (
    CLEANED,
    cleaned_page_mask,
    is_kept_block,
    kept_block_mask,
)
from corpusbuilder.extraction.extract import ExtractParams
from corpusbuilder.extraction.justext import JustextParams, classify
from corpusbuilder.extraction.site_boilerplate import (
    combined_classes,
    host_of,
    mark_blocks,
)

from .extractors import decoded_html, extraction_of_blocks, prepare_page
from .gold import GoldPage, iter_dataset
from .scores import EvaluateConfig, Tally, _measured, score_page

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

VARIANTS = ("justext", "justext+site", "justext-minus-site", "site-only")
SCOPES = ("all pages", "multi-page hosts")
SITE_COLUMNS = (
    "dataset",
    "scope",
    "variant",
    "pages",
    "hosts",
    "marked_blocks",
    "word_precision",
    "word_recall",
    "word_f1",
    "bow_precision",
    "bow_recall",
    "bow_f1",
    "snippet_precision",
    "snippet_recall",
    "snippet_f1",
)


def page_tables(
    pages: Sequence[GoldPage], justext: JustextParams, params: ExtractParams = ExtractParams()
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Gold pages as extract's docs and blocks tables (doc_id = position in `pages`)."""
    import pandas as pd

    docs: list[dict] = []
    blocks: list[dict] = []
    for index, page in enumerate(pages):
        prepared = prepare_page(decoded_html(page, params), params).blocks
        cf, final = classify(prepared, justext)
        docs.append({"doc_id": str(index), "uri": page.url or "", "outcome": CLEANED})
        blocks.extend(
            {
                "doc_id": str(index),
                "block_index": i,
                "text": b.text,
                "n_chars": b.n_chars,
                "heading": b.heading,
                "cf_class": c,
                "final_class": f,
            }
            for i, (b, c, f) in enumerate(zip(prepared, cf, final))
        )
    columns = ["doc_id", "block_index", "text", "n_chars", "heading", "cf_class", "final_class"]
    return pd.DataFrame(docs, columns=["doc_id", "uri", "outcome"]), pd.DataFrame(
        blocks, columns=columns
    )


def variant_keeps(page_blocks: pd.DataFrame, justext: JustextParams) -> dict[str, list[bool]]:
    """One page's blocks (extract's columns, `site_boilerplate` marked) → kept flags per variant."""
    marked = page_blocks["site_boilerplate"].tolist()
    jt = kept_block_mask(page_blocks).tolist()
    _, combined = combined_classes(
        page_blocks["cf_class"].tolist(),
        page_blocks["final_class"].tolist(),
        marked,
        page_blocks["n_chars"].tolist(),
        page_blocks["heading"].tolist(),
        justext,
    )
    return {
        "justext": jt,
        "justext+site": [is_kept_block(c) for c in combined],
        "justext-minus-site": [k and not m for k, m in zip(jt, marked)],
        "site-only": [not m for m in marked],
    }


def score_variants(
    docs: pd.DataFrame,
    blocks: pd.DataFrame,
    gold: dict[str, GoldPage],
    justext: JustextParams,
    min_pages: int,
    per_shard: bool = False,
) -> tuple[dict, dict]:
    """Tallies per scope and variant over the documents that have gold; and counts for the table.

    `blocks` must carry jusText's own classes (extract in mode off or mark) and the marks, made
    with hosts grouped across `docs` or, `per_shard`, within each shard (as extract does).
    """
    pages = docs[cleaned_page_mask(docs)].set_index("doc_id")
    host = pages["uri"].map(host_of)
    group = (pages["shard"] + " " + host).where(host != "", "") if per_shard else host
    scored = [d for d in pages.index if d in gold]
    pages_per_group = group[group != ""].value_counts()
    multi = {d for d in scored if pages_per_group.get(group[d], 0) >= min_pages}
    tallies = {scope: {variant: Tally() for variant in VARIANTS} for scope in SCOPES}
    marked = {scope: 0 for scope in SCOPES}
    by_doc = dict(tuple(blocks.groupby("doc_id", sort=False)))
    keeps: dict[str, list[bool]]
    texts: list[str]
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
                score_page(
                    tallies[scope][variant],
                    gold[doc_id],
                    extraction_of_blocks(texts, keeps[variant]),
                )
    named = host[scored]
    hosts = {SCOPES[0]: named[named != ""].nunique(), SCOPES[1]: len({host[d] for d in multi})}
    return tallies, {"hosts": hosts, "marked_blocks": marked}


def site_rows(dataset: str, tallies: dict, counts: dict) -> list[dict]:
    rows = []
    for scope, by_variant in tallies.items():
        for variant, tally in by_variant.items():
            rows.append(
                {
                    "dataset": dataset,
                    "scope": scope,
                    "variant": variant,
                    "pages": tally.pages,
                    "hosts": counts["hosts"][scope],
                    "marked_blocks": counts["marked_blocks"][scope],
                    **_measured("word", tally.words, with_f05=False),
                    **_measured("bow", tally.bag, with_f05=False),
                    **_measured("snippet", tally.snippets, with_f05=False),
                }
            )
    return rows


def evaluate_gold_sets(
    config: EvaluateConfig, params: ExtractParams = ExtractParams()
) -> list[dict]:
    """The site_boilerplate.tsv rows: every configured gold set, pages grouped by host across the
    set, read with ``params`` (decoding, the language guess, the stop list) and judged with its
    jusText thresholds and site settings."""
    justext = params.justext
    site = replace(params.site_boilerplate, mode="mark")
    rows = []
    for dataset in config.datasets:
        pages = list(iter_dataset(dataset, config.gold_dir, config.max_pages))
        docs, blocks = page_tables(pages, justext, params)
        blocks = mark_blocks(blocks, docs, site, justext)
        gold = {str(i): page for i, page in enumerate(pages)}
        tallies, counts = score_variants(docs, blocks, gold, justext, site.min_pages_per_host)
        rows += site_rows(dataset, tallies, counts)
        log.info(
            "%s: %d pages, %d on hosts with %d+ pages",
            dataset,
            len(pages),
            tallies[SCOPES[1]]["justext"].pages,
            site.min_pages_per_host,
        )
    return rows
