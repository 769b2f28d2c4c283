"""How big a crawl is, and the hash partitions planned from it (corpusbuilder/common/sizing.py),
and the dedup tables a job is given (corpusbuilder/contracts/files.py): the workflow's planning
reads them, here they run on hand-made files."""

from __future__ import annotations

import pytest

from corpusbuilder.common.sizing import (
    AUTO,
    REMOTE_WARC_BYTES,
    crawl_bytes,
    file_bytes,
    planned_partitions,
)
from corpusbuilder.contracts.files import FILES, dedup_table, dedup_tables_of


def test_a_crawl_is_its_files_and_folders_and_a_remote_warc_counts_as_a_common_crawl_one(tmp_path):
    warc = tmp_path / "a.warc.gz"
    warc.write_bytes(b"x" * 300)
    texts = tmp_path / "texts"  # a text_dirs shard: every file under the folder
    (texts / "deeper").mkdir(parents=True)
    (texts / "one.txt").write_bytes(b"y" * 20)
    (texts / "deeper" / "two.txt").write_bytes(b"z" * 5)
    assert file_bytes(warc) == 300 and file_bytes(texts) == 25
    assert crawl_bytes([warc, texts], remote=2) == 325 + 2 * REMOTE_WARC_BYTES


@pytest.mark.parametrize(
    "setting, input_bytes, expected",
    [(3, 10**12, 3), ("5", 1, 5), (AUTO, 0, 1), (AUTO, 250, 3), (AUTO, 10**9, 8)],
)
def test_auto_plans_a_partition_a_share_of_the_input_up_to_the_ceiling(
    setting, input_bytes, expected
):
    assert planned_partitions(setting, input_bytes, bytes_per_partition=100, ceiling=8) == expected


def test_a_jobs_dedup_tables_come_from_its_inputs(tmp_path):
    shards = ["s0", "s1"]
    assert dedup_tables_of({}, shards) == [None, None]  # block dedup did not run
    folder = tmp_path / "tables"  # the sequential job's one folder
    folder.mkdir()
    expected = [str(folder / FILES.dedup.format(shard=s).rsplit("/", 1)[-1]) for s in shards]
    assert dedup_tables_of({"dedup": str(folder)}, shards) == expected
    assert [dedup_table(s, folder) for s in shards] == expected
    per_shard = [FILES.dedup.format(shard=s) for s in shards]  # the partitioned mode's
    assert dedup_tables_of({"dedup": per_shard}, shards) == per_shard
    with pytest.raises(ValueError, match="1 dedup tables for 2 shards"):
        dedup_tables_of({"dedup": per_shard[:1]}, shards)
