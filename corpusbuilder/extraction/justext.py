"""jusText: classify a page's blocks as main content or boilerplate (thesis §2.7).

The blocks come from `segmentation` (§2.7.1); each is classified from its own features (§2.7.2,
Algorithm 2.2, :func:`classify_context_free`) and then from its neighbours (§2.7.3, Algorithm
2.3, :func:`classify_context_sensitive`). :func:`justext` runs the whole of §2.7 on one page.

Where the thesis text and the reference ``justext`` package 3.0.2 differ, this module follows the
package, because the package is what the published numbers and every downstream user measure:
lengths are counted in characters (``length_unit="chars"``), thresholds compare with ``>=``, a
block holding ``©`` or lying inside ``select`` is bad, and short headings before good text are
promoted.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial

from corpusbuilder.contracts.tables import BAD, DUPLICATE, GOOD, NEAR_GOOD, SHORT
from corpusbuilder.extraction.segmentation import Block, parse_html, segment_blocks

try:  # the classes compiled, built with the package where a C compiler was at hand (setup.py)
    # compiled from _classes.pyx at build time: mypy sees no module (and no stub) for it
    from corpusbuilder.extraction import _classes  # type: ignore[attr-defined]
except (ImportError, ValueError):  # ValueError: a C struct of lxml changed size
    _classes = None


@dataclass(frozen=True)
class JustextParams:
    """jusText thresholds (thesis §2.7.2, Algorithm 2.2; defaults =
    reference `justext` package 3.0)."""

    length_low: int = 70  # characters (package) or words (thesis presets), see length_unit
    length_high: int = 200
    stopwords_low: float = 0.30
    stopwords_high: float = 0.32
    max_link_density: float = 0.2
    max_heading_distance: int = 200  # characters, reference package heading handling
    no_headings: bool = False
    length_unit: str = "chars"  # "chars" (package) | "words" (thesis Table 2.7 token counts)

    def __post_init__(self) -> None:
        if self.length_unit not in ("chars", "words"):
            raise ValueError(f"length_unit must be 'chars' or 'words', not {self.length_unit!r}")

    @classmethod
    def of_preset(cls, preset: str, overrides: dict) -> JustextParams:
        """A preset's thresholds (`PRESETS`) with the config's own (`extract.justext`); the
        learned preset, which has none of its own, takes the default ones. What
        `extract.ExtractParams.from_config` sets, for a job that reads no page (block dedup's)."""
        return replace(PRESETS.get(preset, PRESETS["default"]), **overrides)


# Thesis Table 2.7 gives LENGTH_LOW/HIGH as token counts; "default" is the package's setting.
# All are applied with the package's comparisons (see classify_context_free).
PRESETS: dict[str, JustextParams] = {
    "default": JustextParams(),
    "A": JustextParams(
        length_low=10, length_high=30, stopwords_low=0.30, stopwords_high=0.32, length_unit="words"
    ),
    "B": JustextParams(
        length_low=0, length_high=26, stopwords_low=0.30, stopwords_high=0.32, length_unit="words"
    ),
    "C": JustextParams(
        length_low=10, length_high=25, stopwords_low=0.25, stopwords_high=0.25, length_unit="words"
    ),
    "D": JustextParams(
        length_low=10, length_high=20, stopwords_low=0.20, stopwords_high=0.25, length_unit="words"
    ),
}


# --- §2.7.2 context-free classification --------------------------------------------------------


def classify_context_free(blocks: Sequence[Block], params: JustextParams) -> list[str]:
    """Algorithm 2.2 with the package's extra rules: © and <select> mark a block bad (§2.7.1).

    Length is characters or words per ``params.length_unit``; comparisons are the package's
    (``>=`` on stop-word density, ``>`` on link density and LENGTH_HIGH), and so are the features:
    link density over characters, stop-word density over lower-cased whitespace tokens (§2.7.2
    defines them over tokens and alphabetic words; docs/configuration.md says where it matters).
    """
    by_words = params.length_unit == "words"
    length_low = params.length_low
    length_high = params.length_high
    stopwords_low = params.stopwords_low
    stopwords_high = params.stopwords_high
    max_link_density = params.max_link_density
    classes = []
    for block in blocks:
        length = block.n_words if by_words else block.n_chars
        if block.link_density > max_link_density:
            cls = BAD
        elif "\xa9" in block.text or "&copy" in block.text:
            cls = BAD
        elif "select" in block.dom_path:
            cls = BAD
        elif length < length_low:
            cls = BAD if block.chars_in_links > 0 else SHORT
        elif block.stopword_density >= stopwords_high:
            cls = GOOD if length > length_high else NEAR_GOOD
        elif block.stopword_density >= stopwords_low:
            cls = NEAR_GOOD
        else:
            cls = BAD
        classes.append(cls)
    return classes


# --- §2.7.3 context-sensitive classification ---------------------------------------------------


# A page's classes coded one letter each (a duplicate acts as bad), so that Algorithm 2.3 works
# on runs of blocks found by regular expressions, with a Python call per run, not per block.
_CODES = {GOOD: "g", BAD: "b", SHORT: "s", NEAR_GOOD: "n", DUPLICATE: "b"}
_CLASSES = {"g": GOOD, "b": BAD}
_UNDECIDED = re.compile("[sn]+")  # runs of short and near-good blocks between good or bad ones
_NEAR_GOOD_RUN = re.compile("n+")


def _edges(codes: str, match: re.Match) -> tuple[str, str]:
    """The good-or-bad classes either side of a run; the document edges count as bad."""
    start, end = match.span()
    return codes[start - 1] if start else "b", codes[end] if end < len(codes) else "b"


def _resolve_short(codes: str) -> str:
    """Algorithm 2.3 for short blocks, all judged on the classes before any is resolved: in a run
    of short and near-good blocks, a short block takes the class both sides of the run agree on;
    between bad and good it is good only if a near-good block stands between it and the bad side
    (the nearest earlier, or later, block that is not short is then near-good)."""

    def run(match: re.Match) -> str:
        text = match.group()
        before, after = _edges(codes, match)
        if before == after:
            return text.replace("s", before)
        if before == "b":  # good after the run's first near-good block
            cut = text.find("n")
            cut = len(text) if cut < 0 else cut
            return text[:cut].replace("s", "b") + text[cut:].replace("s", "g")
        cut = text.rfind("n") + 1  # good before the run's last near-good block
        return text[:cut].replace("s", "g") + text[cut:].replace("s", "b")

    return _UNDECIDED.sub(run, codes)


def _resolve_near_good(codes: str) -> str:
    """Algorithm 2.3 for near-good blocks, left to right as the package does: a near-good block
    sees resolved short blocks and the near-good blocks before it already resolved, so a run of
    them is bad only between two bad blocks (the first is bad then, and so each after it)."""

    def run(match: re.Match) -> str:
        before, after = _edges(codes, match)
        return ("b" if before == after == "b" else "g") * len(match.group())

    return _NEAR_GOOD_RUN.sub(run, codes)


def _promote_headings(
    codes: str, base: str, lengths: list[int], headings: list[bool], max_distance: int
) -> str:
    """The package's heading rule: a heading that ended bad without being bad on its own becomes
    good when a good block follows within ``max_distance`` characters of text in between."""
    if not any(headings):
        return codes
    before = list(itertools.accumulate(lengths, initial=0))  # characters before each block
    promoted = list(codes)
    for i in itertools.compress(range(len(codes)), headings):
        if codes[i] == "b" and base[i] != "b":
            good = codes.find("g", i + 1)
            if good >= 0 and before[good] - before[i + 1] <= max_distance:
                promoted[i] = "g"
    return "".join(promoted)


def classify_context_sensitive(
    cf_classes: list[str], blocks: Sequence[Block], params: JustextParams
) -> list[str]:
    """Algorithm 2.3 in linear time, then the package's heading rule (§2.7.3).

    Short blocks take the class of their good-or-bad neighbours when both agree; between bad
    and good they are good only if a near-good block stands next to the bad side. Near-good
    blocks are bad only between two bad ones. The document edges count as bad. Finally short or
    near-good headings that ended bad become good if good text follows closely (unless
    ``params.no_headings``). Only ``n_chars`` and ``heading`` are read from ``blocks``.

    ``cf_classes`` may hold "duplicate": such a block acts exactly like a bad one and keeps
    "duplicate" as its output class.

    The package (3.0.2) also has a heading pass before Algorithm 2.3, but it reads classes not
    yet assigned and so never changes anything; it is left out to give the package's results.
    """
    return classify_context_sensitive_columns(
        cf_classes, [b.n_chars for b in blocks], [b.heading for b in blocks], params
    )


def classify_context_sensitive_columns(
    cf_classes: list[str], n_chars: list[int], heading: list[bool], params: JustextParams
) -> list[str]:
    """`classify_context_sensitive` for blocks given as columns of a
    blocks table (the two it reads)."""
    base = "".join(map(_CODES.__getitem__, cf_classes))
    codes = _resolve_near_good(_resolve_short(base))
    if not params.no_headings:
        codes = _promote_headings(codes, base, n_chars, heading, params.max_heading_distance)
    classes = list(map(_CLASSES.__getitem__, codes))
    if DUPLICATE in cf_classes:
        return [DUPLICATE if cf == DUPLICATE else cls for cf, cls in zip(cf_classes, classes)]
    return classes


def classify_after_removal(
    cf_classes: list[str],
    final_classes: list[str],
    removed: list[bool],
    n_chars: list[int],
    heading: list[bool],
    params: JustextParams,
    removed_as: str = BAD,
) -> list[str]:
    """A page's final classes once some of its blocks are removed — as duplicates (thesis §3.5.2,
    Fig. 3.5) or as site-level boilerplate: Algorithm 2.3 runs again with them acting as bad, and
    a block turns bad where the removal made it turn bad (a stub between removed blocks); what was
    bad stays bad. Removed blocks get ``removed_as``.

    The change is taken against Algorithm 2.3 on the same context-free classes without the
    removal, not against ``final_classes``: so the learned preset `best`, whose final classes are
    its own and whose context-free classes are jusText's, loses exactly the stubs the removal
    leaves, and a jusText preset gets Algorithm 2.3 with the removed blocks as bad."""
    before = classify_context_sensitive_columns(cf_classes, n_chars, heading, params)
    marked = [DUPLICATE if gone else cls for cls, gone in zip(cf_classes, removed)]
    after = classify_context_sensitive_columns(marked, n_chars, heading, params)
    return [
        removed_as if gone else BAD if final == BAD or (now == BAD and was != BAD) else final
        for gone, final, was, now in zip(removed, final_classes, before, after)
    ]


def reclassifier(params: JustextParams) -> Callable[..., list[str]]:
    """`classify_after_removal` with ``params`` bound: what block de-duplication re-runs on a page
    once its duplicates are known (`dedup.context.Reclassify`), handed to it by the rule script."""
    return partial(classify_after_removal, params=params)


def classify(blocks: Sequence[Block], params: JustextParams) -> tuple[list[str], list[str]]:
    """jusText's classification of a page's blocks (§2.7.2-2.7.3): the context-free classes of
    Algorithm 2.2, and the final classes Algorithm 2.3 resolves from them."""
    if _classes is not None:  # the same classes, compiled
        return _classes.justext_classes(blocks, params, (BAD, SHORT, NEAR_GOOD, GOOD))
    cf_classes = classify_context_free(blocks, params)
    return cf_classes, classify_context_sensitive(cf_classes, blocks, params)


def justext(
    html: str, stoplist: frozenset[str], params: JustextParams = PRESETS["default"]
) -> list[Block]:
    """The whole of §2.7 on one page: blocks with ``cf_class`` and ``final_class`` filled in."""
    blocks = segment_blocks(
        parse_html(html, close_runaway_title=False), stoplist, structure_hints=False
    )
    cf_classes, final_classes = classify(blocks, params)
    for block, cf_class, final_class in zip(blocks, cf_classes, final_classes):
        block.cf_class = cf_class
        block.final_class = final_class
    return blocks
