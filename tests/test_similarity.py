"""Min-hash resemblance, pairs, clusters, de-duplication,
super-shingles, simhash, page relations."""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import re

import numpy as np
import pandas as pd
import pytest

from corpusbuilder.similarity import minhash
from corpusbuilder.similarity.books import (
    RelationSignals,
    classify_relation,
    compare_paginated,
    page_signatures,
)
from corpusbuilder.similarity.minhash import (
    EMPTY,
    MinHashParams,
    candidate_pair_blocks,
    cluster_labels,
    corpus_similar_pairs,
    document_signatures,
    estimated_resemblance,
    hamming,
    normalised_words,
    resemblance_dedup,
    shingle_fingerprints,
    simhash,
    similar_pairs,
    super_shingles,
    write_similar_pairs_tsv,
)

VOCABULARY = [f"w{i}" for i in range(20_000)]


def words(rng: random.Random, n: int) -> list[str]:
    return [rng.choice(VOCABULARY) for _ in range(n)]


def edited(rng: random.Random, text: list[str], share: float) -> list[str]:
    return [rng.choice(VOCABULARY) if rng.random() < share else w for w in text]


def jaccard(a: str, b: str) -> float:
    fa, fb = (shingle_fingerprints(normalised_words(t)) for t in (a, b))
    return len(np.intersect1d(fa, fb)) / len(np.union1d(fa, fb))


def test_normalisation_and_shingles():
    assert normalised_words("(Nice) Day !") == ["nice", "day"]
    assert len(shingle_fingerprints("a b c d e f g".split())) == 3
    assert len(shingle_fingerprints("a b".split())) == 1  # a text shorter than a shingle is one
    assert not np.array_equal(
        shingle_fingerprints("a b c d e".split()), shingle_fingerprints("e d c b a".split())
    )
    assert shingle_fingerprints([]).size == 0


@pytest.mark.parametrize("keep", [0.2, 0.5, 0.8, 0.95])
def test_estimate_tracks_true_resemblance(keep):
    rng = random.Random(int(keep * 100))
    base = words(rng, 3000)
    cut = int(len(base) * keep)
    a, b = " ".join(base), " ".join(base[:cut] + words(rng, len(base) - cut))
    sig = document_signatures([a, b], MinHashParams(k=400))
    # binomial standard error at k=400 is at most 0.025
    assert abs(estimated_resemblance(sig[0], sig[1]) - jaccard(a, b)) < 0.08


def test_empty_documents_match_nothing():
    sig = document_signatures(["", "", "one two three four five six"])
    assert (sig[0] == EMPTY).all() and estimated_resemblance(sig[0], sig[1]) == 0
    assert similar_pairs(sig, 0.0).empty


def reference_signature(text: str, k: int, shingle_words: int = 5, seed: int = 20110101):
    """A document's signature the straightforward way, a word, a shingle and a function at a
    time (as it was made document by document before the batches): the batched one must give
    it bit for bit."""
    mask = 2**64 - 1

    def mix(x: int) -> int:
        x ^= x >> 30
        x = x * 0xBF58476D1CE4E5B9 & mask
        x ^= x >> 27
        x = x * 0x94D049BB133111EB & mask
        return x ^ (x >> 31)

    words = re.findall(r"\w+", text.lower())
    hashes = [
        int.from_bytes(hashlib.blake2b(w.encode("utf-8"), digest_size=8).digest(), "little")
        for w in words
    ]
    n = min(shingle_words, len(hashes))
    shingles = []
    for start in range(len(hashes) - n + 1 if hashes else 0):
        fingerprint = 0
        for h in hashes[start : start + n]:
            fingerprint = mix(fingerprint ^ h)
        shingles.append(fingerprint)
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2**63, size=k, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    b = rng.integers(0, 2**63, size=k, dtype=np.uint64)
    return np.array(
        [
            min((int(ai) * x + int(bi)) & mask for x in shingles) if shingles else int(EMPTY)
            for ai, bi in zip(a, b)
        ],
        dtype=np.uint64,
    )


