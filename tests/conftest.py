"""Shared test helpers: where ../shared is, a WARC writer for hand-made records, one way to run
the real Snakefile, the builds several test files read (the sample crawl, its first two WARCs,
the dev crawl), each
built once per test session (once for all pytest-xdist workers), an S3 server on localhost
(moto), and the rule that marks every workflow test `slow`."""

from __future__ import annotations

import gzip
import io
import json
import logging
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import yaml
from filelock import FileLock
from moto.server import ThreadedMotoServer
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
# Two hash partitions of each kind, where `auto` plans one for the sample: the builds that use
# them also show the decisions are the same for any number (the SLURM build, with these, is
# checked equal to the default build).
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


def run_bench(script: str, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    """bench/``script`` run as its docstring says, from the checkout, with this checkout's library
    first on the path."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, str(REPO / "bench" / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env=env,
    )


def bench_results(tmp_path: Path, script: str, *args: str) -> dict:
    """The results bench/``script`` writes (``--out``, a file in ``tmp_path``), each stamped with
    its date, commit and machine as bench/results/ files are."""
    out = tmp_path / "results.json"
    run = run_bench(script, *args, "--out", str(out))
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["date"] and result["commit"] and result["machine"]["cores"]
    return result


def snakemake_command(
    workdir: Path, *args: str, configfiles: Sequence[Path] = (), cores: int | None = 2
) -> list[str]:
    """The real Snakefile on ``workdir`` (``cores`` None: as a cluster profile sets them); the
    list flag --configfile goes last, so that it cannot take a target of ``args`` for a file."""
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        *(["--cores", str(cores)] if cores is not None else []),
        *args,
    ]
    return command + (["--configfile", *map(str, configfiles)] if configfiles else [])


def snakemake(
    workdir: Path,
    *args: str,
    configfiles: Sequence[Path] = (),
    config: dict | None = None,
    cores: int | None = 2,
    env: dict[str, str] | None = None,
    timeout: int = 1200,
) -> subprocess.CompletedProcess:
    """Run the real Snakefile on ``workdir`` (see `snakemake_command`); ``config``, when given,
    is written to workdir/test-config.yaml and read after ``configfiles``."""
    if config is not None:
        configfiles = [*configfiles, write_config(workdir / "test-config.yaml", config)]
    return subprocess.run(
        snakemake_command(workdir, *args, configfiles=configfiles, cores=cores),
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


def ok(result: subprocess.CompletedProcess) -> str:
    """A Snakemake run's output (stdout and stderr), which must have succeeded."""
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-5000:]
    return output


def write_config(path: Path, config: dict) -> Path:
    path.write_text(yaml.safe_dump(config))
    return path


