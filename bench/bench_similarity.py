#!/usr/bin/env python3
"""Min-hash vs Broder super-shingles vs Charikar simhash on the shared crawl's known copies.

Texts are each cleaned page's good blocks (extract's final_class good), from
`corpusbuilder extract` outputs (--extracted DIR holding crawl-NN.docs/blocks.parquet; extracted
into a temporary directory when not given). Truth: ../shared/datasets/crawl/dev/truth.jsonl — a
`mirror` or `near` record and the original it copies (and other copies of that original) are a
positive pair; every other pair a method reports (aggregates, quotes, chance) is a false positive.

    python bench/bench_similarity.py --extracted /tmp/crawlx --json bench/results/similarity.json

--pairing-jobs measures only the pairing as the workflow runs it (band jobs, pair partitions, a
merge; corpusbuilder.similarity.partitioned) against one job pairing every signature, on the
same shard files in the same process, and writes that section alone into --json.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import multiprocessing
import subprocess
import sys
import tempfile
import time
import tracemalloc
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
    signature_similar_pairs,
    simhash,
    similar_pairs,
    super_shingles,
)
from corpusbuilder.similarity.partitioned import (  # noqa: E402
    BASE_MB,
    band_job_count,
    job_memory_mb,
    merge_partition_pairs,
    read_signatures,
    score_partition,
    shard_documents,
    write_band_candidates,
    write_partition_pairs,
    write_signatures,
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


def timed(trace: bool, function, *args):
    """function(*args), its seconds, and (with ``trace``) the peak of what Python and numpy
    allocated during it, in MB (tracemalloc: not pyarrow's buffers)."""
    if trace:
        tracemalloc.start()
    start = time.perf_counter()
    result = function(*args)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 2**20 if trace else None
    if trace:
        tracemalloc.stop()
    return result, seconds, peak


def one_job(paths, threshold, params):
    """The pairing as one job: every shard's signatures read, paired in memory."""
    return signature_similar_pairs(*read_signatures(paths, params.k), threshold, params)


def pairing_in_jobs(paths, band_jobs, partitions, passes, threshold, params, folder, trace):
    """The workflow's pairing jobs in turn: seconds and traced peak per kind of job."""
    jobs = band_job_count(band_jobs, params)
    seconds = dict.fromkeys(("candidates", "score", "merge"), 0.0)
    peaks = dict.fromkeys(seconds, 0.0)

    def run(kind, function, *args):
        result, took, peak = timed(trace, function, *args)
        seconds[kind] += took
        peaks[kind] = max(peaks[kind], peak or 0.0)
        return result

    candidates = [folder / f"candidates-{j}.parquet" for j in range(jobs)]
    written = sum(
        run("candidates", write_band_candidates, paths, job, jobs, partitions, params, path, passes)
        for job, path in enumerate(candidates)
    )
    parts = [folder / f"pairs-{p}.parquet" for p in range(partitions)]
    for partition, path in enumerate(parts):
        scored = run("score", score_partition, candidates, paths, partition, threshold, params)
        write_partition_pairs(scored, path)
    pairs = run("merge", merge_partition_pairs, parts, paths)
    disk = sum(path.stat().st_size for path in candidates)
    return pairs, {kind: (seconds[kind], peaks[kind]) for kind in seconds}, written, disk


def pairing_jobs(texts: pd.DataFrame, threshold: float = 0.5) -> dict:
    """The pairing in band jobs and partitions against one job, on the dev crawl's shards."""
    folder = Path(tempfile.mkdtemp())
    signatures = document_signatures(texts.text, MinHashParams(k=100))
    paths = []
    for shard, rows in texts.groupby("shard", sort=True).indices.items():
        paths.append(folder / f"{shard}.parquet")
        write_signatures([str(i) for i in rows], signatures[rows], paths[-1])
    sizes = shard_documents(paths).tolist()
    report: dict = {"shard_documents": sizes, "threshold": threshold, "runs": []}
    for bands in (None, 20):
        params = MinHashParams(k=100, bands=bands)

        for band_jobs, partitions, passes in ((1, 1, 1), (4, 4, 1), (20, 8, 1), (20, 8, 4)):
            # the one job and the jobs alternate, best of three each: the machine is shared
            one_times, job_times, runs = [], [], []
            for _ in range(3):
                expected, seconds, _ = timed(False, one_job, paths, threshold, params)
                one_times.append(seconds)
                found, stats, written, disk = pairing_in_jobs(
                    paths, band_jobs, partitions, passes, threshold, params, folder, False
                )
                job_times.append(sum(s[0] for s in stats.values()))
                runs.append(stats)
            assert found.equals(expected), (bands, band_jobs, partitions, passes)
            _, _, one_peak = timed(True, one_job, paths, threshold, params)
            _, traced, _, _ = pairing_in_jobs(
                paths, band_jobs, partitions, passes, threshold, params, folder, True
            )
            best = runs[job_times.index(min(job_times))]
            report["runs"].append(
                {
                    "bands": bands,
                    "band_jobs": band_job_count(band_jobs, params),
                    "partitions": partitions,
                    "key_passes": passes,
                    "pairs": len(expected),
                    "identical": True,
                    "candidate_rows_written": written,
                    "candidate_bytes": disk,
                    "one_job_seconds": round(min(one_times), 3),
                    "jobs_seconds": {kind: round(s[0], 3) for kind, s in best.items()},
                    "jobs_over_one_job": round(min(job_times) / min(one_times), 2),
                    "one_job_peak_mb": round(one_peak, 1),
                    "largest_job_peak_mb": {kind: round(s[1], 1) for kind, s in traced.items()},
                    "stated_mb_less_base": {
                        kind: round(
                            job_memory_mb(
                                kind, sizes, params, passes, partitions, written, len(expected)
                            )
                            - BASE_MB,
                            1,
                        )
                        for kind in traced
                    },
                }
            )
            print(json.dumps(report["runs"][-1]), flush=True)
    return report


def _with_peak(function, *args):
    result = function(*args)
    status = Path("/proc/self/status").read_text().splitlines()
    peak_kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
    return result, peak_kb / 1024


def in_own_process(function, *args):
    """function(*args) in a fresh interpreter, as a workflow job runs: its result, its seconds
    and the process's peak resident memory in MB (VmHWM, pyarrow's buffers and all)."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        start = time.perf_counter()
        result, peak = pool.apply(_with_peak, (function, *args))
        return result, time.perf_counter() - start, peak


def pairing_jobs_at_scale(documents: int = 500_000, k: int = 100, seed: int = 7) -> dict:
    """Each kind of job's peak resident memory against what the rules state (job_memory_mb),
    on random signatures of ``documents`` in 4 shards, a tenth of them planted copies of another
    with a tenth of their min-hashes changed (resemblance about 0.9: the pairs to find)."""
    rng = np.random.default_rng(seed)
    signatures = rng.integers(0, 2**63, size=(documents, k), dtype=np.uint64)
    copies = documents // 10
    signatures[-copies:] = signatures[:copies]
    changed = rng.random((copies, k)) < 0.1
    signatures[-copies:][changed] = rng.integers(0, 2**63, size=int(changed.sum()), dtype=np.uint64)
    folder = Path(tempfile.mkdtemp())
    paths = [folder / f"{shard}.parquet" for shard in range(4)]
    for path, rows in zip(paths, np.array_split(np.arange(documents), 4)):
        write_signatures([f"d{i}" for i in rows], signatures[rows], path)
    del signatures
    sizes = shard_documents(paths).tolist()
    report: dict = {"documents": documents, "k": k, "shards": 4, "runs": []}
    for bands, band_jobs, partitions, passes in ((None, 20, 8, 1), (20, 20, 8, 1), (20, 20, 8, 4)):
        params = MinHashParams(k=k, bands=bands)
        expected, one_seconds, one_peak = in_own_process(one_job, paths, 0.5, params)
        jobs = band_job_count(band_jobs, params)
        candidates = [folder / f"candidates-{j}.parquet" for j in range(jobs)]
        parts = [folder / f"pairs-{p}.parquet" for p in range(partitions)]
        seconds = dict.fromkeys(("candidates", "score", "merge"), 0.0)
        peaks = dict.fromkeys(seconds, 0.0)
        written = 0
        for job, path in enumerate(candidates):
            count, took, peak = in_own_process(
                write_band_candidates, paths, job, jobs, partitions, params, path, passes
            )
            written += count
            seconds["candidates"] += took
            peaks["candidates"] = max(peaks["candidates"], peak)
        for partition, path in enumerate(parts):
            scored, took, peak = in_own_process(
                score_partition, candidates, paths, partition, 0.5, params
            )
            write_partition_pairs(scored, path)
            seconds["score"] += took
            peaks["score"] = max(peaks["score"], peak)
        found, seconds["merge"], peaks["merge"] = in_own_process(
            merge_partition_pairs, parts, paths
        )
        assert found.equals(expected), bands
        report["runs"].append(
            {
                "bands": bands,
                "band_jobs": jobs,
                "partitions": partitions,
                "key_passes": passes,
                "pairs": len(expected),
                "identical": True,
                "candidate_rows_written": written,
                "one_job_seconds": round(one_seconds, 2),
                "one_job_peak_rss_mb": round(one_peak),
                "jobs_seconds": {kind: round(s, 2) for kind, s in seconds.items()},
                "largest_job_peak_rss_mb": {kind: round(p) for kind, p in peaks.items()},
                "stated_mb": {
                    kind: round(
                        job_memory_mb(kind, sizes, params, passes, partitions, written, len(found))
                    )
                    for kind in peaks
                },
            }
        )
        print(json.dumps(report["runs"][-1]), flush=True)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extracted", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--pairing-jobs", action="store_true")
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
    if args.pairing_jobs:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        section = {
            "measured": datetime.date.today().isoformat(),
            "commit": commit,
            "documents": len(texts),
            **pairing_jobs(texts),
            "at_scale": pairing_jobs_at_scale(),
        }
        previous = json.loads(args.json.read_text()) if args.json and args.json.exists() else {}
        if args.json:
            args.json.write_text(json.dumps({**previous, "pairing_jobs": section}, indent=1) + "\n")
        return
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
