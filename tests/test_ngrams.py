"""Duplicate n-grams (thesis §3.4.2): the suffix-array engine against brute-force counters."""

from __future__ import annotations

import collections
import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from conftest import CRAWL, require_shared

from corpusbuilder.contracts import ngramfiles
from corpusbuilder.contracts.tokenfile import TokenStream, write_token_stream
from corpusbuilder.ngrams import chunks, hashing, runs, stage, suffix

MASK64 = (1 << 64) - 1


def reference_hash(tokens: tuple[int, ...]) -> int:
    """The n-gram hash spelled out with Python integers: h = h·B + t (mod 2⁶⁴), splitmix64."""
    h = 0
    for i, token in enumerate(tokens):
        h = token if i == 0 else (h * 0x9E3779B97F4A7C15 + token) & MASK64
    h ^= h >> 30
    h = (h * 0xBF58476D1CE4E5B9) & MASK64
    h ^= h >> 27
    h = (h * 0x94D049BB133111EB) & MASK64
    return h ^ (h >> 31)


def brute_force_counts(token_hash, block_offsets, n) -> collections.Counter:
    """Count every n-gram (as a tuple of token hashes) inside each block, one by one."""
    counts = collections.Counter()
    tokens = [int(t) for t in token_hash]
    for begin, end in zip(block_offsets[:-1], block_offsets[1:]):
        for start in range(begin, end - n + 1):
            counts[tuple(tokens[start : start + n])] += 1
    return counts


def brute_force_duplicates(token_hash, block_offsets, n, min_count=2) -> np.ndarray:
    counts = brute_force_counts(token_hash, block_offsets, n)
    return np.array(
        sorted(reference_hash(g) for g, c in counts.items() if c >= min_count), dtype=np.uint64
    )


def random_corpus(rng, tokens, vocabulary, blocks, copies=20):
    """Zipf-ish random tokens in random blocks, with copied passages planted far apart."""
    token_hash = rng.integers(0, 2**64 - 1, vocabulary, dtype=np.uint64)[
        np.minimum(rng.zipf(1.3, tokens) - 1, vocabulary - 1)
    ]
    for _ in range(copies):
        length = int(rng.integers(5, 60))
        source, target = rng.integers(0, tokens - length, 2)
        token_hash[target : target + length] = token_hash[source : source + length]
    cuts = rng.choice(np.arange(1, tokens), size=blocks - 1, replace=False)
    block_offsets = np.concatenate(([0], np.sort(cuts), [tokens])).astype(np.int64)
    return token_hash, block_offsets


def run_engine(tmp_path, shards, kind, n, chunk_tokens, min_count=2, mem_mb=256):
    """shards: list of (token_hash, block_offsets, is_punct, is_stop) → (dup hashes, stats)."""
    runs = []
    for i, (token_hash, block_offsets, is_punct, is_stop) in enumerate(shards):
        tokens = tmp_path / f"shard{i}.npz"
        write_token_stream(
            TokenStream.of_blocks(token_hash, block_offsets, is_punct, is_stop), tokens
        )
        runs.append(tmp_path / f"runs/shard{i}.parquet")
        stage.shard_ngram_run(tokens, runs[-1], kind, n, mem_mb, chunk_tokens=chunk_tokens)
    stats = stage.write_duplicate_ngrams(
        runs, tmp_path / f"dup{n}.npy", tmp_path / "stats.json", mem_mb, min_count
    )
    return np.load(tmp_path / f"dup{n}.npy"), stats


# --- hashes and token selection ----------------------------------------------------------------


