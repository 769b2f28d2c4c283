"""Sizes that follow the corpus (issue 59 item 3): how big a crawl is, `dedup.mode: auto`, and
the partitions set to auto, planned so that no job needs more than `resources.max_mem_mb` at the
crawl's projected size (corpusbuilder.common.sizing, dedup.memory, exact_dedup); and the dedup
tables a job is given (corpusbuilder/contracts/files.py). The workflow's planning reads them; here
they run on hand-made files."""

from __future__ import annotations

import pytest

from corpusbuilder.common.sizing import (
    AUTO,
    GIB,
    REMOTE_WARC_BYTES,
    crawl_bytes,
    fewest_partitions,
    file_bytes,
    planned_partitions,
)
from corpusbuilder.config import ConfigError, check_settings, validate_config
from corpusbuilder.contracts.files import FILES, dedup_table, dedup_tables_of
from corpusbuilder.dedup.memory import (
    MAX_PARTITIONS,
    PARTITIONED_ABOVE_BYTES,
    TOKENS_PER_INPUT_BYTE,
    auto_dedup_mode,
    auto_dedup_partitions,
    partitioned_job_mb,
)
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.exact_dedup import partition_job_mb

# gzip'd WARC bytes of 10^11 words at the 2 GB build's 0.254 words a byte (551,882,817 words of
# 2,172,780,687 bytes)
WORDS_1E11_BYTES = int(1e11 / 0.254)


def test_the_fewest_partitions_are_found_and_capped():
    need = {p: 10_000 / p for p in range(1, 101)}
    assert fewest_partitions(need.__getitem__, 1000, 100) == 10
    assert fewest_partitions(need.__getitem__, 99, 100) == 100  # none fits: the most there are
    assert fewest_partitions(need.__getitem__, 10**6, 100) == 1


@pytest.mark.parametrize("input_bytes", [30 * 2**20, 2 * GIB, 40 * GIB, WORDS_1E11_BYTES])
@pytest.mark.parametrize("max_mem_mb", [4000, 8000, 32000])
def test_auto_ranges_keep_every_range_job_within_max_mem_mb_and_no_fewer_would(
    input_bytes, max_mem_mb
):
    partitions = auto_dedup_partitions(input_bytes, max_mem_mb)
    tokens = round(input_bytes * TOKENS_PER_INPUT_BYTE)

    def largest(p: int) -> int:
        return max(partitioned_job_mb(job, tokens, p) for job in ("counts", "seen"))

    # (past what the most ranges there are hold, the most there are)
    assert largest(partitions) <= max_mem_mb or partitions == MAX_PARTITIONS
    assert partitions == 1 or largest(partitions - 1) > max_mem_mb


def test_auto_ranges_grow_with_the_corpus_and_stop_at_the_most_there_are():
    corpora = (GIB, 10 * GIB, WORDS_1E11_BYTES, 10 * WORDS_1E11_BYTES)
    sizes = [auto_dedup_partitions(b, 8000) for b in corpora]
    assert sizes[0] < sizes[1] < sizes[2] < sizes[3] < MAX_PARTITIONS
    # 10^11 words: a few hundred ranges of 8 GB each; 10^12 words still fit 8 GB jobs, since no
    # range job holds a number for every document of the corpus (issue 59)
    assert 200 < sizes[2] < 1000
    assert auto_dedup_partitions(100 * WORDS_1E11_BYTES, 8000) == MAX_PARTITIONS


def test_auto_mode_is_sequential_on_a_small_crawl_and_partitioned_past_the_threshold_or_memory():
    params = DedupParams()
    assert auto_dedup_mode(34 * 2**20, 4, params, 8000)[0] == "sequential"  # the dev crawl
    assert auto_dedup_mode(PARTITIONED_ABOVE_BYTES, 8, params, 8000)[0] == "sequential"
    mode, why = auto_dedup_mode(PARTITIONED_ABOVE_BYTES + 1, 8, params, 8000)
    assert mode == "partitioned" and "MB of input" in why
    # below the threshold, but a node too small for the sequential job (here its one shard)
    mode, why = auto_dedup_mode(PARTITIONED_ABOVE_BYTES, 1, params, 1000)
    assert mode == "partitioned" and "would need" in why
    # a G_out setting only the sequential job reads keeps it
    judy = DedupParams(backend="judy")
    assert auto_dedup_mode(WORDS_1E11_BYTES, 8000, judy, 8000)[0] == "sequential"


def test_exact_partitions_pass_their_ceiling_only_when_memory_asks():
    small = planned_partitions(AUTO, 8 * GIB, 4 * GIB, 16)
    assert small == 2
    hashes_mb = 0.01 * 4 * 2**40 / 2**20  # 4 TiB of WARCs
    for_memory = fewest_partitions(lambda p: partition_job_mb(hashes_mb, p), 8000, 4096)
    assert for_memory > 16 and partition_job_mb(hashes_mb, for_memory) <= 8000
    assert planned_partitions(AUTO, 4 * 2**40, 4 * GIB, 16, for_memory) == for_memory
    assert planned_partitions(5, 4 * 2**40, 4 * GIB, 16, for_memory) == 5  # a number as it is


def test_an_ngram_budget_past_max_mem_mb_is_refused_naming_the_key(tmp_path):
    warcs = {"input": {"warcs": ["crawl.warc.gz"]}}
    config = validate_config(
        {**warcs, "resources": {"max_mem_mb": 2000}, "ngrams": {"mem_mb": 2000}}
    )
    with pytest.raises(ConfigError, match="ngrams.mem_mb.*resources.max_mem_mb"):
        check_settings(config, tmp_path)
    config = validate_config({**warcs, "dedup": {"mode": "auto", "partitions": "auto"}})
    assert config["resources"]["max_mem_mb"] == 8000
    check_settings(config, tmp_path)


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
