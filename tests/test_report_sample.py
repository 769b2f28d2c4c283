"""The report's measurements as the workflow makes them — a job per shard, a job per hash range,
a merge of their small files — against the whole corpus computed at once, and the resemblance
row's sample against the whole row, on the dev crawl."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pandas as pd
import pytest

from corpusbuilder.contracts.files import FILES
from corpusbuilder.contracts.reportfiles import (
    read_ngram_range,
    read_range_counts,
    read_sample,
    read_shard_totals,
    write_ngram_ranges,
    write_range_counts,
    write_sample,
    write_shard_totals,
)
from corpusbuilder.contracts.survivors import good_after_dedup
from corpusbuilder.contracts.tables import read_table
from corpusbuilder.contracts.text import document_texts
from corpusbuilder.contracts.tokenfile import kept_tokens, read_tokens, tokenised_blocks
from corpusbuilder.report.corpus_stats import (
    ShardFiles,
    corpus_words,
    measure_corpus,
    measure_shard,
    merge_measures,
)
from corpusbuilder.report.ngram_counts import DuplicateCounts, block_ngrams, by_range
from corpusbuilder.report.ngram_counts import duplicate_counts as counts_in_memory
from corpusbuilder.report.resemblance_sample import Resemblance, _distinct_types, sampled_fraction
from corpusbuilder.similarity.minhash import (
    document_signatures,
    resemblance_dedup,
    similar_pairs,
)


def dev_shards(build) -> list[ShardFiles]:
    names = sorted(p.name.removesuffix(".npz") for p in (build / "work" / "tokens").glob("*.npz"))
    return [
        ShardFiles(
            build / FILES.tokens.format(shard=name),
            build / FILES.blocks.format(shard=name),
            build / FILES.dedup.format(shard=name),
        )
        for name in names
    ]


def whole_corpus(shards: list[ShardFiles], resemblance: Resemblance) -> dict:
    """Every figure computed over the whole corpus at once, as the report did before it was split:
    every 10-gram hash in memory, every document's signature paired."""
    tables, hashes, after, ids, signatures = [], [], [], [], []
    tokens_after = 0
    for shard in shards:
        tokens = read_tokens(shard.tokens)
        table = tokenised_blocks(
            tokens, read_table(shard.blocks, ["doc_id", "block_index", "n_words", "text"])
        )
        dedup = read_table(
            shard.dedup,
            ["doc_id", "block_index", "final_class"],
            optional=["removed_starts", "removed_ends"],
        )
        table["kept"] = good_after_dedup(table, dedup)
        kept = kept_tokens(tokens, dedup)
        tokens_after += int(kept.sum())
        hashes.append(block_ngrams(tokens))
        after.append(block_ngrams(tokens, kept))
        texts = document_texts(table.assign(text=table["text"].fillna("")))
        ids += texts.index.tolist()
        signatures.append(document_signatures(texts.tolist(), resemblance.minhash))
        tables.append((tokens, table))
    pairs = similar_pairs(np.vstack(signatures), resemblance.threshold, resemblance.minhash)
    removed = set(resemblance_dedup(ids, pairs, resemblance.threshold))
    left, documents, blocks, token_count = [], set(), 0, 0
    for tokens, table in tables:
        kept = ~table["doc_id"].isin(removed).to_numpy()
        left.append(block_ngrams(tokens, np.repeat(kept, table["tokens"].to_numpy())))
        documents |= set(table.loc[kept, "doc_id"])
        blocks += int(kept.sum())
        token_count += int(table.loc[kept, "tokens"].sum())
    corpus = pd.concat([table for _, table in tables], ignore_index=True)
    return {
        "before": counts_in_memory(hashes),
        "after": counts_in_memory(after),
        "resemblance": counts_in_memory(left),
        "resemblance_totals": (len(documents), blocks, token_count),
        "documents": (corpus["doc_id"].nunique(), corpus.loc[corpus["kept"], "doc_id"].nunique()),
        "blocks": (len(corpus), int(corpus["kept"].sum())),
        "tokens": (int(corpus["tokens"].sum()), tokens_after),
    }


