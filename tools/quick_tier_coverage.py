"""Does the quick tier touch every module of corpusbuilder/? Runs `pytest -m "not slow"` under
coverage (pytest-cov, the xdist workers too) and lists each module none of whose functions ran a
line: being imported does not count. A module without functions counts when it was imported. A
compiled module (.pyx, which coverage cannot see) counts when a line that calls into it ran.

    python tools/quick_tier_coverage.py [-n 2]   # exit 1 and the untouched modules, if any
"""

from __future__ import annotations

import argparse
import ast
import functools
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from coverage import CoverageData

REPO = Path(__file__).resolve().parents[1]
LIBRARY = REPO / "corpusbuilder"


def function_lines(tree: ast.AST) -> set[int]:
    """The lines of every statement in a function body (not the ``def`` lines, which run at
    import)."""
    return {
        line
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        for statement in node.body
        for line in range(statement.lineno, (statement.end_lineno or statement.lineno) + 1)
    }


def module_calls(tree: ast.AST) -> dict[str, set[int]]:
    """The lines in function bodies that name a module imported whole, by module (as the library
    imports its compiled modules: ``from corpusbuilder.extraction import _walk`` or
    ``import corpusbuilder.quality._cut as _cut``)."""
    modules: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules |= {a.asname or a.name: f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name: a.name for a in node.names}
    inside = function_lines(tree)
    calls: dict[str, set[int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in modules and node.lineno in inside:
            calls.setdefault(modules[node.id], set()).add(node.lineno)
    return calls


@functools.cache
def facts(path: Path) -> tuple[set[int], dict[str, set[int]]]:
    """A source file's function lines and its calls into modules (see `module_calls`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return function_lines(tree), module_calls(tree)


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def untouched(data: CoverageData) -> list[str]:
    """The modules of corpusbuilder/ the measured run did not touch (see the module's doc)."""
    executed = {Path(f).resolve(): set(data.lines(f) or ()) for f in data.measured_files()}
    missing, called = [], set()
    for path in sorted(LIBRARY.rglob("*.py")):
        functions, calls = facts(path)
        ran = executed.get(path.resolve(), set())
        if not ran & (functions or ran):  # no function: imported is touched
            missing.append(module_name(path))
        called |= {module for module, lines in calls.items() if lines & ran}
    missing += [
        f"{module_name(pyx)} (compiled)"
        for pyx in sorted(LIBRARY.rglob("*.pyx"))
        if module_name(pyx) not in called
    ]
    return missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", default="2", help="pytest-xdist workers (default 2)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        data_file = Path(scratch) / ".coverage"
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-m",
                "not slow",
                "-n",
                args.n,
                "-p",
                "no:cacheprovider",
                f"--cov={LIBRARY}",
                "--cov-report=",
                f"--basetemp={scratch}/pytest",
            ],
            cwd=REPO,
            env={**os.environ, "COVERAGE_FILE": str(data_file)},
        )
        if run.returncode != 0:
            print(f"the quick tier failed (exit {run.returncode})", file=sys.stderr)
            return run.returncode
        data = CoverageData(basename=str(data_file))
        data.read()
        missing = untouched(data)
    total = len(list(LIBRARY.rglob("*.py"))) + len(list(LIBRARY.rglob("*.pyx")))
    if missing:
        print(f"{len(missing)} of {total} modules untouched by the quick tier:")
        print(*missing, sep="\n")
        return 1
    print(f"the quick tier touched all {total} modules of corpusbuilder/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
