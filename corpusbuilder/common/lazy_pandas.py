"""A rule job that does not use pandas does not import it.

pyarrow imports pandas the first time it builds an array from anything that is not a numpy array
(`pa.array(list)`, `pa.Table.from_pylist`, `pa.table(dict)`), only to ask whether the object is
a pandas one: ~0.4 CPU-s, half of a small job's start-up. It was paid by the jobs of every
per-shard stage, which compute over Arrow tables and numpy (`contracts.survivors`,
`common.arrays`): extract, language, exact de-duplication (hashes, partitions, decisions),
tokenise, quality, export, the min-hash signatures and candidates, partitioned dedup
(occurrences, order, counts, state) and the report's n-gram ranges. pandas is optional to
pyarrow; told that it is not installed, pyarrow builds the same arrays without it (issue 58,
"start-ups").
"""

from __future__ import annotations

import importlib.abc
import sys


class _NoPandas(importlib.abc.MetaPathFinder):
    """`import pandas` fails as where it is not installed, saying which job chose that."""

    def __init__(self, job: str) -> None:
        self.job = job

    def find_spec(self, name, path=None, target=None):  # noqa: ANN001 — the finder protocol
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(
                f"{self.job} runs without pandas (corpusbuilder.common.lazy_pandas): "
                "a job that uses pandas must not call without_pandas()",
                name=name,
            )
        return None


def without_pandas(job: str) -> None:
    """From here on this process runs as if pandas were not installed (see the module): a rule
    script whose job uses no DataFrame calls it first, before pyarrow builds an array. ``job``
    names it in the error that importing pandas then raises."""
    if "pandas" in sys.modules:
        return  # already paid for; nothing to save
    sys.meta_path.insert(0, _NoPandas(job))
