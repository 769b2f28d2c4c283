"""The files of the report's measurements (rule group corpus_stats), a contracts module beside
`tables`: per shard its totals, its 10-gram hashes by hash range and its part of the resemblance
sample; per hash range its duplicate counts; what the page shows of a shard's documents, and of
the corpus's (`report.summary`); and a shard's part of the funnel. Their paths are in
`files.FILES`; the jobs read and write them only here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from corpusbuilder.common.faults import names_the_file
from corpusbuilder.common.io import (
    atomic_path,
    part_count,
    read_part,
    write_parts,
    write_row_groups,
)

if TYPE_CHECKING:
    import pandas as pd

# a shard's 10-gram hashes: every one of the corpus before block dedup (after = False) and, again,
# those of the corpus after it (after = True); a row group per hash range (hash modulo the ranges)
NGRAM_SCHEMA = pa.schema([("hash", pa.uint64()), ("after", pa.bool_())])

# a shard's documents drawn into the resemblance sample (report.resemblance_sample), in corpus
# order: what each weighs in the corpus (its blocks and tokens, and the chance it was drawn),
# its min-hash signature and the hashes of its 10-gram occurrences that are of a sampled type
SAMPLE_COLUMNS = ("doc_id", "blocks", "tokens", "inclusion", "signature", "sampled_ngrams")


def _write_json(content: dict, path: Path | str, indent: int | None = 1) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(content, indent=indent) + "\n", encoding="utf-8")


@names_the_file
def _read_json(path: Path | str) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def write_shard_totals(totals: dict[str, int], path: Path | str) -> None:
    """A shard's counts (documents, blocks, tokens and words, before and after block dedup)."""
    _write_json(totals, path)


def read_shard_totals(path: Path | str) -> dict[str, int]:
    return _read_json(path)


def write_page_summary(summary: dict, path: Path | str) -> None:
    """What the page shows of a shard's documents or of the corpus's (`report.summary`: plain
    data; its floats written as Python's repr, which reads back the same)."""
    _write_json(summary, path, indent=None)


def read_page_summary(path: Path | str) -> dict:
    return _read_json(path)


def write_funnel_counts(
    documents: Mapping[str, int],
    words: Mapping[str, int],
    lost: Mapping[tuple[str, str], int],
    path: Path | str,
) -> None:
    """A shard's part of the funnel (`funnel.FunnelCounts`): documents and words per stage, lost
    documents per (stage, reason), each in its order."""
    _write_json(
        {
            "documents": dict(documents),
            "words": dict(words),
            "lost": [[stage, reason, count] for (stage, reason), count in lost.items()],
        },
        path,
    )


def read_funnel_counts(
    path: Path | str,
) -> tuple[dict[str, int], dict[str, int], dict[tuple[str, str], int]]:
    content = _read_json(path)
    lost = {(stage, reason): count for stage, reason, count in content["lost"]}
    return content["documents"], content["words"], lost


def write_ngram_ranges(before: Sequence[np.ndarray], after: Sequence[np.ndarray], path) -> None:
    """A shard's 10-gram hashes, before and after block dedup, a part per hash range
    (`common.io.write_parts`: a range's job reads its part of every shard's file)."""
    write_parts(
        [
            pa.table(
                {
                    "hash": np.concatenate([b, a]).astype(np.uint64),
                    "after": np.repeat([False, True], [len(b), len(a)]),
                },
                schema=NGRAM_SCHEMA,
            )
            for b, a in zip(before, after, strict=True)
        ],
        path,
    )


@names_the_file
def read_ngram_range(path: Path | str, part: int, parts: int) -> tuple[np.ndarray, np.ndarray]:
    """Range ``part`` of a shard's 10-gram hashes: (before block dedup, after it)."""
    if (written := part_count(path)) != parts:
        raise ValueError(
            f"{path}: {written} hash ranges, not {parts} (report.count_ranges changed: measure the "
            "shard again)"
        )
    batch = read_part(path, part)
    hashes = batch.column("hash").to_numpy()
    after = batch.column("after").to_numpy(zero_copy_only=False)
    return hashes[~after], hashes[after]


def write_range_counts(before: dict[str, int], after: dict[str, int], path: Path | str) -> None:
    """One hash range's duplicate counts (`ngram_counts.DuplicateCounts` as a dict), before and
    after block dedup."""
    _write_json({"before": before, "after": after}, path)


def read_range_counts(path: Path | str) -> tuple[dict[str, int], dict[str, int]]:
    content = _read_json(path)
    return content["before"], content["after"]


def write_sample(sample: pd.DataFrame, k: int, path: Path | str) -> None:
    """A shard's part of the resemblance sample (`SAMPLE_COLUMNS`; signatures of ``k`` values)."""
    schema = pa.schema(
        [
            ("doc_id", pa.string()),
            ("blocks", pa.int64()),
            ("tokens", pa.int64()),
            ("inclusion", pa.float64()),
            ("signature", pa.list_(pa.uint64(), k)),
            ("sampled_ngrams", pa.list_(pa.uint64())),
        ]
    )
    table = pa.table(
        {
            "doc_id": pa.array(sample["doc_id"].astype(str).tolist(), pa.string()),
            "blocks": pa.array(sample["blocks"].to_numpy(np.int64)),
            "tokens": pa.array(sample["tokens"].to_numpy(np.int64)),
            "inclusion": pa.array(sample["inclusion"].to_numpy(np.float64)),
            "signature": pa.FixedSizeListArray.from_arrays(
                pa.array(np.concatenate([np.empty(0, np.uint64), *sample["signature"]])), k
            ),
            "sampled_ngrams": pa.array(
                [np.asarray(h, np.uint64) for h in sample["sampled_ngrams"]],
                pa.list_(pa.uint64()),
            ),
        },
        schema=schema,
    )
    write_row_groups([table], path)


@names_the_file
def read_sample(path: Path | str) -> pd.DataFrame:
    """A shard's part of the resemblance sample, as `write_sample` was given it."""
    table = pq.read_table(path)
    signature = table.column("signature").combine_chunks()
    ngrams = table.column("sampled_ngrams").combine_chunks()
    offsets = ngrams.offsets.to_numpy()
    flat = ngrams.flatten().to_numpy()
    documents = table.select(["doc_id", "blocks", "tokens", "inclusion"]).to_pandas()
    documents["signature"] = list(
        signature.flatten().to_numpy().reshape(-1, signature.type.list_size)
    )
    documents["sampled_ngrams"] = [
        flat[start - offsets[0] : end - offsets[0]] for start, end in zip(offsets, offsets[1:])
    ]
    return documents
