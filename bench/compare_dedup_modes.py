#!/usr/bin/env python3
"""The sequential job (Algorithm 3.1) on the shards of a workflow directory built in
`dedup.mode: partitioned`, and how far the two modes' decisions are apart:

    python bench/compare_dedup_modes.py WORKDIR OUT [--json bench/results/F.json]

WORKDIR holds work/tokens, work/extract, work/ngrams/dup10 (G₂₊) and the partitioned tables in
work/dedup/shards; OUT gets the sequential tables (every dedup setting at the config's default).
Prints the sequential job's CPU seconds and peak RSS, the blocks whose final class differs, the
tokens kept by one mode and not the other, and thesis Table 3.4's metric for each mode (duplicate
10-gram instances removed, distinct 10-grams kept). Checked on the dev crawl built sequentially:
the tables it writes equal the workflow's byte for byte.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_dedup import tengram_metric  # noqa: E402

from corpusbuilder.config import validate_config  # noqa: E402
from corpusbuilder.contracts.files import FILES
from corpusbuilder.contracts.tokenfile import (
    kept_tokens,  # noqa: E402
    read_tokens,  # noqa: E402
)
from corpusbuilder.dedup.corpus import Shard, dedup_corpus  # noqa: E402
from corpusbuilder.dedup.params import DedupParams  # noqa: E402
from corpusbuilder.extraction.extract import ExtractParams  # noqa: E402
from corpusbuilder.extraction.justext import reclassifier


def shard_names(work: Path) -> list[str]:
    return sorted(path.name.split(".")[0] for path in (work / "work" / "tokens").iterdir())


def sequential(work: Path, out: Path) -> tuple[list[str], dict]:
    config = validate_config({})
    names = shard_names(work)
    shards = [
        Shard(
            name,
            work / FILES.tokens.format(shard=name),
            work / FILES.blocks.format(shard=name),
            out / f"{name}.parquet",
        )
        for name in names
    ]
    duplicates = sorted(
        (work / "work" / "ngrams" / "dup10").glob("*.npy"), key=lambda p: int(p.stem)
    )
    out.mkdir(parents=True, exist_ok=True)
    cpu, wall = time.process_time(), time.perf_counter()
    dedup_corpus(
        shards,
        duplicates,
        out / "stats.json",
        DedupParams.from_config(config["dedup"]),
        reclassifier(ExtractParams.from_config(config["extract"]).justext),
    )
    return names, {
        "cpu_s": round(time.process_time() - cpu, 1),
        "wall_s": round(time.perf_counter() - wall, 1),
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def compare(work: Path, names: list[str], sequential_dir: Path, partitioned_dir: Path) -> dict:
    tokens = [work / FILES.tokens.format(shard=name) for name in names]
    kept: dict[str, list] = {"sequential": [], "partitioned": []}
    blocks = other_class = other_tokens = 0
    for name, path in zip(names, tokens, strict=True):
        stream = read_tokens(path)
        tables = {
            mode: pd.read_parquet(folder / f"{name}.parquet")
            for mode, folder in (("sequential", sequential_dir), ("partitioned", partitioned_dir))
        }
        for mode, table in tables.items():
            kept[mode].append(kept_tokens(stream, table))
        blocks += len(tables["sequential"])
        other_class += int(
            (
                tables["sequential"].final_class.to_numpy()
                != tables["partitioned"].final_class.to_numpy()
            ).sum()
        )
        other_tokens += int((kept["sequential"][-1] != kept["partitioned"][-1]).sum())
    before = tengram_metric(tokens, None)
    result: dict = {
        "blocks": blocks,
        "blocks_with_another_final_class": other_class,
        "tokens_kept_by_one_mode_only": other_tokens,
    }
    for mode, masks in kept.items():
        after = tengram_metric(tokens, masks)
        result[mode] = {
            "removed_duplicate_10gram_instances": round(
                1 - after["duplicate_10gram_instances"] / before["duplicate_10gram_instances"], 4
            ),
            "kept_distinct_10grams": round(
                after["distinct_10grams"] / before["distinct_10grams"], 4
            ),
            "kept_tokens": int(sum(mask.sum() for mask in masks)),
        }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("workdir", type=Path)
    parser.add_argument("out", type=Path, help="folder for the sequential job's tables")
    parser.add_argument("--json", type=Path, help="write the result here too")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="OUT already holds the sequential job's tables (a run cut off after the job): "
        "compare them without running it again; its figures are then its stats.json seconds",
    )
    args = parser.parse_args(argv)
    if args.reuse:
        names = shard_names(args.workdir)
        missing = [name for name in names if not (args.out / f"{name}.parquet").exists()]
        if missing or not (args.out / "stats.json").exists():
            raise SystemExit(f"--reuse: {args.out} lacks stats.json or {len(missing)} shard tables")
        job = {"wall_s_by_pass": json.loads((args.out / "stats.json").read_text())["seconds"]}
    else:
        names, job = sequential(args.workdir, args.out)
    result = {
        "workdir": str(args.workdir),
        "shards": len(names),
        "sequential_job": job,
        **compare(args.workdir, names, args.out, args.workdir / "work" / "dedup" / "shards"),
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
