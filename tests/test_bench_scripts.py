"""Every benchmark script still starts: nothing else runs bench/ (its figures are taken by hand),
so a function moved in the library would break the suite unseen until the next measurement.
`--help` imports the script and everything it imports at module level, and does no work."""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import REPO, run_bench

pytestmark = pytest.mark.slow

# the scripts, not the modules they share (bench/scale_rules.py: imported by project_scale.py)
SCRIPTS = sorted(
    path
    for path in (REPO / "bench").glob("*.py")
    if 'if __name__ == "__main__"' in path.read_text()
)


@pytest.fixture(scope="module")
def helps() -> dict[str, subprocess.CompletedProcess]:
    # one interpreter start each, two at a time: the machine's cores, ~10 s for all of them
    names = [script.name for script in SCRIPTS]
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(
            zip(names, pool.map(lambda name: run_bench(name, "--help", timeout=120), names))
        )


def test_there_are_scripts_to_check():
    assert len(SCRIPTS) >= 20, [script.name for script in SCRIPTS]


@pytest.mark.parametrize("name", [script.name for script in SCRIPTS])
def test_bench_script_starts(helps, name):
    run = helps[name]
    assert run.returncode == 0, f"bench/{name} --help:\n{run.stderr[-2000:]}"
    assert run.stdout.startswith("usage:"), run.stdout[:500]
