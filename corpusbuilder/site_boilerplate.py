"""Site-level boilerplate: character n-grams frequent across one host's pages are useless.

Ikeda et al. (alternation counts): for a set D of documents of one site, the top a% most frequent
character n-grams form W; the range string r_x(W) marks each character covered by an n-gram of W;
the alternation count A_D(n, a) is the number of 0/1 boundaries in r over all documents (Def. 2).
FindOptimal (Fig. 3) walks from the cut point (2, 1) to (n, a+1) or (n+1, a) while the count
decreases: too-short n-grams cover article text too and chop it up, too-long ones miss template.

Here the documents are the texts of a host's pages as extract segmented them (all blocks, in
page order) rather than raw HTML, and a block mostly covered by W is marked as site boilerplate.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from urllib.parse import urlsplit

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class SiteBoilerplateParams:
    """Config section `site_boilerplate`; the cut-point walk is Ikeda et al. §3 (start (2, 1))."""

    mode: str = "off"  # off | mark (add the column) | combine (also set final_class bad)
    min_pages: int = 3  # hosts with fewer pages have no "frequent" to speak of
    min_coverage: float = 0.8  # share of a block's characters covered by useless n-grams
    max_pages: int = 200  # pages per host used to find the cut point (the walk is O(n²N))


_SPACE = re.compile(r"\s+")


def preprocess(text: str) -> str:
    """Tabs and newlines are spaces, runs of spaces one space (Ikeda et al. §3)."""
    return _SPACE.sub(" ", text)


def ngram_ranking(docs: list[str], n: int) -> list[tuple[str, int]]:
    """countsort: every n-gram of D with its count, most frequent first."""
    return Counter(doc[i : i + n] for doc in docs for i in range(len(doc) - n + 1)).most_common()


def useless_ngrams(ranking: list[tuple[str, int]], a: int) -> set[str]:
    """W for cut point (n, a): n-grams whose frequency is in the top a% (abstract, §1).

    The a%-th n-gram's count is the threshold and every n-gram as frequent is in W: with a few
    pages whole templates tie, and cutting a tie at an arbitrary rank would split the template.
    """
    if not ranking:
        return set()
    # An n-gram seen once is not frequent, whatever its rank: W would then cover everything.
    threshold = max(ranking[math.ceil(len(ranking) * a / 100) - 1][1], 2)
    return {gram for gram, count in ranking if count >= threshold}


def covered(doc: str, useless: set[str], n: int) -> np.ndarray:
    """Where r_x(W) is 0: characters inside some useless n-gram occurrence."""
    starts = [i for i in range(len(doc) - n + 1) if doc[i : i + n] in useless]
    delta = np.zeros(len(doc) + 1, dtype=np.int32)
    np.add.at(delta, starts, 1)
    np.add.at(delta, np.asarray(starts, dtype=np.int64) + n, -1)
    return np.cumsum(delta[:-1]) > 0


def alternation_count(docs: list[str], useless: set[str], n: int) -> int:
    """A_D(W): 0/1 boundaries of the range strings, summed over the documents (Def. 2)."""
    return int(sum(np.count_nonzero(np.diff(covered(doc, useless, n))) for doc in docs))


def find_optimal(pages: list[str]) -> tuple[int, int]:
    """FindOptimal (Fig. 3): the cut point (n, a) reached from (2, 1) by decreasing counts."""
    docs = [preprocess(p) for p in pages]
    longest = max(map(len, docs), default=0)
    n, a = 2, 1
    rankings = {2: ngram_ranking(docs, 2)}

    def count(n_: int, a_: int) -> int:
        if n_ not in rankings:
            rankings[n_] = ngram_ranking(docs, n_)
        return alternation_count(docs, useless_ngrams(rankings[n_], a_), n_)

    current = count(n, a)
    while n <= longest and a < 100:
        more_a, more_n = count(n, a + 1), count(n + 1, a)
        if current <= more_a and current <= more_n:
            break
        if more_a < more_n:
            a, current = a + 1, more_a
        else:
            rankings.pop(n)  # O_cur := O_next; the shorter ranking is never needed again
            n, current = n + 1, more_n
    return n, a


def useless_coverage(block_text: str, ngram_set: set[str], n: int) -> float:
    """Share of a block's (pre-processed) characters covered by the site's useless n-grams."""
    text = preprocess(block_text).strip()
    return float(covered(text, ngram_set, n).mean()) if text else 0.0


def host_of(uri: str) -> str:
    return (urlsplit(uri).hostname or "").lower()


def mark_site_boilerplate(blocks_df: pd.DataFrame, docs_df: pd.DataFrame,
                          params: SiteBoilerplateParams = SiteBoilerplateParams()) -> pd.DataFrame:
    """blocks_df with a bool column `site_boilerplate`; in combine mode its blocks become `bad`."""
    if params.mode not in ("off", "mark", "combine"):
        raise ValueError(f"site_boilerplate.mode {params.mode!r}: use off, mark or combine")
    out = blocks_df.copy()
    out["site_boilerplate"] = False
    if params.mode == "off" or out.empty:
        return out
    pages = docs_df.loc[docs_df["outcome"] == "ok", ["doc_id", "uri"]].copy()
    pages["host"] = pages["uri"].map(host_of)
    ordered = out.sort_values(["doc_id", "block_index"], kind="stable")
    page_text = ordered.groupby("doc_id", sort=False)["text"].agg("\n".join)
    for _, group in pages.groupby("host", sort=False):
        ids = [d for d in group["doc_id"] if d in page_text.index]
        if len(ids) < params.min_pages:
            continue
        texts = [page_text[d] for d in ids[: params.max_pages]]
        n, a = find_optimal(texts)
        useless = useless_ngrams(ngram_ranking([preprocess(t) for t in texts], n), a)
        rows = out["doc_id"].isin(ids)
        coverage = out.loc[rows, "text"].map(lambda t: useless_coverage(t, useless, n))
        out.loc[rows, "site_boilerplate"] = coverage >= params.min_coverage
    if params.mode == "combine":
        out.loc[out["site_boilerplate"], "final_class"] = "bad"
    return out
