"""Block de-duplication (thesis §3.5, Algorithm 3.1) on hand-made pages with known outcomes."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from corpusbuilder.contracts.corpus import block_texts, kept_documents
from corpusbuilder.contracts.survivors import survivors
from corpusbuilder.contracts.tokenfile import TokenStream, read_tokens, write_token_stream
from corpusbuilder.dedup import corpus
from corpusbuilder.dedup.context import final_classes
from corpusbuilder.dedup.corpus import Shard, dedup_corpus, processing_order
from corpusbuilder.dedup.document import covered_tokens, dedup_document
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.extraction.justext import PRESETS, reclassifier
from corpusbuilder.ngrams.hashing import ngram_hashes
from corpusbuilder.ngrams.stage import shard_ngram_run, write_duplicate_ngrams
from corpusbuilder.tokenise import block_sentences, tokenise, word_hashes

N = 5
_fresh = itertools.count()

# jusText's pass of the default preset, as the dedup rules hand it over
JUSTEXT = reclassifier(PRESETS["default"])


def para(words: int = 30) -> str:
    """A paragraph of words seen nowhere else."""
    return " ".join(f"w{next(_fresh)}" for _ in range(words))


def write_corpus(tmp_path, shards: dict[str, list[tuple[str, list]]], n: int = N) -> list[Shard]:
    """Write blocks.parquet and tokens npz per shard, and G₂₊ (all tokens) as dup.npy.

    A page is (doc_id, blocks); a block is its text or (text, cf_class, final_class). Tokens are
    the tokeniser's, with its sentence starts, of the final-good blocks, as the tokenise stage
    hands them over (for the words of `para`, white-space words)."""
    out, all_hashes = [], []
    for name, pages in shards.items():
        rows, words, offsets, block_doc, block_index, starts, chunks = [], [], [0], [], [], [], []
        for d, (doc_id, blocks) in enumerate(pages):
            for i, block in enumerate(blocks):
                text, cf, final = (block, "good", "good") if isinstance(block, str) else block
                rows.append(
                    dict(
                        doc_id=doc_id,
                        block_index=i,
                        text=text,
                        heading=False,
                        n_chars=len(text),
                        n_words=len(text.split()),
                        cf_class=cf,
                        final_class=final,
                    )
                )
                if final == "good":
                    for sentence in block_sentences(text):
                        for c, chunk in enumerate(sentence.split()):
                            tokens = tokenise(chunk)
                            starts += [c == 0] + [False] * (len(tokens) - 1)
                            chunks += [True] + [False] * (len(tokens) - 1)
                            words += tokens
                    offsets.append(len(words))
                    block_doc.append(d)
                    block_index.append(i)
        token_hash = word_hashes(np.array(words, dtype=object)) if words else np.empty(0, np.uint64)
        offsets = np.array(offsets, np.int64)
        all_hashes.append(ngram_hashes(token_hash, offsets, n)[0])
        write_token_stream(
            TokenStream(
                token_hash,
                np.zeros(len(words), bool),
                np.zeros(len(words), bool),
                offsets,
                np.array(block_doc, np.int32),
                np.array(block_index, np.int32),
                np.array([doc_id for doc_id, _ in pages]),
                np.array(starts, bool),
                np.array(chunks, bool),
            ),
            tmp_path / f"{name}.npz",
        )
        pd.DataFrame(rows).astype({"block_index": "int32"}).to_parquet(
            tmp_path / f"{name}.blocks.parquet"
        )
        out.append(
            Shard(
                name,
                tmp_path / f"{name}.npz",
                tmp_path / f"{name}.blocks.parquet",
                tmp_path / "dedup" / f"{name}.parquet",
            )
        )
    hashes, counts = np.unique(np.concatenate(all_hashes), return_counts=True)
    np.save(tmp_path / "dup.npy", hashes[counts >= 2])
    return out


def run(tmp_path, shards: list[Shard], **params) -> pd.DataFrame:
    stats = dedup_corpus(
        shards,
        tmp_path / "dup.npy",
        tmp_path / "dedup" / "stats.json",
        DedupParams(n=N, **params),
        JUSTEXT,
    )
    assert stats.documents == sum(len(read_tokens(s.tokens).doc_ids) for s in shards)
    return pd.concat([pd.read_parquet(s.output) for s in shards], ignore_index=True)


def kept_text(shards: list[Shard], row) -> str:
    """What export writes of one block of the dedup table (`row`): its text less removed parts."""
    blocks = pd.concat([pd.read_parquet(shard.blocks) for shard in shards]).set_index(
        ["doc_id", "block_index"]
    )
    return block_texts(
        pa.table(
            {
                "text": [blocks.text[(row.doc_id, row.block_index)]],
                "removed_chunk_starts": [row.removed_chunk_starts],
                "removed_chunk_ends": [row.removed_chunk_ends],
            }
        )
    )[0]


def classes(table: pd.DataFrame, doc_id: str) -> list[str]:
    return table.loc[table.doc_id == doc_id, "final_class"].tolist()


# --- pieces ------------------------------------------------------------------------------------


def test_covered_tokens_matches_the_set_of_algorithm_3_1():
    rng = np.random.default_rng(0)
    for _ in range(50):
        length, n = int(rng.integers(1, 40)), int(rng.integers(1, 6))
        starts = np.sort(
            rng.choice(max(length - n + 1, 1), size=int(rng.integers(0, 5)), replace=True)
        )
        starts = starts[starts + n <= length]
        expected = np.zeros(length, bool)
        for s in starts:
            expected[s : s + n] = True
        assert covered_tokens(starts, n, length).tolist() == expected.tolist()


class DictStore:
    """G_out as a plain set of handles: the reference for dedup_document."""

    def __init__(self):
        self.output = set()

    def in_output(self, handles):
        return np.array([h in self.output for h in handles.tolist()], bool)

    def send(self, handles):
        for h in handles.tolist():
            assert h not in self.output
            self.output.add(h)


def reference_document(handles, starts, unit_offsets, n, threshold, owner: dict, doc):
    """onion's loop, literally: unit by unit, word by word; an n-gram is already output when it
    is in G_out (a dict, as before the document) or was seen earlier in the document (kept or
    not); G_out takes the kept units' fresh n-grams once the document is judged."""
    verdicts, seen, sent = [], set(), {}
    for unit in range(len(unit_offsets) - 1):
        first, last = unit_offsets[unit], unit_offsets[unit + 1]
        covered, owners = set(), []
        mine = [(h, s) for h, s in zip(handles.tolist(), starts.tolist()) if first <= s < last]
        for h, s in mine:
            if h in owner or h in seen:
                covered.update(range(s, s + n))
                owners.append(owner.get(h, doc))
            seen.add(h)
        share = len(covered) / (last - first) if last > first else 0.0
        if share > threshold:
            verdicts.append((share, True, max(set(owners), key=lambda o: (owners.count(o), -o))))
        else:
            verdicts.append((share, False, -1))
            sent.update((h, doc) for h, _ in mine if h not in owner)
    owner.update(sent)
    return verdicts


