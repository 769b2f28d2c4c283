#!/usr/bin/env python3
"""The export stage against the extract stage, in CPU seconds per shard, in one process (issue 58:
export at most 0.5x extract).

Per shard of a finished build of the crawl (``--build``; by default the dev crawl is built first,
with this checkout, in a temporary folder), timed with ``time.process_time``:

- extract: the stage's function on the shard's WARC, the docs and blocks tables written;
- tokenise: the stage's function on the build's survivors, the token file written;
- export: what the rule does — the survivors read, the token file read, the three formats
  written in one pass (`export.write_corpus`), deflated by ISA-L at `export.ISAL_LEVEL`;
- export, tokeniser: the same, with the tokens of the vertical file made by the tokeniser from
  the text (what export did before it read the token file);
- the deflate of the three formats' bytes alone, and their size: zlib's (Python's gzip) at levels
  1, 4, 5, 6 and 9, and ISA-L's (`isal`, what export uses) at its levels 0 to 3.

Rounds are interleaved and the fastest of each counts. Results go to bench/results/export.json,
with the date, the commit and the machine.

    python bench/bench_export.py                       # builds the dev crawl (~2 min on 2 cores)
    python bench/bench_export.py --build /tmp/dev-build --rounds 3
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from functools import partial
from pathlib import Path

import yaml
from isal import isal_zlib

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from run_all import machine_info  # noqa: E402

from corpusbuilder import export  # noqa: E402
from corpusbuilder.config import load_config  # noqa: E402
from corpusbuilder.contracts.corpus import EXPORT_COLUMNS, kept_documents  # noqa: E402
from corpusbuilder.contracts.survivors import read_survivors  # noqa: E402
from corpusbuilder.contracts.tables import ShardTables, read_columns  # noqa: E402
from corpusbuilder.contracts.tokenfile import read_tokens, write_token_stream  # noqa: E402
from corpusbuilder.extraction.extract import ExtractParams, extract_shard  # noqa: E402
from corpusbuilder.tokenise import TokeniseParams, tokenise_shard  # noqa: E402

RESULTS = HERE / "results" / "export.json"
DEV_CRAWL = REPO.parent / "shared" / "datasets" / "crawl" / "dev"
LEVELS = (1, 4, 5, 6, 9)
ISAL_LEVELS = (0, 1, 2, 3)
FORMATS = ("jsonl", "prevert", "vert")


def build(crawl: Path, into: Path) -> None:
    """A build of the crawl's WARCs with this checkout (Snakemake, --cores 2)."""
    into.mkdir(parents=True, exist_ok=True)
    warcs = [str(path) for path in sorted(crawl.glob("*.warc.gz"))]
    (into / "config.yaml").write_text(yaml.safe_dump({"input": {"warcs": warcs}}))
    subprocess.run(
        [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile")]
        + ["--directory", str(into), "--cores", "2", "--quiet", "--configfile"]
        + [str(into / "config.yaml")],
        check=True,
    )


def shard_tables(root: Path, shard: str) -> ShardTables:
    dedup = root / "work" / "dedup" / "shards" / f"{shard}.parquet"
    return ShardTables(
        docs=root / "work" / "extract" / f"{shard}.docs.parquet",
        blocks=root / "work" / "extract" / f"{shard}.blocks.parquet",
        language=root / "work" / "language" / f"{shard}.parquet",
        exact=root / "work" / "exact_dedup" / f"{shard}.parquet",
        dedup=dedup if dedup.exists() else None,
        quality=root / "work" / "quality" / f"{shard}.parquet",
        name=shard,
    )


def cpu(function) -> float:
    started = time.process_time()
    function()
    return time.process_time() - started


def run_extract(warc: Path, shard: str, out: Path, params: ExtractParams) -> None:
    extract_shard([(warc.name, warc)], shard, out / "docs.parquet", out / "blocks.parquet", params)


def run_tokenise(tables: ShardTables, out: Path) -> None:
    # the tokenise rule's inputs: the survivors before block de-duplication and quality
    kept = read_survivors(dataclasses.replace(tables, dedup=None, quality=None))
    write_token_stream(tokenise_shard(kept, TokeniseParams()), out / "tokens.npz")


def run_export(tables: ShardTables, out: Path, from_token_file: bool = True) -> None:
    kept = read_survivors(tables, EXPORT_COLUMNS)
    documents = kept_documents(kept, read_columns(str(tables.quality)))
    jsonl, prevert, vert = (out / f"corpus.{name}.gz" for name in FORMATS)
    if not from_token_file:  # called as before the token file was read: an earlier commit's
        export.write_corpus(documents, jsonl, prevert, vert)
        return
    tokens = read_tokens(out / "tokens.npz", export.TOKEN_FIELDS)
    export.write_corpus(documents, jsonl, prevert, vert, export.vertical_paragraphs(kept, tokens))


def _deflate(compressobj: Callable, level: int, data: bytes) -> int:
    compressor = compressobj(level, zlib.DEFLATED, -15)
    return len(compressor.compress(data) + compressor.flush())


DEFLATES = {
    **{str(level): partial(_deflate, zlib.compressobj, level) for level in LEVELS},
    **{f"isal-{level}": partial(_deflate, isal_zlib.compressobj, level) for level in ISAL_LEVELS},
}


def gzip_levels(out: Path) -> dict[str, dict[str, float]]:
    """CPU seconds and compressed MB of the three formats by each deflate (raw deflate, as gzip):
    zlib's at each level (named by the level) and ISA-L's (``isal-`` and its level), and their MB
    uncompressed (``none``)."""
    raw = [gzip.decompress((out / f"corpus.{name}.gz").read_bytes()) for name in FORMATS]
    found = {}
    for name, deflate in DEFLATES.items():
        started = time.process_time()
        size = sum(deflate(data) for data in raw)
        found[name] = {"s": time.process_time() - started, "mb": size / 1e6}
    found["none"] = {"s": 0.0, "mb": sum(map(len, raw)) / 1e6}
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--build", type=Path, help="a finished build's working directory")
    parser.add_argument("--crawl", type=Path, default=DEV_CRAWL, help="the WARCs to build")
    parser.add_argument("--rounds", type=int, default=2, help="the fastest of N counts")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        root = args.build
        if root is None:
            if not args.crawl.is_dir():
                parser.error(f"no crawl at {args.crawl}; pass --crawl or --build")
            root = Path(tmp) / "build"
            build(args.crawl, root)
        config = yaml.safe_load((root / "config.yaml").read_text())
        params = ExtractParams.from_config(load_config(root / "config.yaml")["extract"])
        shards = {}
        for warc in map(Path, config["input"]["warcs"]):
            shard = warc.name.removesuffix(".warc.gz")
            tables, out = shard_tables(root, shard), Path(tmp) / shard
            out.mkdir()
            best: dict[str, float] = {}
            for _ in range(args.rounds):
                for name, step in (
                    ("extract", partial(run_extract, warc, shard, out, params)),
                    ("tokenise", partial(run_tokenise, tables, out)),
                    ("export, tokeniser", partial(run_export, tables, out, False)),
                    ("export", partial(run_export, tables, out)),
                ):
                    best[name] = min(best.get(name, float("inf")), cpu(step))
            row: dict = {name: round(seconds, 3) for name, seconds in best.items()}
            row |= {
                f"{name} / extract": round(best[name] / best["extract"], 3)
                for name in ("export", "export, tokeniser", "tokenise")
            }
            row["gzip"] = gzip_levels(out)
            shards[shard] = row
            print(shard, json.dumps({k: v for k, v in row.items() if k != "gzip"}))
        total = {
            name: round(sum(row[name] for row in shards.values()), 3)
            for name in ("extract", "tokenise", "export, tokeniser", "export")
        }
        total |= {
            f"{name} / extract": round(total[name] / total["extract"], 3)
            for name in ("export", "export, tokeniser", "tokenise")
        }
        levels = {
            level: {
                "s": round(sum(row["gzip"][level]["s"] for row in shards.values()), 3),
                "mb": round(sum(row["gzip"][level]["mb"] for row in shards.values()), 3),
            }
            for level in [*DEFLATES, "none"]
        }
        print("total", json.dumps(total))
        print("gzip of the three formats, all shards:", json.dumps(levels))
    result = {
        "what": "CPU seconds per shard, one process, fastest of the rounds (bench/bench_export.py)",
        "crawl": str(args.crawl if args.build is None else args.build),
        "gzip_level": export.ISAL_LEVEL,
        "rounds": args.rounds,
        "shards": shards,
        "total": total,
        "gzip_levels_all_shards": levels,
        "machine": machine_info(),
    }
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
