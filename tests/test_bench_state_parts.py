"""bench/bench_state_parts.py at a few rows: it writes shard runs of parts, runs the state's job
on range 0 in a child and records what docs/dedup-scale.md quotes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import REPO


def test_the_state_job_is_run_over_runs_of_parts_and_its_files_measured(tmp_path):
    out = tmp_path / "state_parts.json"
    command = [sys.executable, str(REPO / "bench" / "bench_state_parts.py")]
    command += ["--shards", "3", "--rows", "5000", "6000", "--partitions", "2"]
    command += ["--part-rows", "500"]
    command += ["--out", str(out)]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    run = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["date"] and result["commit"] and result["machine"]["cores"]
    disk, jobs = result["on_disk"], result["job"]["sizes"]
    assert disk["parts"] == 10 and disk["id_characters"] > 43
    assert disk["run_bytes_per_row"] > 8 and disk["state_part_bytes_per_row"] > 8
    assert "bytes_per_row" in result["job"] and "besides_mb" in result["job"]
    for rows, job in zip((5000, 6000), jobs, strict=True):
        # range 0 of 2: about half of the three runs' rows, each shared hash once
        assert 0.4 * 3 * rows < job["rows_read"] < 0.6 * 3 * rows
        assert 0.9 * job["rows_read"] < job["rows_written"] < job["rows_read"]
        assert job["peak_mb"] >= job["modules_mb"] > 50