def test_ngram_hashes_follow_the_formula_and_stay_inside_blocks():
    rng = np.random.default_rng(0)
    token_hash = rng.integers(0, 2**64 - 1, 30, dtype=np.uint64)
    block_offsets = np.array([0, 4, 4, 5, 17, 30])  # blocks of 4, 0, 1, 12 and 13 tokens
    hashes, starts = hashing.ngram_hashes(token_hash, block_offsets, 4)
    assert starts.tolist() == [0] + list(range(5, 14)) + list(range(17, 27))
    assert hashes.tolist() == [
        reference_hash(tuple(int(t) for t in token_hash[s : s + 4])) for s in starts
    ]
    # blocks that cover only part of the stream: no n-gram before the first or past the last
    hashes, starts = hashing.ngram_hashes(token_hash, np.array([3, 9, 9, 11, 25]), 4)
    assert starts.tolist() == list(range(3, 6)) + list(range(11, 22))
    assert hashes.tolist() == [
        reference_hash(tuple(int(t) for t in token_hash[s : s + 4])) for s in starts
    ]


def test_select_tokens_and_kinds():
    token_hash = np.arange(10, 20, dtype=np.uint64)
    is_punct = np.array([0, 1, 0, 0, 0, 1, 0, 0, 0, 1], bool)
    is_stop = np.array([1, 0, 0, 1, 0, 0, 0, 0, 1, 0], bool)
    block_offsets = np.array([0, 3, 6, 10])
    assert hashing.kind_mask("all", is_punct, is_stop).all()
    keep = hashing.kind_mask("no-punct-no-stop", is_punct, is_stop)
    assert np.flatnonzero(keep).tolist() == [2, 4, 6, 7]
    kept, offsets, index = hashing.select_tokens(token_hash, block_offsets, keep)
    assert kept.tolist() == [12, 14, 16, 17]
    assert offsets.tolist() == [0, 1, 2, 4]
    assert index.tolist() == [2, 4, 6, 7]
    assert hashing.kind_mask("no-punct", is_punct, is_stop).sum() == 7
    with pytest.raises(ValueError):
        hashing.kind_mask("no-stop", is_punct, is_stop)


def test_word_ids_in_order_of_first_appearance():
    ids, vocabulary = suffix.word_ids_by_first_appearance(np.array([7, 3, 7, 9, 3, 1], np.uint64))
    assert ids.tolist() == [0, 1, 0, 2, 1, 3]
    assert vocabulary.tolist() == [7, 3, 9, 1]


@pytest.mark.parametrize("vocabulary", [3, 300, 70_000])  # packed in 1, 2 and 3 bytes
def test_suffix_array_sorts_the_suffixes_of_word_ids(vocabulary):
    rng = np.random.default_rng(vocabulary)
    ids = rng.integers(0, vocabulary, 400).astype(np.int32)
    ids[-1] = vocabulary - 1
    expected = sorted(range(len(ids)), key=lambda i: ids[i:].tolist())
    assert suffix.suffix_array(ids).tolist() == expected


# --- one chunk, many chunks, many shards --------------------------------------------------------


@pytest.mark.parametrize("n", [3, 10, 20])
def test_chunk_counts_equal_a_brute_force_counter(n):
    rng = np.random.default_rng(n)
    token_hash, block_offsets = random_corpus(rng, 5000, 40, 150)
    hashes, counts = hashing.chunk_ngram_counts(token_hash, block_offsets, n)
    expected = {
        reference_hash(g): c for g, c in brute_force_counts(token_hash, block_offsets, n).items()
    }
    assert np.all(np.diff(hashes.astype(np.float64)) >= 0) and len(np.unique(hashes)) == len(hashes)
    assert dict(zip(hashes.tolist(), counts.tolist())) == expected


@pytest.mark.parametrize("owned", [0, 1, 2500, 4991])
def test_chunk_counts_only_count_ngrams_starting_before_owned(owned):
    rng = np.random.default_rng(owned)
    token_hash, block_offsets = random_corpus(rng, 5000, 40, 150)
    hashes, counts = hashing.chunk_ngram_counts(token_hash, block_offsets, 10, owned)
    starts = [s for s in hashing.ngram_starts(block_offsets, 10) if s < owned]
    expected = collections.Counter(
        reference_hash(tuple(int(t) for t in token_hash[s : s + 10])) for s in starts
    )
    assert hashes.dtype == np.uint64 and counts.dtype == np.uint32
    assert dict(zip(hashes.tolist(), counts.tolist())) == expected
    assert hashes.tolist() == sorted(expected)


