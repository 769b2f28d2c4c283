#!/usr/bin/env python3
"""Build jusText stop lists from word-frequency data.

Pomikálek's thesis (§2.9.9) shows that the ~100-500 most frequent words of a language work
as well as a hand-made list of function words; this script takes the most frequent words of
each language from the `wordfreq` package and writes one list per language to
``<out>/<Language>.txt`` (English language names, as the reference ``justext`` package
names its lists), plus ``<out>/README.md`` recording where the lists came from.

How many words: jusText's stop-word density thresholds were tuned on English. The English
list takes the ``--top`` (300) most frequent words, which account for about 56% of running
English text; every other list takes as many words as its language needs to cover the same
share (an inflected language spreads its text over more word forms: Czech needs ~1,200, Danish
~170), capped at ``--max-words``. ``--fixed`` takes exactly ``--top`` words everywhere.

Only this script needs ``wordfreq`` (``pip install wordfreq``); the library reads the
generated text files and never imports it.

What a "word" is here: jusText counts stop words among the *whitespace-separated tokens* of a
paragraph, lower-cased. wordfreq's own tokeniser is finer-grained, so its lists are filtered
and adjusted to match what a whitespace tokeniser sees:

* tokens containing a digit, or no letter at all, are dropped (numbers, punctuation);
* every other character must be a letter, a combining mark (Indic scripts), a zero-width
  (non-)joiner (Persian) or an apostrophe/hyphen *inside* the word;
* words written in another script than the language's (English ``the`` in the Russian
  list) are dropped;
* one-letter tokens are mostly abbreviations, list markers and pieces that wordfreq splits
  off at apostrophes and hyphens (French ``l'``, Romanian ``s-a``), which never stand alone
  between spaces: only the language's real one-letter words are kept (a curated table:
  English ``a``/``i``, Czech ``v``/``s``/``z``/``k``…); longer such pieces (``qu``, ``dell``)
  are dropped too;
* wordfreq case-folds, which a plain ``str.lower()`` does not: Greek final sigma is restored
  (``τησ`` -> ``της``), and German words whose ``ß`` was folded to ``ss`` also get their
  standard ``ß`` spelling from a small curated table (the ``ss`` form stays: it is the Swiss
  spelling);
* words with an ASCII apostrophe also get the typographic one (``don't`` and ``don’t``);
* Serbian: wordfreq stores Serbo-Croatian in Latin script only (it transliterates Serbian
  Cyrillic), so ``Serbian.txt`` holds every word in both Cyrillic and Latin script.

Word counts are of words taken from the frequency ranking after filtering; the spelling
variants above come on top of them.

Chinese, Japanese and Korean are not built: the first two are written without spaces and
wordfreq's Korean list is of morphemes, not of space-separated words, so none of them can
match jusText's whitespace tokens.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.metadata
import shlex
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path

from corpusbuilder.common.stoplists import LANGUAGE_CODES

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "resources" / "stoplists"
DEFAULT_TOP = 300
DEFAULT_MAX_WORDS = 3000
MIN_WORDS = 100
REFERENCE = "en"  # calibrated lists cover as much running text as English's top N

# The languages built from wordfreq, by its codes; the list names are the library's
# (`stoplists.LANGUAGE_CODES`, the names the reference `justext` package uses). Serbian is DERIVED.
WORDFREQ_CODES = (
    "ar",
    "bg",
    "bn",
    "ca",
    "cs",
    "da",
    "de",
    "el",
    "en",
    "es",
    "fa",
    "fi",
    "fil",
    "fr",
    "he",
    "hi",
    "hu",
    "id",
    "is",
    "it",
    "lt",
    "lv",
    "mk",
    "ms",
    "nb",
    "nl",
    "pl",
    "pt",
    "ro",
    "ru",
    "sh",
    "sk",
    "sl",
    "sv",
    "ta",
    "tr",
    "uk",
    "ur",
    "vi",
)
LANGUAGES: dict[str, str] = {code: LANGUAGE_CODES[code] for code in WORDFREQ_CODES}
# Lists derived from another language's data: name -> (source code, how).
DERIVED: dict[str, tuple[str, str]] = {
    "Serbian": (
        "sh",
        "Latin words of the Serbo-Croatian list plus their Serbian Cyrillic spelling",
    ),
}
SKIPPED = {
    "zh": "written without spaces between words",
    "ja": "written without spaces between words",
    "ko": "wordfreq counts morphemes, not space-separated words",
}

# Languages the language identifier (py3langid) returns that wordfreq has no data for, but the
# reference `justext` package ships a list for: Pomikálek's own lists, the most frequent words of
# each language's Wikipedia (thesis §2.9.9). Every other code of the library's table.
JUSTEXT_LANGUAGES: dict[str, str] = {
    code: name
    for code, name in LANGUAGE_CODES.items()
    if name not in LANGUAGES.values() and name not in ("Serbian",)
}

# Writing system of each language (the first word of the Unicode character names of its
# letters); words with letters of any other script (English "the" in a Russian list) are
# dropped. Languages not listed are written in Latin script.
SCRIPTS: dict[str, set[str]] = {
    "ar": {"ARABIC"},
    "fa": {"ARABIC"},
    "ur": {"ARABIC"},
    "he": {"HEBREW"},
    "bg": {"CYRILLIC"},
    "mk": {"CYRILLIC"},
    "ru": {"CYRILLIC"},
    "uk": {"CYRILLIC"},
    "el": {"GREEK"},
    "hi": {"DEVANAGARI"},
    "bn": {"BENGALI"},
    "ta": {"TAMIL"},
}

# One-letter tokens in frequency lists are mostly abbreviations, list markers and pieces split
# off at apostrophes or hyphens (French l', Romanian s-a). Only these one-letter words are kept;
# None keeps them all (Vietnamese, whose space-separated units are syllables).
ONE_LETTER_WORDS: dict[str, set[str] | None] = {
    "en": {"a", "i"},
    "cs": set("avszoiku"),
    "sk": set("avzsokiu"),
    "sl": set("vzsoak"),
    "pl": set("wizoau"),
    "sh": set("uiaosk"),
    "hu": {"a", "s", "e", "ő"},
    "lt": {"į", "o"},
    "da": {"i", "å"},
    "nb": {"i", "å"},
    "sv": {"i", "å", "ö"},
    "is": {"í", "á"},
    "nl": {"u"},
    "fr": {"à", "a", "y"},
    "es": set("yaoeu"),
    "pt": {"a", "o", "e", "é", "à"},
    "it": {"e", "a", "è", "i", "o"},
    "ca": set("aio"),
    "ro": set("aoei"),
    "tr": {"o"},
    "fil": {"o"},
    "ru": set("висяаоку"),
    "uk": set("віузаяєйжоб"),
    "bg": set("ивесаяй"),
    "mk": set("иеа"),
    "el": {"η", "ο", "ή"},
    "ar": {"و"},
    "fa": {"و"},
    "ur": {"و"},
    "hi": {"व"},
    "bn": {"ও", "এ"},
    "vi": None,
}

# Longer pieces wordfreq splits off at an apostrophe that never occur alone between spaces.
FRAGMENTS: dict[str, set[str]] = {
    "en": {"ll", "re", "ve"},
    "fr": {"qu", "jusqu", "lorsqu", "puisqu", "quoiqu"},
    "it": {"dell", "nell", "dall", "sull", "quest", "quell"},
}

# Pieces of web addresses, frequent in web-derived counts but never words of running text.
URL_PIECES = {"http", "https", "www"}

# German words whose standard spelling has ß (wordfreq case-folds ß to ss). Words not listed
# here keep only the ss spelling, which is the Swiss standard one.
GERMAN_ESZETT = {
    "weiss": "weiß",
    "weisst": "weißt",
    "weissen": "weißen",
    "heisst": "heißt",
    "heissen": "heißen",
    "ausser": "außer",
    "ausserdem": "außerdem",
    "ausserhalb": "außerhalb",
    "draussen": "draußen",
    "gross": "groß",
    "grosse": "große",
    "grossen": "großen",
    "grosser": "großer",
    "grosses": "großes",
    "grösse": "größe",
    "grösser": "größer",
    "grössere": "größere",
    "grösste": "größte",
    "grössten": "größten",
    "strasse": "straße",
    "spass": "spaß",
    "fuss": "fuß",
    "fussball": "fußball",
    "bloss": "bloß",
    "liess": "ließ",
    "schliesslich": "schließlich",
    "anschliessend": "anschließend",
    "ausschliesslich": "ausschließlich",
    "regelmässig": "regelmäßig",
    "gemäss": "gemäß",
    "massnahmen": "maßnahmen",
    "scheisse": "scheiße",
    "scheiss": "scheiß",
    "süss": "süß",
    "gruss": "gruß",
}

# Serbian Latin -> Cyrillic (the inverse of the table wordfreq uses to romanise Serbian).
SR_DIGRAPHS = {"dž": "џ", "lj": "љ", "nj": "њ"}
SR_LETTERS = dict(zip("abcčćdđefghijklmnoprsštuvzž", "абцчћдђефгхијклмнопрсштувзж"))

APOSTROPHES = "'’"
INNER_PUNCT = APOSTROPHES + "-"
JOINERS = {"\u200c", "\u200d"}  # ZWNJ / ZWJ, part of Persian (and Indic) words


def is_word(token: str) -> bool:
    """True if `token` is a word as a whitespace tokeniser would see it (see module doc)."""
    if not token or token != token.strip() or any(ch.isspace() for ch in token):
        return False
    has_letter = False
    for i, ch in enumerate(token):
        cat = unicodedata.category(ch)
        if cat[0] == "L":
            has_letter = True
        elif cat[0] == "M" or ch in JOINERS:
            continue
        elif ch in INNER_PUNCT and 0 < i < len(token) - 1:
            continue
        else:  # digits, punctuation, symbols, leading/trailing apostrophes
            return False
    return has_letter


def fix_case_folding(word: str, code: str) -> list[str]:
    """Undo what wordfreq's case folding does beyond str.lower(); return spellings to keep."""
    if code == "el" and len(word) > 1 and word.endswith("σ"):
        return [word[:-1] + "ς"]
    if code == "de" and word in GERMAN_ESZETT:
        return [word, GERMAN_ESZETT[word]]
    return [word]


