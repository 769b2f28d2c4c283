#!/usr/bin/env python3
"""Frequent-lines counting structures (Kaser & Lemire §3.3) compared on a seeded e-text collection.

For each structure: pass-1 build time relative to the exact dictionary (interleaved rounds, median;
ratios, since the machine is shared), its memory, the lines it calls frequent that exact counting
does not (false positives) or misses (false negatives), and the boundaries it yields — the share
of files whose preamble end / epilogue start agree with exact counting and with the truth.

    python bench/bench_frequent_lines.py --files 1000 --json bench/results/frequent_lines.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from fixtures.make_ebooks import make_ebooks  # noqa: E402

from corpusbuilder.extraction.frequent_lines import (  # noqa: E402
    FrequentLinesParams,
    boundary_errors,
    find_boundaries,
    make_counter,
    read_text_file,
    text_files,
    top_and_bottom,
)

VARIANTS = {
    "exact": dict(backend="exact"),
    "checksum": dict(backend="checksum"),
    "hashed-23bit": dict(backend="hashed", hash_bits=23),
    "hashed-14bit": dict(backend="hashed", hash_bits=14),
    "gm-100000": dict(backend="gm", gm_counters=100_000),
    "gm-2000": dict(backend="gm", gm_counters=2000),
    "gm-300": dict(backend="gm", gm_counters=300),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--heuristics", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    base = FrequentLinesParams(heuristics=args.heuristics)
    with tempfile.TemporaryDirectory() as tmp:
        truths = make_ebooks(Path(tmp), n_files=args.files, seed=11)
        texts = [read_text_file(p) for p in text_files(tmp)]
    # Pass 1's input, pre-processed once: the paper times structure
    # building apart from reading (§4.2).
    batches = []
    for text in texts:
        chosen = top_and_bottom(len(text.lines), base.p_max, base.e_max)
        batches.append(([text.lines[i] for i in chosen], text.hashes[chosen]))
    n_lines = sum(len(b[0]) for b in batches)
    times = {name: [] for name in VARIANTS}
    counters = {}
    for _ in range(args.rounds):
        for name, options in VARIANTS.items():  # interleaved, so load elsewhere hits all alike
            counter = make_counter(replace(base, **options))
            start = time.perf_counter()
            for lines, hashes in batches:
                counter.add(lines, hashes)
            counter.frequent(batches[0][0], batches[0][1])  # checksum merges lazily
            times[name].append(time.perf_counter() - start)
            counters[name] = counter
    all_lines = [line for lines, _ in batches for line in lines]
    all_hashes = np.concatenate([h for _, h in batches])
    truth_frequent = counters["exact"].frequent(all_lines, all_hashes)
    exact_bounds = [find_boundaries(t, counters["exact"], base) for t in texts]
    exact_time = statistics.median(times["exact"])
    report = {
        "files": args.files,
        "pass1_lines": n_lines,
        "heuristics": args.heuristics,
        "variants": {},
    }
    for name, options in VARIANTS.items():
        params = replace(base, **options)
        found = counters[name].frequent(all_lines, all_hashes)
        bounds = [find_boundaries(t, counters[name], params) for t in texts]
        errors = np.array(
            [boundary_errors(b, t.preamble_end, t.epilogue_start) for b, t in zip(bounds, truths)]
        )
        same = np.mean(
            [
                (b.preamble_end, b.epilogue_start) == (e.preamble_end, e.epilogue_start)
                for b, e in zip(bounds, exact_bounds)
            ]
        )
        report["variants"][name] = {
            "build_time_vs_exact": round(statistics.median(times[name]) / exact_time, 3),
            "memory_bytes": int(counters[name].memory_bytes()),
            "false_positive_line_share": round(float((found & ~truth_frequent).mean()), 5),
            "false_negative_line_share": round(float((~found & truth_frequent).mean()), 5),
            "boundaries_same_as_exact": round(float(same), 4),
            "preamble_exact": round(float((errors[:, 0] == 0).mean()), 4),
            "preamble_within_10": round(float((np.abs(errors[:, 0]) <= 10).mean()), 4),
            "epilogue_exact": round(float((errors[:, 1] == 0).mean()), 4),
            "epilogue_within_10": round(float((np.abs(errors[:, 1]) <= 10).mean()), 4),
        }
        print(name, report["variants"][name])
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
