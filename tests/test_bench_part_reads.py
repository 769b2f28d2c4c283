"""bench/bench_part_reads.py on files of a few parts: it writes each kind in both formats, reads
parts of each back (checked against the parts written) and records what project_scale reads."""

from __future__ import annotations

from conftest import bench_results

KINDS = {
    "dedup_occurrences",
    "dedup_counts",
    "dedup_order",
    "dedup_seen",
    "report_ngrams",
    "exact_hashes",
}


def test_every_kind_is_read_a_part_at_a_time_in_both_formats(tmp_path):
    result = bench_results(
        tmp_path, "bench_part_reads.py", *("--parts", "1", "6", "--rows", "3", "--reads", "3")
    )
    assert set(result["kinds"]) == KINDS
    for kind in result["kinds"].values():
        assert (kind["format"], kind["old_format"]) == ("arrow", "parquet")
        assert set(kind["parts"]) == {"1", "6"}
        assert kind["parts"]["1"]["reads"] == 1 and kind["parts"]["6"]["reads"] == 3
        for found in kind["parts"].values():
            assert found["ms_per_read"] >= 0 and found["old_ms_per_read"] >= 0
            assert found["bytes"] > 0 and found["old_bytes"] > 0
