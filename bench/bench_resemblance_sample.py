"""The report's resemblance row from a sample (corpusbuilder.report.resemblance_sample) against
the whole computation, on a workflow build (the dev crawl by default).

    python bench/bench_resemblance_sample.py --build DIR [--sizes 100000 20000] [--salts 8]

DIR is a built workflow directory (work/tokens, work/extract, work/dedup/shards,
results/stats/funnel.tsv). The whole row is the sample at q = 1 (every document, every 10-gram
type: the computation the report made before sampling); each size is drawn with `--salts`
different salts (other sets of 10-gram types of the same size), and each estimate is set against
the whole row and the standard error it states.

Results go to bench/results/resemblance_sample.json.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd

from corpusbuilder.contracts.files import FILES
from corpusbuilder.contracts.tables import read_table
from corpusbuilder.contracts.tokenfile import read_tokens, tokenised_blocks
from corpusbuilder.ngrams.hashing import shard_ngram_hashes
from corpusbuilder.report.corpus_stats import (
    ShardFiles,
    corpus_words,
    measure_corpus,
)
from corpusbuilder.report.ngram_counts import MEASURE_N, DuplicateCounts
from corpusbuilder.report.resemblance_sample import (
    Resemblance,
    estimate_row,
    sampled_fraction,
    shard_sample,
)

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "results" / "resemblance_sample.json"


def build_shards(build: Path) -> list[ShardFiles]:
    shards = sorted(p.name.removesuffix(".npz") for p in (build / "work" / "tokens").glob("*.npz"))
    return [
        ShardFiles(
            build / FILES.tokens.format(shard=shard),
            build / FILES.blocks.format(shard=shard),
            dedup if (dedup := build / FILES.dedup.format(shard=shard)).exists() else None,
        )
        for shard in shards
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", type=Path, required=True)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 20_000])
    parser.add_argument("--salts", type=int, default=8)
    args = parser.parse_args()
    funnel = pd.read_csv(args.build / FILES.funnel, sep="\t")
    shards = build_shards(args.build)
    words = corpus_words(funnel)
    started = time.process_time()
    whole = measure_corpus(funnel, shards, resemblance=Resemblance(sample_size=words + 1))
    whole_seconds = time.process_time() - started
    rows = whole.duplicates.set_index("corpus")
    full = rows.loc["after_resemblance_dedup"]
    before = DuplicateCounts(
        *(int(rows.loc["before_block_dedup", c]) for c in DuplicateCounts.__dataclass_fields__)
    )
    totals = {
        f"{key}_before": int(rows.loc["before_block_dedup", key])
        for key in ("documents", "blocks", "tokens")
    }
    # every shard read once: its tokenised blocks with text and its 10-grams
    loaded = []
    for shard in shards:
        tokens = read_tokens(shard.tokens)
        table = tokenised_blocks(
            tokens, read_table(shard.blocks, ["doc_id", "block_index", "n_words", "text"])
        )
        loaded.append((table, shard_ngram_hashes(tokens, "all", MEASURE_N)))
    salts = np.random.default_rng(20261202).integers(0, 2**63, args.salts).tolist()
    results = []
    for size in args.sizes:
        q = sampled_fraction(size, words)
        draws = []
        for salt in salts:
            resemblance = Resemblance(sample_size=size, salt=salt)
            sample = pd.concat(
                [shard_sample(table, ngrams, q, resemblance) for table, ngrams in loaded],
                ignore_index=True,
            )
            row = estimate_row(sample, before, totals, q, resemblance)
            draws.append(
                {
                    "salt": salt,
                    "pct_left": round(row.pct_left, 3),
                    "standard_error": round(row.pct_left_error, 3),
                    "difference": round(row.pct_left - float(full["pct_of_before"]), 3),
                    "documents": row.documents,
                    "blocks": row.blocks,
                    "tokens": row.tokens,
                    "removed_standard_errors": {
                        key: round(value, 1) for key, value in row.removed_errors.items()
                    },
                    "sampled_documents": row.sampled_documents,
                    "removed_sampled_documents": row.removed_documents,
                    "sampled_types": row.sampled_types,
                }
            )
        differences = np.array([d["difference"] for d in draws])
        errors = np.array([d["standard_error"] for d in draws])
        results.append(
            {
                "sample_size": size,
                "q": q,
                "mean_standard_error": round(float(errors.mean()), 3),
                "rms_difference": round(float(np.sqrt((differences**2).mean())), 3),
                "mean_difference": round(float(differences.mean()), 3),
                "within_2_standard_errors": int((np.abs(differences) <= 2 * errors).sum()),
                "draws": draws,
            }
        )
        print(
            f"size {size:>7} q {q:.4f}: SE {errors.mean():.2f} pt, RMS difference "
            f"{math.sqrt((differences**2).mean()):.2f}, mean {differences.mean():+.2f}, "
            f"{results[-1]['within_2_standard_errors']}/{len(draws)} within 2 SE"
        )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    report = {
        "date": time.strftime("%Y-%m-%d"),
        "commit": commit,
        "build": str(args.build),
        "words": words,
        "whole_row": {
            "pct_left": float(full["pct_of_before"]),
            "documents": int(full["documents"]),
            "blocks": int(full["blocks"]),
            "tokens": int(full["tokens"]),
            "documents_before": totals["documents_before"],
            "cpu_seconds_whole_measurement": round(whole_seconds, 1),
        },
        "samples": results,
    }
    OUT.write_text(json.dumps(report, indent=1) + "\n")
    print(f"whole row: {full['pct_of_before']} % left; written {OUT}")


if __name__ == "__main__":
    main()
