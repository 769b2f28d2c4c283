"""How many hash partitions a family of jobs is planned with (``exact_dedup.partitions``,
``ngrams.partitions``, ``dedup.partitions``). ``auto`` follows the size of the crawl: one
partition for a WARC or two, so a small build is a few jobs, and more as the crawl grows, up to
the family's ceiling — and past it when fewer would leave a job needing more than
``resources.max_mem_mb`` at the crawl's projected size. A number is taken as it is (a crawl whose
size planning cannot see, or a plan kept fixed while the crawl grows: a new count re-plans every
shard's hashes). Either way the decisions are the same."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from pathlib import Path

GIB = 2**30
# Planning cannot see the size of a WARC it has still to download; Common Crawl's are about 1 GB.
REMOTE_WARC_BYTES = GIB
AUTO = "auto"


def file_bytes(path: Path) -> int:
    """A file's size, or the sum of the files under a folder (a text_dirs shard)."""
    if path.is_dir():
        return sum(
            (Path(root) / name).stat().st_size for root, _, names in os.walk(path) for name in names
        )
    return path.stat().st_size


def crawl_bytes(local: Iterable[Path], remote: int) -> int:
    """The input's size: the local files' and folders' bytes, `REMOTE_WARC_BYTES` a remote WARC."""
    return sum(file_bytes(path) for path in local) + remote * REMOTE_WARC_BYTES


def planned_partitions(
    setting: int | str,
    input_bytes: int,
    bytes_per_partition: int,
    ceiling: int,
    for_memory: int = 1,
) -> int:
    """The partitions a setting asks for: a number as it is; `AUTO`, one a
    ``bytes_per_partition`` of input, at most ``ceiling``, and at least ``for_memory`` (what
    `fewest_partitions` finds for the family's jobs, which may pass the ceiling)."""
    if setting != AUTO:
        return int(setting)
    return max(for_memory, 1, min(ceiling, math.ceil(input_bytes / bytes_per_partition)))


def fewest_partitions(job_mb: Callable[[int], float], max_mem_mb: int, most: int) -> int:
    """The fewest partitions, at most ``most``, whose jobs each need at most ``max_mem_mb``
    (``job_mb(partitions)``, not increasing in it); ``most`` when even those need more."""
    low, high = 1, most
    while low < high:
        middle = (low + high) // 2
        if job_mb(middle) <= max_mem_mb:
            high = middle
        else:
            low = middle + 1
    return low


def planned_parts(warc_bytes: int | None, shard_bytes: int | None) -> int:
    """The shards a WARC of `warc_bytes` is read as (``input.shard_mb``): one a `shard_bytes`,
    one when it is not to be split (None: a plain WARC, one of several a shard, or no shard size).
    """
    if warc_bytes is None or shard_bytes is None:
        return 1
    return max(1, math.ceil(warc_bytes / shard_bytes))


# The report's 10-gram count: a range job holds its range of every shard's 10-grams, 70 B a token
# measured on the dev crawl; four shards' worth is about 3 GB at 10^11 words.
SHARDS_PER_REPORT_RANGE = 4


def report_count_ranges(setting: int | None, shards: int) -> int:
    """The report's hash ranges (``report.count_ranges``): the number set, or with null one for
    every `SHARDS_PER_REPORT_RANGE` shards."""
    return setting or max(1, math.ceil(shards / SHARDS_PER_REPORT_RANGE))
