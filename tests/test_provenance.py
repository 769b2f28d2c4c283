"""Which versions wrote the corpus: every stage's file (tables, token files, n-gram runs, G₂₊'s
parts) names its writer, and the provenance record groups each stage's shards by writer and
names any library two of them disagree on."""

from __future__ import annotations

import copy
import json
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpusbuilder.common.faults import CorruptFileError
from corpusbuilder.common.io import (
    ParquetBatchWriter,
    parts_writer,
    read_part,
    table_writer,
    write_parts,
    write_row_groups,
    write_table,
)
from corpusbuilder.common.provenance import provenance
from corpusbuilder.common.versions import OUTPUT_LIBRARIES, checkout_commit, this_process
from corpusbuilder.contracts.ngramfiles import duplicate_ngrams_writer
from corpusbuilder.contracts.stamps import file_writer
from corpusbuilder.contracts.tokenfile import (
    FIELDS,
    TokenStream,
    read_tokens,
    token_file_writer,
    write_token_stream,
)
from corpusbuilder.ngrams.runs import run_metadata
from corpusbuilder.ngrams.stage import (
    duplicate_ngrams_stats,
    shard_ngram_run,
    write_duplicate_ngrams,
)

SCHEMA = pa.schema([("doc_id", pa.string()), ("n", pa.int64())])
TABLE = pa.Table.from_pylist([{"doc_id": "a", "n": 1}, {"doc_id": "b", "n": 2}], schema=SCHEMA)


def _written(how: str, path):
    if how == "write_table":
        write_table(TABLE, path)
    elif how == "write_row_groups":
        write_row_groups([TABLE.slice(0, 1), TABLE.slice(1)], path)
    else:
        with ParquetBatchWriter(path, SCHEMA, batch_rows=1) as writer:
            for row in TABLE.to_pylist():
                writer.append(row)
    return path


@pytest.mark.parametrize("how", ["write_table", "write_row_groups", "ParquetBatchWriter"])
def test_every_table_writer_names_the_versions_that_wrote_it(tmp_path, how):
    path = _written(how, tmp_path / "t.parquet")
    writer = table_writer(path)
    assert writer == this_process()
    assert set(writer["libraries"]) == set(OUTPUT_LIBRARIES)
    assert pq.read_table(path).equals(TABLE)  # the stamp changes no row


def test_a_file_of_parts_names_the_versions_that_wrote_it(tmp_path):
    write_parts([TABLE.slice(0, 1), TABLE.slice(2), TABLE.slice(1)], tmp_path / "p.arrow")
    assert parts_writer(tmp_path / "p.arrow") == this_process()
    assert [read_part(tmp_path / "p.arrow", i).num_rows for i in range(3)] == [1, 0, 1]
    with pa.ipc.new_file(tmp_path / "old.arrow", SCHEMA) as old:  # before parts were stamped
        old.write_table(TABLE)
    assert parts_writer(tmp_path / "old.arrow") is None


def test_a_pandas_table_keeps_its_own_metadata_beside_the_stamp(tmp_path):
    table = pa.Table.from_pandas(TABLE.to_pandas(), preserve_index=False)
    write_table(table, tmp_path / "t.parquet")
    assert table_writer(tmp_path / "t.parquet") == this_process()
    assert b"pandas" in pq.read_schema(tmp_path / "t.parquet").metadata


def test_a_table_written_before_the_stamp_has_no_writer(tmp_path):
    pq.write_table(TABLE, tmp_path / "old.parquet")
    assert table_writer(tmp_path / "old.parquet") is None


def _token_file(path: Path) -> Path:
    # two blocks of 12 and 11 tokens, a 10-gram repeated within and across them
    words = np.arange(12, dtype=np.uint64) % 11 + 1
    write_token_stream(
        TokenStream.of_blocks(np.concatenate([words, words[:11]]), [0, 12, 23]), path
    )
    return path


def test_a_token_file_names_its_writer_beside_its_fields(tmp_path):
    path = _token_file(tmp_path / "tokens.npz")
    assert token_file_writer(path) == this_process()
    tokens = read_tokens(path)
    assert set(vars(tokens)) == set(FIELDS)  # the writer is no field of the stream
    assert tokens.block_offsets.tolist() == [0, 12, 23]


def test_a_token_file_written_before_the_stamp_has_no_writer(tmp_path):
    path = _token_file(tmp_path / "tokens.npz")
    old = tmp_path / "old.npz"
    with zipfile.ZipFile(path) as new, zipfile.ZipFile(old, "w") as rewritten:
        for member in new.namelist():
            if member != "writer.npy":
                rewritten.writestr(member, new.read(member))
    assert token_file_writer(old) is None
    assert read_tokens(old).token_hash.tolist() == read_tokens(path).token_hash.tolist()