def real_looking_texts(rng: random.Random) -> list[str]:
    """Empty and word-less texts, texts shorter than a shingle, repeats, Unicode (final sigma,
    dotted İ, ß, CJK, combining marks, emoji), capitals — the word between documents of a batch,
    'A', among them — and texts longer than a chunk of min-hashes."""
    texts = [
        "",
        "  \n\t ",
        "...!?",
        "one",
        "Two words",
        "three words here",
        "four words, here too",
        "exactly five words in all",
        "A a A a A a",
        "the the the the the the the the",
        "ΟΔΟΣ ΟΔΟΣ Σοφία ΣΟΦΊΑ",
        "İstanbul STRASSE Straße straße",
        "日本語のテキスト 中文 한국어",
        "cafe\u0301 café naïve x_y 2026 ½",
        "🙂 emoji 🙂 emoji",
        "\n".join(["same line"] * 20),
    ]
    vocabulary = ["Άλφα", "beta", "ÇAY", "dél", "A", "e_f", "Ω", "z"] + VOCABULARY[:200]
    for length in [1, 4, 5, 6, 50, 300, 9000]:
        texts.append(" ".join(rng.choice(vocabulary) for _ in range(length)))
    rng.shuffle(texts)
    return texts


@pytest.mark.parametrize("batch_chars", [1, 200, 1 << 23])
def test_batched_signatures_are_the_per_document_reference_bit_for_bit(batch_chars, monkeypatch):
    """Batches of one document, of a few, and of all of them (and documents longer than a
    chunk of the min-hashes)."""
    monkeypatch.setattr(minhash, "BATCH_CHARS", batch_chars)
    texts = real_looking_texts(random.Random(3))
    params = MinHashParams(k=20)
    got = document_signatures(iter(texts), params)
    assert got.dtype == np.uint64 and got.shape == (len(texts), 20)
    for text, row in zip(texts, got):
        assert np.array_equal(row, reference_signature(text, 20)), text[:40]
    assert (got[[not normalised_words(t) for t in texts]] == EMPTY).all()
    assert document_signatures([], params).shape == (0, 20)


def test_page_signatures_are_the_reference_with_k_page():
    pages = real_looking_texts(random.Random(4))[:12]
    params = MinHashParams(k_page=7, shingle_words=3)
    got = page_signatures(pages, params)
    assert got.shape == (12, 7)
    for page, row in zip(pages, got):
        assert np.array_equal(row, reference_signature(page, 7, shingle_words=3))


@pytest.fixture(scope="module")
def families():
    """Five families of near-duplicates (3% edits) plus unrelated documents."""
    rng = random.Random(5)
    texts, family = [], []
    for f in range(5):
        base = words(rng, 800)
        for _ in range(3):
            texts.append(" ".join(edited(rng, base, 0.01)))
            family.append(f)
    for f in range(5, 25):
        texts.append(" ".join(words(rng, 800)))
        family.append(f)
    return texts, np.array(family)


@pytest.mark.parametrize("bands", [None, 20])
def test_pairs_and_clusters_recover_the_families(families, bands):
    texts, family = families
    params = MinHashParams(bands=bands)
    pairs = similar_pairs(document_signatures(texts, params), 0.5, params)
    assert (family[pairs.a] == family[pairs.b]).all()
    assert len(pairs) == 5 * 3  # every pair inside each family of three
    labels = cluster_labels(len(texts), zip(pairs.a, pairs.b))
    assert len(set(labels[:15])) == 5 and (labels[15:] == np.arange(15, len(texts))).all()


def test_lsh_banding_misses_medium_resemblance_that_collision_counting_finds():
    rng = random.Random(9)
    base = words(rng, 2000)
    texts = [" ".join(base), " ".join(base[:700] + words(rng, 1300))]  # resemblance ≈ 0.2
    counting = similar_pairs(document_signatures(texts), 0.1)
    banded = similar_pairs(document_signatures(texts), 0.1, MinHashParams(bands=20))
    assert len(counting) == 1 and banded.empty  # 20×5 banding's S-curve sits near 0.55


