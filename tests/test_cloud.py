"""The workflow as a cloud runs it (docs/cluster.md, "On a cloud without SLURM"): every job's
inputs and outputs in an S3 bucket through snakemake-storage-plugin-s3, and each job in a place
of its own that shares no files with the others, as a Kubernetes pod or a cloud-batch task does.

The bucket is moto's S3 server on 127.0.0.1. The "pods" are the cluster-generic executor's
submit command starting each job script in an empty directory of its own (in the background,
its exit status kept for the status command), with `--shared-fs-usage sources source-cache`:
the checkout is shared, as a container image carries it, and nothing else. What no job is told
of is not there: a job that read a file of another job by a path of its own making, or wrote
one where the bucket does not see it, fails the build or leaves the file behind.
"""

from __future__ import annotations

import gzip
import os
import re
import subprocess
from pathlib import Path

import boto3
import pytest
from conftest import SAMPLE_WARCS, corpus_bytes, ok, snakemake, snakemake_command, write_config

BUCKET = "corpus"
PREFIX = f"s3://{BUCKET}/build"
# A pod: the job script runs in an empty directory under $PODS, in the background; its id is
# the directory's name, and `{id}.rc` beside it its exit status once it ends.
SUBMIT = """#!/bin/bash
jobscript="${@: -1}"
pod=$(mktemp -d "$PODS/pod-XXXXXX")
cp "$jobscript" "$pod/job.sh"
(cd "$pod" && bash job.sh >"$pod.log" 2>&1; echo $? >"$pod.rc") </dev/null >/dev/null 2>&1 &
basename "$pod"
"""
STATUS = """#!/bin/bash
rc="$PODS/$1.rc"
if [ ! -f "$rc" ]; then echo running
elif [ "$(cat "$rc")" = 0 ]; then echo success
else echo failed
fi
"""
# The rules that run where Snakemake runs (localrules), not in a pod.
LOCAL_RULES = {"download", "exact_manifest", "all"}
# One WARC: a pod costs a Snakemake start, so the build is kept to a job a rule; the local build
# it is compared with has the same settings.
WARCS = SAMPLE_WARCS[:1]
SETTINGS = {
    "exact_dedup": {"partitions": 1},
    "ngrams": {"partitions": 1},
    # The sequential mode's one job writes a folder, which the plugin cannot see appear when
    # another process wrote it (docs/cluster.md); a job a file here.
    "dedup": {"mode": "partitioned", "partitions": 1},
}


def script(path: Path, text: str) -> str:
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


def files_outside_snakemake(folder: Path) -> list[str]:
    """The files under ``folder`` but for Snakemake's own (.snakemake: metadata, logs, and the
    local copies of the bucket's files, removed once used)."""
    return sorted(
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_file() and ".snakemake" not in path.relative_to(folder).parts
    )


def jobs_of(log: str, kind: str) -> list[str]:
    """The rules of the jobs a Snakemake log starts (``kind``: rule or localrule)."""
    return sorted(re.findall(rf"^{kind} (\w+):$", log, flags=re.MULTILINE))


@pytest.mark.workflow
@pytest.mark.slow
def test_a_build_in_a_bucket_with_a_pod_a_job_is_the_local_build(moto_server, tmp_path):
    """A sample WARC in a bucket (an s3:// input), every job's files under the storage prefix in
    it, each job in a pod: the corpus in the bucket is the local build's, byte for byte; every
    job but the local rules ran in a pod; and no job left a file outside the bucket, neither
    where Snakemake runs nor in a pod."""
    endpoint = "http://{}:{}".format(*moto_server)
    client = boto3.client("s3", endpoint_url=endpoint)
    client.create_bucket(Bucket=BUCKET)
    for warc in WARCS:
        client.put_object(Bucket=BUCKET, Key=f"crawl/{warc.name}", Body=warc.read_bytes())
    pods = tmp_path / "pods"
    pods.mkdir()
    main = tmp_path / "main"
    main.mkdir()
    config = write_config(
        tmp_path / "cloud.yaml",
        {
            "input": {"warcs": [f"s3://{BUCKET}/crawl/{warc.name}" for warc in WARCS]},
            "download": {"s3": {"endpoint_url": endpoint}},
            **SETTINGS,
        },
    )
    command = snakemake_command(
        # relative: the jobs are given the same --directory, which in a pod is the pod's own
        Path(main.name),
        "--executor",
        "cluster-generic",
        "--cluster-generic-submit-cmd",
        script(tmp_path / "submit.sh", SUBMIT),
        "--cluster-generic-status-cmd",
        script(tmp_path / "status.sh", STATUS),
        "--shared-fs-usage",
        "sources",
        "source-cache",
        "--jobs",
        "2",
        "--latency-wait",
        "5",
        # a pod's job takes seconds: asked every 10 s (the default), the build mostly waits
        "--seconds-between-status-checks",
        "1",
        "--default-storage-provider",
        "s3",
        "--default-storage-prefix",
        PREFIX,
        "--storage-s3-endpoint-url",
        endpoint,
        configfiles=[config],
        cores=None,
    )
    # the credentials come from the environment (moto_server's), as a pod's role gives them
    result = subprocess.run(
        command,
        cwd=tmp_path,
        env={**os.environ, "PODS": str(pods)},
        capture_output=True,
        text=True,
        timeout=1800,
    )
    output = ok(result)

    prefix = "build/results/corpus/"
    listed = client.list_objects_v2(Bucket=BUCKET, Prefix=prefix)["Contents"]
    in_bucket = {
        item["Key"].removeprefix(prefix): gzip.decompress(
            client.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read()
        )
        for item in listed
    }
    local = tmp_path / "local"
    local.mkdir()
    ok(snakemake(local, config={"input": {"warcs": list(map(str, WARCS))}, **SETTINGS}))
    expected = corpus_bytes(local)
    assert len(expected) == 3 and in_bucket == expected

    pod_logs = [path.read_text() for path in sorted(pods.glob("pod-*.log"))]
    assert [path.read_text().strip() for path in sorted(pods.glob("pod-*.rc"))] == ["0"] * len(
        pod_logs
    )
    submitted = jobs_of(output, "rule")
    assert "dedup_shard" in submitted and "funnel" in submitted
    assert not set(submitted) & LOCAL_RULES and set(jobs_of(output, "localrule")) == LOCAL_RULES
    # inside its pod a job is a local rule of the Snakemake started there
    assert sorted(rule for log in pod_logs for rule in jobs_of(log, "localrule")) == submitted
    assert files_outside_snakemake(main) == []
    assert [files_outside_snakemake(pod) for pod in pods.glob("pod-*") if pod.is_dir()] == [
        ["job.sh"]
    ] * len(pod_logs)
