"""Where block de-duplication's verdicts on a shard are, in what a job was given: kept apart from
the dedup modules so that the jobs reading the verdicts (quality, export, the funnel, the
report) import nothing of the pass itself."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from corpusbuilder.tables import dedup_table


def shard_verdicts(given: Sequence[Path | str], shards: Sequence[str]) -> list[Path]:
    """Block dedup's table of each of ``shards`` in what a job was given: the sequential job's
    one folder of every shard's tables, or (dedup.mode partitioned) each shard's table, in order.

    Taken from the job's input or output, never from the working directory: under a default
    storage provider (docs/cluster.md, a cloud run) those are local copies of the bucket's files,
    elsewhere, and the working directory of a job holds nothing of another job's."""
    if len(given) == 1 and Path(given[0]).is_dir():
        return [Path(given[0]) / Path(dedup_table(shard)).name for shard in shards]
    if len(given) != len(shards):
        raise ValueError(f"{len(given)} dedup tables for {len(shards)} shards")
    return [Path(path) for path in given]
