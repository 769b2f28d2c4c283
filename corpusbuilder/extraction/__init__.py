"""Boilerplate removal (thesis chapter 2): from a WARC record to a page's kept blocks.

``warc`` reads the records, ``decoding`` turns a body into text, ``justext`` segments and
classifies blocks as Algorithms 2.1-2.3 do, ``classifier`` is the learned `best` preset, ``adapt``
self-training on a crawl, ``site_boilerplate`` the blocks a site repeats, ``frequent_lines`` the
preambles of plain-text collections, and ``extract`` the shard loop that ties them together.

The `best` preset's hot loops are compiled where setup.py could build them
(:data:`COMPILED_MODULES`): ``_walk`` the segmentation walk (for ``segmentation``), ``_trees``
the tree walk (``model``), ``_features`` the block features (``classifier``) and ``_classes``
jusText's classes (``justext``). Each module that uses one runs its Python version where it is
missing, with the same results.
"""

from dataclasses import dataclass
from importlib import import_module


@dataclass(frozen=True)
class CompiledModule:
    step: str  # what it computes
    user: str  # the module of this package that runs its Python version where it is missing


# the optional compiled modules, by name
COMPILED_MODULES = {
    "_walk": CompiledModule("the segmentation walk", "segmentation"),
    "_trees": CompiledModule("the tree walk", "model"),
    "_features": CompiledModule("the block features", "classifier"),
    "_classes": CompiledModule("jusText's classes", "justext"),
}

# why a compiled module can be missing, and what brings it back
_NOT_BUILT = (
    "not built (no C compiler at install time), or built for another lxml or an older checkout: "
    "reinstalling corpusbuilder builds them (`pip install -e .` in a checkout)"
)


def missing_compiled_modules() -> list[str]:
    """The modules of :data:`COMPILED_MODULES` this install cannot import (not built, or
    ``_walk`` built against another lxml): their work runs in Python."""
    missing = []
    for name in COMPILED_MODULES:
        try:
            import_module(f"{__name__}.{name}")
        except (ImportError, ValueError):  # ValueError: a C struct of lxml changed size
            missing.append(name)
    return missing


def compiled_module_users() -> list[tuple[object, str]]:
    """(the module that uses it, its name) for each compiled module: setting that name to None
    there runs the Python version, as a package built without a C compiler does (tests, bench)."""
    return [
        (import_module(f"{__name__}.{module.user}"), name)
        for name, module in COMPILED_MODULES.items()
    ]


def compiled_walks(missing: list[str] | None = None) -> str:
    """How this install runs the `best` preset's hot loops (``--version``, the extract log);
    ``missing``: `missing_compiled_modules()`, where the caller already asked."""
    missing = missing_compiled_modules() if missing is None else missing
    if not missing:
        return "compiled walks"
    if len(missing) == len(COMPILED_MODULES):
        return f"Python walks, with the same results, about 2x slower: {_NOT_BUILT}"
    steps = ", ".join(COMPILED_MODULES[name].step for name in missing)
    return f"compiled walks, but Python for {steps}, with the same results: {_NOT_BUILT}"
