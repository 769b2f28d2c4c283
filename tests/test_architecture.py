"""The layers of README's "Architecture" section, held: who may import whom, who owns the files
between stages, and rule scripts that know no column names."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from imports import LIBRARY, REPO, imports_of

from corpusbuilder import tables

# README "Architecture": a module imports its own layer or a lower one.
LAYERS = {
    "base": ["common", "config", "download"],
    "contracts": ["tables", "tokenfile"],
    "stages": [
        "extraction",
        "language",
        "exact_dedup",
        "tokenise",
        "ngrams",
        "dedup",
        "export",
        "quality",
        "funnel",
        "similarity",
    ],
    "measures": ["evaluation", "report"],
    "command": ["cli"],
}
RANK = {module: rank for rank, modules in enumerate(LAYERS.values()) for module in modules}


def library_modules() -> dict[str, Path]:
    modules = {}
    for path in sorted((REPO / LIBRARY).rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def unit(module: str) -> str:
    """The layer unit of a library module: a top-level module, or the package it is in."""
    return module.split(".")[1] if "." in module else ""


def library_imports(path: Path) -> set[str]:
    return {found.module for found in imports_of(path) if found.module.startswith(LIBRARY + ".")}


def test_every_module_has_a_layer():
    assert {unit(m) for m in library_modules()} - {""} == set(RANK)


@pytest.mark.parametrize("module, path", library_modules().items(), ids=list(library_modules()))
def test_imports_go_down_the_layers(module, path):
    if not unit(module):
        return
    upward = sorted(i for i in library_imports(path) if RANK[unit(i)] > RANK[unit(module)])
    assert not upward, f"{module} imports from a higher layer: {upward}"


def test_evaluation_and_report_are_apart():
    """Gold-set scoring and the corpus report share no code: each reads the other's files only."""
    for module, path in library_modules().items():
        other = {"evaluation": "report", "report": "evaluation"}.get(unit(module))
        if other:
            assert not [i for i in library_imports(path) if unit(i) == other], (
                f"{module} imports {other}"
            )


def test_no_import_cycles():
    modules = library_modules()
    graph = {m: {i for i in library_imports(p) if i in modules} for m, p in modules.items()}
    state: dict[str, int] = {}

    def visit(module, trail):
        if state.get(module) == 1:
            raise AssertionError(
                "import cycle: " + " -> ".join(trail[trail.index(module) :] + [module])
            )
        if state.get(module) == 2:
            return
        state[module] = 1
        for imported in sorted(graph[module]):
            visit(imported, trail + [module])
        state[module] = 2

    for module in sorted(graph):
        visit(module, [])


def test_only_the_contracts_layer_knows_a_stage_file_layout():
    """Parquet schemas and parquet reads live in tables, the token file's layout in tokenfile."""
    for module, path in library_modules().items():
        source = path.read_text()
        if unit(module) != "tables":
            assert "pa.schema(" not in source and "read_parquet(" not in source, module
        if unit(module) != "tokenfile":
            assert "np.savez(" not in source, module


STAGE_COLUMNS = {
    name
    for schema in (
        tables.DOCS_SCHEMA,
        tables.BLOCKS_SCHEMA,
        tables.LANGUAGE_SCHEMA,
        tables.HASHES_SCHEMA,
        tables.DECISIONS_SCHEMA,
        tables.DEDUP_SCHEMA,
        tables.QUALITY_SCHEMA,
    )
    for name in schema.names
} - {"language", "shard", "site_boilerplate"}  # also input names


@pytest.mark.parametrize("script", sorted((REPO / "scripts").glob("*.py")), ids=lambda p: p.name)
def test_rule_scripts_know_no_column_names(script):
    strings = {
        node.value
        for node in ast.walk(ast.parse(script.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    assert not strings & STAGE_COLUMNS, (
        f"{script.name} names columns {sorted(strings & STAGE_COLUMNS)}"
    )


def test_rules_spell_no_stage_file_path():
    """The rules take the per-shard paths from tables.FILES, so a file is spelled once."""
    patterns = [pattern.split("{")[0] for pattern in vars(tables.FILES).values()]
    for smk in sorted((REPO / "rules").glob("*.smk")):
        text = smk.read_text()
        for pattern in patterns:
            assert f'"{pattern}' not in text, f"{smk.name} spells {pattern}"
