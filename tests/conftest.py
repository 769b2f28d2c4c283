"""Shared test helpers: where ../shared is, a WARC writer for hand-made records, and the sample
crawl built once per test session."""

from __future__ import annotations

import gzip
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CRAWL = SHARED / "datasets" / "crawl" / "dev"
BOILERPLATE = SHARED / "datasets" / "boilerplate"
SAMPLE_WARCS = sorted((REPO / "resources" / "sample").glob("sample-*.warc.gz"))
# Bins per feature for the fits of tests that do not read the bins: on a weighted table
# scikit-learn finds each bin edge with a call of its own, about 8 s a fit of a few hundred
# blocks at the default 255.
QUICK_BINS = 15
# Hash partitions for builds whose tests do not read them: the defaults (16 and 8) are 24 of the
# sample build's 53 jobs, each a Python start; decisions are the same for any number (the SLURM
# build, with these, is checked equal to the default build).
FEW_PARTITIONS = {"exact_dedup": {"partitions": 2}, "ngrams": {"partitions": 2}}


def truth_key(record: dict) -> tuple[str, str]:
    """(shard, URI) of a truth.jsonl record, the URI as warcio normalises it: no spaces."""
    return record["shard"], record["uri"].strip().replace(" ", "%20")


def unavailable(reason: str) -> None:
    """Skip a test whose prerequisite this machine lacks; under CI (``CI`` set, as `.ci/run`
    does) fail instead, so there no test passes by skipping."""
    if os.environ.get("CI"):
        pytest.fail(f"CI must provide this: {reason}")
    pytest.skip(reason)


def require_shared(path: Path) -> Path:
    """``path`` in ../shared; else the test is unavailable (the data is not in this checkout)."""
    if not path.exists():
        unavailable(f"{path} is not here (../shared is absent in this checkout)")
    return path


def corpus_bytes(workdir: Path) -> dict[str, bytes]:
    """A workflow run's decompressed results/corpus/*.gz by file name."""
    return {
        p.name: gzip.decompress(p.read_bytes())
        for p in sorted((workdir / "results" / "corpus").glob("*.gz"))
    }


@pytest.fixture(scope="session")
def sample_build(tmp_path_factory) -> Path:
    """The three sample WARCs built to the default target with every default, once per session:
    the reference that builds by other routes (SLURM, S3, grouped shards) must equal byte for
    byte. Tests read it and never change it (copy it first)."""
    workdir = tmp_path_factory.mktemp("sample-build")
    config = workdir / "sample.yaml"
    config.write_text("input:\n  warcs:\n" + "".join(f"    - {path}\n" for path in SAMPLE_WARCS))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "--snakefile",
            str(REPO / "Snakefile"),
            "--directory",
            str(workdir),
            "--cores",
            "2",
            "--configfile",
            str(config),
        ],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
    return workdir


def copy_workdir(source: Path, target: Path) -> Path:
    """A copy keeping mtimes (copy2), symlinks (data/warc) and the .snakemake metadata, so
    Snakemake finds the copy as up to date as the original."""
    shutil.copytree(source, target, symlinks=True)
    return target


@pytest.fixture
def shared_crawl() -> Path:
    require_shared(CRAWL / "truth.jsonl")
    return CRAWL


def write_warc(path: Path, records: list[dict]) -> Path:
    """Write a gzip'd WARC of response (or other) records described by dicts.

    Keys: uri, body (bytes), status ("200 OK"), content_type, warc_type ("response"),
    headers (extra HTTP headers), raw (body already holds the HTTP headers).
    """
    with open(path, "wb") as out:
        writer = WARCWriter(out, gzip=True)
        for spec in records:
            warc_type = spec.get("warc_type", "response")
            body = spec.get("body", b"")
            http_headers = None
            if warc_type == "response" and not spec.get("raw"):
                headers = [("Content-Type", spec.get("content_type", "text/html; charset=utf-8"))]
                headers += spec.get("headers", [])
                http_headers = StatusAndHeaders(
                    spec.get("status", "200 OK"), headers, protocol="HTTP/1.1"
                )
            record = writer.create_warc_record(
                spec["uri"],
                warc_type,
                payload=io.BytesIO(body),
                http_headers=http_headers,
                warc_content_type=spec.get("warc_content_type"),
            )
            writer.write_record(record)
    return path