def built_once(tmp_path_factory, name: str, build: Callable[[Path], object]) -> Path:
    """``build`` run on a new folder ``name`` once per test session: under pytest-xdist the
    workers share the folder (in the session's base temp, the parent of each worker's) and the
    first to ask builds it while the others wait on its lock. A build that failed is tried again
    by the next worker to ask, from an empty folder."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    workdir = root / name
    with FileLock(root / f"{name}.lock"):
        done = root / f"{name}.built"
        if not done.exists():
            shutil.rmtree(workdir, ignore_errors=True)
            workdir.mkdir()
            build(workdir)
            done.touch()
    return workdir


@pytest.fixture(scope="session")
def sample_build(tmp_path_factory) -> Path:
    """The three sample WARCs built to the default target with every default, once per session:
    the reference that builds by other routes (SLURM, S3, grouped shards, partitioned dedup) must
    equal byte for byte. Tests read it and never change it (copy it first)."""
    config = {"input": {"warcs": list(map(str, SAMPLE_WARCS))}}
    return built_once(
        tmp_path_factory, "sample-build", lambda workdir: ok(snakemake(workdir, config=config))
    )


@pytest.fixture(scope="session")
def first_two_build(tmp_path_factory) -> Path:
    """The first two sample WARCs built to the default target with every default, once per
    session: the earlier crawl that incremental runs add the third to, and the start of the
    builds that differ from it only in dedup's settings (a copy reruns dedup and what follows).
    Tests read it and never change it (copy it first); its config is test-config.yaml in it."""
    config = {"input": {"warcs": list(map(str, SAMPLE_WARCS[:2]))}}
    return built_once(
        tmp_path_factory, "first-two", lambda workdir: ok(snakemake(workdir, config=config))
    )


@pytest.fixture(scope="session")
def dev_crawl_build(tmp_path_factory) -> Path:
    """The 4-shard dev crawl of ../shared built to the default target with every default, once
    per session (it is the slowest build the tests read: the workflow's and the quality stage's
    tests share it). Tests read it and never change it (copy it first); its config is
    test-config.yaml in it."""
    warcs = sorted(require_shared(CRAWL / "truth.jsonl").parent.glob("crawl-*.warc.gz"))
    config = {"input": {"warcs": list(map(str, warcs))}}
    return built_once(
        tmp_path_factory, "dev-crawl", lambda workdir: ok(snakemake(workdir, config=config))
    )


# A test reading one of these session builds waits for it: it is `slow` like a workflow test.
SESSION_BUILDS = {"sample_build", "first_two_build", "dev_crawl_build"}
# The files that hold a pytest-xdist worker for minutes (bench/results/ci-log.md, 2026-12-02),
# longest first: each starts before any file of quick tests. The first two read different session
# builds, so neither worker waits on the other's lock at the start.
LONGEST_FILES = (
    "test_cluster.py",  # a SLURM cluster started, the sample built through it (and locally)
    "test_workflow.py",  # the dev crawl built
    "test_packaging.py",  # a wheel compiled and installed, another built without a compiler
    "test_dedup_workflow.py",
    "test_degenerate.py",
    "test_incremental.py",
    "test_cloud.py",
    "test_quality.py",
)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`pytest -n auto`: a worker more than the CPUs. The SLURM and cloud builds hold a worker
    for minutes while it mostly waits on status checks (the SLURM one 380 s at 28 CPU-s of its
    own, bench/results/ci-log.md, 2026-12-03); the extra worker runs other files meanwhile."""
    return (os.cpu_count() or 1) + 1


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that runs the Snakefile (`workflow`, `cluster`) or reads a session build is
    `slow`, whoever wrote it: the quick tier, `pytest -m "not slow"`, runs none of them.

    The longest files run first (`LONGEST_FILES`), then the others by their number of slow
    tests, most first: pytest-xdist (`--dist loadfile --no-loadscope-reorder` in pyproject.toml)
    hands out whole files in this order, so each module fixture's build is made once, the long
    files start early and the files of quick tests fill the workers' last minutes."""
    for item in items:
        if (
            item.get_closest_marker("workflow")
            or item.get_closest_marker("cluster")
            or SESSION_BUILDS & set(getattr(item, "fixturenames", ()))
        ):
            item.add_marker(pytest.mark.slow)
    slow_tests = Counter(item.path for item in items if item.get_closest_marker("slow"))
    first = {name: rank for rank, name in enumerate(LONGEST_FILES)}
    items.sort(  # stable: a file's tests stay together
        key=lambda item: (first.get(item.path.name, len(first)), -slow_tests[item.path])
    )


@pytest.fixture(scope="module")
def moto_server():
    """moto's S3 server on a free port of 127.0.0.1, with test credentials in the environment
    (and none read from ~/.aws)."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's access log
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "no_proxy": "127.0.0.1",
            # no credentials from an instance's metadata service
            "AWS_EC2_METADATA_DISABLED": "true",
        }.items():
            patch.setenv(name, value)
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
            patch.delenv(name, raising=False)
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        yield server.get_host_and_port()
        server.stop()


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