def apostrophe_variants(word: str) -> list[str]:
    if "'" in word:
        return [word, word.replace("'", "’")]
    if "’" in word:
        return [word.replace("’", "'"), word]
    return [word]


def to_serbian_cyrillic(word: str) -> str | None:
    """Serbian Latin -> Cyrillic; None if the word has letters outside the Serbian alphabet."""
    out, i = [], 0
    while i < len(word):
        pair = word[i : i + 2]
        if pair in SR_DIGRAPHS:
            out.append(SR_DIGRAPHS[pair])
            i += 2
            continue
        ch = word[i]
        if ch in SR_LETTERS:
            out.append(SR_LETTERS[ch])
        elif ch in INNER_PUNCT:
            out.append(ch)
        else:
            return None
        i += 1
    return "".join(out)


def script_of(ch: str) -> str:
    return unicodedata.name(ch, "UNKNOWN").split()[0]


def keep_token(token: str, code: str) -> bool:
    """True if `token` from the frequency list of `code` belongs in its stop list."""
    if not is_word(token) or token in FRAGMENTS.get(code, ()) or token in URL_PIECES:
        return False
    scripts = SCRIPTS.get(code, {"LATIN"})
    if any(script_of(ch) not in scripts for ch in token if unicodedata.category(ch)[0] == "L"):
        return False
    if len(token) == 1:
        allowed = ONE_LETTER_WORDS.get(code, set())
        return allowed is None or token in allowed
    return True


