"""Who sent what to output, logged to disk during the pass, so that `duplicate_of` can be
resolved after it without an owner beside every n-gram in G_out."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from corpusbuilder.dedup.document import UnitVerdicts
from corpusbuilder.dedup.params import NO_DOCUMENT

SENT = np.dtype([("handle", "<u8"), ("doc", "<i4")])
QUOTED = np.dtype([("unit", "<i8"), ("handle", "<u8"), ("doc", "<i4")])


class Provenance:
    """The data `duplicate_of` is computed from, logged to disk during the pass so that G_out
    needs no owner beside each n-gram: every n-gram sent to output with the document that sent
    it (each is sent once, so that is its owner), and every output n-gram of a duplicate unit
    with the unit's number (with the unit's own document when it repeats an earlier part of the
    page, -1 when it was in G_out). `resolve` joins the two once the sets are given up."""

    def __init__(self, directory: Path | str, chunk_rows: int = 1 << 20):
        Path(directory).mkdir(parents=True, exist_ok=True)
        self._tmp = tempfile.TemporaryDirectory(dir=directory, prefix=".provenance-")
        self._paths = {name: Path(self._tmp.name) / name for name in ("sent", "quoted")}
        self._files = {name: path.open("wb") for name, path in self._paths.items()}
        # a document's rows are few: they are gathered and written a chunk at a time
        self._pending: dict[str, list] = {name: [] for name in self._paths}
        self._pending_rows = 0
        self.chunk_rows = chunk_rows
        self.units = 0

    def record(self, verdicts: UnitVerdicts, doc: int) -> np.ndarray:
        """Log one document's sends and quotes; returns the numbers given to its duplicate units."""
        sent = np.empty(len(verdicts.sent), SENT)
        sent["handle"], sent["doc"] = verdicts.sent, doc
        duplicate = np.flatnonzero(verdicts.duplicate)
        numbers = np.full(len(verdicts.duplicate), -1, np.int64)
        numbers[duplicate] = self.units + np.arange(len(duplicate))
        self.units += len(duplicate)
        quoted = np.empty(len(verdicts.quoted_unit), QUOTED)
        quoted["unit"], quoted["handle"] = numbers[verdicts.quoted_unit], verdicts.quoted_handle
        quoted["doc"] = np.where(verdicts.quoted_self, doc, NO_DOCUMENT)
        self._pending["sent"].append(sent)
        self._pending["quoted"].append(quoted)
        self._pending_rows += len(sent) + len(quoted)
        if self._pending_rows >= self.chunk_rows:
            self._flush()
        return numbers

    def record_sent(self, handles: np.ndarray, docs: np.ndarray) -> None:
        """Log n-grams put in G_out by documents outside the pass (an earlier corpus's state)."""
        sent = np.empty(len(handles), SENT)
        sent["handle"], sent["doc"] = handles, docs
        self._pending["sent"].append(sent)
        self._pending_rows += len(sent)

    def _flush(self) -> None:
        for name, rows in self._pending.items():
            if rows:
                np.concatenate(rows).tofile(self._files[name])
            rows.clear()
        self._pending_rows = 0

    def _chunks(self, name: str, dtype: np.dtype):
        with self._paths[name].open("rb") as f:
            while len(rows := np.fromfile(f, dtype=dtype, count=self.chunk_rows)):
                yield rows

    def resolve(self, owners) -> np.ndarray:
        """Per duplicate unit, the document that sent most of its output n-grams (the smallest
        of equally frequent ones); `owners` is the store's `owner_table()`."""
        self._flush()
        for f in self._files.values():
            f.close()
        for rows in self._chunks("sent", SENT):
            owners.record(rows["handle"], rows["doc"])
        pairs, counts = [], []
        for rows in self._chunks("quoted", QUOTED):
            doc = rows["doc"].copy()
            from_gout = doc == NO_DOCUMENT
            doc[from_gout] = owners.lookup(rows["handle"][from_gout])
            key, count = np.unique(
                (rows["unit"].astype(np.uint64) << np.uint64(32)) | doc.astype(np.uint64),
                return_counts=True,
            )
            pairs.append(key)
            counts.append(count)
        best = np.full(self.units, NO_DOCUMENT, np.int32)
        if pairs:
            key, where = np.unique(np.concatenate(pairs), return_inverse=True)
            count = np.bincount(where, weights=np.concatenate(counts))
            unit, doc = (
                (key >> np.uint64(32)).astype(np.int64),
                (key & np.uint64(0xFFFFFFFF)).astype(np.int64),
            )
            ranked = np.lexsort((doc, -count, unit))
            first = ranked[np.concatenate(([True], unit[ranked][1:] != unit[ranked][:-1]))]
            best[unit[first]] = doc[first]
        self._tmp.cleanup()
        return best
