#!/usr/bin/env python3
"""Build the same crawl with two commits of this repository and compare what a user takes away,
byte for byte: every results/corpus/ file (decompressed) and the funnel's two tables. For
changes that must not change the output (moves, refactors, speed-ups).

    python tools/compare_builds.py BASE [HEAD]            # the bundled sample; HEAD by default
    python tools/compare_builds.py baeaf37 --crawl ../shared/datasets/crawl/dev
    python tools/compare_builds.py c4aaa72 --config '{dedup: {mode: partitioned, partitions: 3}}'

Each commit is exported with `git archive` into a temporary folder (its compiled modules copied
from this checkout when the .pyx sources are the same) and built there with `snakemake --cores
N`. Exit 0 when every file is the same, 1 with the files that differ.
"""

from __future__ import annotations

import argparse
import gzip
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
COMPARED = ("results/stats/funnel.tsv", "results/stats/skipped.tsv")


def export(commit: str, into: Path) -> Path:
    """The commit's tree in ``into``, with this checkout's compiled modules beside its sources."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", commit], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    for built in REPO.glob("corpusbuilder/*/*.so"):
        shutil.copy2(built, into / built.relative_to(REPO))
    return into


def build(source: Path, warcs: list[Path], workdir: Path, cores: int, settings: dict) -> None:
    workdir.mkdir(parents=True)
    config = workdir / "config.yaml"
    config.write_text(yaml.safe_dump({**settings, "input": {"warcs": [str(w) for w in warcs]}}))
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(source / "Snakefile")]
    command += ["--directory", str(workdir), "--cores", str(cores), "--quiet"]
    command += ["--configfile", str(config)]
    result = subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(source)}
    )
    if result.returncode:
        sys.exit(f"the build of {source} failed:\n{result.stderr[-3000:]}")


def outputs(workdir: Path) -> dict[str, bytes]:
    found = {
        str(path.relative_to(workdir)): gzip.decompress(path.read_bytes())
        for path in sorted((workdir / "results" / "corpus").glob("*.gz"))
    }
    found.update({name: (workdir / name).read_bytes() for name in COMPARED})
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", help="the commit the output must equal")
    parser.add_argument("head", nargs="?", default="HEAD", help="the commit compared (HEAD)")
    parser.add_argument(
        "--crawl",
        type=Path,
        default=REPO / "resources" / "sample",
        help="a folder of *.warc.gz (default: the bundled sample)",
    )
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument(
        "--config",
        type=yaml.safe_load,
        default={},
        help="settings both builds get besides the input, a YAML mapping: a mode that is not "
        "the default, such as '{dedup: {mode: partitioned, partitions: 3}}'",
    )
    args = parser.parse_args()
    if not isinstance(args.config, dict) or "input" in args.config:
        parser.error("--config is a YAML mapping of settings other than input")
    warcs = sorted(args.crawl.resolve().glob("*.warc.gz"))
    if not warcs:
        parser.error(f"{args.crawl} holds no *.warc.gz")
    with tempfile.TemporaryDirectory(prefix="compare-builds-") as scratch:
        built = {}
        for commit in (args.base, args.head):
            root = Path(scratch) / commit
            build(export(commit, root / "src"), warcs, root / "build", args.cores, args.config)
            built[commit] = outputs(root / "build")
    base, head = built[args.base], built[args.head]
    differ = sorted(name for name in base.keys() | head.keys() if base.get(name) != head.get(name))
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(base.keys() | head.keys()) - len(differ)} files the same, {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
