"""bench/bench_part_reads.py on files of a few parts: it writes each kind in both formats, reads
parts of each back (checked against the parts written) and records what project_scale reads."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import REPO

KINDS = {
    "dedup_occurrences",
    "dedup_counts",
    "dedup_order",
    "dedup_seen",
    "report_ngrams",
    "exact_hashes",
}


def test_every_kind_is_read_a_part_at_a_time_in_both_formats(tmp_path):
    out = tmp_path / "part_reads.json"
    command = [sys.executable, str(REPO / "bench" / "bench_part_reads.py")]
    command += ["--parts", "1", "6", "--rows", "3", "--reads", "3", "--out", str(out)]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    run = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["date"] and result["commit"] and result["machine"]["cores"]
    assert set(result["kinds"]) == KINDS
    for kind in result["kinds"].values():
        assert (kind["format"], kind["old_format"]) == ("arrow", "parquet")
        assert set(kind["parts"]) == {"1", "6"}
        assert kind["parts"]["1"]["reads"] == 1 and kind["parts"]["6"]["reads"] == 3
        for found in kind["parts"].values():
            assert found["ms_per_read"] >= 0 and found["old_ms_per_read"] >= 0
            assert found["bytes"] > 0 and found["old_bytes"] > 0
