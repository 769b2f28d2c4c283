"""What decided a corpus, recorded beside it (``results/stats/provenance.json``, copied into the
report's ``summary.json``), so that it can be rebuilt and two corpora compared: the version of
corpusbuilder, of the libraries whose behaviour shapes the output text (HTML parsing, language
identification, hashing, suffix sorting), the hash of the block classifier's model file, the
effective config with every default filled in, and which versions wrote each stage's file of
each shard (`common.versions`): under ``--use-conda`` every rule has its own environment, and an
incremental build may extract a new shard with a newer library than the old ones.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from corpusbuilder.common.io import atomic_path
from corpusbuilder.common.versions import this_process

# {stage: {shard: the writer of that shard's file (common.versions.writer_of)}}, each stage
# named by the rule that writes its files (the workflow's stage_files), so -R stage reruns it
StageWriters = Mapping[str, Mapping[str, dict[str, Any] | None]]


def file_sha256(path: Path | str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def provenance(
    config: dict[str, Any], model: Path | str | None, stages: StageWriters | None = None
) -> dict[str, Any]:
    """The provenance record; ``model`` is the `best` preset's model file (None for a jusText
    preset). ``corpusbuilder``, ``commit``, ``python`` and ``libraries`` are those of the
    process that writes the record; ``stages`` lists, per stage, each set of versions that wrote
    its files with the shards it wrote, and ``mixed_versions``, per stage, every library of
    which more than one version wrote them."""
    writers = {stage: by_writer(shards) for stage, shards in (stages or {}).items()}
    return {
        **this_process(),
        "model": {"path": str(model), "sha256": file_sha256(model)} if model else None,
        "config": config,
        "stages": writers,
        "mixed_versions": mixed_versions(writers),
    }


def by_writer(shards: Mapping[str, dict[str, Any] | None]) -> list[dict[str, Any]]:
    """One entry per distinct writer of a stage's files, with the shards it wrote, in the
    order they come; ``written_by`` is None for files written before their kind was stamped."""
    groups: dict[str, dict[str, Any]] = {}
    for shard, writer in shards.items():
        key = json.dumps(writer, sort_keys=True)
        groups.setdefault(key, {"written_by": writer, "shards": []})["shards"].append(shard)
    return list(groups.values())


def mixed_versions(writers: Mapping[str, list[dict[str, Any]]]) -> dict[str, dict[str, list[str]]]:
    """Per stage, each library (and corpusbuilder, its commit, Python) of which that stage's
    files were written with more than one version, with those versions. Stages apart may differ
    (under conda each rule has its own env); a stage's shards that differ came from runs apart."""
    mixed = {}
    for stage, entries in writers.items():
        seen: defaultdict[str, set[str]] = defaultdict(set)
        for entry in entries:
            writer = entry["written_by"] or {}
            for name in ("corpusbuilder", "commit", "python"):
                if writer.get(name):
                    seen[name].add(writer[name])
            for name, installed in (writer.get("libraries") or {}).items():
                if installed:
                    seen[name].add(installed)
        differing = {name: sorted(found) for name, found in sorted(seen.items()) if len(found) > 1}
        if differing:
            mixed[stage] = differing
    return mixed


def write_provenance(record: dict[str, Any], path: Path | str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(record, indent=1, sort_keys=True, default=str) + "\n")


def read_provenance(path: Path | str) -> dict[str, Any]:
    return json.loads(Path(path).read_text())