def brute_force_repeated_cover(token_hash, block_offsets, min_len, owned):
    """Tokens covered by a min_len-gram inside a block that occurs twice or more."""
    grams = collections.defaultdict(list)
    for begin, end in zip(block_offsets[:-1], block_offsets[1:]):
        for start in range(begin, end - min_len + 1):
            grams[tuple(token_hash[start : start + min_len].tolist())].append(start)
    covered = np.zeros(len(token_hash), bool)
    for starts in grams.values():
        if len(starts) >= 2:
            for start in starts:
                if start < owned:
                    covered[start : start + min_len] = True
    return covered


@pytest.mark.parametrize("min_len", [1, 4, 25])
def test_repeated_spans_cover_what_a_brute_force_finds(min_len):
    rng = np.random.default_rng(min_len)
    token_hash, block_offsets = random_corpus(rng, 3000, 400, 80, copies=15)
    for owned in (3000, 2000):
        spans = suffix.chunk_repeated_spans(token_hash, block_offsets, min_len, owned)
        covered = np.zeros(len(token_hash), bool)
        for start, end in spans:
            covered[start:end] = True
        assert (
            covered.tolist()
            == brute_force_repeated_cover(token_hash, block_offsets, min_len, owned).tolist()
        )
        assert np.all(spans[1:, 0] > spans[:-1, 1])  # disjoint, sorted, not touching
    assert len(spans) > 5


@pytest.mark.parametrize("chunk_tokens", [23, 300, 100_000])
def test_duplicates_across_chunks_and_shards(tmp_path, chunk_tokens):
    """Tiny chunks: copies straddle chunk cuts, and many n-grams occur
    once in each of two chunks."""
    rng = np.random.default_rng(chunk_tokens)
    token_hash, block_offsets = random_corpus(rng, 6000, 2000, 60, copies=40)
    cut = block_offsets[30]  # shards end on a block boundary
    shards = [
        (token_hash[:cut], block_offsets[:31], None, None),
        (token_hash[cut:], block_offsets[30:] - cut, None, None),
    ]
    dups, stats = run_engine(tmp_path, shards, "all", 10, chunk_tokens)
    expected = brute_force_duplicates(token_hash, block_offsets, 10)
    assert len(expected) > 100
    assert dups.tolist() == expected.tolist()
    counts = brute_force_counts(token_hash, block_offsets, 10)
    assert stats["distinct_ngrams"] == len(counts)
    assert stats["duplicate_types"] == len(expected)
    assert stats["duplicate_instances"] == sum(c for c in counts.values() if c >= 2)
    if chunk_tokens == 23:
        assert sum(len(shard["chunks"]) for shard in stats["shards"]) > 200


@pytest.mark.parametrize("kind", hashing.NGRAM_KINDS)
def test_kinds_build_ngrams_from_the_kept_tokens(tmp_path, kind):
    rng = np.random.default_rng(7)
    token_hash, block_offsets = random_corpus(rng, 4000, 30, 100, copies=30)
    is_punct, is_stop = rng.random(4000) < 0.15, rng.random(4000) < 0.4
    dups, _ = run_engine(tmp_path, [(token_hash, block_offsets, is_punct, is_stop)], kind, 5, 97)
    kept, offsets, _ = hashing.select_tokens(
        token_hash, block_offsets, hashing.kind_mask(kind, is_punct, is_stop)
    )
    assert dups.tolist() == brute_force_duplicates(kept, offsets, 5).tolist()