def test_dedup_document_matches_onions_loop():
    """All units at once (numpy) against the word-by-word loop, on random documents; the owners
    `Provenance` would find from what the document logs are the reference's."""
    rng = np.random.default_rng(3)
    for trial in range(40):
        store, owner = DictStore(), {}
        for doc in range(12):
            n = int(rng.integers(1, 4))
            lengths = rng.integers(0, 12, size=int(rng.integers(1, 7)))
            offsets = np.concatenate(([0], np.cumsum(lengths))) + 100 * doc
            starts = np.array(
                [
                    s
                    for b in range(len(lengths))
                    for s in range(offsets[b], offsets[b + 1] - n + 1)
                    if rng.random() < 0.6
                ],
                np.int64,
            )
            handles = rng.integers(0, 25, size=len(starts)).astype(np.int64)
            threshold = float(rng.choice([0.0, 0.25, 0.5]))
            reference_owner = dict(owner)
            expected = reference_document(
                handles, starts, offsets, n, threshold, reference_owner, doc
            )
            got = dedup_document(handles, starts, offsets, n, threshold, store)
            sources = [
                doc if own else owner[h]
                for h, own in zip(got.quoted_handle.tolist(), got.quoted_self.tolist())
            ]
            duplicate_of = [
                max(set(o), key=lambda x: (o.count(x), -x))
                if (o := [src for u, src in zip(got.quoted_unit.tolist(), sources) if u == unit])
                else -1
                for unit in range(len(lengths))
            ]
            expected_share, expected_duplicate, expected_source = zip(*expected)
            assert got.share.tolist() == pytest.approx(expected_share), (trial, doc)
            assert (got.duplicate.tolist(), duplicate_of) == (
                list(expected_duplicate),
                list(expected_source),
            ), (trial, doc)
            owner.update((h, doc) for h in got.sent.tolist())
            assert owner == reference_owner, (trial, doc)  # what the reference sent to output
            assert store.output == set(owner)


def test_a_unit_at_exactly_the_threshold_is_kept():
    """§3.6.4: a block goes when MORE than the threshold of it is duplicate; half is kept at 0.5."""
    store = DictStore()
    store.output.update([1, 2])
    offsets = np.array([0, 10, 20])  # two units of 10 words; 5-grams at words 0 and 10
    got = dedup_document(
        np.array([1, 2], np.int64), np.array([0, 10], np.int64), offsets, 5, 0.5, store
    )
    assert got.share.tolist() == [0.5, 0.5] and got.duplicate.tolist() == [False, False]
    got = dedup_document(
        np.array([1, 2], np.int64), np.array([0, 10], np.int64), offsets, 5, 0.49, store
    )
    assert got.duplicate.tolist() == [True, True]


def test_processing_order_by_duplicate_share_ties_in_crawl_order():
    shares = [np.array([0.5, 0.0]), np.array([0.5, 0.2])]
    assert processing_order(shares, "dup-share").tolist() == [[0, 1], [1, 1], [0, 0], [1, 0]]
    assert processing_order(shares, "input").tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]


def test_stub_between_two_duplicates_goes_with_them():
    """Fig. 3.5: a short block kept by jusText between good blocks is
    bad once they are duplicates."""
    cf = ["good", "short", "good", "good"]
    assert (
        final_classes(cf, ["good"] * 4, [False] * 4, [300, 20, 300, 300], [False] * 4, JUSTEXT)
        == ["good"] * 4
    )
    assert final_classes(
        cf,
        ["good"] * 4,
        [True, False, True, False],
        [300, 20, 300, 300],
        [False] * 4,
        JUSTEXT,
    ) == ["duplicate", "bad", "duplicate", "good"]


def test_stub_between_two_duplicates_goes_with_them_under_the_learned_preset():
    """Preset best keeps its own verdicts as final classes and jusText's context-free classes
    beside them: stubs it kept next to removed duplicates go (Fig. 3.5), a short block it kept
    between kept blocks stays, and nothing changes on a page without duplicates."""
    cf = ["good", "short", "good", "short", "good", "short", "good"]
    learned = ["good"] * 7
    n_chars, heading = [300, 20, 300, 20, 300, 20, 300], [False] * 7
    assert final_classes(cf, learned, [False] * 7, n_chars, heading, JUSTEXT) == learned
    duplicate = [True, False, True, False, False, False, False]
    assert final_classes(cf, learned, duplicate, n_chars, heading, JUSTEXT) == [
        "duplicate",
        "bad",
        "duplicate",
        "bad",
        "good",
        "good",
        "good",
    ]
    # before jusText's classes were kept beside the learned ones, the context pass saw only these
    assert final_classes(learned, learned, duplicate, n_chars, heading, JUSTEXT) == [
        "duplicate",
        "good",
        "duplicate",
        "good",
        "good",
        "good",
        "good",
    ]


def test_jusText_bad_stays_bad():
    cf = ["good", "short", "good"]
    out = final_classes(
        cf,
        ["good", "bad", "good"],
        [False, False, False],
        [300, 20, 300],
        [False] * 3,
        JUSTEXT,
    )
    assert out == ["good", "bad", "good"]


