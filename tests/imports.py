"""What the library and the rule scripts import, read from their source (no import is executed).

tests/test_packaging.py compares it with what pyproject.toml and envs/*.yaml declare.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIBRARY = "corpusbuilder"


@dataclass(frozen=True)
class Import:
    module: str  # top-level module name: "numpy", "corpusbuilder.dedup" keeps its full name
    at_module_level: bool  # False: inside a function, run only when that code path is taken
    where: str  # file:line


def imports_of(path: Path) -> list[Import]:
    """Every absolute import of a Python file (relative ones are resolved against its package)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = _package_of(path)
    found = []

    def visit(node, at_module_level):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                # read by type checkers only, never imported when the code runs
                for branch in child.orelse:
                    visit(ast.Module(body=[branch], type_ignores=[]), at_module_level)
                continue
            nested = at_module_level and not isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
            )
            if isinstance(child, ast.Import):
                found.extend(
                    Import(alias.name, at_module_level, f"{path}:{child.lineno}")
                    for alias in child.names
                )
            elif isinstance(child, ast.ImportFrom):
                module = _absolute(child, package)
                if module:
                    found.append(Import(module, at_module_level, f"{path}:{child.lineno}"))
            visit(child, nested)

    visit(tree, True)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _package_of(path: Path) -> str | None:
    try:
        parts = path.resolve().relative_to(REPO).with_suffix("").parts
    except ValueError:
        return None
    if parts[0] != LIBRARY:
        return None
    return ".".join(parts[:-1] if parts[-1] != "__init__" else parts[:-1])


def _absolute(node: ast.ImportFrom, package: str | None) -> str | None:
    if node.level == 0:
        return node.module
    if package is None:
        return None
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def module_file(module: str) -> Path | None:
    """The source file of a library module (``corpusbuilder.dedup`` → corpusbuilder/dedup.py)."""
    base = REPO.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def third_party_closure(path: Path, lazy: bool = True) -> dict[str, str]:
    """Top-level third-party modules a file needs, through the library modules it imports
    (with their packages' ``__init__``), mapped to where each is first imported. With
    ``lazy=False``, only imports at module level count."""
    needed: dict[str, str] = {}
    seen: set[Path] = set()
    queue = [path]
    while queue:
        current = queue.pop()
        if current in seen:
            continue
        seen.add(current)
        # a package's __init__ runs its module level when any module of the package is
        # imported; its functions (a module __getattr__ that imports an exported name's module
        # on first use) only when the package's own names are used, which the library's and the
        # rule scripts' code does not do
        package_init = current.name == "__init__.py"
        for found in imports_of(current):
            if not ((lazy and not package_init) or found.at_module_level):
                continue
            top = found.module.split(".")[0]
            if top == LIBRARY:
                parts = found.module.split(".")
                for depth in range(1, len(parts) + 1):
                    if (file := module_file(".".join(parts[:depth]))) is not None:
                        queue.append(file)
            elif top not in sys.stdlib_module_names and top != "__future__":
                needed.setdefault(top, found.where)
    return needed


@dataclass(frozen=True)
class RuleStep:
    rule: str
    script: Path | None
    env: Path | None
    where: str


def workflow_rules() -> list[RuleStep]:
    """Each rule of rules/*.smk with the script it runs and the conda env it declares, read from
    the rule files' text (both are plain string directives, one per rule)."""
    steps = []
    for smk in sorted((REPO / "rules").glob("*.smk")):
        # a rule may sit indented under an `if` (dedup.smk's modes)
        chunks = re.split(r"\n[ \t]*rule ", "\n" + smk.read_text(encoding="utf-8"))
        for chunk in chunks[1:]:
            name, _, body = chunk.partition(":")
            body = body.split("\n\n\n")[0]
            script, env = (_directive(body, key, smk.parent) for key in ("script", "conda"))
            steps.append(RuleStep(name.strip(), script, env, f"{smk.name}: rule {name.strip()}"))
    return steps


def _directive(body: str, key: str, base: Path) -> Path | None:
    lines = body.splitlines()
    for index, line in enumerate(lines):
        if line.strip() == f"{key}:" and index + 1 < len(lines):
            return (base / lines[index + 1].strip().strip('"')).resolve()
    return None