def test_an_ngram_run_and_the_parts_of_g2_name_their_writer(tmp_path):
    tokens = _token_file(tmp_path / "tokens.npz")
    run = tmp_path / "run.parquet"
    shard_ngram_run(tokens, run, "all", 10, mem_mb=64)
    assert table_writer(run) == this_process()
    assert run_metadata(run)["n"] == 10  # the run's own metadata beside the stamp
    parts = [tmp_path / f"dup{p}.stats.json" for p in range(2)]
    for partition, stats in enumerate(parts):
        write_duplicate_ngrams(
            [run], tmp_path / f"dup{partition}.npy", stats, 64, 2, partition, len(parts)
        )
        # the .npy holds no metadata: its stats name the versions that wrote both
        assert duplicate_ngrams_writer(stats) == this_process()
    assert sum(len(np.load(tmp_path / f"dup{p}.npy")) for p in range(2)) == 2
    # the sum over the parts, which the dedup job logs, names no writer: its writers are the parts'
    merged = duplicate_ngrams_stats(parts)
    assert "written_by" not in merged and merged["duplicate_types"] == 2
    old = tmp_path / "old.stats.json"
    old.write_text(
        json.dumps({k: v for k, v in json.loads(parts[0].read_text()).items() if k != "written_by"})
    )
    assert duplicate_ngrams_writer(old) is None


def test_the_writer_of_any_stage_file_is_read_by_its_format_not_its_name(tmp_path):
    """The provenance rule asks one function of every stage's file; a file's first bytes, not the
    rule that wrote it or its suffix, choose how its writer is read."""
    tokens = _token_file(tmp_path / "tokens.npz")
    run = tmp_path / "run.parquet"
    shard_ngram_run(tokens, run, "all", 10, mem_mb=64)
    stats = tmp_path / "dup0.stats.json"
    write_duplicate_ngrams([run], tmp_path / "dup0.npy", stats, 64, 2, 0, 1)
    table = tmp_path / "t.parquet"
    write_table(TABLE, table)
    parts = tmp_path / "p.arrow"
    write_parts([TABLE.slice(0, 1), TABLE.slice(1)], parts)
    for path in (tokens, run, stats, table, parts):
        renamed = path.rename(tmp_path / f"{path.stem}.file")
        assert file_writer(renamed) == this_process(), path.name
    old = tmp_path / "old.parquet"
    pq.write_table(TABLE, old)
    assert file_writer(old) is None
    (tmp_path / "words.txt").write_text("not a stage file")
    with pytest.raises(CorruptFileError, match="words.txt"):
        file_writer(tmp_path / "words.txt")


def _older(writer: dict, library: str, installed: str | None) -> dict:
    older = copy.deepcopy(writer)
    older["libraries"][library] = installed
    return older


def test_shards_written_by_other_versions_are_named_with_the_library():
    here = this_process()
    older = _older(here, "lxml", "4.9.0")
    record = provenance(
        {"extract": {"preset": "best"}},
        None,
        {
            "extract": {"s-00": here, "s-01": older, "s-02": here},
            "language": {"s-00": here, "s-01": here, "s-02": None},
        },
    )
    assert record["stages"]["extract"] == [
        {"written_by": here, "shards": ["s-00", "s-02"]},
        {"written_by": older, "shards": ["s-01"]},
    ]
    assert record["stages"]["language"][1] == {"written_by": None, "shards": ["s-02"]}
    assert record["mixed_versions"] == {
        "extract": {"lxml": sorted(["4.9.0", here["libraries"]["lxml"]])}
    }


def test_stages_in_environments_of_their_own_are_not_mixed():
    here = this_process()
    # under --use-conda the extract env has no pydivsufsort, which only block dedup uses, and
    # its own solve of numpy
    extract_env = _older(_older(here, "pydivsufsort", None), "numpy", "1.24.0")
    record = provenance(
        {}, None, {"extract": {"a": extract_env, "b": extract_env}, "dedup": {"a": here, "b": here}}
    )
    assert record["mixed_versions"] == {}
    assert [len(entries) for entries in record["stages"].values()] == [1, 1]
    # but the same stage's shards from two runs, one with and one without the library, are
    assert provenance({}, None, {"extract": {"a": extract_env, "b": here}})["mixed_versions"] == {
        "extract": {"numpy": sorted(["1.24.0", here["libraries"]["numpy"]])}
    }


def test_the_record_is_this_process_s_own_copy():
    record = provenance({}, None)
    record["libraries"]["lxml"] = "changed"
    assert this_process()["libraries"]["lxml"] != "changed"


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(folder), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_a_checkout_names_its_commit_and_an_installed_package_none(tmp_path):
    checkout = tmp_path / "checkout"
    (checkout / "corpusbuilder").mkdir(parents=True)
    (checkout / "corpusbuilder" / "__init__.py").write_text("")
    _git(checkout, "init", "-q")
    _git(checkout, "add", ".")
    _git(checkout, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x")
    assert checkout_commit(checkout / "corpusbuilder") == _git(
        checkout, "rev-parse", "--short=12", "HEAD"
    )
    # a package installed inside some other repository (a venv in a project) is no checkout
    installed = checkout / "venv" / "site-packages" / "corpusbuilder"
    installed.mkdir(parents=True)
    assert checkout_commit(installed) is None
    outside = tmp_path / "elsewhere" / "corpusbuilder"  # no repository at all
    outside.mkdir(parents=True)
    assert checkout_commit(outside) is None
