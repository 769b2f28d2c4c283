#!/usr/bin/env python3
"""Min-hash vs Broder super-shingles vs Charikar simhash on the shared crawl's known copies.

Texts are each cleaned page's good blocks (extract's final_class good), from
`corpusbuilder extract` outputs (--extracted DIR holding crawl-NN.docs/blocks.parquet; extracted
into a temporary directory when not given). Truth: ../shared/datasets/crawl/dev/truth.jsonl — a
`mirror` or `near` record and the original it copies (and other copies of that original) are a
positive pair; every other pair a method reports (aggregates, quotes, chance) is a false positive.

    python bench/bench_similarity.py --extracted /tmp/crawlx --json bench/results/similarity.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CRAWL = REPO.parent / "shared" / "datasets" / "crawl" / "dev"

from corpusbuilder.similarity.minhash import (  # noqa: E402
    MinHashParams,
    document_signatures,
    hamming,
    normalised_words,
    shingle_fingerprints,
    simhash,
    similar_pairs,
    super_shingles,
)


def load_texts(extracted: Path) -> pd.DataFrame:
    frames = []
    for docs_path in sorted(extracted.glob("crawl-*.docs.parquet")):
        docs = pd.read_parquet(docs_path)
        blocks = pd.read_parquet(str(docs_path).replace(".docs.", ".blocks."))
        good = blocks[blocks.final_class == "good"].sort_values(["doc_id", "block_index"])
        text = good.groupby("doc_id", sort=False)["text"].agg("\n".join)
        ok = docs[docs.outcome == "ok"][["doc_id", "shard", "uri"]]
        frames.append(ok.merge(text.rename("text"), left_on="doc_id", right_index=True))
    return pd.concat(frames, ignore_index=True).drop_duplicates(["shard", "uri"])


def truth_pairs(texts: pd.DataFrame) -> set[tuple[int, int]]:
    index = {(s, u): i for i, (s, u) in enumerate(zip(texts.shard, texts.uri))}
    original_of, groups = {}, defaultdict(set)
    records = [json.loads(line) for line in (CRAWL / "truth.jsonl").read_text().splitlines()]
    for r in records:
        if r["kind"] == "original" and (r["shard"], r["uri"]) in index:
            original_of[r["id"]] = index[(r["shard"], r["uri"])]
    for r in records:
        if r["kind"] in ("mirror", "near") and (r["shard"], r["uri"]) in index:
            for orig in r["of"]:
                groups[orig].add(index[(r["shard"], r["uri"])])
                if orig in original_of:
                    groups[orig].add(original_of[orig])
    return {
        tuple(sorted(p))
        for members in groups.values()
        for p in itertools.combinations(sorted(members), 2)
    }


def score(found: set, truth: set) -> dict:
    tp = len(found & truth)
    return {
        "pairs": len(found),
        "precision": round(tp / len(found), 4) if found else None,
        "recall": round(tp / len(truth), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extracted", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.extracted is None:
        from corpusbuilder.extraction.extract import ExtractParams, extract_shard

        args.extracted = Path(tempfile.mkdtemp())
        for warc in sorted(CRAWL.glob("crawl-*.warc.gz")):
            shard = warc.name.split(".")[0]
            extract_shard(
                [(shard, warc)],
                shard,
                args.extracted / f"{shard}.docs.parquet",
                args.extracted / f"{shard}.blocks.parquet",
                ExtractParams().with_preset("default"),
            )
    texts = load_texts(args.extracted)
    truth = truth_pairs(texts)
    report = {"documents": len(texts), "truth_pairs": len(truth), "methods": {}}

    start = time.perf_counter()
    fingerprints = [shingle_fingerprints(normalised_words(t)) for t in texts.text]
    report["shingling_seconds"] = round(time.perf_counter() - start, 2)

    start = time.perf_counter()
    signatures = document_signatures(texts.text, MinHashParams(k=100))
    report["minhash_seconds"] = round(time.perf_counter() - start, 2)
    for threshold in (0.3, 0.5, 0.7, 0.9):
        pairs = similar_pairs(signatures, threshold)
        report["methods"][f"minhash k=100 > {threshold}"] = score(set(zip(pairs.a, pairs.b)), truth)
    banded = similar_pairs(signatures, 0.5, MinHashParams(bands=20))
    report["methods"]["minhash LSH 20x5 > 0.5"] = score(set(zip(banded.a, banded.b)), truth)

    sketches = document_signatures(texts.text, MinHashParams(k=84))
    supers = np.vstack([super_shingles(s, 6) for s in sketches])  # Broder: 6 super-shingles of 14
    shared = (supers[:, None, :] == supers[None, :, :]).sum(-1)
    empty = np.array([len(f) == 0 for f in fingerprints])
    for r in (1, 2):
        i, j = np.nonzero(np.triu(shared >= r, 1) & ~empty[:, None] & ~empty[None, :])
        report["methods"][f"super-shingles 6x14, >= {r} shared"] = score(set(zip(i, j)), truth)

    hashes = np.array([simhash(f) for f in fingerprints], dtype=np.uint64)
    distance = hamming(hashes[:, None], hashes[None, :])
    for k in (3, 6, 10):
        i, j = np.nonzero(np.triu(distance <= k, 1) & ~empty[:, None] & ~empty[None, :])
        report["methods"][f"simhash 64-bit, hamming <= {k}"] = score(set(zip(i, j)), truth)

    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