# --- whole pages -------------------------------------------------------------------------------


def test_exact_copy_is_removed_and_points_to_the_first(tmp_path):
    a, b = para(), para()
    shards = write_corpus(
        tmp_path, {"s0": [("s0:1", [a, b]), ("s0:2", [para()])], "s1": [("s1:1", [a, b])]}
    )
    table = run(tmp_path, shards)
    assert classes(table, "s0:1") == ["good", "good"]
    assert classes(table, "s1:1") == ["duplicate", "duplicate"]
    copy = table[table.doc_id == "s1:1"]
    assert copy.duplicate_of.tolist() == ["s0:1", "s0:1"] and copy.dup_share.tolist() == [1.0, 1.0]
    assert table.loc[table.doc_id == "s0:1", "duplicate_of"].isna().all()


def test_quoted_paragraph_is_removed_only_from_the_page_with_more_copied_content(tmp_path):
    quote = para()
    # crawled first, but a third of it is the quote; the source page is only a quarter quote
    shards = write_corpus(
        tmp_path,
        {"s0": [("quoting", [para(), quote, para()]), ("source", [para(), para(), quote, para()])]},
    )
    table = run(tmp_path, shards)
    assert classes(table, "source") == ["good"] * 4
    assert classes(table, "quoting") == ["good", "duplicate", "good"]
    assert table.loc[table.doc_id == "quoting", "duplicate_of"].tolist()[1] == "source"
    # in crawl order the quoting page comes first and keeps the quote
    table = run(tmp_path, shards, order="input")
    assert classes(table, "quoting") == ["good"] * 3
    assert classes(table, "source") == ["good", "good", "duplicate", "good"]


def test_half_copied_page_loses_only_its_copied_block(tmp_path):
    copied, rest = para(40), para(40)
    original = [("original", [copied, para(40)])]
    half = [("half", [copied, rest])]
    shards = write_corpus(tmp_path, {"s0": original + half})
    assert classes(run(tmp_path, shards), "half") == ["duplicate", "good"]
    # the whole page is half duplicate: at document level it stays at t = 0.5, goes at t = 0.25
    assert classes(run(tmp_path, shards, level="document"), "half") == ["good", "good"]
    assert (
        classes(run(tmp_path, shards, level="document", threshold=0.25), "half")
        == ["duplicate"] * 2
    )


def test_block_partly_copied_goes_only_below_its_share(tmp_path):
    source = para(100)
    words = source.split()
    mixed = " ".join(words[:40] + para(60).split())  # 40 % copied
    shards = write_corpus(tmp_path, {"s0": [("source", [source]), ("mixed", [mixed])]})
    for threshold, expected in ((0.5, "good"), (0.25, "duplicate"), (0.1, "duplicate")):
        table = run(tmp_path, shards, threshold=threshold, order="input")
        assert classes(table, "mixed") == [expected], threshold
        assert table.loc[table.doc_id == "mixed", "dup_share"].item() == pytest.approx(0.4)


def test_stub_between_removed_duplicates_is_removed_by_the_context_pass(tmp_path):
    a, b = para(), para()
    stub = ("tiny stub", "short", "good")
    shards = write_corpus(tmp_path, {"s0": [("first", [a, b]), ("second", [a, stub, b, para(60)])]})
    table = run(tmp_path, shards, order="input")
    assert classes(table, "second") == ["duplicate", "bad", "duplicate", "good"]
    assert classes(table, "first") == ["good", "good"]


def test_stub_removed_by_the_context_pass_sends_nothing_to_output(tmp_path):
    """As onion smooths before it stores a page's n-grams, a stub that went with its duplicate
    neighbours is not output, so its text is still fresh when a later page has it."""
    a, b = para(), para()
    stub = (para(8), "short", "good")
    shards = write_corpus(
        tmp_path,
        {
            "s0": [
                ("first", [a, b]),
                ("second", [a, stub, b, para(60)]),
                ("third", [stub[0], para()]),
            ]
        },
    )
    table = run(tmp_path, shards, order="input")
    assert classes(table, "second") == ["duplicate", "bad", "duplicate", "good"]
    assert classes(table, "third") == ["good", "good"]


def test_headings_of_a_copied_page_go_with_it(tmp_path):
    """With the learned preset a heading is good, not short; once the body it heads is a
    duplicate, nothing on the page can be judged by n-grams and the headings go too."""
    a, b = para(), para()
    heading = ("Pricing and Availability", "good", "good")
    shards = write_corpus(
        tmp_path,
        {
            "s0": [
                ("first", [heading, a, b]),
                ("copy", [heading, a, b]),
                ("quoting", [heading, a, para(40)]),
            ]
        },
    )
    table = run(tmp_path, shards, order="input")
    assert classes(table, "first") == ["good"] * 3
    assert classes(table, "copy") == ["bad", "duplicate", "duplicate"]
    assert classes(table, "quoting") == ["good", "duplicate", "good"]  # new text keeps its heading


def test_repeat_inside_one_page_keeps_the_first_copy(tmp_path):
    a = para()
    shards = write_corpus(tmp_path, {"s0": [("page", [a, para(), a])]})
    table = run(tmp_path, shards)
    assert classes(table, "page") == ["good", "good", "duplicate"]
    assert table.duplicate_of.tolist()[2] == "page"


def test_repeat_inside_one_block_counts_as_output(tmp_path):
    """As in onion, a block that says the same thing three times is two thirds duplicate."""
    a = para(20)
    shards = write_corpus(tmp_path, {"s0": [("page", [para(), f"{a} {a} {a}"])]})
    table = run(tmp_path, shards)
    assert classes(table, "page") == ["good", "duplicate"]
    assert table.dup_share.tolist()[1] == pytest.approx(2 / 3)
    assert table.duplicate_of.tolist()[1] == "page"


