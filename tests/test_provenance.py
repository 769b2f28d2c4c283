"""Which versions wrote the corpus: every stage table names its writer, and the provenance
record groups each stage's shards by writer and names any library two of them disagree on."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpusbuilder.common.io import (
    ParquetBatchWriter,
    table_writer,
    write_row_groups,
    write_table,
)
from corpusbuilder.common.provenance import provenance
from corpusbuilder.common.versions import OUTPUT_LIBRARIES, checkout_commit, this_process

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


def test_a_pandas_table_keeps_its_own_metadata_beside_the_stamp(tmp_path):
    table = pa.Table.from_pandas(TABLE.to_pandas(), preserve_index=False)
    write_table(table, tmp_path / "t.parquet")
    assert table_writer(tmp_path / "t.parquet") == this_process()
    assert b"pandas" in pq.read_schema(tmp_path / "t.parquet").metadata


def test_a_table_written_before_the_stamp_has_no_writer(tmp_path):
    pq.write_table(TABLE, tmp_path / "old.parquet")
    assert table_writer(tmp_path / "old.parquet") is None


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
