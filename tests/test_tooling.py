"""The static checks: .pre-commit-config.yaml runs the tool versions the `dev` extra installs
(and .ci/run checks with)."""

from __future__ import annotations

import ast
import importlib.util
from types import ModuleType

import tomllib
import yaml
from conftest import REPO
from coverage import CoverageData
from packaging.requirements import Requirement


def test_pre_commit_runs_the_versions_of_the_dev_extra():
    dev = {
        (requirement := Requirement(spec)).name: requirement.specifier
        for spec in tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
            "optional-dependencies"
        ]["dev"]
    }
    repos = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text())["repos"]
    pinned = {
        hook["id"]: repo["rev"].lstrip("v")
        for repo in repos
        if repo["repo"] != "local"
        for hook in repo["hooks"]
    }
    assert set(pinned) == {"ruff-check", "ruff-format", "snakefmt"}
    for hook, tool in (("ruff-check", "ruff"), ("ruff-format", "ruff"), ("snakefmt", "snakefmt")):
        assert pinned[hook] in dev[tool], f"{hook} {pinned[hook]} is not the dev extra's {tool}"
    local = [hook["id"] for repo in repos if repo["repo"] == "local" for hook in repo["hooks"]]
    assert local == ["mypy"] and "mypy" in dev


def load_tool(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "tools" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_quick_tier_check_counts_a_module_only_when_a_function_of_it_ran():
    """tools/quick_tier_coverage.py: a module whose `def` lines alone ran (it was imported) is
    untouched; one line of a function body touches it; a compiled module is touched by a line
    that calls into it."""
    tool = load_tool("quick_tier_coverage")
    funnel = REPO / "corpusbuilder" / "funnel.py"
    segmentation = REPO / "corpusbuilder" / "extraction" / "segmentation.py"
    tree = ast.parse(funnel.read_text())
    defs = sorted(n.lineno for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))
    data = CoverageData(no_disk=True)
    data.add_lines({str(funnel): defs})
    untouched = tool.untouched(data)
    assert "corpusbuilder.funnel" in untouched and "corpusbuilder.extraction._walk (compiled)" in (
        untouched
    )
    calls = tool.module_calls(ast.parse(segmentation.read_text()))["corpusbuilder.extraction._walk"]
    data.add_lines({str(funnel): [min(tool.function_lines(tree))], str(segmentation): calls})
    untouched = tool.untouched(data)
    assert "corpusbuilder.funnel" not in untouched
    assert "corpusbuilder.extraction._walk (compiled)" not in untouched
    assert "corpusbuilder.extraction._classes (compiled)" in untouched
    assert "corpusbuilder.tokenise" in untouched  # nothing of it ran