def test_resemblance_dedup_keeps_the_first_of_each_cluster():
    ids = ["a", "b", "c", "d", "e"]
    pairs = pd.DataFrame({"a": [0, 1, 3], "b": [1, 2, 4], "resemblance": [0.95, 0.92, 0.6]})
    assert resemblance_dedup(ids, pairs, 0.9) == ["b", "c"]


def test_similar_pairs_tsv_from_exported_corpus(families, tmp_path):
    texts, family = families
    corpus = tmp_path / "c.jsonl.gz"
    with gzip.open(corpus, "wt", encoding="utf-8") as out:
        for i, text in enumerate(texts):
            out.write(
                json.dumps({"id": f"s:{i}", "url": "", "language": "en", "paragraphs": [text]})
                + "\n"
            )
    assert write_similar_pairs_tsv([corpus], tmp_path / "p.tsv", threshold=0.5) == 15
    rows = [line.split("\t") for line in (tmp_path / "p.tsv").read_text().splitlines()]
    assert all(float(r[2]) > 0.5 and r[0] != r[1] for r in rows)
    table = corpus_similar_pairs(
        ({"id": f"s:{i}", "paragraphs": [t]} for i, t in enumerate(texts)), 0.5
    )
    assert set(table.cluster) == {"s:0", "s:3", "s:6", "s:9", "s:12"}


def test_super_shingles_match_only_near_identical(families):
    texts, _ = families
    one_edit = texts[0].split()
    one_edit[400] = "changed"
    sig = document_signatures([texts[0], " ".join(one_edit), texts[15]], MinHashParams(k=84))
    groups = np.vstack([super_shingles(s, 6) for s in sig])  # 6 super-shingles of 14
    # resemblance ≈ 0.99: P(≥ 1 of 6 shared) = 1 − (1 − 0.99^14)^6 > 0.99 (thesis Eq. 3.1)
    assert (groups[0] == groups[1]).sum() >= 1 and (groups[0] == groups[2]).sum() == 0


def test_simhash_hamming_is_small_for_near_duplicates(families):
    texts, _ = families
    hashes = np.array(
        [simhash(shingle_fingerprints(normalised_words(t))) for t in texts], dtype=np.uint64
    )
    # 64·θ/π expected differing bits: ≈ 32 for unrelated texts, far fewer for 1% edited copies
    assert hamming(hashes[0], hashes[1]) <= 16 and hamming(hashes[0], hashes[15]) >= 20


# --------------------------------------------------------------------------- relation classes


def paginate(text: list[str], per_page: int) -> list[str]:
    return [" ".join(text[i : i + per_page]) for i in range(0, len(text), per_page)]


@pytest.fixture(scope="module")
def book():
    return words(random.Random(21), 9000)


def test_same_pagination(book):
    rng = random.Random(1)
    relation, signals = compare_paginated(
        paginate(book, 300), paginate(edited(rng, book, 0.01), 300)
    )
    assert relation == "SAME_PAGINATION", signals
    assert abs(signals.slope - 1) < 0.05 and signals.consecutive_correlation < 0.1


def test_different_pagination(book):
    relation, signals = compare_paginated(paginate(book, 300), paginate(book, 440))
    assert relation == "DIFFERENT_PAGINATION", signals
    assert (
        signals.book_similarity > 0.9
        and abs(signals.slope - 440 / 300) < 0.15
        and signals.consecutive_correlation > 0.4
    )


def test_contiguous_subset(book):
    relation, signals = compare_paginated(paginate(book, 300), paginate(book[:3000], 300))
    assert relation == "CONTIGUOUS_SUBSET", signals
    assert abs(signals.slope - 1) < 0.05 and abs(signals.delta_page_count) > 5


def test_overlapping_text(book):
    rng = random.Random(2)
    other = words(rng, 1500) + book[3000:4500] + words(rng, 1500)
    relation, signals = compare_paginated(paginate(book, 300), paginate(other, 300))
    assert relation == "OVERLAPPING_TEXT", signals
    assert 0 < signals.book_similarity < 0.3


