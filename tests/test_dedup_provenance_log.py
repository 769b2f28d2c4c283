"""The provenance log on its own: what is logged during the pass resolves to `duplicate_of`."""

from __future__ import annotations

import numpy as np

from corpusbuilder.dedup.document import UnitVerdicts
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.dedup.provenance_log import Provenance
from corpusbuilder.dedup.store import duplicate_ngram_store


def test_provenance_resolves_the_most_common_owner(tmp_path):
    """Logged in small chunks and joined back: sent n-grams name their senders, repeats of the
    page name the page, equally frequent owners resolve to the smaller."""
    for backend in ("sorted-array", "judy"):
        store = duplicate_ngram_store(
            np.arange(10, 20, dtype=np.uint64), DedupParams(backend=backend)
        )
        log = Provenance(tmp_path, chunk_rows=2)
        nothing = np.empty(0, np.int64)
        for doc, sent in ((3, [10, 11, 12]), (1, [13, 14])):
            log.record(
                UnitVerdicts(
                    np.zeros(1),
                    np.zeros(1, bool),
                    store.locate(np.array(sent, np.uint64))[1],
                    nothing,
                    nothing,
                    nothing.astype(bool),
                ),
                doc,
            )
        copy = UnitVerdicts(
            np.ones(3),
            np.array([True, False, True]),
            nothing,
            np.array([0, 0, 0, 2, 2, 2]),
            store.locate(np.array([10, 11, 13, 13, 14, 15], np.uint64))[1],
            np.array([False, False, False, False, False, True]),
        )
        assert log.record(copy, doc=7).tolist() == [0, -1, 1]
        assert log.resolve(store.owner_table()).tolist() == [3, 1]
        assert not list(tmp_path.glob(".provenance-*"))


def test_the_chunk_size_of_the_log_changes_nothing(tmp_path):
    """Documents' rows gathered and written a chunk at a time: one row a chunk or all in one,
    the same owners come back."""
    rng = np.random.default_rng(11)
    duplicates = np.arange(100, 400, dtype=np.uint64)
    order = rng.permutation(duplicates)
    documents = []  # (sent hashes, quoted hashes, quoted units, quoted_self, units) per document
    for doc in range(30):
        sent = order[5 * doc : 5 * doc + 5]
        earlier = order[: 5 * doc + 5]
        units = int(rng.integers(1, 4))
        documents.append(
            (
                sent,
                rng.choice(earlier, 8),
                rng.integers(0, units, size=8),
                rng.random(8) < 0.3,
                units,
            )
        )
    resolved = []
    for chunk_rows in (1, 1 << 20):
        store = duplicate_ngram_store(duplicates.copy(), DedupParams())
        log = Provenance(tmp_path / str(chunk_rows), chunk_rows=chunk_rows)
        for doc, (sent, quoted, quoted_unit, quoted_self, units) in enumerate(documents):
            handles = store.locate(sent)[1]
            store.send(handles)
            log.record(
                UnitVerdicts(
                    np.ones(units),
                    np.ones(units, bool),
                    handles,
                    quoted_unit,
                    store.locate(quoted)[1],
                    quoted_self,
                ),
                doc,
            )
        resolved.append(log.resolve(store.owner_table()).tolist())
    assert resolved[0] == resolved[1] and len(resolved[0]) == sum(units for *_, units in documents)