def test_min_count_and_parameter_checks(tmp_path):
    token_hash = np.array([1, 2, 3] * 3 + [1, 2, 3, 4], np.uint64)
    dups, stats = run_engine(
        tmp_path, [(token_hash, np.array([0, 9, 13]), None, None)], "all", 3, 5, min_count=4
    )
    assert dups.tolist() == [reference_hash((1, 2, 3))]
    assert stats["duplicate_instances"] == 4
    with pytest.raises(ValueError):
        stage.shard_ngram_run(tmp_path / "shard0.npz", tmp_path / "x.parquet", "all", 2, 256)
    with pytest.raises(ValueError):
        stage.shard_ngram_run(tmp_path / "shard0.npz", tmp_path / "x.parquet", "punct", 10, 256)


def test_adding_a_shard_keeps_the_old_runs_and_re_merges(tmp_path):
    rng = np.random.default_rng(3)
    shards = [random_corpus(rng, 2000, 500, 30, copies=10) for _ in range(3)]
    runs = []
    for i, (token_hash, block_offsets) in enumerate(shards[:2]):
        write_token_stream(TokenStream.of_blocks(token_hash, block_offsets), tmp_path / f"s{i}.npz")
        runs.append(tmp_path / f"s{i}.parquet")
        stage.shard_ngram_run(tmp_path / f"s{i}.npz", runs[-1], "all", 8, 256, chunk_tokens=400)
    old = [(path.stat().st_mtime_ns, path.read_bytes()) for path in runs]
    write_token_stream(TokenStream.of_blocks(*shards[2]), tmp_path / "s2.npz")
    runs.append(tmp_path / "s2.parquet")
    stage.shard_ngram_run(tmp_path / "s2.npz", runs[-1], "all", 8, 256, chunk_tokens=400)
    stage.write_duplicate_ngrams(runs, tmp_path / "dup8.npy", tmp_path / "stats.json", 256)
    assert [(path.stat().st_mtime_ns, path.read_bytes()) for path in runs[:2]] == old
    token_hash = np.concatenate([s[0] for s in shards])
    block_offsets = np.concatenate([[0]] + [s[1][1:] + 2000 * i for i, s in enumerate(shards)])
    assert (
        np.load(tmp_path / "dup8.npy").tolist()
        == brute_force_duplicates(token_hash, block_offsets, 8).tolist()
    )
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["tokens"] == 6000 and len(stats["shards"]) == 3


@pytest.mark.parametrize("chunk_tokens", [400, 10**6])
def test_one_run_of_several_token_files_counts_each_files_ngrams_and_none_across(
    tmp_path, chunk_tokens
):
    """A WARC read as several shards has one run of its parts' token files: the counts of the
    files' own runs summed, with no n-gram from one file's end into the next one's start."""
    rng = np.random.default_rng(5)
    shards = [random_corpus(rng, 1500, 300, 20, copies=8) for _ in range(3)]
    paths = []
    for i, (token_hash, block_offsets) in enumerate(shards):
        paths.append(tmp_path / f"p{i}.npz")
        write_token_stream(TokenStream.of_blocks(token_hash, block_offsets), paths[-1])
        stage.shard_ngram_run(paths[-1], tmp_path / f"p{i}.parquet", "all", 4, 256, chunk_tokens)
    stage.shard_ngram_run(paths, tmp_path / "all.parquet", "all", 4, 256, chunk_tokens)

    def counts(path) -> collections.Counter:
        total: collections.Counter = collections.Counter()
        for hashes, values in runs.read_run(path, 1 << 16):
            total.update(dict(zip(hashes.tolist(), values.tolist(), strict=True)))
        return total

    apart = sum((counts(tmp_path / f"p{i}.parquet") for i in range(3)), collections.Counter())
    assert counts(tmp_path / "all.parquet") == apart
    assert sum(apart.values()) == sum(sum(brute_force_counts(h, o, 4).values()) for h, o in shards)