def test_books_without_overlap_say_so(book):
    """The paper classifies pairs its similar-books step kept; two books sharing no page and
    nothing as wholes are no OVERLAPPING_TEXT of it but NO_OVERLAP."""
    other = words(random.Random(3), 6000)
    relation, signals = compare_paginated(paginate(book, 300), paginate(other, 300))
    assert relation == "NO_OVERLAP", signals
    assert signals.book_similarity == signals.coverage_1 == signals.coverage_2 == 0


def test_no_overlap_is_judged_by_the_page_threshold_the_signals_were_made_with():
    apart = RelationSignals(0.05, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    assert classify_relation(apart) == "NO_OVERLAP"  # the default threshold, 0.1
    assert classify_relation(apart, min_page_similarity=0.01) == "OVERLAPPING_TEXT"


def test_compare_books_on_unrelated_and_binary_files(book, tmp_path, capsys):
    """Unrelated texts: NO_OVERLAP, exit 0. A binary (a WARC given as a book): the one line
    dup-ngrams gives for it, naming the file, exit 2."""
    from corpusbuilder.cli.main import main

    (tmp_path / "a.txt").write_text("\f".join(paginate(book, 300)))
    (tmp_path / "b.txt").write_text("\f".join(paginate(words(random.Random(4), 3000), 300)))
    assert main(["compare-books", str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "NO_OVERLAP"
    warc = tmp_path / "crawl.warc.gz"
    warc.write_bytes(gzip.compress(b"WARC/1.0\r\n" * 100))
    assert main(["compare-books", str(tmp_path / "a.txt"), str(warc)]) == 2
    books_err = capsys.readouterr().err
    assert books_err == f"corpusbuilder: {warc}: not UTF-8 text (invalid start byte at byte 1)\n"
    assert main(["dup-ngrams", str(warc), str(tmp_path / "d.tsv")]) == 2
    assert capsys.readouterr().err == books_err


def test_compare_books_reads_form_fed_pages(book, tmp_path, capsys):
    """`corpusbuilder compare-books` on two files paginated as pdftotext writes them."""
    from corpusbuilder.cli.main import main

    (tmp_path / "a.txt").write_text("\f".join(paginate(book, 300)) + "\f")
    (tmp_path / "b.txt").write_text("\f".join(paginate(book, 440)))
    assert main(["compare-books", str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "DIFFERENT_PAGINATION" and out[1].startswith("book_similarity\t")
    assert main(["compare-books", str(tmp_path / "a.txt"), str(tmp_path / "none.txt")]) == 2


@pytest.mark.slow
@pytest.mark.parametrize("copies", [50, 51, 130])
def test_a_bucket_larger_than_max_bucket_still_gives_every_pair(copies):
    """The cliff the audit found: 1,000 near-identical documents gave 499,500 pairs and 1,001 gave
    none. Here max_bucket is 50: 50, 51 and 130 copies of one text all give every pair, scored a
    block of at most 50 × 50 at a time."""
    rng = random.Random(4)
    text = words(rng, 400)
    texts = [" ".join(edited(random.Random(i), text, 0.01)) for i in range(copies)] + [
        " ".join(words(rng, 400))
    ]
    params = MinHashParams(max_bucket=50)
    signatures = document_signatures(texts, params)
    assert all(len(block) <= 50 * 50 for block in candidate_pair_blocks(signatures, params))
    pairs = similar_pairs(signatures, 0.5, params)
    assert len(pairs) == copies * (copies - 1) // 2 and pairs["b"].max() < copies
    assert resemblance_dedup([str(i) for i in range(len(texts))], pairs, 0.5) == [
        str(i) for i in range(1, copies)
    ]


@pytest.fixture(scope="module")
def shards(families, tmp_path_factory):
    """The families and 60 copies of one more text (a bucket larger than max_bucket 25 below),
    as three shards' documents."""
    texts, _ = families
    rng = random.Random(8)
    copied = words(rng, 400)
    texts = texts + [" ".join(edited(random.Random(i), copied, 0.02)) for i in range(60)]
    documents = [{"id": f"s:{i}", "paragraphs": [t]} for i, t in enumerate(texts)]
    return [documents[:7], documents[7:50], [], documents[50:]]


@pytest.fixture(scope="module")
def signature_paths(shards, tmp_path_factory):
    """Each shard's signatures, as the rule writes them (banding does not change them)."""
    from corpusbuilder.similarity.minhash import corpus_signatures
    from corpusbuilder.similarity.partitioned import write_signatures

    folder = tmp_path_factory.mktemp("signatures")
    paths = []
    for shard, part in enumerate(shards):
        paths.append(folder / f"{shard}.parquet")
        write_signatures(*corpus_signatures(part), paths[-1])
    return paths


@pytest.mark.parametrize("bands", [None, 20])
def test_signatures_per_shard_give_the_pairs_of_one_job(shards, signature_paths, bands):
    """The rule computes each shard's signatures in a job of its own (write_signatures): read
    back, they give the pairs of the corpus in one go."""
    from corpusbuilder.similarity.minhash import signature_similar_pairs
    from corpusbuilder.similarity.partitioned import read_signatures

    params = MinHashParams(bands=bands, max_bucket=25)
    ids, signatures = read_signatures(signature_paths, params.k)
    pd.testing.assert_frame_equal(
        signature_similar_pairs(ids, signatures, 0.5, params),
        corpus_similar_pairs([d for shard in shards for d in shard], 0.5, params),
    )


def pair_in_jobs(paths, band_jobs, partitions, passes, threshold, params, folder):
    """The workflow's pairing jobs, run in turn: band jobs, partition jobs, the merge."""
    from corpusbuilder.similarity.partitioned import (
        band_job_count,
        merge_partition_pairs,
        score_partition,
        write_band_candidates,
        write_partition_pairs,
    )

    jobs = band_job_count(band_jobs, params)
    candidates = [folder / f"candidates-{job}.parquet" for job in range(jobs)]
    for job, path in enumerate(candidates):
        write_band_candidates(paths, job, jobs, partitions, params, path, passes)
    parts = [folder / f"pairs-{p}.parquet" for p in range(partitions)]
    for partition, path in enumerate(parts):
        write_partition_pairs(
            score_partition(candidates, paths, partition, threshold, params), path
        )
    return merge_partition_pairs(parts, paths)


@pytest.fixture(scope="module")
def one_job_pairs(signature_paths):
    """The pairs of one job over the read-back signatures, by (params, threshold), each computed
    once: the reference every split of `test_band_jobs_and_partitions_give_the_pairs_of_one_job`
    must equal, which depends on neither the jobs nor the partitions."""
    from corpusbuilder.similarity.minhash import signature_similar_pairs
    from corpusbuilder.similarity.partitioned import read_signatures

    found: dict[tuple[MinHashParams, float], pd.DataFrame] = {}

    def pairs(params: MinHashParams, threshold: float) -> pd.DataFrame:
        if (params, threshold) not in found:
            ids, signatures = read_signatures(signature_paths, params.k)
            found[params, threshold] = signature_similar_pairs(ids, signatures, threshold, params)
        return found[params, threshold]

    return pairs


@pytest.mark.slow
@pytest.mark.parametrize("bands", [None, 20])
@pytest.mark.parametrize(
    "band_jobs, partitions, passes", [(1, 1, 1), (3, 4, 2), (7, 1, 5), (200, 3, 1)]
)
def test_band_jobs_and_partitions_give_the_pairs_of_one_job(
    signature_paths, one_job_pairs, bands, band_jobs, partitions, passes, tmp_path
):
    """Band jobs reading only their bands' columns, partition jobs only the signatures of their
    pairs' documents: the pairs, their estimates and clusters are the one job's, for any count
    of band jobs (200: one a group), partitions and passes over a band's keys. A threshold of
    0.1 keeps pairs of unrelated texts that collide by chance too."""
    params = MinHashParams(bands=bands, max_bucket=25)
    for threshold in (0.5, 0.1):
        one_job = one_job_pairs(params, threshold)
        assert len(one_job) > 1600  # most of the 60 copies' 1,770 pairs
        in_jobs = pair_in_jobs(
            signature_paths, band_jobs, partitions, passes, threshold, params, tmp_path
        )
        pd.testing.assert_frame_equal(in_jobs, one_job)