def through_files(shards, funnel, resemblance, ranges, root):
    """The rules' path: a job per shard writing its files, a job per range, the merge."""
    q = sampled_fraction(resemblance.sample_size, corpus_words(funnel))
    for i, shard in enumerate(shards):
        measure = measure_shard(shard, resemblance=resemblance, q=q)
        write_shard_totals(measure.totals, root / f"{i}.json")
        write_ngram_ranges(
            by_range(measure.before, ranges), by_range(measure.after, ranges), root / f"{i}.pq"
        )
        write_sample(measure.sample, resemblance.minhash.k, root / f"{i}.sample.pq")
    for part in range(ranges):
        parts = [read_ngram_range(root / f"{i}.pq", part, ranges) for i in range(len(shards))]
        write_range_counts(
            asdict(counts_in_memory([b for b, _ in parts])),
            asdict(counts_in_memory([a for _, a in parts])),
            root / f"range{part}.json",
        )
    counts = [
        [DuplicateCounts(**c) for c in read_range_counts(root / f"range{part}.json")]
        for part in range(ranges)
    ]
    return merge_measures(
        funnel,
        [read_shard_totals(root / f"{i}.json") for i in range(len(shards))],
        sum((b for b, _ in counts), DuplicateCounts()),
        sum((a for _, a in counts), DuplicateCounts()),
        pd.concat(
            [read_sample(root / f"{i}.sample.pq") for i in range(len(shards))], ignore_index=True
        ),
        resemblance=resemblance,
    )


def row_counts(row) -> DuplicateCounts:
    return DuplicateCounts(*(int(row[name]) for name in DuplicateCounts.__dataclass_fields__))


def whole_sample(funnel: pd.DataFrame) -> Resemblance:
    """A sample no smaller than the corpus: the resemblance row is the whole row, exactly."""
    return Resemblance(sample_size=corpus_words(funnel) + 1)


@pytest.fixture(scope="module")
def measured_whole(dev_crawl_build):
    """The dev crawl's build measured in one process with the whole corpus as the sample (both
    tests below read it; neither changes it)."""
    funnel = pd.read_csv(dev_crawl_build / FILES.funnel, sep="\t")
    return measure_corpus(funnel, dev_shards(dev_crawl_build), resemblance=whole_sample(funnel))


@pytest.mark.workflow
def test_shards_and_ranges_merged_give_every_figure_of_the_whole_corpus(
    dev_crawl_build, measured_whole, tmp_path
):
    shards = dev_shards(dev_crawl_build)
    funnel = pd.read_csv(dev_crawl_build / FILES.funnel, sep="\t")
    resemblance = whole_sample(funnel)
    whole = whole_corpus(shards, resemblance)
    measures = through_files(shards, funnel, resemblance, 3, tmp_path)
    rows = measures.duplicates.set_index("corpus")
    assert row_counts(rows.loc["before_block_dedup"]) == whole["before"]
    assert row_counts(rows.loc["after_block_dedup"]) == whole["after"]
    assert row_counts(rows.loc["after_resemblance_dedup"]) == whole["resemblance"]
    assert whole["resemblance"].duplicate_instances < whole["before"].duplicate_instances
    assert (
        tuple(rows.loc["after_resemblance_dedup", ["documents", "blocks", "tokens"]])
        == whole["resemblance_totals"]
    )
    for column in ("documents", "blocks", "tokens"):
        assert tuple(rows.loc[["before_block_dedup", "after_block_dedup"], column]) == whole[column]
    funnel_full = measures.funnel.set_index("stage")
    assert funnel_full.at["block_dedup_kept", "tokens"] == whole["tokens"][1]
    assert measures.extra["resemblance_sample"]["share_of_10gram_types"] == 1.0
    # and in one process, as the tests and benchmarks measure
    pd.testing.assert_frame_equal(measured_whole.duplicates, measures.duplicates)
    pd.testing.assert_frame_equal(measured_whole.funnel, measures.funnel)


