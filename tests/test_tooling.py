"""The static checks: .pre-commit-config.yaml runs the tool versions the `dev` extra installs
(and .ci/run checks with)."""

from __future__ import annotations

import tomllib
import yaml
from conftest import REPO
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
