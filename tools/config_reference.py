#!/usr/bin/env python3
"""Write config/README.md, the key-by-key reference of what a user sets in config/config.yaml,
from the schema (config/schema.yaml) — so the reference cannot drift from what is validated.

    python tools/config_reference.py           # rewrite config/README.md
    python tools/config_reference.py --check   # exit 1 if it is out of date (tests/test_config.py)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "config" / "schema.yaml"
OUT = REPO / "config" / "README.md"

HEADER = """# Configuration reference

Generated from `config/schema.yaml` by `tools/config_reference.py`; do not edit by hand.

`config/config.yaml` sets what differs from these defaults (a key left out takes its default). Any
key can also be set for one run: `snakemake --cores 2 --config extract='{preset: C}'`, or
`--configfile my.yaml`. A bad value stops the run before any job starts, naming the key;
`corpusbuilder check-config --config my.yaml` checks a file by hand.
"""


def _allowed(spec: dict) -> str:
    if "enum" in spec:
        return "one of " + ", ".join(f"`{value}`" for value in spec["enum"])
    if "const" in spec:
        return f"`{spec['const']}`"
    if "anyOf" in spec:
        return " or ".join(_allowed(choice) for choice in spec["anyOf"])
    types = spec.get("type", [])
    types = [types] if isinstance(types, str) else types
    parts = [" or ".join(types)] if types else []
    if spec.get("type") == "array" and "items" in spec:
        parts = [f"list of {_allowed(spec['items'])}"]
    bounds = {"minimum": "≥", "exclusiveMinimum": ">", "maximum": "≤", "exclusiveMaximum": "<"}
    parts += [f"{sign} {spec[key]}" for key, sign in bounds.items() if key in spec]
    return ", ".join(parts)


def _default(spec: dict) -> str:
    if "default" not in spec or isinstance(spec["default"], dict) and spec.get("properties"):
        return ""
    return f"`{json.dumps(spec['default'], ensure_ascii=False)}`"


def _rows(properties: dict, prefix: str = "") -> list[str]:
    rows = []
    for name, spec in properties.items():
        key = f"{prefix}{name}"
        if spec.get("type") == "object" and "properties" in spec:
            if spec.get("description"):
                rows.append(f"| `{key}` | section | | {spec['description']} |")
            rows += _rows(spec["properties"], key + ".")
        else:
            description = spec.get("description", "").replace("|", "\\|")
            rows.append(f"| `{key}` | {_allowed(spec)} | {_default(spec)} | {description} |")
    return rows


def reference(schema: dict) -> str:
    sections = [HEADER]
    for name, spec in schema["properties"].items():
        sections.append(f"## `{name}`\n")
        if spec.get("description"):
            sections.append(spec["description"] + "\n")
        table = ["| key | allowed | default | meaning |", "|---|---|---|---|"]
        sections.append("\n".join(table + _rows(spec.get("properties", {}), name + ".")) + "\n")
    return "\n".join(sections)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="only report whether config/README.md is up to date"
    )
    args = parser.parse_args()
    text = reference(yaml.safe_load(SCHEMA.read_text()))
    if args.check:
        if OUT.read_text() != text:
            print(f"{OUT} is out of date: run python tools/config_reference.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
