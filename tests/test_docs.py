"""The documentation: a short README for users, and the docs/ site holding the rest (issue 37)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import unavailable

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
# The two commands `.ci/run` proves; the README must give them exactly as it runs them.
SETUP_AND_BUILD = (
    "python3 -m venv .venv && . .venv/bin/activate && "
    "pip install -U pip && pip install -e '.[dev]' && snakemake --cores 2"
)
# The whole suite on every core (pyproject.toml's addopts: a file's tests on one worker).
TEST_COMMAND = "pytest -n auto"


def test_readme_is_a_short_user_guide():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 300


def test_readme_gives_the_two_commands_as_ci_runs_them():
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    lines = {line.strip() for block in blocks for line in block.splitlines()}
    assert SETUP_AND_BUILD in lines and TEST_COMMAND in lines
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert (
        "pip install --quiet -U pip && pip install --quiet -e '.[dev]' && snakemake --cores 2" in ci
    )
    assert ci.splitlines()[-1] == TEST_COMMAND


@pytest.mark.slow
def test_docs_site_builds_strictly(tmp_path):
    """Every page is in the nav and every relative link and anchor resolves (mkdocs.yml turns each
    of these into a warning, --strict into a failure)."""
    result = subprocess.run(
        [str(Path(sys.executable).parent / "mkdocs"), "build", "--strict", "-d", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "measurements" / "index.html").exists()


def test_config_reference_page_is_the_generated_one():
    """docs/config-reference.md is config/README.md itself (a link), so it cannot drift."""
    page = DOCS / "config-reference.md"
    assert page.is_symlink() and page.resolve() == (REPO / "config" / "README.md").resolve()


def test_commits_the_docs_cite_exist():
    """A figure is dated by the commit it was measured on: that commit must be in the history."""
    if not (REPO / ".git").exists():
        unavailable("not a git checkout: no history to look the cited commits up in")
    cited = {
        sha
        for page in DOCS.glob("*.md")
        for sha in re.findall(r"\b[0-9a-f]{7,40}\b", page.read_text(encoding="utf-8"))
        if re.search(r"[a-f]", sha)
    }
    assert cited
    missing = [
        sha
        for sha in sorted(cited)
        if subprocess.run(
            ["git", "cat-file", "-e", f"{sha}^{{commit}}"], cwd=REPO, capture_output=True
        ).returncode
    ]
    assert not missing, missing


def test_the_layer_diagram_is_generated_from_the_architecture_test():
    """docs/design.md's diagram shows the layers and crossings tests/test_architecture.py holds:
    regenerated, it is the same."""
    result = subprocess.run(
        [sys.executable, str(REPO / "tools" / "layers_diagram.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
