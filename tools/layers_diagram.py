#!/usr/bin/env python3
"""Write the layer diagram of docs/design.md from the layers tests/test_architecture.py guards
(its LAYERS and CROSSINGS) and the modules the library has, so the picture cannot drift from
what the test holds.

    python tools/layers_diagram.py           # rewrite the diagram in docs/design.md
    python tools/layers_diagram.py --check   # exit 1 if it is out of date (tests/test_docs.py)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from test_architecture import CROSSINGS, LAYERS  # noqa: E402

DESIGN = REPO / "docs" / "design.md"
START, END = "<!-- layers: tools/layers_diagram.py writes this block -->", "<!-- layers end -->"


def members(unit: str) -> str:
    """A unit as the diagram names it: a module, or a package with its modules."""
    package = REPO / "corpusbuilder" / unit
    if not package.is_dir():
        return unit
    names = sorted(p.stem for p in package.glob("*.py") if p.stem != "__init__")
    return f"{unit}/ ({', '.join(names)})"


def diagram() -> str:
    lines = [START, "```"]
    for layer, units in reversed(LAYERS.items()):
        for index, unit in enumerate(units):
            lines.append(f"{layer if index == 0 else '':<11} {members(unit)}")
    lines += ["```", "", "A stage calls another stage only here (`CROSSINGS`):", ""]
    lines += [
        f"- `{importer}` → `{module.removeprefix('corpusbuilder.')}`: "
        + ", ".join(f"`{name}`" for name in sorted(names))
        for (importer, module), names in CROSSINGS.items()
    ]
    return "\n".join([*lines, END])


def with_diagram(text: str) -> str:
    before, rest = text.split(START, 1)
    return before + diagram() + rest.split(END, 1)[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report whether it is current")
    args = parser.parse_args()
    text = DESIGN.read_text()
    new = with_diagram(text)
    if args.check:
        if new != text:
            print(f"{DESIGN.relative_to(REPO)} is out of date: run python tools/layers_diagram.py")
            return 1
        return 0
    DESIGN.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
