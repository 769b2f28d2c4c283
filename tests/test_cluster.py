"""The workflow submitted through the SLURM profile to a real one-node SLURM cluster.

CI installs Debian's slurm-wlm and munge (see .ci/run); elsewhere the test is skipped with a
reason when they are missing, except under CI, where a missing daemon is a failure.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import FEW_PARTITIONS, REPO, SAMPLE_WARCS, corpus_bytes, snakemake, unavailable
from slurm_cluster import LocalSlurm, foreign_config, missing_daemons

pytestmark = [pytest.mark.workflow, pytest.mark.cluster]


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    missing = missing_daemons()
    if missing:
        unavailable(
            f"SLURM is not installed here (missing {', '.join(missing)}; apt-get install slurm-wlm "
            "munge)"
        )
    if os.geteuid() != 0:
        unavailable("slurmd must run as root to start jobs")
    if foreign_config():
        unavailable(
            "/etc/slurm/slurm.conf belongs to a real cluster here; the test cluster will not "
            "replace it"
        )
    cluster = LocalSlurm(tmp_path_factory.mktemp("slurm"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def run_snakemake(
    workdir: Path, *args: str, env, warcs=SAMPLE_WARCS, **settings
) -> subprocess.CompletedProcess:
    """The sample crawl (or ``warcs``) built through a cluster profile, with ``settings`` over
    the defaults."""
    config = {"input": {"warcs": list(map(str, warcs))}, **settings}
    return snakemake(workdir, *args, config=config, cores=None, env=env, timeout=1500)


def test_slurm_profile_builds_the_same_corpus_as_a_local_run(slurm, tmp_path, first_two_build):
    """Every job but the local rules' a SLURM job, the profile's groups one job per shard each,
    against the local build with the defaults, of the first two sample WARCs (a shard a CPU of
    the test cluster: the plugin's status checks back off by 10 s while no job ends, so a third
    shard's round costs a check or two). The hash partitions are 2 where the local build's
    `auto` plans 1 — the decisions are the same for any number, which this checks too — and the
    status is checked every second instead of every 10 (a job costs ~10 s here)."""
    allocations = slurm.dir / "slurmctld.log"
    before = allocations.stat().st_size if allocations.exists() else 0
    result = run_snakemake(
        tmp_path,
        "--workflow-profile",
        str(REPO / "profiles" / "slurm"),
        "--slurm-no-account",
        "--slurm-init-seconds-before-status-checks",
        "1",
        "--seconds-between-status-checks",
        "1",
        env=slurm.env,
        warcs=SAMPLE_WARCS[:2],
        **FEW_PARTITIONS,
    )
    assert result.returncode == 0, result.stderr[-4000:] + slurm.logs()
    assert "sbatch" in result.stderr or "SLURM" in result.stderr
    shards = 2
    for group in ("per_shard", "per_shard_after_merge", "per_shard_output"):
        assert result.stderr.count(f"Group job {group} (") == shards
    for rule in ("download", "exact_manifest"):
        assert f"localrule {rule}:" in result.stderr
    # Every submission, a group's too, asks for one CPU: a group asks for the sum of its jobs that
    # could run side by side (export and report_shard after quality), which a node with fewer
    # CPUs never runs; the profile's `cores: 1` stacks them in series.
    with allocations.open() as log:
        log.seek(before)
        cpus = re.findall(r"sched: Allocate JobId=\d+ .*#CPUs=(\d+)", log.read())
    assert cpus and set(cpus) == {"1"}, cpus
    cluster_corpus = corpus_bytes(tmp_path)
    assert cluster_corpus and cluster_corpus == corpus_bytes(first_two_build)


def test_cluster_generic_profile_submits_with_sbatch_and_reads_status(slurm, tmp_path):
    result = run_snakemake(
        tmp_path,
        "--workflow-profile",
        str(REPO / "profiles" / "cluster-generic"),
        "--until",
        "extract",
        "--seconds-between-status-checks",
        "1",
        env=slurm.env,
        warcs=SAMPLE_WARCS[:1],  # a job through sbatch and its status proves it: one WARC
    )
    assert result.returncode == 0, result.stderr[-4000:] + slurm.logs()
    assert "with external jobid" in result.stderr
    assert len(list((tmp_path / "work" / "extract").glob("*.docs.parquet"))) == 1
    assert len(list((tmp_path / "logs" / "cluster").glob("extract-*.out"))) == 1


def test_slurm_status_command(slurm):
    def status(job_id):
        return subprocess.run(
            [sys.executable, "-m", "corpusbuilder.cli.main", "slurm-status", job_id],
            env=slurm.env,
            capture_output=True,
            text=True,
        ).stdout.strip()

    submitted = subprocess.run(
        ["sbatch", "--parsable", "--wrap", "true", "-o", "/dev/null"],
        env=slurm.env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    failing = subprocess.run(
        ["sbatch", "--parsable", "--wrap", "exit 3", "-o", "/dev/null"],
        env=slurm.env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deadline = time.monotonic() + 60
    while {status(submitted), status(failing)} & {"running"} and time.monotonic() < deadline:
        time.sleep(1)
    assert status(submitted) == "success"
    assert status(failing) == "failed"
    assert status("999999") == "failed"
