"""The thesis' "rsmbl. de-dupl" row (§3.6.4, Table 3.4) from a sample of fixed size.

The row keeps one document of every cluster of min-hash resemblance above
``similarity.dedup_threshold`` and counts the duplicate 10-grams left. Computed whole, it pairs
every document's signature at once (1 KB a document: ~90 GB at 10¹¹ words). Here it is
estimated from a sample drawn by **10-gram type**: a type is sampled when its hash falls under a
threshold, ``q = report.resemblance_sample / tokens`` of the hash space (at most 1), so every
shard draws the same types on its own and every occurrence of a sampled type is in the sample —
its count over the corpus is exact, before and after the clusters are removed.

- The documents compared are those holding a sampled type (about ``report.resemblance_sample``
  of them, at most): their signatures are paired and clustered as the whole row does, in corpus
  order. A near-duplicate pair is a pair of this sample whenever the earlier copy holds one of the
  later's sampled types, which at resemblance > 0.9 it nearly always does; the pairs it misses
  leave a document kept that the whole row removes (measured: docs/measurements.md). A document
  without a 10-gram (every block under 10 tokens) is never drawn at q < 1.
- Each 10-gram figure of the row is the exact corpus figure before resemblance dedup times the
  sampled types' ratio after / before (a ratio estimate); documents, blocks and tokens removed
  are summed over the removed sampled documents, each weighted by the inverse of the chance it
  was drawn (Horvitz–Thompson: ``1 − (1 − q)^m`` for a document of m distinct 10-grams), with
  Horvitz–Thompson's standard errors.
- The standard error of the headline (duplicate 10-gram instances left, % of before) is the
  ratio estimate's under Bernoulli sampling of the types at rate q (the delta method):
  ``sqrt(1 − q) · sqrt(Σ (y − r·x)²) / Σ x`` over the sampled types, x a type's duplicate
  occurrences before, y after; for types of two occurrences each it is the binomial
  ``sqrt(p (1 − p) / n)`` of the share left. It is never stated below the binomial error of the
  share of sampled duplicate types the row changes, with one changed and one unchanged type
  added, so that a sample that happens to hold no removed document does not claim an error of 0.
  At q = 1 the sample is the corpus and the row is the whole computation, exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from corpusbuilder.contracts.text import document_texts
from corpusbuilder.similarity.minhash import (
    MinHashParams,
    document_signatures,
    resemblance_dedup,
    similar_pairs,
)

if TYPE_CHECKING:
    import pandas as pd

    from corpusbuilder.ngrams.hashing import ShardNgramHashes
    from corpusbuilder.report.ngram_counts import DuplicateCounts

RESEMBLANCE_SAMPLE = 100_000  # report.resemblance_sample: 10-gram occurrences drawn, about


@dataclass(frozen=True)
class Resemblance:
    """The resemblance de-duplication row: its threshold, the min-hash settings (config
    `similarity`) and the sample's size (`report.resemblance_sample`); ``salt`` picks another
    sample of the same size (a check of the error)."""

    threshold: float = 0.9
    minhash: MinHashParams = MinHashParams()
    sample_size: int = RESEMBLANCE_SAMPLE
    salt: int = 0


def sampled_fraction(sample_size: int, corpus_tokens: int) -> float:
    """q: the share of the 10-gram types sampled, so that about ``sample_size`` of the corpus'
    occurrences are (1 when the corpus has no more)."""
    return 1.0 if corpus_tokens <= sample_size else sample_size / corpus_tokens


def sampled_types(hashes: np.ndarray, q: float, salt: int = 0) -> np.ndarray:
    """Is each 10-gram hash of a sampled type: its hash (xor ``salt``) under q of the hash space
    (the hashes are splitmix64 outputs, uniform)."""
    if q >= 1:
        return np.ones(len(hashes), bool)
    return (np.asarray(hashes, np.uint64) ^ np.uint64(salt)) < np.uint64(int(q * 2**64))


def shard_sample(
    blocks: pd.DataFrame,
    ngrams: ShardNgramHashes,
    q: float,
    resemblance: Resemblance,
) -> pd.DataFrame:
    """A shard's part of the sample (`reportfiles.SAMPLE_COLUMNS`), in corpus order: every
    document at q = 1, else those holding an occurrence of a sampled type. ``blocks`` is the
    shard's tokenised blocks with their text (`tokenfile.tokenised_blocks`), ``ngrams`` the
    10-grams of all its tokens (`hashing.shard_ngram_hashes`)."""
    import pandas as pd

    texts = document_texts(blocks.assign(text=blocks["text"].fillna("")))
    documents = texts.index.to_numpy()
    # each occurrence's document, as its row of `documents`
    block_of = np.searchsorted(ngrams.word_offsets, ngrams.starts, side="right") - 1
    ngram_doc = pd.Index(documents).get_indexer(blocks["doc_id"])[block_of]
    sampled = sampled_types(ngrams.hashes, q, resemblance.salt)
    if q >= 1:
        drawn = np.arange(len(documents))
        inclusion = np.ones(len(documents))
    else:
        drawn = np.unique(ngram_doc[sampled])
        inclusion = -np.expm1(_distinct_types(ngram_doc, ngrams.hashes, drawn) * math.log1p(-q))
    grouped = blocks.groupby("doc_id", sort=False)["tokens"].agg(["size", "sum"])
    grouped = grouped.loc[documents[drawn]]
    order = np.argsort(ngram_doc[sampled], kind="stable")
    bounds = np.searchsorted(ngram_doc[sampled][order], [drawn, drawn + 1])
    sampled_hashes = ngrams.hashes[sampled][order]
    return pd.DataFrame(
        {
            "doc_id": documents[drawn],
            "blocks": grouped["size"].to_numpy(np.int64),
            "tokens": grouped["sum"].to_numpy(np.int64),
            "inclusion": inclusion,
            "signature": list(document_signatures(texts.iloc[drawn].tolist(), resemblance.minhash)),
            "sampled_ngrams": [sampled_hashes[a:b] for a, b in zip(*bounds, strict=True)],
        }
    )


def _distinct_types(ngram_doc: np.ndarray, hashes: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    """m of each drawn document: its distinct 10-gram types. ``ngram_doc`` is in corpus order
    (non-decreasing), so a document's occurrences are one run, and only the drawn documents' are
    sorted, each on its own (the shard's pairs sorted whole by (document, type) were three
    quarters of the job's time; the drawn documents' pairs sorted whole, a fifth)."""
    if np.any(ngram_doc[1:] < ngram_doc[:-1]):
        raise ValueError("the 10-grams are not in corpus order")
    starts, ends = np.searchsorted(ngram_doc, [drawn, drawn + 1])
    m = np.zeros(len(drawn), np.int64)
    for i, (start, end) in enumerate(zip(starts.tolist(), ends.tolist())):
        run = np.sort(hashes[start:end])
        m[i] = np.count_nonzero(run[1:] != run[:-1]) + (end > start)
    return m


@dataclass(frozen=True)
class SampledRow:
    """The row's estimates (the corpus' figures after resemblance dedup) and their sample."""

    documents: int
    blocks: int
    tokens: int
    counts: DuplicateCounts
    pct_left: float  # duplicate 10-gram instances left, % of before
    pct_left_error: float  # its standard error, points
    removed_errors: dict[str, float]  # standard errors of the documents, blocks, tokens removed
    sampled_documents: int
    removed_documents: int  # of the sampled ones
    sampled_types: int
    q: float


def _ratio(after: np.ndarray, before: np.ndarray) -> float:
    total = before.sum()
    return float(after.sum() / total) if total else math.nan


def _scaled(value: int, ratio: float) -> int:
    return value if math.isnan(ratio) else round(value * ratio)


def estimate_row(
    documents: pd.DataFrame,
    before: DuplicateCounts,
    totals: dict[str, int],
    q: float,
    resemblance: Resemblance,
) -> SampledRow:
    """The row from every shard's part of the sample (`shard_sample`'s frames concatenated in
    corpus order), the exact
    duplicate counts before (``before``) and the corpus' documents, blocks and tokens before
    (``totals``: documents_before, blocks_before, tokens_before)."""
    from corpusbuilder.report.ngram_counts import DuplicateCounts

    ids = documents["doc_id"].astype(str).tolist()
    k = resemblance.minhash.k
    signatures = np.stack([np.empty(k, np.uint64), *documents["signature"]])[1:]
    pairs = similar_pairs(signatures, resemblance.threshold, resemblance.minhash)
    sampled_ngrams = documents["sampled_ngrams"].tolist()
    removed = documents["doc_id"].isin(set(resemblance_dedup(ids, pairs, resemblance.threshold)))
    inclusion = documents.loc[removed, "inclusion"].to_numpy(np.float64)
    gone, errors = {}, {}
    for key in ("documents", "blocks", "tokens"):
        values = (
            np.ones(len(inclusion))
            if key == "documents"
            else documents.loc[removed, key].to_numpy(np.float64)
        )
        gone[key] = float((values / inclusion).sum())
        # Horvitz–Thompson's variance under independent draws, estimated from the sample
        errors[key] = math.sqrt(float(((1 - inclusion) / inclusion**2 * values**2).sum()))
    hashes = np.concatenate([np.empty(0, np.uint64), *sampled_ngrams])
    kept = np.repeat(~removed.to_numpy(), [len(h) for h in sampled_ngrams])
    _, type_of = np.unique(hashes, return_inverse=True)
    count = np.bincount(type_of).astype(np.int64)
    count_after = np.bincount(type_of, weights=kept, minlength=len(count)).astype(np.int64)
    x = np.where(count >= 2, count, 0)
    y = np.where(count_after >= 2, count_after, 0)
    left = _ratio(y, x)
    error = math.nan
    if x.sum():
        # never below the binomial error of the share of duplicate types the row changes, one
        # changed and one unchanged added (Laplace): a sample holding no removed document would
        # otherwise state an error of 0
        types, changed = int((x > 0).sum()), int((y < x).sum())
        share = (changed + 1) / (types + 2)
        error = math.sqrt(max(0.0, 1 - q)) * max(
            math.sqrt(float(((y - left * x) ** 2).sum())) / x.sum(),
            math.sqrt(share * (1 - share) / types),
        )
    counts = DuplicateCounts(
        ngram_instances=_scaled(before.ngram_instances, _ratio(count_after, count)),
        distinct_ngrams=_scaled(before.distinct_ngrams, _ratio(count_after >= 1, count >= 1)),
        duplicate_instances=_scaled(before.duplicate_instances, left),
        distinct_duplicates=_scaled(before.distinct_duplicates, _ratio(y > 0, x > 0)),
    )
    return SampledRow(
        documents=round(totals["documents_before"] - gone["documents"]),
        blocks=round(totals["blocks_before"] - gone["blocks"]),
        tokens=round(totals["tokens_before"] - gone["tokens"]),
        counts=counts,
        pct_left=100 * left,
        pct_left_error=100 * error,
        removed_errors=errors,
        sampled_documents=len(ids),
        removed_documents=int(removed.sum()),
        sampled_types=len(count),
        q=q,
    )