def test_merge_sums_equal_hashes_across_runs_and_blocks():
    def run(hashes, block):
        hashes = np.array(hashes, np.uint64)
        return (
            (hashes[i : i + block], np.ones(len(hashes[i : i + block]), np.uint32))
            for i in range(0, len(hashes), block)
        )

    merged = list(
        runs.merge_ngram_runs(
            [run([1, 4, 9, 2**63 + 5], 1), run([4, 5, 9], 2), run([], 3), run([9], 5)]
        )
    )
    hashes = np.concatenate([h for h, _ in merged])
    counts = np.concatenate([c for _, c in merged])
    assert hashes.tolist() == [1, 4, 5, 9, 2**63 + 5]
    assert counts.tolist() == [1, 2, 1, 3, 1]


def test_runs_are_written_in_row_groups_and_read_in_bounded_blocks(tmp_path, monkeypatch):
    """Small blocks are gathered into row groups of RUN_ROW_GROUP rows; a run is read one row
    group at a time, in blocks of at most the requested rows."""
    monkeypatch.setattr(runs, "RUN_ROW_GROUP", 100)
    hashes = np.arange(1000, dtype=np.uint64) * 7
    counts = np.arange(1000, dtype=np.uint32)
    blocks = [(hashes[i : i + 13], counts[i : i + 13]) for i in range(0, 1000, 13)]
    assert runs.write_run(tmp_path / "r.parquet", blocks) == 1000
    metadata = pq.read_metadata(tmp_path / "r.parquet")
    assert [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)][:-1] == [
        100
    ] * 9
    read = list(runs.read_run(tmp_path / "r.parquet", 30))
    assert max(len(h) for h, _ in read) == 30
    assert np.concatenate([h for h, _ in read]).tolist() == hashes.tolist()
    assert np.concatenate([c for _, c in read]).tolist() == counts.tolist()


def test_a_chunk_spill_reads_back_in_bounded_blocks_and_by_hash_range(tmp_path, monkeypatch):
    """A chunk's spill file is read as a run is: its rows in order, a row group's worth (or the
    requested rows) at a time, only those of the hash range asked for."""
    monkeypatch.setattr(runs, "RUN_ROW_GROUP", 100)
    hashes = np.sort(np.random.default_rng(5).integers(0, 2**64 - 1, 1000, dtype=np.uint64))
    counts = np.arange(1000, dtype=np.uint32)
    spill = tmp_path / f"chunk{runs.SPILL_SUFFIX}"
    runs.write_spill(spill, hashes, counts)
    read = list(runs.read_run(spill, 1000))
    assert [len(h) for h, _ in read] == [100] * 10
    assert np.concatenate([h for h, _ in read]).tolist() == hashes.tolist()
    assert np.concatenate([c for _, c in read]).tolist() == counts.tolist()
    assert max(len(h) for h, _ in runs.read_run(spill, 30)) == 30
    low, high = ngramfiles.partition_hash_range(1, 3)
    part = list(runs.read_run(spill, 1000, (low, high)))
    inside = (hashes >= np.uint64(low)) & (hashes < np.uint64(high))
    assert np.concatenate([h for h, _ in part]).tolist() == hashes[inside].tolist()
    assert np.concatenate([c for _, c in part]).tolist() == counts[inside].tolist()


def test_merge_in_passes_when_the_budget_allows_few_runs_at_once(tmp_path, monkeypatch):
    """A budget too small for MERGE_FAN_IN open runs merges fewer at a time, same result."""
    monkeypatch.setattr(runs, "RUN_ROW_GROUP", 64)
    monkeypatch.setattr(runs, "READ_BYTES_PER_ROW", 2**20)  # every open run "costs" 64 MB
    rng = np.random.default_rng(11)
    token_hash, block_offsets = random_corpus(rng, 3000, 300, 40, copies=20)
    assert runs.runs_per_merge([], 256) < runs.MERGE_FAN_IN
    dups, stats = run_engine(tmp_path, [(token_hash, block_offsets, None, None)], "all", 6, 50)
    assert dups.tolist() == brute_force_duplicates(token_hash, block_offsets, 6).tolist()
    assert len(stats["shards"][0]["chunks"]) > 50


