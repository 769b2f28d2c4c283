"""Boilerplate removal (thesis chapter 2): from a WARC record to a page's kept blocks.

``warc`` reads the records, ``decoding`` turns a body into text, ``justext`` segments and
classifies blocks as Algorithms 2.1-2.3 do, ``classifier`` is the learned `best` preset, ``adapt``
self-training on a crawl, ``site_boilerplate`` the blocks a site repeats, ``frequent_lines`` the
preambles of plain-text collections, and ``extract`` the shard loop that ties them together.

The `best` preset's hot loops are compiled where setup.py could build them (:data:`COMPILED`):
``_walk`` the segmentation walk (for ``segmentation``), ``_trees`` the tree walk (``model``),
``_features`` the block features (``classifier``) and ``_classes`` jusText's classes
(``justext``). Each module that uses one runs its Python version where it is missing, with the
same results.
"""

from importlib import import_module

COMPILED = ("_walk", "_trees", "_features", "_classes")


def missing_compiled_modules() -> list[str]:
    """The modules of :data:`COMPILED` this install cannot import (not built, or ``_walk`` built
    against another lxml): their work runs in Python."""
    missing = []
    for name in COMPILED:
        try:
            import_module(f"{__name__}.{name}")
        except ImportError:
            missing.append(name)
    return missing
