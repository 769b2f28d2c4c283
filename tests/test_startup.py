"""Start-up: the package and the `corpusbuilder` command load no heavy module before it is used.

Each job of the workflow is a fresh interpreter, and pandas, matplotlib, scikit-learn or a peer
extractor costs it a large part of a second to import (bench/bench_startup.py measures it).
These tests check what is imported, in a fresh process; they time nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from imports import REPO

sys.path.insert(0, str(REPO / "bench"))
# loaded only by the code that uses them: the list the benchmark reports for each script
from bench_startup import HEAVY  # noqa: E402


def modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code`."""
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=True,
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_import_corpusbuilder_loads_no_heavy_module_nor_numpy():
    loaded = modules_after("import corpusbuilder")
    assert not loaded & {*HEAVY, "numpy", "lxml", "pyarrow", "jsonschema"}


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["dup-ngrams", "--help"]])
def test_the_command_loads_no_heavy_module_to_say_how_it_is_used(argv):
    loaded = modules_after(
        "from corpusbuilder.cli.main import main\n"
        f"import sys\nsys.argv = ['corpusbuilder', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    )
    assert not loaded & set(HEAVY)


@pytest.mark.slow
def test_the_public_api_is_still_there_when_asked_for():
    loaded = modules_after(
        "import corpusbuilder\n"
        "assert corpusbuilder.clean_html('<html><body><p>' + 'a word here. ' * 30 + '</p>')"
    )
    assert "corpusbuilder.api" in loaded


def test_dup_ngrams_runs_without_pandas(tmp_path):
    """The n-gram CLI hashes its tokens as the tokenise stage does, without the stage's pandas."""
    text = tmp_path / "in.txt"
    text.write_text("a b c d e f g h i j k\n" * 3, encoding="utf-8")
    loaded = modules_after(
        "from corpusbuilder.ngrams.stage import dup_ngrams_from_text\n"
        f"assert dup_ngrams_from_text({str(text)!r}, {str(tmp_path / 'out.tsv')!r}, n=10) == 2"
    )
    assert not loaded & set(HEAVY)


def test_a_job_without_pandas_builds_tables_and_cannot_import_it():
    """pyarrow builds arrays from lists without importing pandas; a job that then imports it
    anyway fails, naming itself, rather than paying for it unnoticed."""
    loaded = modules_after(
        "from corpusbuilder.common.lazy_pandas import without_pandas\n"
        "without_pandas('extract')\n"
        "import pyarrow as pa\n"
        "table = pa.Table.from_pylist([{'doc_id': 'a', 'n': 1}, {'doc_id': 'b', 'n': 2}])\n"
        "assert pa.table({'s': ['x', None]}).column('s').null_count == 1\n"
        "assert table.column('n').to_pylist() == [1, 2]\n"
        "try:\n    import pandas\nexcept ModuleNotFoundError as error:\n"
        "    assert str(error).startswith('extract runs without pandas'), error\n"
        "else:\n    raise AssertionError('pandas imported')"
    )
    assert "pandas" not in loaded and "pyarrow" in loaded
