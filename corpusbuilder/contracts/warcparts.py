"""The starts of a split WARC's parts (`extraction.warc_parts`): what the `warc_parts` job writes
and each part's `extract` job reads — the WARC's size when it was read and, per part and after
the last, the byte offset and record index its reading begins at."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from corpusbuilder.common.io import atomic_path


@dataclass(frozen=True)
class PartStart:
    """Where a part's reading begins: a byte offset and the index of the record read there."""

    offset: int
    index: int


def write_part_starts(path: Path | str, warc: str, size: int, starts: list[PartStart]) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(
            json.dumps(
                {
                    "warc": warc,
                    "bytes": size,
                    "starts": [[start.offset, start.index] for start in starts],
                }
            )
            + "\n",
            encoding="utf-8",
        )


def read_part_starts(path: Path | str, size: int) -> list[PartStart]:
    """The starts, for a WARC of `size` bytes: ValueError when they were read from another."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if data["bytes"] != size:
        raise ValueError(
            f"{path} holds the parts of a WARC of {data['bytes']} bytes, not of {size}: "
            "the WARC changed since; remove the file to read it again"
        )
    return [PartStart(offset, index) for offset, index in data["starts"]]