def check_tables() -> None:
    """Guard the hand-written tables against typos such as a Latin look-alike in Cyrillic."""
    for code, letters in ONE_LETTER_WORDS.items():
        assert code in LANGUAGES, code
        for ch in letters or ():
            assert script_of(ch) in SCRIPTS.get(code, {"LATIN"}), (code, ch)
    for code in list(SCRIPTS) + list(FRAGMENTS):
        assert code in LANGUAGES, code


def ranked_words(code: str) -> Iterator[tuple[str, float]]:
    """The words of `code` that pass the filters, most frequent first, with their frequency
    (share of wordfreq's running tokens)."""
    import wordfreq

    freqs = wordfreq.get_frequency_dict(code, wordlist="best")
    for token in wordfreq.iter_wordlist(code, wordlist="best"):
        if keep_token(token, code):
            yield token, freqs[token]


def select_words(
    code: str, top: int, target: float | None, max_words: int
) -> tuple[list[str], float]:
    """Choose the words of one list; return them (most frequent first) and their coverage.

    With `target` None: exactly the `top` most frequent words. Otherwise as many as it takes
    for their frequencies to add up to `target` (at least MIN_WORDS, at most `max_words`).
    """
    words: list[str] = []
    coverage = 0.0
    for word, freq in ranked_words(code):
        if target is None:
            if len(words) == top:
                break
        elif len(words) >= max_words or (coverage >= target and len(words) >= MIN_WORDS):
            break
        words.append(word)
        coverage += freq
    if target is None and len(words) < top:
        raise SystemExit(f"{code}: wordfreq has only {len(words)} usable words")
    return words, coverage


