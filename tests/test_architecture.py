"""The layers of docs/design.md's architecture, held: who may import whom, who owns the files
between stages, and rule scripts that know no column names."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from imports import LIBRARY, REPO, imports_of

from corpusbuilder.contracts import tables

# docs/design.md: a module imports its own layer or a lower one.
LAYERS = {
    "base": ["common", "config"],
    "contracts": ["contracts"],
    "stages": [
        "download",
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
    "api": ["api"],
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


# The only places one stage calls another: (importing stage, module) -> the public names it may
# take. Every other file between stages goes through the contracts.
CROSSINGS = {
    # G2+ holds hashes: block dedup hashes its n-grams the same way (and cuts the same ranges:
    # `ngramfiles.partition_hash_range`, the contracts')
    ("dedup", "corpusbuilder.ngrams.hashing"): {
        "NGRAM_KINDS",
        "kind_mask",
        "kind_words",
        "ngram_hashes",
        "ngram_starts",
        "shard_ngram_hashes",
    },
    # the vertical file's tokens are the tokeniser's, its hashes the token file's
    ("export", "corpusbuilder.tokenise"): {"tokenise"},
    ("ngrams", "corpusbuilder.tokenise"): {"token_hashes"},
    ("quality", "corpusbuilder.tokenise"): {"Vocabulary"},
    # a WARC record's first bytes, as the download check reads them
    ("extraction", "corpusbuilder.download.transfer"): {"starts_a_warc_record", "GZIP_MAGIC"},
    # the report measures a built corpus as the stages count it: G2+'s n-grams, the funnel's
    # block dedup row, the similarity stage's resemblance
    ("report", "corpusbuilder.ngrams.hashing"): {"shard_ngram_hashes", "ShardNgramHashes"},
    ("report", "corpusbuilder.funnel"): {"BLOCK_STAGE"},
    ("report", "corpusbuilder.similarity.minhash"): {
        "MinHashParams",
        "document_signatures",
        "resemblance_dedup",
        "similar_pairs",
    },
}
# who is held to CROSSINGS: the stages, and the report, which reads a built corpus's files (the
# gold-set evaluation runs the extractors themselves)
HELD_TO_CROSSINGS = {*LAYERS["stages"], "report"}


def imported_names(path: Path) -> list[tuple[str, str]]:
    """(module, name) of each ``from corpusbuilder.x import name`` in a file, anywhere in it."""
    return [
        (node.module, alias.name)
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(LIBRARY + ".")
        for alias in node.names
    ]


@pytest.mark.parametrize("module, path", library_modules().items(), ids=list(library_modules()))
def test_stages_meet_only_through_the_named_public_functions(module, path):
    """A stage (or the report) imports the contracts and lower layers, and a stage only where
    `CROSSINGS` names the function (issue 57: the language stage's identifier, document texts and
    the corpus format moved down; block dedup is handed jusText's pass by its rule script)."""
    me = unit(module)
    if me not in HELD_TO_CROSSINGS:
        return
    for imported, name in imported_names(path):
        other = unit(imported)
        if other in LAYERS["stages"] and other != me:
            assert name in CROSSINGS.get((me, imported), set()), (
                f"{module} imports {imported}.{name} from another stage"
            )


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
    """Parquet schemas and parquet reads live in tables (and the n-gram files' in ngramfiles, the
    report's measurements' in reportfiles), the token file's layout in tokenfile."""
    for module, path in library_modules().items():
        source = path.read_text()
        if module not in (
            "corpusbuilder.contracts.tables",
            "corpusbuilder.contracts.ngramfiles",
            "corpusbuilder.contracts.reportfiles",
        ):
            assert "pa.schema(" not in source and "read_parquet(" not in source, module
        if module != "corpusbuilder.contracts.tokenfile":
            assert "np.savez(" not in source, module


# --- the rules the contracts layer writes once (issue 37) ---------------------------------------

# a cleaned page and a kept block are decided by these columns' values: tables.is_cleaned_page,
# tables.is_kept_block and their masks
VERDICT_COLUMNS = {"outcome", "final_class"}


def reads_a_verdict(node: ast.AST) -> bool:
    """``x["outcome"]``, ``x.final_class``, ``final_class``: an expression naming a verdict
    column."""
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value in VERDICT_COLUMNS
    if isinstance(node, ast.Attribute):
        return node.attr in VERDICT_COLUMNS
    return isinstance(node, ast.Name) and node.id in VERDICT_COLUMNS


def verdict_rules(source: str) -> list[str]:
    """Where ``source`` decides a cleaned page or a kept block itself: a verdict column compared
    with something else, a parquet filter on one, or a docs row's reason compared with "ok"."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(map(reads_a_verdict, sides)) and not all(map(reads_a_verdict, sides)):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
            reason = [
                s
                for s in sides
                if isinstance(s, ast.Subscript) and ast.unparse(s.slice) == "'reason'"
            ]
            if reason and any(isinstance(s, ast.Constant) and s.value == "ok" for s in sides):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        if (
            isinstance(node, ast.Tuple)
            and len(node.elts) == 3
            and isinstance(node.elts[0], ast.Constant)
            and node.elts[0].value in VERDICT_COLUMNS
        ):
            found.append(f"line {node.lineno}: filter {ast.unparse(node)}")
    return found


def test_verdict_rules_are_found():
    """The check below finds each way the rule was spelled before tables had it."""
    for leak in (
        'ok = docs["outcome"] == "ok"',
        'good = blocks.loc[blocks["final_class"] == GOOD]',
        'good = [b for b in page.blocks if b.final_class == "good"]',
        'if row["reason"] != "ok": pass',
        'read_parquet(path, filters=[("final_class", "==", "good")])',
        'kept = [final_class != "bad" for final_class in classes]',
    ):
        assert verdict_rules(leak), leak
    assert not verdict_rules('kind = np.where(blocks["kept_by_extract"], "good", "bad")')


@pytest.mark.parametrize("module, path", library_modules().items(), ids=list(library_modules()))
def test_only_the_contracts_layer_decides_a_cleaned_page_or_a_kept_block(module, path):
    if unit(module) != "contracts":
        assert not verdict_rules(path.read_text()), (
            f"{module} decides a cleaned page or a kept block itself (use tables.is_cleaned_page, "
            f"is_kept_block or their masks): {verdict_rules(path.read_text())}"
        )


def test_the_block_classes_have_one_owner():
    """The words of a block's class are defined once, in the contracts; the classifier that
    writes them and every stage that reads them take them from there."""
    for module, path in library_modules().items():
        if module != "corpusbuilder.contracts.tables":
            assert not re.search(
                r'^\s*(GOOD|BAD|SHORT|NEAR_GOOD|DUPLICATE)\b.*=\s*"', path.read_text(), re.M
            ), f"{module} defines a block class of its own"


def library_sources() -> list[Path]:
    """Every source file of the library: its Python modules and the Cython ones setup.py
    compiles (.pyx) with their shared declarations (.pxd)."""
    return sorted(
        path for suffix in ("py", "pyx", "pxd") for path in (REPO / LIBRARY).rglob(f"*.{suffix}")
    )


@pytest.mark.parametrize(
    "path", library_sources(), ids=[str(p.relative_to(REPO)) for p in library_sources()]
)
def test_no_library_module_is_over_600_lines(path):
    lines = len(path.read_text().splitlines())
    assert lines <= 600, f"{path.relative_to(REPO)} has {lines} lines: split it by what it computes"


def test_the_library_top_level_holds_at_most_15_modules():
    modules = sorted(p.stem for p in (REPO / LIBRARY).glob("*.py") if p.stem != "__init__")
    assert len(modules) <= 15, f"{len(modules)} top-level modules: {modules}"


def joins_tables(source: str) -> list[str]:
    """Where ``source`` joins tables itself: a merge, a DataFrame join (a string's join is
    text), or a read of the language or exact table, whose verdicts the contracts layer joins."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "read_table":
                read = ast.unparse(node.args[0]) if node.args else ""
                if read.endswith((".language", ".exact")):
                    found.append(f"line {node.lineno}: {ast.unparse(node)}")
            continue
        name, owner = node.func.attr, node.func.value
        text = isinstance(owner, ast.Constant) and isinstance(owner.value, str)
        if name == "merge" or (name == "join" and not text):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_table_joins_are_found():
    for leak in (
        'overview = docs.merge(counts, left_on="doc_id", right_index=True)',
        "pages = docs.join(language, on='doc_id')",
        'language = read_table(shard.language, ["doc_id", "kept", "reason"])',
        'exact = read_table(tables.exact, ["doc_id", "kept"])',
    ):
        assert joins_tables(leak), leak
    assert not joins_tables('text = " · ".join(parts)')


@pytest.mark.parametrize(
    "module, path",
    [(m, p) for m, p in library_modules().items() if unit(m) == "report"],
    ids=[m for m in library_modules() if unit(m) == "report"],
)
def test_report_modules_join_no_stage_tables(module, path):
    """The report shows verdicts the contracts layer joined (`verdicts`, `survivors.survivors`)."""
    assert not joins_tables(path.read_text()), (
        f"{module} joins tables: {joins_tables(path.read_text())}"
    )


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


def test_the_library_reaches_the_api_only_from_the_command():
    """corpusbuilder/__init__.py imports the API on first use of one of its names; the stages and
    the rule scripts never use them (tests/imports.py counts the package's module level only)."""
    import corpusbuilder

    exported = set(corpusbuilder.__all__)
    sources = [p for p in (REPO / LIBRARY).rglob("*.py") if p.name != "__init__.py"]
    for path in [*sources, *sorted((REPO / "scripts").glob("*.py"))]:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == LIBRARY:
                used = {alias.name for alias in node.names} & exported
                assert not used, f"{path.name} imports {used} from the package"
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                assert not (node.value.id == LIBRARY and node.attr in exported), path.name


def test_one_reader_of_the_npy_header():
    """The .npy header is parsed in one place (common.io.npy_header): the token file's members,
    G₂₊'s parts and dedup's memory check all go through it (issue 37)."""
    for module, path in library_modules().items():
        if module != "corpusbuilder.common.io":
            assert "read_magic(" not in path.read_text(), f"{module} parses an .npy header"


def test_only_tokenfile_opens_the_token_file():
    """Stages take the token file's members from tokenfile, never from the archive itself."""
    for module, path in library_modules().items():
        source = path.read_text()
        if module != "corpusbuilder.contracts.tokenfile":
            assert "token_hash.npy" not in source and "ZipFile(" not in source, module


def test_one_function_names_a_shards_dedup_table():
    """A shard's dedup table path is `tables.dedup_table`, not spelled from FILES.dedup anew in
    each script or rule (issue 37)."""
    for path in [*(REPO / "scripts").glob("*.py"), *(REPO / "rules").glob("*.smk")]:
        assert "FILES.dedup.format" not in path.read_text(), path.name


def test_export_cuts_removed_parts_without_the_tokeniser():
    """Dedup hands export its removed parts in whitespace chunks of the block text, so neither
    export nor the report tokenises a block again to apply them (issue 37), and no config rule
    ties tokenise.cjk_chars to dedup.level."""
    for module, path in library_modules().items():
        if unit(module) in ("export", "report"):
            source = path.read_text()
            assert "Vocabulary(" not in source and "chunk_ids(" not in source, module
    assert "cjk_chars" not in (REPO / LIBRARY / "config.py").read_text()
