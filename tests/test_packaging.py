"""What a fresh machine needs: every import declared, every rule's conda env complete, a wheel that
works outside the checkout, a workflow that lints clean."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
import tomllib
import yaml
from conftest import REPO, write_warc
from imports import LIBRARY, third_party_closure, workflow_rules
from lxml.etree import __version__ as lxml_version
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from corpusbuilder.extraction import COMPILED_MODULES, missing_compiled_modules

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
CORE = {canonicalize_name(Requirement(r).name): Requirement(r) for r in PROJECT["dependencies"]}
EXTRAS = {
    canonicalize_name(Requirement(r).name): Requirement(r)
    for extra in PROJECT["optional-dependencies"].values()
    for r in extra
    if not r.startswith(PROJECT["name"])
}
# module → distribution for the packages a test environment need not have installed (the peers)
DECLARED_MODULE_NAMES = {
    module: canonicalize_name(dist)
    for dist, module in PYPROJECT["tool"]["deptry"]["package_module_name_map"].items()
}
INSTALLED_MODULE_NAMES = packages_distributions()


def distribution_of(module: str) -> str:
    """The distribution that provides a top-level module (its own name when nothing else says)."""
    if module in INSTALLED_MODULE_NAMES:
        return canonicalize_name(INSTALLED_MODULE_NAMES[module][0])
    return DECLARED_MODULE_NAMES.get(module, canonicalize_name(module))


def library_files() -> list[Path]:
    return sorted((REPO / LIBRARY).rglob("*.py")) + sorted((REPO / "scripts").glob("*.py"))


# --------------------------------------------------------------------------- pyproject.toml


def test_deptry_finds_no_undeclared_or_transitive_import():
    """deptry reads every import of the library, the rule scripts, tools/ and bench/ against
    pyproject.toml: none may be declared nowhere (DEP001) or arrive only through another package
    (DEP003, as jsonschema once came with snakemake)."""
    result = subprocess.run(
        [sys.executable, "-m", "deptry", "--no-ansi", "."], cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_deptry_fails_when_a_dependency_is_removed(tmp_path):
    """The check above can fail: without pydivsufsort in pyproject.toml, the suffix sorter's import
    is reported (the first fresh-machine failure this suite exists for)."""
    text = (REPO / "pyproject.toml").read_text()
    assert '"pydivsufsort' in text
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(re.sub(r'\s*"pydivsufsort[^"]*",', "", text))
    result = subprocess.run(
        [sys.executable, "-m", "deptry", "--no-ansi", ".", "--config", str(pyproject)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    # DEP001 where it is not installed, DEP003 (only there through something else) where it is
    assert re.search(
        r"corpusbuilder/\S+\.py:\d+:\d+: DEP00[13] 'pydivsufsort' imported",
        result.stderr + result.stdout,
    ), result.stderr


@pytest.mark.parametrize("path", library_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_module_level_imports_are_core_dependencies(path):
    """A module-level import, of the file itself or of a library module it imports, runs on every
    use: its package belongs in [project.dependencies], not in an extra."""
    missing = {
        module: where
        for module, where in third_party_closure(path, lazy=False).items()
        if distribution_of(module) not in CORE
    }
    assert not missing, f"imported at module level but not in [project.dependencies]: {missing}"


@pytest.mark.slow
def test_lazy_imports_are_in_an_extra():
    """An import inside a function (a peer extractor, scikit-learn for training) is declared in
    the extra its code path needs."""
    missing = {
        module: where
        for path in library_files()
        for module, where in third_party_closure(path).items()
        if distribution_of(module) not in CORE | EXTRAS
    }
    assert not missing, f"imported but declared in no extra: {missing}"


# --------------------------------------------------------------------------- conda envs


def env_requirements(env: Path) -> dict[str, Requirement]:
    """The packages a conda env file declares (conda-forge names are PyPI names for these),
    conda's ``name >=1.2`` and pip's lines alike; python and pip themselves left out."""
    specs = []
    for item in yaml.safe_load(env.read_text())["dependencies"]:
        specs += item["pip"] if isinstance(item, dict) else [item]
    requirements = {}
    for spec in specs:
        name, _, version = spec.partition(" ")
        if name not in ("python", "pip"):
            requirement = Requirement(name + version.replace(" ", ""))
            requirements[canonicalize_name(requirement.name)] = requirement
    return requirements


RULE_STEPS = [step for step in workflow_rules() if step.script is not None]


def test_the_rules_are_found():
    assert {"extract", "language", "dedup", "export", "train", "sweep"} <= {
        step.rule for step in RULE_STEPS
    }


@pytest.mark.parametrize("step", RULE_STEPS, ids=lambda step: step.rule)
def test_rule_env_provides_every_import_of_its_script(step):
    """`--software-deployment-method conda` builds each rule's env from its yaml alone: the env
    must hold every third-party package its script reaches, through the library, lazily or not."""
    assert step.env is not None and step.env.is_file(), f"{step.where}: no conda env"
    declared = env_requirements(step.env)
    missing = {
        module: where
        for module, where in third_party_closure(step.script).items()
        if distribution_of(module) not in declared
    }
    assert not missing, f"{step.where}: {step.env.name} lacks {missing}"


def test_the_funnel_rule_env_holds_every_library_its_provenance_record_names():
    """The record reads the libraries' versions from the env it runs in: one lacking a library
    would record it as missing, however the corpus was built."""
    from corpusbuilder.common.versions import OUTPUT_LIBRARIES

    (step,) = [step for step in RULE_STEPS if step.rule == "funnel"]
    declared = env_requirements(step.env)
    assert {canonicalize_name(name) for name in OUTPUT_LIBRARIES} <= set(declared), step.env.name


@pytest.mark.parametrize("env", sorted((REPO / "envs").glob("*.yaml")), ids=lambda p: p.name)
def test_env_versions_agree_with_pyproject(env):
    """The same range in an env as in pyproject.toml, and no `-e ..`: Snakemake builds envs from a
    copy under .snakemake/conda/, where a relative path to the checkout points nowhere."""
    assert "-e " not in env.read_text()
    for name, requirement in env_requirements(env).items():
        declared = CORE.get(name) or EXTRAS.get(name)
        assert declared is not None, f"{env.name}: {name} is not in pyproject.toml"
        assert requirement.specifier == declared.specifier, (
            f"{env.name}: {requirement} vs {declared}"
        )


# --------------------------------------------------------------------------- the wheel


def outside_the_checkout() -> dict[str, str]:
    """This process's environment without what points at the checkout or its venv (a
    PYTHONPATH to the checkout would also make pip take the package for installed)."""
    return {
        key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")
    }


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory):
    """The project built as a wheel and installed, with its dependencies, in a new venv outside
    the checkout (no system site-packages)."""
    root = tmp_path_factory.mktemp("wheel")
    # The wheel's _walk loads only beside the lxml it was built against; pip resolves the build's
    # lxml and the install's each on its own, and on the day lxml 6.2.0 came out the build got
    # 6.1.3 and the install 6.2.0. Both take this interpreter's lxml, which pip has already got.
    same_lxml = root / "lxml.txt"
    same_lxml.write_text(f"lxml=={lxml_version}\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--build-constraint",
            str(same_lxml),
            "--wheel-dir",
            str(root / "dist"),
            str(REPO),
        ],
        # -O1 after Python's -O3: the test needs compiled modules that load and run, not fast
        # ones, and -O3 took 119 CPU-s of the build, -O1 55. Not -O0: GCC then keeps an unused
        # static function of _walk's that calls libxml2's xmlFreeDoc, and the module does not load.
        env={**os.environ, "CFLAGS": "-O1"},
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    wheel = next((root / "dist").glob("corpusbuilder-*.whl"))
    # This pip installs into the new venv (--python), so the venv needs no pip of its own (its
    # ensurepip took ~25 s); --no-compile leaves the dependencies' .pyc to their first import
    # (compiling all of them was half of the install's ~160 s on the loaded 2-core machine).
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True, timeout=300
    )
    python = root / "venv" / "bin" / "python"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-compile",
            "--constraint",
            str(same_lxml),
            str(wheel),
        ],
        env=outside_the_checkout(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    work = root / "elsewhere"
    work.mkdir()
    return root / "venv" / "bin", work


def run_installed(installed_wheel, *args: str) -> subprocess.CompletedProcess:
    bin_dir, work = installed_wheel
    env = outside_the_checkout()
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        list(args), cwd=work, env=env, capture_output=True, text=True, timeout=300
    )


ARTICLE = (
    "<html><head><title>Harbour news</title></head><body><ul><li><a href='/'>Home</a></li>"
    "<li><a href='/news'>News</a></li></ul><h1>The ferry returns</h1>"
    "<p>After a winter of repairs the old ferry is back in the harbour, and the town has been "
    "waiting for it since the storms took the pier. The first crossing will be on Monday, "
    "when the mayor and most of the people who live on the island are expected to be on "
    "board for the short trip across the bay.</p>"
    "<p>Tickets can be bought at the kiosk by the pier, which is open every day from seven "
    "in the morning until the last boat has left in the evening.</p>"
    "<div class='footer'>Copyright 2026 Harbour Ledger. All rights reserved.</div></body></html>"
)


@pytest.mark.slow
def test_wheel_runs_from_any_directory(installed_wheel):
    bin_dir, work = installed_wheel
    where = run_installed(
        installed_wheel, "python", "-c", "import corpusbuilder, sys; print(corpusbuilder.__file__)"
    )
    assert where.returncode == 0 and not where.stdout.startswith(str(REPO)), (
        where.stdout + where.stderr
    )
    if not missing_compiled_modules():  # this machine compiles them, so the wheel carries them too
        compiled = run_installed(
            installed_wheel,
            "python",
            "-c",
            "import "
            + ", ".join(f"corpusbuilder.extraction.{name}" for name in COMPILED_MODULES)
            + ", corpusbuilder.quality._cut, corpusbuilder.quality._lines, "
            "corpusbuilder.quality._ngrams",
        )
        assert compiled.returncode == 0, compiled.stderr

    pages = work / "pages"
    pages.mkdir()
    (pages / "ferry.html").write_text(ARTICLE)
    cleaned = run_installed(
        installed_wheel, "corpusbuilder", "clean-html", "pages", "out", "--preset", "default"
    )
    assert cleaned.returncode == 0, cleaned.stderr
    text = (work / "out" / "ferry.txt").read_text()
    assert "the old ferry is back in the harbour" in text and "Home" not in text

    best = run_installed(installed_wheel, "corpusbuilder", "clean-html", "pages", "best-out")
    assert best.returncode == 0, best.stderr  # the packaged model and stop lists
    assert "the old ferry is back" in (work / "best-out" / "ferry.txt").read_text()

    write_warc(
        work / "tiny.warc.gz", [{"uri": "http://harbour.example/ferry", "body": ARTICLE.encode()}]
    )
    extracted = run_installed(
        installed_wheel, "corpusbuilder", "extract", "tiny.warc.gz", "tables/tiny"
    )
    assert extracted.returncode == 0, extracted.stderr
    assert (work / "tables" / "tiny.docs.parquet").is_file() and (
        work / "tables" / "tiny.blocks.parquet"
    ).is_file()

    # a language name is read through the table of language codes the wheel ships
    (work / "my.yaml").write_text(
        yaml.safe_dump({"input": {"warcs": ["tiny.warc.gz"]}, "language": {"targets": ["German"]}})
    )
    checked = run_installed(installed_wheel, "corpusbuilder", "check-config", "--config", "my.yaml")
    assert checked.returncode == 0 and "valid" in checked.stdout, checked.stderr
    (work / "bad.yaml").write_text(yaml.safe_dump({"extract": {"max_bytes": -1}}))
    bad = run_installed(installed_wheel, "corpusbuilder", "check-config", "--config", "bad.yaml")
    assert (
        bad.returncode == 2 and "extract.max_bytes" in bad.stderr and "Traceback" not in bad.stderr
    )


@pytest.mark.slow
def test_without_a_c_compiler_the_package_builds_without_its_compiled_walks(tmp_path):
    # a fresh machine may lack gcc or Python's headers: the build warns and goes on. Built from
    # the checkout's files without what an earlier build left in it (the editable install's .so).
    source = tmp_path / "source"
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name in filter(None, listed.split("\0")):
        if (REPO / name).exists() or (REPO / name).is_symlink():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name, follow_symlinks=False)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--verbose",
            "--no-cache-dir",
            "--no-deps",
            "--wheel-dir",
            str(tmp_path / "dist"),
            str(source),
        ],
        env={**os.environ, "CC": "false"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    output = result.stdout + result.stderr
    for name in COMPILED_MODULES:
        assert f"the compiled module corpusbuilder.extraction.{name} was not built" in output
    with zipfile.ZipFile(next((tmp_path / "dist").glob("corpusbuilder-*.whl"))) as wheel:
        names = wheel.namelist()
    assert "corpusbuilder/extraction/justext.py" in names and not [
        n for n in names if n.endswith((".so", ".c"))
    ]


# --------------------------------------------------------------------------- the workflow's style


@pytest.mark.workflow
def test_snakemake_lint_is_clean():
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "--lint", "--snakefile", str(REPO / "Snakefile")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0 and "Lints for" not in result.stdout + result.stderr, (
        result.stdout + result.stderr
    )


def test_snakefmt_is_clean():
    result = subprocess.run(
        [str(Path(sys.executable).parent / "snakefmt"), "--check", "Snakefile", "rules"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_readme_links_point_at_files_in_the_repository():
    readme = (REPO / "README.md").read_text()
    targets = {target.split("#")[0] for target in re.findall(r"\]\(([^)\s]+)\)", readme)}
    missing = [
        t for t in targets if t and not t.startswith(("http", "#")) and not (REPO / t).exists()
    ]
    assert not missing, missing
