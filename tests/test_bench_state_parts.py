"""bench/bench_state_parts.py at a few rows: it writes shard runs of parts, runs the state's job
on range 0 in a child and records what docs/dedup-scale.md quotes."""

from __future__ import annotations

from conftest import bench_results


def test_the_state_job_is_run_over_runs_of_parts_and_its_files_measured(tmp_path):
    result = bench_results(
        tmp_path,
        "bench_state_parts.py",
        *("--shards", "3", "--rows", "5000", "6000", "--partitions", "2", "--part-rows", "500"),
    )
    disk, jobs = result["on_disk"], result["job"]["sizes"]
    assert disk["parts"] == 10 and disk["id_characters"] > 43
    assert disk["run_bytes_per_row"] > 8 and disk["state_part_bytes_per_row"] > 8
    assert "bytes_per_row" in result["job"] and "besides_mb" in result["job"]
    for rows, job in zip((5000, 6000), jobs, strict=True):
        # range 0 of 2: about half of the three runs' rows, each shared hash once
        assert 0.4 * 3 * rows < job["rows_read"] < 0.6 * 3 * rows
        assert 0.9 * job["rows_read"] < job["rows_written"] < job["rows_read"]
        assert job["peak_mb"] >= job["modules_mb"] > 50