def build_list(code: str, words: list[str]) -> list[str]:
    """The file's lines: `words` plus their spelling variants (see module doc)."""
    out: list[str] = []
    for word in words:
        for fixed in fix_case_folding(word, code):
            out.extend(apostrophe_variants(fixed))
    return _dedupe(out)


def build_serbian(words: list[str]) -> list[str]:
    out: list[str] = []
    for word in build_list("sh", words):
        cyr = to_serbian_cyrillic(word)
        if cyr is not None:
            out.append(cyr)
        out.append(word)
    return _dedupe(out)


def _dedupe(words: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for w in words:
        w = unicodedata.normalize("NFC", w).lower()
        if w not in seen:
            seen.add(w)
            out.append(w)
    return out


def build_from_justext(name: str) -> list[str]:
    """The justext package's list `name`, as words a whitespace tokeniser sees (`is_word`: its
    tokens with punctuation or digits attached are dropped), lower-cased, NFC, sorted (the
    package's lists carry no frequency order)."""
    import justext

    words = {unicodedata.normalize("NFC", word.lower()) for word in justext.get_stoplist(name)}
    return sorted(word for word in words if is_word(word))


def write_list(path: Path, words: list[str]) -> None:
    path.write_text("".join(w + "\n" for w in words), encoding="utf-8")


def write_readme(
    out: Path,
    args: argparse.Namespace,
    stats: dict[str, tuple[str, int, int, float]],
    target: float | None,
    command: str,
    imported: dict[str, tuple[str, int]],
) -> None:
    version = importlib.metadata.version("wordfreq")
    justext_version = importlib.metadata.version("justext")
    imported_rows = "\n".join(
        f"| {name} | `{code}` | {words} |" for name, (code, words) in sorted(imported.items())
    )
    today = _dt.date.today().isoformat()
    rows = []
    for name, (code, base, lines, coverage) in sorted(stats.items()):
        note = DERIVED[name][1] if name in DERIVED else ""
        if target is not None and base >= args.max_words and coverage < target:
            note = (note + "; " if note else "") + f"capped at {args.max_words} words"
        rows.append(f"| {name} | `{code}` | {base} | {lines} | {100 * coverage:.1f}% | {note} |")
    skipped = ", ".join(f"`{c}` ({why})" for c, why in SKIPPED.items())
    if target is None:
        size = f"""- Size: the {args.top} most frequent words of every language (`--fixed`)."""
    else:
        size = f"""- Size: calibrated. The {args.top} most frequent English words account for
  {100 * target:.1f}% of running English text (by wordfreq's frequencies); every other list takes
  as many of its language's most frequent words as it needs to cover the same share of its
  running text (at least {MIN_WORDS}, at most {args.max_words} words)."""
    text = f"""# Stop lists

One file per language, `<Language>.txt` (English names, as the reference `justext` package
names its lists), UTF-8, one lower-case word per line, most frequent first (the lists taken
from the justext package: sorted), no comments. Read them with
`corpusbuilder.common.stoplists.load_stoplist(name)`; map a language code from language \
identification
to a list name with `stoplist_name_for(code)`. A language with no list here gets one derived
from the page itself (`extract.stoplist_fallback: page`, \
`corpusbuilder.common.stoplists.page_stoplist`).

## Provenance

- {len(stats)} lists from the `wordfreq` package, version {version} (PyPI), `wordlist="best"`.
  wordfreq (by Robyn Speer and contributors) is Apache-2.0 code with data under CC BY-SA 4.0;
  these lists are derived from that data and are shared under CC BY-SA 4.0 as well.
{size}
- Built on {today} with:

  ```
  {command}
  ```

## Why the lists differ in length

Following Pomikálek's thesis (§2.9.9), the few hundred most frequent words of a language work
as well as a hand-made function-word list for jusText; 300 is about the size of the thesis'
default English list. jusText's thresholds, though, are on *stop-word density* — the share of a
paragraph's words that are in the list — and they were tuned on English. A highly inflected
language spreads its running text over many more word forms: the 300 most frequent Czech words
cover only about 44% of Czech text, against 56% for English, so ordinary Czech prose falls
below the English-tuned thresholds. Each list is therefore made long enough to cover the same
share of running text as the English one (Czech needs about 1,200 words, Finnish about 2,100,
Danish 170). The reference `justext` package's own lists vary in the same way (Czech 2,935
words, Finnish 6,813, Spanish 271). `--fixed` builds lists of exactly `--top` words instead.

## How the frequency lists were adapted

jusText counts stop words among whitespace-separated, lower-cased tokens, so
`tools/build_stoplists.py` keeps only tokens a whitespace tokeniser can produce:

- tokens with a digit or without any letter (numbers, punctuation) are dropped; letters,
  combining marks, ZWNJ/ZWJ and apostrophes/hyphens inside a word are allowed;
- words in another script than the language's (English `the` in the Russian list) are dropped;
- one-letter tokens are kept only where they are real words of the language (a curated table
  in the script: English `a`/`i`, Czech `v`/`s`/`z`/`k`/…, Spanish `y`/`o`/…); the others are
  abbreviations, list markers and pieces wordfreq splits off at apostrophes and hyphens
  (French `l'`, Romanian `s-a`) that never stand alone between spaces. Longer such pieces
  (`qu`, `jusqu`, `dell`) are dropped too;
- wordfreq case-folds: Greek final sigma is restored (`της`, not `τησ`); German words whose
  `ß` became `ss` also get the standard `ß` spelling from a curated table (the `ss` form is
  kept as the Swiss spelling);
- words with an apostrophe are listed with both `'` and `’`;
- `Serbian.txt` holds the Serbo-Croatian list in both Cyrillic and Latin script (wordfreq
  stores Serbian romanised), so it matches Serbian text in either script.

## Languages ({len(stats)})

`words`: taken from the frequency ranking; `lines`: in the file, with spelling variants;
`coverage`: share of running text (wordfreq's tokens) that the words account for.

| list | wordfreq code | words | lines | coverage | note |
|---|---|---|---|---|---|
{chr(10).join(rows)}

Not built from wordfreq: {skipped}.

## Languages from the justext package ({len(imported)})

For languages the language identifier returns that wordfreq has no data for, the lists come from
the reference `justext` package, version {justext_version} (PyPI): Jan Pomikálek's own stop lists,
the most frequent words of each language's Wikipedia (thesis §2.9.9), under the package's BSD
2-clause licence (`LICENSE-justext.rst` beside them). Only the tokens a whitespace tokeniser
produces as words are kept (`is_word` in `tools/build_stoplists.py`: tokens with punctuation or
digits attached are dropped); the package's lists have no frequency order, so these are sorted.

| list | code | words |
|---|---|---|
{imported_rows}
"""
    (out / "README.md").write_text(text, encoding="utf-8")


def compare_with_justext(out: Path, names: list[str]) -> None:
    """Print the overlap with the reference justext stop lists, where justext is installed."""
    try:
        import justext
    except ImportError:
        print("justext not installed: no comparison", file=sys.stderr)
        return
    available = set(justext.get_stoplists())
    for name in names:
        if name not in available:
            continue
        ours = set((out / f"{name}.txt").read_text(encoding="utf-8").split())
        theirs = {w.lower() for w in justext.get_stoplist(name)}
        common = ours & theirs
        print(
            f"{name:18s} ours {len(ours):4d}  justext {len(theirs):5d}  common {len(common):4d}"
            f"  ({100 * len(common) / len(ours):.0f}% of ours,"
            f" {100 * len(common) / len(theirs):.0f}% of justext's)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Build resources/stoplists/<Language>.txt from wordfreq's most frequent "
        "words, and from the justext package's lists for the languages wordfreq lacks.",
        epilog="By default every list covers as much running text as the --top most frequent "
        "English words do (see resources/stoplists/README.md). Needs `pip install wordfreq` (a "
        "build-time tool only, not a library dependency).",
    )
    parser.add_argument(
        "--top",
        type=int,
        default=DEFAULT_TOP,
        metavar="N",
        help=f"size of the English list, which sets the coverage every other list "
        f"matches; with --fixed, the size of every list (default {DEFAULT_TOP})",
    )
    parser.add_argument(
        "--fixed",
        action="store_true",
        help="take exactly --top words for every language instead of calibrating",
    )
    parser.add_argument(
        "--max-words",
        type=int,
        default=DEFAULT_MAX_WORDS,
        metavar="M",
        help=f"cap on a calibrated list's length (default {DEFAULT_MAX_WORDS})",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        metavar="DIR",
        help="output directory (default resources/stoplists)",
    )
    parser.add_argument(
        "--languages",
        nargs="+",
        metavar="NAME",
        help="build only these lists (e.g. English Czech); no README is written",
    )
    parser.add_argument(
        "--compare",
        nargs="*",
        metavar="NAME",
        default=["English", "German", "Czech", "French", "Spanish"],
        help="lists to compare with the justext package's, if installed",
    )
    args = parser.parse_args(argv)
    if args.top < 1 or args.max_words < args.top:
        parser.error("need 1 <= --top <= --max-words")
    try:
        import justext  # noqa: F401
        import wordfreq  # noqa: F401
    except ImportError:
        parser.error("wordfreq and justext are needed: pip install -e '.[tools]'")

    all_names = sorted(list(LANGUAGES.values()) + list(DERIVED) + list(JUSTEXT_LANGUAGES.values()))
    wanted = args.languages or all_names
    unknown = sorted(set(wanted) - set(all_names))
    if unknown:
        parser.error(f"unknown list(s) {', '.join(unknown)}; known: {', '.join(all_names)}")

    check_tables()
    target = None if args.fixed else select_words(REFERENCE, args.top, None, args.top)[1]
    args.out.mkdir(parents=True, exist_ok=True)
    stats: dict[str, tuple[str, int, int, float]] = {}
    chosen: dict[str, tuple[list[str], float]] = {}
    for code, name in LANGUAGES.items():
        needed = name in wanted or any(
            src == code and d in wanted for d, (src, _) in DERIVED.items()
        )
        if not needed:
            continue
        if code == REFERENCE:
            chosen[code] = select_words(code, args.top, None, args.top)
        else:
            chosen[code] = select_words(code, args.top, target, args.max_words)
        if name in wanted:
            words, coverage = chosen[code]
            lines = build_list(code, words)
            write_list(args.out / f"{name}.txt", lines)
            stats[name] = (code, len(words), len(lines), coverage)
    imported: dict[str, tuple[str, int]] = {}
    for code, name in JUSTEXT_LANGUAGES.items():
        if args.languages and name not in args.languages:
            continue
        words = build_from_justext(name)
        write_list(args.out / f"{name}.txt", words)
        imported[name] = (code, len(words))
    if not args.languages:
        license_file = (
            Path(importlib.metadata.distribution("justext").locate_file(""))
            / f"justext-{importlib.metadata.version('justext')}.dist-info"
            / "LICENSE.rst"
        )
        (args.out / "LICENSE-justext.rst").write_text(
            license_file.read_text(encoding="utf-8"), encoding="utf-8"
        )
    if "Serbian" in wanted:
        words, coverage = chosen["sh"]
        lines = build_serbian(words)
        write_list(args.out / "Serbian.txt", lines)
        stats["Serbian"] = ("sh", len(words), len(lines), coverage)
    for name, (_code, base, lines, coverage) in sorted(stats.items()):
        print(
            f"{name + '.txt':24s} {base:5d} words {lines:5d} lines  coverage {100 * coverage:5.1f}%"
        )

    if not args.languages:
        shown = ["python", "tools/build_stoplists.py"]
        if args.top != DEFAULT_TOP:
            shown += ["--top", str(args.top)]
        if args.fixed:
            shown += ["--fixed"]
        if args.max_words != DEFAULT_MAX_WORDS:
            shown += ["--max-words", str(args.max_words)]
        try:
            out_shown = args.out.resolve().relative_to(REPO)
        except ValueError:
            out_shown = args.out
        if out_shown != DEFAULT_OUT.relative_to(REPO):
            shown += ["--out", str(out_shown)]
        write_readme(args.out, args, stats, target, shlex.join(shown), imported)
        print(f"{len(stats)} lists and README.md written to {args.out}")
    if args.compare:
        compare_with_justext(args.out, [n for n in args.compare if n in stats])
    return 0


if __name__ == "__main__":
    sys.exit(main())