def test_repeat_of_a_removed_block_counts_too(tmp_path):
    """onion's local set holds every n-gram seen earlier in the page, kept or not: a block that
    repeats the fresh half of a block removed as a duplicate is judged a repeat of it."""
    copied, fresh = para(40), para(20)
    shards = write_corpus(
        tmp_path, {"s0": [("original", [copied]), ("page", [f"{copied} {fresh}", fresh, para()])]}
    )
    table = run(tmp_path, shards, order="input")
    assert classes(table, "page") == ["duplicate", "duplicate", "good"]
    page = table[table.doc_id == "page"]
    assert page.dup_share.tolist()[:2] == pytest.approx([2 / 3, 1.0])
    assert page.duplicate_of.tolist()[:2] == ["original", "page"]


def test_provenance_names_the_page_it_duplicates_most(tmp_path):
    x, y = para(60), para(60)
    mixed = " ".join(x.split()[:50] + y.split()[:20])
    shards = write_corpus(tmp_path, {"s0": [("x", [x]), ("y", [y]), ("mixed", [mixed])]})
    table = run(tmp_path, shards, order="input")
    assert table.loc[table.doc_id == "mixed", "duplicate_of"].tolist() == ["x"]


def test_index_page_of_article_openings(tmp_path):
    """§3.5: processed by increasing duplicate share, the articles come before the index page
    made of their openings, so the articles stay whole and the index page goes."""
    articles = [(f"article{i}", [para(), para(), para()]) for i in range(3)]
    index = ("index", [blocks[0] for _, blocks in articles])
    shards = write_corpus(tmp_path, {"s0": [index] + articles})
    table = run(tmp_path, shards)
    assert classes(table, "index") == ["duplicate"] * 3
    for doc_id, _ in articles:
        assert classes(table, doc_id) == ["good"] * 3
    table = run(tmp_path, shards, order="input")
    assert classes(table, "index") == ["good"] * 3
    for doc_id, _ in articles:
        assert classes(table, doc_id)[0] == "duplicate"


