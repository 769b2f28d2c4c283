"""G₂₊ and G_out (thesis §3.5.1) on their own: both backends, the same answers."""

from __future__ import annotations

import numpy as np
import pytest

from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.dedup.store import (
    duplicate_ngram_store,
    searchsorted_in_order,
    truncate_hashes,
    unique_first,
    unique_sorted_in_place,
)

BACKENDS = ("sorted-array", "judy")


def test_store_moves_ngrams_from_g2_to_gout():
    for backend in ("sorted-array", "judy"):
        store = duplicate_ngram_store(
            np.array([5, 9, 1 << 40], np.uint64), DedupParams(backend=backend)
        )
        probe = np.array([5, 6, 9, 1 << 40], np.uint64)
        assert store.is_duplicate(probe).tolist() == [True, False, True, True]
        store.send_to_output(np.array([9], np.uint64))
        assert store.is_output(np.array([5, 9, 1 << 40], np.uint64)).tolist() == [
            False,
            True,
            False,
        ]
        assert store.is_duplicate(probe).tolist() == [True, False, True, True]
        assert len(store) == 3


def test_truncated_hashes_that_coincide_are_stored_once():
    values = np.sort(np.random.default_rng(5).integers(0, 50, size=5000)).astype(np.uint64)
    kept = unique_sorted_in_place(values.copy(), chunk=64)
    expected = np.unique(values)
    copy = values.copy()
    assert (
        kept == len(expected)
        and copy[: unique_sorted_in_place(copy, chunk=64)].tolist() == expected.tolist()
    )
    store = duplicate_ngram_store(
        np.array([0x1_0000_0005, 0x2_0000_0005, 7], np.uint64), DedupParams(hash_bits=32)
    )
    assert len(store) == 2 and store.is_duplicate(np.array([5, 7, 9], np.uint64)).tolist() == [
        True,
        True,
        False,
    ]


@pytest.mark.parametrize("hash_bits", [64, 40])
def test_the_backends_answer_alike_on_a_random_workload(hash_bits):
    """The sorted array and Judy: the same membership, the same G_out after the same sends, the
    same owners — also at a hash width where truncated hashes collide. Callers hand the store
    hashes truncated as it keeps them (`truncate_hashes`)."""
    rng = np.random.default_rng(7)
    duplicates = np.unique(rng.integers(0, 1 << 62, size=3000, dtype=np.int64).astype(np.uint64))
    stores = [
        duplicate_ngram_store(duplicates.copy(), DedupParams(backend=b, hash_bits=hash_bits))
        for b in BACKENDS
    ]
    kept = np.unique(truncate_hashes(duplicates.copy(), hash_bits))
    others = truncate_hashes(
        rng.integers(0, 1 << 62, size=500, dtype=np.int64).astype(np.uint64), hash_bits
    )
    probe = np.concatenate([rng.choice(kept, 500), others])
    assert stores[0].is_duplicate(probe).tolist() == stores[1].is_duplicate(probe).tolist()
    sends = [[], []]  # per backend: (handles, sender) of every send, for the owner tables
    for round_ in range(5):
        sent = np.unique(rng.choice(kept, 200))
        sent = sent[~stores[0].is_output(sent)]  # each n-gram is sent once, by its first sender
        for store, log in zip(stores, sends):
            handles = store.locate(sent)[1]
            store.send(handles)
            log.append((handles, np.full(len(handles), round_, np.int32)))
        assert stores[0].is_output(kept).tolist() == stores[1].is_output(kept).tolist()
    assert len(stores[0]) == len(stores[1]) == len(kept)
    asked = [np.concatenate([handles for handles, _ in log]) for log in sends]
    owners = []
    for store, log, handles in zip(stores, sends, asked):
        table = store.owner_table()  # the sets are given up here, as after the pass
        for sent_handles, senders in log:
            table.record(sent_handles, senders)
        owners.append(table.lookup(handles).tolist())
    assert owners[0] == owners[1] and -1 not in owners[0]


@pytest.mark.parametrize(
    "needles, keys, chunk, bits",
    [
        (0, 5, 4, 64),
        (10, 0, 4, 64),
        (1000, 300, 7, 64),
        (5000, 100_000, 1 << 20, 64),
        (3, 3, 1, 64),
        (64, 64, 64, 64),
        # truncated hashes (dedup.hash_bits): the top bits are zero, the probe's go beyond them
        (5000, 3000, 1 << 10, 20),
        (2000, 1, 512, 5),
    ],
)
def test_searching_in_order_finds_what_a_plain_search_finds(needles, keys, chunk, bits):
    rng = np.random.default_rng(needles + keys + chunk)
    sorted_keys = np.unique(rng.integers(0, 2**bits - 1, keys, dtype=np.uint64))
    # random hashes and some of the keys themselves, repeated, in no order
    probe = rng.integers(0, 2 ** min(bits + 2, 64) - 1, needles, dtype=np.uint64)
    if len(sorted_keys) and needles:
        probe[::3] = rng.choice(sorted_keys, len(probe[::3]))
    found = searchsorted_in_order(sorted_keys, probe, chunk)
    assert found.tolist() == np.searchsorted(sorted_keys, probe).tolist()


@pytest.mark.parametrize(
    "count, distinct, top",
    [
        (0, 1, 64),
        (1, 1, 64),
        (2000, 2000, 64),  # nearly all distinct
        (5000, 300, 64),  # repeated
        (3000, 1, 64),  # one hash, again and again
        # hashes that differ in their low bits only: they come out of the sort by position
        (4000, 500, 12),
    ],
)
def test_unique_first_is_numpys_unique_with_the_first_index(count, distinct, top):
    rng = np.random.default_rng(count + distinct + top)
    pool = rng.integers(0, 2**64 - 1, distinct, dtype=np.uint64)
    if top < 64:  # the leading bits all one value, the low 12 bits random
        pool = (pool & np.uint64(2**top - 1)) | np.uint64(0xABCD << 48)
    hashes = rng.choice(pool, count) if count else np.empty(0, np.uint64)
    got, first = unique_first(hashes)
    expected, expected_first = np.unique(hashes, return_index=True)
    assert got.dtype == np.uint64 and got.tolist() == expected.tolist()
    assert first.tolist() == expected_first.tolist()