def test_reads_compressed_token_files_piece_by_piece(tmp_path):
    rng = np.random.default_rng(5)
    token_hash, block_offsets = random_corpus(rng, 1000, 50, 40)
    is_punct = rng.random(1000) < 0.3
    np.savez_compressed(
        tmp_path / "t.npz",
        token_hash=token_hash,
        is_punct=is_punct,
        is_stop=np.zeros(1000, bool),
        block_offsets=block_offsets,
    )
    pieces = list(chunks.read_kept_token_pieces(tmp_path / "t.npz", "no-punct", 64))
    assert len(pieces) == 16
    kept, offsets, _ = hashing.select_tokens(token_hash, block_offsets, ~is_punct)
    assert np.concatenate([p[0] for p in pieces]).tolist() == kept.tolist()
    starts = np.flatnonzero(np.concatenate([p[1] for p in pieces]))
    assert starts.tolist() == np.unique(offsets[:-1][offsets[:-1] < len(kept)]).tolist()


# --- by hand: text in, TSV out ------------------------------------------------------------------


def brute_force_text(lines, n, min_count=2):
    counts = collections.Counter()
    for line in lines:
        words = line.split()
        counts.update(tuple(words[i : i + n]) for i in range(len(words) - n + 1))
    return {" ".join(g): c for g, c in counts.items() if c >= min_count}


def read_tsv(path):
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    return [(int(count), text) for count, text in rows]


def test_dup_ngrams_from_text_lists_count_and_text_most_frequent_first(tmp_path):
    lines = [
        "a b c d e f",
        "x a b c d e f y",
        "",
        "  a   b c  d e ",
        "c d e f a b c d e f",
        "f a b",
    ]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    written = stage.dup_ngrams_from_text(tmp_path / "in.txt", tmp_path / "out.tsv", n=3, mem_mb=1)
    rows = read_tsv(tmp_path / "out.tsv")
    assert written == len(rows)
    assert dict((text, count) for count, text in rows) == brute_force_text(lines, 3)
    assert rows[0] == (5, "c d e")
    assert [count for count, _ in rows] == sorted((count for count, _ in rows), reverse=True)


@pytest.fixture(scope="module")
def crawl_text(tmp_path_factory):
    """The crawl's HTML pages as text (lxml text_content), one non-empty line per block."""
    import lxml.html
    from warcio.archiveiterator import ArchiveIterator

    require_shared(CRAWL / "truth.jsonl")
    lines = []
    for warc in sorted(CRAWL.glob("crawl-*.warc.gz"))[:2]:
        with open(warc, "rb") as stream:
            for record in ArchiveIterator(stream):
                headers = record.http_headers
                if record.rec_type != "response" or headers is None:
                    continue
                if "html" not in (headers.get_header("Content-Type") or ""):
                    continue
                try:
                    text = lxml.html.fromstring(record.content_stream().read()).text_content()
                except (ValueError, lxml.etree.ParserError):
                    continue
                lines += [line for line in (part.strip() for part in text.splitlines()) if line]
    path = tmp_path_factory.mktemp("crawl_text") / "crawl.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, lines


@pytest.mark.slow
def test_real_crawl_text_matches_brute_force_with_many_chunks(crawl_text, tmp_path):
    path, lines = crawl_text
    # A budget below what the interpreter already holds gives the smallest chunks, 64·n tokens.
    stage.dup_ngrams_from_text(path, tmp_path / "dup.tsv", n=10, mem_mb=1)
    got = {text: count for count, text in read_tsv(tmp_path / "dup.tsv")}
    expected = brute_force_text(lines, 10)
    assert len(expected) > 1000
    assert got == expected