def random_corpus(tmp_path, seed: int = 1, shards: int = 3) -> list[Shard]:
    """Pages mixing fresh paragraphs with paragraphs (and halves of them) drawn from a pool."""
    rng = np.random.default_rng(seed)
    pool = [para(int(rng.integers(8, 50))) for _ in range(40)]
    count, shards = shards, {}
    for s in range(count):
        pages = []
        for d in range(30):
            blocks = []
            for _ in range(int(rng.integers(1, 7))):
                pick = rng.random()
                if pick < 0.4:
                    blocks.append(para(int(rng.integers(5, 40))))
                elif pick < 0.8:
                    blocks.append(pool[rng.integers(len(pool))])
                else:
                    half = pool[rng.integers(len(pool))].split()
                    blocks.append(
                        " ".join(half[: len(half) // 2] + para(int(rng.integers(5, 30))).split())
                    )
            pages.append((f"s{s}:{d}", blocks))
        shards[f"s{s}"] = pages
    return write_corpus(tmp_path, shards)


def test_backends_and_bucketing_give_identical_results(tmp_path):
    shards = random_corpus(tmp_path)
    reference = run(tmp_path, shards)
    assert (reference.final_class == "duplicate").sum() > 20
    for params in (
        dict(backend="judy"),
        dict(bucket_tokens=200),
        dict(backend="judy", bucket_tokens=1),
        dict(hash_bits=56),
        dict(backend="judy", hash_bits=56),
    ):
        pd.testing.assert_frame_equal(run(tmp_path, shards, **params), reference, obj=str(params))


@pytest.mark.parametrize("level", ["document", "block", "sentence", "span"])
def test_many_buckets_prepare_each_shard_once_and_match_one_bucket(tmp_path, monkeypatch, level):
    shards = random_corpus(tmp_path, seed=3, shards=6)
    reference = run(tmp_path, shards, level=level)
    prepared = []
    prepare = corpus.shard_ngrams

    def counted(tokens, *args, **kwargs):
        prepared.append(str(tokens.doc_ids[0]))
        return prepare(tokens, *args, **kwargs)

    monkeypatch.setattr(corpus, "shard_ngrams", counted)
    # 60 tokens a bucket: hundreds of buckets, each touching most shards in dup-share order
    many = run(tmp_path, shards, level=level, bucket_tokens=60)
    pd.testing.assert_frame_equal(many, reference)
    assert sorted(prepared) == sorted(f"s{s}:0" for s in range(len(shards)))
    assert not list(tmp_path.rglob(".prepared-*")), "the spilled shards outlive the job"


def test_a_spilled_shard_maps_back_as_it_was_put(tmp_path):
    from corpusbuilder.dedup.context import PageBlocks
    from corpusbuilder.dedup.corpus import ShardNgrams
    from corpusbuilder.dedup.spill import SpilledShards

    rng = np.random.default_rng(0)
    pages = PageBlocks(
        np.array([0, 3]),
        np.array([0, 2]),
        np.array(["good", "bad"], dtype=object),
        np.array([0, 1, 0], np.int8),
        np.array([1, 1, 0], np.int8),
        rng.integers(0, 99, 3),
        np.array([True, False, False]),
        rng.integers(0, 9, 3),
    )
    full = ShardNgrams(
        ["a"],
        np.zeros(2, np.int32),
        np.array([0, 2], np.int32),
        np.array([0, 4, 9]),
        np.array([0, 2]),
        rng.integers(0, 2**63, 3, dtype=np.uint64),
        np.array([0, 3, 5]),
        np.array([7]),
        np.array([3]),
        pages,
        np.array([6]),
        rng.random(9) < 0.5,
    )
    empty = ShardNgrams(
        [],
        *(np.empty(0, dtype) for dtype in (np.int32, np.int32, np.int64)),
        np.zeros(1, np.int64),
        np.empty(0, np.uint64),
        *(np.empty(0, np.int64) for _ in range(3)),
    )
    spilled = SpilledShards(tmp_path)
    for key, shard in enumerate((full, empty)):
        spilled.put(key, shard)
    for key, shard in enumerate((full, empty)):
        mapped = spilled.get(key)
        for name, value in vars(shard).items():
            if isinstance(value, np.ndarray):
                np.testing.assert_array_equal(getattr(mapped, name), value, err_msg=name)
                assert (
                    getattr(mapped, name).dtype == value.dtype
                    and not getattr(mapped, name).flags.writeable
                )
        assert mapped.doc_ids == shard.doc_ids
    assert spilled.get(1).pages is None and spilled.get(1).chunk_start is None
    for name, value in vars(pages).items():
        np.testing.assert_array_equal(getattr(spilled.get(0).pages, name), value, err_msg=name)
    assert spilled.nbytes > 0
    spilled.cleanup()
    assert not list(tmp_path.iterdir())


def test_lower_threshold_removes_more(tmp_path):
    shards = random_corpus(tmp_path, seed=2)
    removed = []
    for threshold in (0.5, 0.25, 0.1):
        table = run(tmp_path, shards, threshold=threshold)
        removed.append(
            set(
                zip(
                    table.doc_id[table.final_class != "good"],
                    table.block_index[table.final_class != "good"],
                )
            )
        )
    assert len(removed[0]) < len(removed[1]) < len(removed[2])


# --- sentence mode --------------------------------------------------------------------------------


def sentences(count: int, words: int = 12) -> list[str]:
    """Sentences of words seen nowhere else, each capitalised and ended by a full stop."""
    return [" ".join([f"S{next(_fresh)}"] + para(words - 1).split()) + "." for _ in range(count)]


def test_sentence_mode_removes_the_copied_sentences_and_keeps_the_fresh_ones(tmp_path):
    copied, fresh = sentences(3), sentences(3)
    source = [("source", [" ".join(copied + sentences(2))])]
    mixed = [("mixed", [" ".join(copied[:2] + fresh[:2] + copied[2:] + fresh[2:]), para()])]
    shards = write_corpus(tmp_path, {"s0": source + mixed})
    table = run(tmp_path, shards, order="input", level="sentence")
    block = table[(table.doc_id == "mixed") & (table.block_index == 0)].iloc[0]
    assert block.final_class == "good" and pd.isna(block.duplicate_of)
    # the block's share, as in block mode: half its words, and the full stop before the third
    # copied sentence, which opens an n-gram the source has too
    assert block.dup_share == pytest.approx(40 / 78)
    # sentences 0, 1 and 4 of 13 tokens each (12 words and the full stop)
    assert (block.removed_starts.tolist(), block.removed_ends.tolist()) == (
        [0, 13, 52],
        [13, 26, 65],
    )
    assert block.removed_duplicate_of.tolist() == ["source"] * 3
    assert kept_text(shards, block) == " ".join(fresh[:2] + fresh[2:])
    assert classes(table, "source") == ["good"]
    # the thesis' block mode removes the block whole, fresh half included
    block_mode = run(tmp_path, shards, order="input")
    assert classes(block_mode, "mixed") == ["duplicate", "good"]
    assert block_mode.removed_starts.isna().all()


def test_sentence_mode_removes_a_block_copied_whole_as_one_unit(tmp_path):
    """Above the band a block goes whole, as in block mode (with its one edited sentence); a
    block whose every sentence goes is a duplicate block too, not a block with no sentence left."""
    text = sentences(6)
    edited = text[:5] + [text[5].replace(".", " changed.")]
    shards = write_corpus(
        tmp_path,
        {
            "s0": [
                ("source", [" ".join(text)]),
                ("copy", [" ".join(edited), para()]),
                ("again", [" ".join(text[:3]), para()]),
            ]
        },
    )
    for high in (0.9, 1.0):
        table = run(tmp_path, shards, order="input", level="sentence", partial_high=high)
        for doc in ("copy", "again"):
            block = table[(table.doc_id == doc) & (table.block_index == 0)].iloc[0]
            assert block.final_class == "duplicate" and block.duplicate_of == "source", (high, doc)
            assert block.removed_starts is None


def test_sentence_mode_with_an_empty_band_is_block_mode(tmp_path):
    shards = random_corpus(tmp_path, seed=4)
    block_mode = run(tmp_path, shards)
    for band in ((0.5, 0.5), (1.0, 1.0)):
        table = run(tmp_path, shards, level="sentence", partial_low=band[0], partial_high=band[1])
        pd.testing.assert_frame_equal(table, block_mode, obj=str(band))


def test_span_mode_removes_a_copied_stretch_but_the_words_fresh_ngrams_need(tmp_path):
    """Span mode keeps every word some fresh n-gram covers: of a 20-word stretch copied into
    fresh text the n - 1 words at each edge stay (they belong to the n-grams that bridge into the
    fresh text), the middle goes; a near copy keeps the 2n - 1 words around its edited word."""
    source = para(40).split()
    before, after = para(20).split(), para(20).split()
    quoting = " ".join(before + source[:20] + after)
    edited = source[:20] + ["edited"] + source[21:]
    shards = write_corpus(
        tmp_path,
        {
            "s0": [
                ("source", [" ".join(source)]),
                ("quoting", [quoting]),
                ("near", [" ".join(edited)]),
            ]
        },
    )
    table = run(tmp_path, shards, order="input", level="span")
    quoted = table.set_index("doc_id").loc["quoting"]
    assert (quoted.removed_starts.tolist(), quoted.removed_ends.tolist()) == (
        [20 + N - 1],
        [40 - N + 1],
    )
    assert kept_text(shards, table[table.doc_id == "quoting"].iloc[0]) == " ".join(
        before + source[: N - 1] + source[20 - N + 1 : 20] + after
    )
    assert quoted.final_class == "good" and quoted.removed_duplicate_of.tolist() == ["source"]
    assert kept_text(shards, table[table.doc_id == "near"].iloc[0]) == " ".join(
        edited[20 - N + 1 : 20 + N]
    )
    # the thesis' block mode removes both blocks whole
    assert run(tmp_path, shards, order="input").set_index("doc_id").final_class.tolist() == [
        "good",
        "good",
        "duplicate",
    ]


def test_span_mode_loses_no_ngram_and_block_mode_does(tmp_path):
    """Without the repeat ratio, span mode keeps every word a fresh n-gram needs: each n-gram of
    the input is still whole somewhere in the kept text (the n-grams of a removed stretch repeat
    text output before). Block mode loses the fresh n-grams of the blocks it removes."""
    from corpusbuilder.contracts.tokenfile import kept_tokens, read_tokens
    from corpusbuilder.report.ngram_counts import block_ngrams

    shards = random_corpus(tmp_path, seed=5)

    def distinct_kept(**params):
        table = run(tmp_path, shards, **params)
        kept = [
            block_ngrams(
                read_tokens(shard.tokens), kept_tokens(read_tokens(shard.tokens), table), N
            )
            for shard in shards
        ]
        return len(np.unique(np.concatenate(kept)))

    everything = len(
        np.unique(
            np.concatenate([block_ngrams(read_tokens(shard.tokens), None, N) for shard in shards])
        )
    )
    assert distinct_kept(level="span", span_repeat_ratio=float("inf")) == everything
    assert distinct_kept() < everything


def test_span_mode_removes_a_near_copy_edited_every_few_words_only_by_its_repeat_ratio(tmp_path):
    """Edited every 8th word, a copy keeps no word no fresh n-gram covers (their windows of
    2n - 1 words overlap), yet between the edits it repeats 3 output n-grams for every 5 fresh
    ones: above span_repeat_ratio it goes whole."""
    source = para(64).split()
    edited = [f"e{i}" if i % 8 == 4 else word for i, word in enumerate(source)]
    shards = write_corpus(
        tmp_path, {"s0": [("source", [" ".join(source)]), ("near", [" ".join(edited), para()])]}
    )
    for ratio, expected in ((0.25, "duplicate"), (1.0, "good"), (float("inf"), "good")):
        near = (
            run(tmp_path, shards, order="input", level="span", span_repeat_ratio=ratio)
            .set_index("doc_id")
            .loc["near"]
        )
        assert near.final_class.tolist()[0] == expected, ratio
        assert near.removed_starts.tolist()[0] is None


def test_a_chunk_cut_by_a_removed_span_is_kept_whole():
    """The kept text holds whole whitespace chunks, and the kept tokens count it so: "word,"
    whose comma starts a removed span keeps its comma in both. Export cuts the text by chunks
    (`removed_chunks`), never tokenising it again."""
    from corpusbuilder.contracts.corpus import kept_text
    from corpusbuilder.contracts.tokenfile import TokenStream, kept_tokens
    from corpusbuilder.dedup.sentences import removed_chunks

    tokens = TokenStream(
        token_hash=np.arange(6, dtype=np.uint64),
        is_punct=np.zeros(6, bool),
        is_stop=np.zeros(6, bool),
        doc_ids=np.array(["d"]),
        block_doc=np.array([0]),
        block_index=np.array([0]),
        block_offsets=np.array([0, 6]),
        chunk_start=np.array([1, 1, 0, 1, 1, 0], bool),
        chunk_end=np.array([1, 2, 2, 3, 4, 4], np.int32),
    )
    dedup = pd.DataFrame(
        {
            "doc_id": ["d"],
            "block_index": [0],
            "final_class": ["good"],
            "removed_starts": [[2]],
            "removed_ends": [[4]],
        }
    )
    assert kept_tokens(tokens, dedup).tolist() == [True, True, True, False, True, True]
    assert kept_tokens(tokens, dedup, whole_chunks=False).tolist() == [
        True,
        True,
        False,
        False,
        True,
        True,
    ]
    first, last = removed_chunks(np.array([2]), np.array([4]), np.array([6]), tokens)
    assert (first.tolist(), last.tolist()) == ([2], [3])
    assert kept_text("one two, three four.", first, last) == "one two, four."
    # a chunk without a token (a lone soft hyphen) goes with the chunk before it
    tokens.chunk_end = np.array([1, 3, 3, 4, 5, 5], np.int32)
    first, last = removed_chunks(np.array([2]), np.array([4]), np.array([6]), tokens)
    assert kept_text("one two, \u00ad three four.", first, last) == "one two, \u00ad four."
    first, last = removed_chunks(np.array([1]), np.array([4]), np.array([6]), tokens)
    assert kept_text("one two, \u00ad three four.", first, last) == "one four."
    with pytest.raises(ValueError, match="re-run tokenise"):
        kept_text("one two, three", [2], [5])


def test_a_partly_kept_block_reaches_the_corpus_with_its_kept_text(tmp_path):
    """survivors() hands export a partly kept block with its removed parts;
    export writes what is left."""
    copied, fresh = sentences(3), sentences(3)
    shards = write_corpus(
        tmp_path,
        {"s0": [("source", [" ".join(copied)]), ("mixed", [" ".join(copied[:2] + fresh)])]},
    )
    table = run(tmp_path, shards, order="input", level="sentence")
    blocks = pd.read_parquet(shards[0].blocks)
    docs = pd.DataFrame(
        {
            "doc_id": ["source", "mixed"],
            "record_index": [0, 1],
            "uri": ["a", "b"],
            "outcome": ["ok", "ok"],
            "page_language": ["en", "en"],
        }
    )
    exported = {doc.id: doc.text for doc in kept_documents(survivors(docs, blocks, dedup=table))}
    assert exported == {"source": " ".join(copied), "mixed": " ".join(fresh)}


# --- against an earlier corpus --------------------------------------------------------------------


def g2_with_state(tmp_path, shards: list[Shard], name: str, state=None) -> Path:
    """G₂₊ as the workflow counts it: the shards' runs, and an earlier
    corpus's state as one more."""
    runs = []
    for shard in shards:
        runs.append(tmp_path / "runs" / f"{shard.name}.parquet")
        shard_ngram_run(shard.tokens, runs[-1], "all", N, 64)
    write_duplicate_ngrams(
        runs + ([state] if state else []), tmp_path / f"{name}.npy", tmp_path / f"{name}.json", 64
    )
    return tmp_path / f"{name}.npy"


@pytest.mark.parametrize("level", ["block", "sentence", "span"])
def test_a_crawl_deduplicated_against_an_earlier_corpus_keeps_what_one_run_over_both_keeps(
    tmp_path, level
):
    """A, then B against A's state, gives B the verdicts (and the owners in A) of one run over A
    and B in crawl order; B's state is that run's state, so it can be merged forward again."""
    rng = np.random.default_rng(11)
    pool = [
        " ".join(sentences(int(rng.integers(1, 4)), int(rng.integers(6, 20)))) for _ in range(30)
    ]
    crawl = {}
    for s in ("a0", "a1", "b0"):
        crawl[s] = [
            (
                f"{s}:{d}",
                [
                    " ".join(rng.choice(pool + sentences(8), size=int(rng.integers(1, 4))))
                    for _ in range(int(rng.integers(1, 5)))
                ],
            )
            for d in range(25)
        ]
    shards = write_corpus(tmp_path, crawl)
    params = dict(n=N, order="input", level=level)
    both = dataclasses.replace
    one_run = [both(s, output=tmp_path / "both" / f"{s.name}.parquet") for s in shards]
    dedup_corpus(
        one_run,
        tmp_path / "dup.npy",
        None,
        DedupParams(**params),
        JUSTEXT,
        state_path=tmp_path / "both.state.parquet",
    )
    a = [both(s, output=tmp_path / "a" / f"{s.name}.parquet") for s in shards[:2]]
    dedup_corpus(
        a,
        g2_with_state(tmp_path, a, "dupA"),
        None,
        DedupParams(**params),
        JUSTEXT,
        state_path=tmp_path / "a.state.parquet",
    )
    b = [both(shards[2], output=tmp_path / "b" / "b0.parquet")]
    dedup_corpus(
        b,
        g2_with_state(tmp_path, b, "dupB", tmp_path / "a.state.parquet"),
        None,
        DedupParams(**params),
        JUSTEXT,
        against=tmp_path / "a.state.parquet",
        state_path=tmp_path / "b.state.parquet",
    )
    expected, got = pd.read_parquet(one_run[2].output), pd.read_parquet(b[0].output)
    pd.testing.assert_frame_equal(got, expected)
    assert (got.final_class == "duplicate").sum() > 10 and got.duplicate_of.str.startswith(
        "a"
    ).sum() > 10
    if level != "block":
        assert got.removed_starts.notna().sum() > 0
    states = [pd.read_parquet(tmp_path / f"{name}.state.parquet") for name in ("both", "b")]
    assert states[0].hash.is_monotonic_increasing and states[0].hash.is_unique
    pd.testing.assert_frame_equal(
        states[1].astype({"doc_id": str}), states[0].astype({"doc_id": str})
    )


def test_a_state_of_other_ngrams_is_refused_naming_the_key(tmp_path):
    shards = write_corpus(tmp_path, {"a0": [("a0:0", [para()])]})
    dedup_corpus(
        shards,
        tmp_path / "dup.npy",
        None,
        DedupParams(n=N),
        JUSTEXT,
        state_path=tmp_path / "state.parquet",
    )
    with pytest.raises(ValueError, match="dedup.against"):
        dedup_corpus(
            shards,
            tmp_path / "dup.npy",
            None,
            DedupParams(n=N + 1),
            JUSTEXT,
            against=tmp_path / "state.parquet",
        )


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError):
        DedupParams(order="random")
    with pytest.raises(ValueError):
        DedupParams(threshold=1.5)
    with pytest.raises(ValueError, match="partial_low"):
        DedupParams(level="sentence", partial_low=0.8, partial_high=0.6)


def test_state_runs_merge_a_row_group_at_a_time_and_the_lowest_rank_owns(tmp_path):
    """The state's k-way merge over runs of several row groups: each hash once, sorted, owned by
    the lowest rank among the runs that hold it (the first document, in
    crawl order, to output it)."""
    import pyarrow as pa

    from corpusbuilder.contracts.ngramfiles import STATE_ROW_GROUP
    from corpusbuilder.dedup.state import merge_state_runs, write_state_rows

    rng = np.random.default_rng(9)
    everything = []
    paths = []
    for run in range(3):
        hashes = np.unique(
            rng.integers(0, 4 * STATE_ROW_GROUP, size=2 * STATE_ROW_GROUP).astype(np.uint64)
        )
        ranks = rng.integers(0, 1000, size=len(hashes)).astype(np.int32)
        paths.append(tmp_path / f"run{run}.parquet")
        write_state_rows(
            paths[-1], [(hashes, ranks, pa.array([f"d{r}" for r in ranks.tolist()]))], {}
        )
        everything.append(pd.DataFrame({"hash": hashes, "rank": ranks}))
    expected = pd.concat(everything).sort_values(["hash", "rank"]).drop_duplicates("hash")
    merged = [(h, r, ids.to_pylist()) for h, r, ids in merge_state_runs(paths)]
    hashes = np.concatenate([h for h, _, _ in merged])
    ranks = np.concatenate([r for _, r, _ in merged])
    assert (
        hashes.tolist() == expected["hash"].tolist() and ranks.tolist() == expected["rank"].tolist()
    )
    assert [i for _, _, ids in merged for i in ids] == [f"d{r}" for r in ranks.tolist()]
    assert len(merged) > 1  # more than one round


def test_a_merge_of_whole_runs_goes_in_bounded_rounds_and_writes_whole_row_groups(
    tmp_path, monkeypatch
):
    """A state job's runs are each one piece (its part of every shard's run, read whole): the
    merge still sorts about STATE_ROUND_ROWS rows a round, not the whole range at once, to the
    same rows; the state file's row groups are whole ones and the last, whatever the rounds."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import corpusbuilder.dedup.state as state

    monkeypatch.setattr(state, "STATE_ROUND_ROWS", 300)
    rng = np.random.default_rng(3)
    runs = []
    for run in range(3):
        hashes = np.unique(rng.integers(0, 5000, size=2000).astype(np.uint64))
        ranks = np.full(len(hashes), run, np.int32)
        runs.append((hashes, ranks, pa.array([f"r{run}"] * len(hashes))))
    rounds = list(state.merge_sorted_rows(iter([run]) for run in runs))
    assert len(rounds) > 10 and max(len(h) for h, _, _ in rounds) <= 300
    hashes = np.concatenate([h for h, _, _ in rounds])
    assert hashes.tolist() == sorted(set().union(*(run[0].tolist() for run in runs)))
    owners = dict(zip(hashes.tolist(), (i for _, _, ids in rounds for i in ids.to_pylist())))
    expected = {}
    for run in reversed(range(3)):  # the lowest rank holding a hash owns it
        expected.update({h: f"r{run}" for h in runs[run][0].tolist()})
    assert owners == expected
    monkeypatch.setattr(state, "STATE_ROW_GROUP", 1000)
    state.write_state_rows(tmp_path / "s.parquet", iter(rounds), {})
    metadata = pq.ParquetFile(tmp_path / "s.parquet").metadata
    sizes = [metadata.row_group(g).num_rows for g in range(metadata.num_row_groups)]
    assert sizes[:-1] == [1000] * (len(sizes) - 1) and 0 < sizes[-1] <= 1000
    assert pq.read_table(tmp_path / "s.parquet").column("hash").to_pylist() == hashes.tolist()


@pytest.mark.parametrize("runs, rows, ranks", [(0, 0, 1), (1, 50, 1), (3, 400, 1000), (8, 300, 5)])
def test_lowest_rank_first_is_the_first_row_of_each_hash_after_a_lexsort(runs, rows, ranks):
    """Sorted runs one after another, hashes repeated across them (within one, too: a run of a
    state job's slices need not be distinct), ranks tied or not: the rows kept are lexsort's."""
    from corpusbuilder.dedup.state import lowest_rank_first

    rng = np.random.default_rng(runs + rows + ranks)
    parts = [np.sort(rng.integers(0, 3 * rows + 1, rows).astype(np.uint64)) for _ in range(runs)]
    hashes = np.concatenate([np.empty(0, np.uint64), *parts])
    rank = rng.integers(0, ranks, len(hashes)).astype(np.int32)
    order = np.lexsort((rank, hashes))
    ordered = hashes[order]
    expected = order[np.concatenate(([True], ordered[1:] != ordered[:-1]))[: len(order)]]
    assert lowest_rank_first(hashes, rank).tolist() == expected.tolist()


def test_output_runs_write_each_hash_once_owned_by_its_first_document(tmp_path, monkeypatch):
    """The sequential job's state from its shards' output n-grams (`OutputRuns`: raw runs read
    back a piece at a time, ids taken by rank): the straightforward answer, in pandas."""
    import pyarrow.parquet as pq

    import corpusbuilder.dedup.state as state

    monkeypatch.setattr(state, "STATE_ROW_GROUP", 64)  # pieces and row groups of a few rows
    rng = np.random.default_rng(4)
    ids = [f"doc{d}" for d in range(30)]
    runs = state.OutputRuns(tmp_path, None, ids)
    rows = []
    for first_doc in (0, 10, 20):  # three shards, ten documents each, n-grams shared among them
        hashes = rng.integers(0, 600, 500).astype(np.uint64)
        docs = np.sort(rng.integers(first_doc, first_doc + 10, 500))
        runs.add(hashes, docs)
        rows.append(pd.DataFrame({"hash": hashes, "doc_rank": docs.astype(np.int32)}))
    runs.add(np.empty(0, np.uint64), np.empty(0, np.int64))  # a shard without output n-grams
    runs.write(tmp_path / "state.parquet", DedupParams(n=N))
    expected = pd.concat(rows).sort_values(["hash", "doc_rank"]).drop_duplicates("hash")
    got = pq.read_table(tmp_path / "state.parquet").to_pandas()
    assert got["hash"].tolist() == expected["hash"].tolist()
    assert got["doc_rank"].tolist() == expected["doc_rank"].tolist()
    assert got["doc_id"].tolist() == [ids[r] for r in expected["doc_rank"]]
    assert (got["count"] == 1).all() and not any(tmp_path.glob(".state-*"))


def memory_check_inputs(tmp_path) -> tuple[list[Path], list[Path]]:
    """Three parts of duplicate n-gram hashes (5 in all, one part empty) and two shards' token
    files."""
    shards = write_corpus(
        tmp_path, {"s0": [("a", [para()]), ("b", [para()])], "s1": [("c", [para(), para()])]}
    )
    parts = []
    for p, hashes in enumerate(([1, 5, 9], [], [2**63, 2**64 - 1])):
        parts.append(tmp_path / f"part{p}.npy")
        np.save(parts[-1], np.array(hashes, np.uint64))
    return parts, [shard.tokens for shard in shards]


def test_the_dedup_memory_check_states_the_need_and_refuses_a_smaller_mem_mb(tmp_path, caplog):
    from corpusbuilder.contracts.tokenfile import token_count
    from corpusbuilder.dedup.memory import (
        DedupMemoryError,
        check_dedup_memory,
        dedup_memory_mb_by_sizes,
    )

    parts, tokens = memory_check_inputs(tmp_path)
    assert [token_count(path) for path in tokens] == [
        len(read_tokens(path).token_hash) for path in tokens
    ]
    with caplog.at_level("INFO", logger="corpusbuilder.dedup"):
        need = check_dedup_memory(parts, tokens, DedupParams(n=N), 10_000)
    assert "dedup needs" in caplog.text and "5 duplicate n-grams" in caplog.text
    # the rule's default mem_mb, from the files' sizes, never falls short of the job's own figure
    assert need["total"] <= dedup_memory_mb_by_sizes(parts, tokens, DedupParams(n=N))["total"]
    with pytest.raises(
        DedupMemoryError,
        match=rf"resources.mem_mb of {need['total'] - 1}: give it more with "
        rf"--set-resources dedup:mem_mb={need['total']}$",
    ):
        check_dedup_memory(parts, tokens, DedupParams(n=N), need["total"] - 1)


@pytest.mark.slow
def test_the_dedup_memory_check_counts_judys_bytes_over_300_000_parts(tmp_path):
    from corpusbuilder.dedup.memory import BYTES_PER_DUPLICATE_NGRAM, check_dedup_memory

    parts, tokens = memory_check_inputs(tmp_path)
    judy = check_dedup_memory(parts * 100_000, tokens, DedupParams(n=N, backend="judy"), None)
    assert judy["duplicate_ngrams"] == round(500_000 * BYTES_PER_DUPLICATE_NGRAM["judy"] / 2**20)