@pytest.mark.workflow
def test_the_sampled_row_is_within_its_stated_error_of_the_whole_row(
    dev_crawl_build, measured_whole
):
    shards = dev_shards(dev_crawl_build)
    funnel = pd.read_csv(dev_crawl_build / FILES.funnel, sep="\t")
    whole = measured_whole
    whole_row = whole.duplicates.set_index("corpus").loc["after_resemblance_dedup"]
    exact = whole_row["pct_of_before"]
    differences, errors = [], []
    # the default size: 100,000 of the dev crawl's 2.6 M occurrences (q = 0.039); other salts
    # are other samples of that size
    for salt in (0, 1 << 60, 5 << 59, 3 << 61):
        sampled = measure_corpus(funnel, shards, resemblance=Resemblance(salt=salt))
        stated = sampled.extra["resemblance_sample"]
        assert 0 < stated["share_of_10gram_types"] < 0.05
        differences.append(stated["pct_duplicate_ngrams_left"] - exact)
        errors.append(stated["standard_error_points"])
        assert abs(differences[-1]) <= 3 * errors[-1], (differences, errors)
        # the documents and tokens removed: Horvitz–Thompson estimates (the blocks too, whose
        # error one page of 2,639 one-word blocks decides here: docs/measurements.md)
        row = sampled.duplicates.set_index("corpus").loc["after_resemblance_dedup"]
        error = stated["standard_errors"]["documents"]
        assert abs(row["documents"] - whole_row["documents"]) <= 3 * error + 2
        before = whole.duplicates.set_index("corpus").loc["before_block_dedup", "tokens"]
        assert abs(row["tokens"] - whole_row["tokens"]) / before < 0.005
    assert 0 < np.mean(errors) < 1  # points of the share of duplicate 10-grams left
    assert np.sqrt(np.mean(np.square(differences))) <= 2 * np.mean(errors)


def test_an_empty_shard_measures_and_merges(tmp_path):
    np.savez(
        tmp_path / "e.npz",
        token_hash=np.empty(0, np.uint64),
        is_punct=np.empty(0, bool),
        is_stop=np.empty(0, bool),
        block_offsets=np.zeros(1, np.int64),
        block_doc=np.empty(0, np.int32),
        block_index=np.empty(0, np.int32),
        doc_ids=np.empty(0, str),
    )
    pd.DataFrame(
        {
            "doc_id": pd.Series([], dtype=str),
            "block_index": pd.Series([], dtype=np.int64),
            "text": pd.Series([], dtype=str),
            "final_class": pd.Series([], dtype=str),
            "n_words": pd.Series([], dtype=np.int64),
        }
    ).to_parquet(tmp_path / "e.blocks.parquet")
    funnel = pd.DataFrame(
        {"stage": ["records", "exact_dedup_kept"], "documents": [0, 0], "words": [0, 0]}
    )
    measures = through_files(
        [ShardFiles(tmp_path / "e.npz", tmp_path / "e.blocks.parquet")],
        funnel,
        Resemblance(sample_size=10),
        2,
        tmp_path,
    )
    rows = measures.duplicates.set_index("corpus")
    assert rows["ngram_instances"].sum() == 0 and rows["documents"].sum() == 0


def test_distinct_types_per_drawn_document_as_one_sort_of_all_their_pairs():
    """m, a document's distinct 10-grams, from its run of the corpus-ordered occurrences alone
    — against the pairs sorted whole (as it was); a drawn document may hold none."""
    rng = np.random.default_rng(6)
    ngram_doc = np.sort(rng.integers(0, 40, 5000))
    hashes = rng.choice(rng.integers(0, 2**64, 300, dtype=np.uint64), 5000)
    drawn = np.array([0, 3, 4, 17, 39, 40])  # 40 holds no 10-gram
    order = np.lexsort((hashes, ngram_doc))
    docs, types = ngram_doc[order], hashes[order]
    first = np.r_[True, (docs[1:] != docs[:-1]) | (types[1:] != types[:-1])]
    expected = np.bincount(docs[first], minlength=41)[drawn]
    assert _distinct_types(ngram_doc, hashes, drawn).tolist() == expected.tolist()
    assert _distinct_types(ngram_doc[:0], hashes[:0], drawn).tolist() == [0] * 6
    with pytest.raises(ValueError, match="corpus order"):
        _distinct_types(ngram_doc[::-1], hashes, drawn)