def test_counts_past_uint32_saturate_instead_of_wrapping():
    """Two runs each seeing an n-gram 3·10⁹ times: the sum, 6·10⁹, does not fit a run's uint32
    counts; wrapped it would be 1.7·10⁹ and, for a sum of exactly 2³², 0 — gone from G₂₊."""
    big = np.uint32(3_000_000_000)
    exact = [
        (np.array([5, 7], np.uint64), np.array([big, 1], np.uint32)),
        (np.array([5, 9], np.uint64), np.array([big, 1], np.uint32)),
    ]
    merged = list(runs.merge_ngram_runs([iter([run]) for run in exact]))
    hashes, counts = (np.concatenate(part) for part in zip(*merged))
    assert hashes.tolist() == [5, 7, 9] and counts.tolist() == [2**32 - 1, 1, 1]
    half = np.uint32(1 << 31)
    wrapping = [(np.array([5], np.uint64), np.array([half], np.uint32))] * 2
    [(hashes, counts)] = list(runs.merge_ngram_runs([iter([run]) for run in wrapping]))
    assert counts.tolist() == [2**32 - 1]  # 2³² would have wrapped to 0


def test_hash_ranges_cover_the_hashes_once_and_read_only_their_row_groups(tmp_path):
    """A merge part reads only the row groups of each run that overlap its hash range (found by
    their statistics), and the parts in order are the whole run."""
    rng = np.random.default_rng(7)
    hashes = np.unique(
        rng.integers(0, 2**64 - 1, 5 * runs.RUN_ROW_GROUP, dtype=np.uint64, endpoint=True)
    )
    hashes[-1] = np.uint64(2**64 - 1)  # the largest hash belongs to the last part
    counts = rng.integers(1, 5, len(hashes)).astype(np.uint32)
    runs.write_run(tmp_path / "run.parquet", [(hashes, counts)])
    metadata = pq.read_metadata(tmp_path / "run.parquet")
    partitions = 7
    bounds = [ngramfiles.partition_hash_range(p, partitions) for p in range(partitions)]
    assert bounds[0][0] == 0 and bounds[-1][1] == 2**64
    assert all(high == low for (_, high), (low, _) in zip(bounds, bounds[1:]))
    parts = []
    for hash_range in bounds:
        assert len(ngramfiles.row_groups_in(metadata, hash_range)) <= 2 < metadata.num_row_groups
        parts.append(list(runs.read_run(tmp_path / "run.parquet", 1000, hash_range)))
    assert np.array_equal(np.concatenate([h for part in parts for h, _ in part]), hashes)
    assert np.array_equal(np.concatenate([c for part in parts for _, c in part]), counts)
    with pytest.raises(ValueError, match="partition 7 of 7"):
        ngramfiles.partition_hash_range(7, 7)


def test_g2_merged_in_parts_is_the_one_merge_and_its_stats_sum(tmp_path):
    rng = np.random.default_rng(5)
    shards = [(*random_corpus(rng, 3000, 400, 40, copies=15), None, None) for _ in range(3)]
    whole, stats = run_engine(tmp_path, shards, "all", 6, chunk_tokens=700)
    run_paths = sorted((tmp_path / "runs").glob("*.parquet"))
    partitions = 5
    for p in range(partitions):
        stage.write_duplicate_ngrams(
            run_paths,
            tmp_path / f"part{p}.npy",
            tmp_path / f"part{p}.json",
            256,
            partition=p,
            partitions=partitions,
        )
    part_paths = [tmp_path / f"part{p}.npy" for p in range(partitions)]
    assert all(len(np.load(path)) for path in part_paths)
    assert np.array_equal(ngramfiles.read_duplicate_ngrams(part_paths), whole)
    assert ngramfiles.duplicate_ngram_count(part_paths) == len(whole)
    summed = stage.duplicate_ngrams_stats([tmp_path / f"part{p}.json" for p in range(partitions)])
    for key in ("distinct_ngrams", "duplicate_types", "duplicate_instances", "tokens", "n", "kind"):
        assert summed[key] == stats[key], key
    with pytest.raises(ValueError, match="expected partitions 0 to 1 of 2"):
        stage.duplicate_ngrams_stats([tmp_path / "part0.json", tmp_path / "part2.json"])
