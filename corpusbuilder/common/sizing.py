"""How many hash partitions a family of jobs is planned with (``exact_dedup.partitions``,
``ngrams.partitions``). ``auto`` follows the size of the crawl: one partition for a WARC or two,
so a small build is a few jobs, and more as the crawl grows, up to the family's ceiling. A number
is taken as it is (a crawl whose size planning cannot see, or a plan kept fixed while the crawl
grows: a new count re-plans every shard's hashes). Either way the decisions are the same."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
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
    setting: int | str, input_bytes: int, bytes_per_partition: int, ceiling: int
) -> int:
    """The partitions a setting asks for: a number as it is; `AUTO`, one a
    ``bytes_per_partition`` of input, at least one and at most ``ceiling``."""
    if setting != AUTO:
        return int(setting)
    return max(1, min(ceiling, math.ceil(input_bytes / bytes_per_partition)))
