"""The quality stage's parameters (config section `quality`) and its rules: which signal each
reads, and how it compares it with its threshold."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from corpusbuilder.config import dataclass_values

RULE_SETS = ("gopher", "c4", "fineweb")


class _FromConfig:
    @classmethod
    def from_config(cls, section: dict):
        return cls(**dataclass_values(cls, section))


@dataclass(frozen=True)
class GopherParams(_FromConfig):
    """Gopher's thresholds (Rae et al. 2021, App. A and Table A1; datatrove's defaults)."""

    min_words: int = 50
    max_words: int = 100_000
    min_mean_word_length: float = 3
    max_mean_word_length: float = 10
    max_symbol_word_ratio: float = 0.1
    max_bullet_lines: float = 0.9
    max_ellipsis_lines: float = 0.3
    min_alpha_words: float = 0.8
    min_stop_words: int = 2
    max_dup_line_frac: float = 0.3
    max_dup_para_frac: float = 0.3
    max_dup_line_char_frac: float = 0.2
    max_dup_para_char_frac: float = 0.2
    max_top_2gram_char_frac: float = 0.2
    max_top_3gram_char_frac: float = 0.18
    max_top_4gram_char_frac: float = 0.16
    max_dup_5gram_char_frac: float = 0.15
    max_dup_6gram_char_frac: float = 0.14
    max_dup_7gram_char_frac: float = 0.13
    max_dup_8gram_char_frac: float = 0.12
    max_dup_9gram_char_frac: float = 0.11
    max_dup_10gram_char_frac: float = 0.10


@dataclass(frozen=True)
class C4Params(_FromConfig):
    """C4's page and line filters (Raffel et al. 2020, §2.2; datatrove's C4QualityFilter)."""

    min_sentences: int = 5
    lorem_ipsum: bool = True  # drop a page with "lorem ipsum"
    curly_bracket: bool = True  # drop a page with "{"
    min_words_per_line: int = 3  # a line with fewer is removed
    max_word_length: int = 1000  # a line with a longer word is removed
    javascript: bool = True  # a line naming JavaScript is removed
    policy: bool = True  # a line about cookies or terms of use is removed
    remove_citations: bool = True  # "[1]", "[edit]", "[citation needed]" go before the tests


@dataclass(frozen=True)
class FineWebParams(_FromConfig):
    """FineWeb's own filters (Penedo et al. 2024, §3.3; datatrove's FineWebQualityFilter)."""

    line_punct_ratio: float = 0.12  # minimum share of lines ending in terminal punctuation
    short_line_ratio: float = 0.67  # maximum share of short lines
    short_line_length: int = 30  # a line of at most this many characters is short
    char_dup_ratio: float = 0.01  # maximum share of characters in repeated lines
    newline_ratio: float = 0.3  # maximum newlines per word


@dataclass(frozen=True)
class QualityParams:
    """The quality stage (config section `quality`): the rule sets whose failures drop a
    document (``filter``; none by default, so the thesis' corpus is unchanged) and each set's
    thresholds."""

    filter: tuple[str, ...] = ()
    gopher: GopherParams = field(default_factory=GopherParams)
    c4: C4Params = field(default_factory=C4Params)
    fineweb: FineWebParams = field(default_factory=FineWebParams)

    @classmethod
    def from_config(cls, section: dict) -> QualityParams:
        return cls(
            filter=tuple(section.get("filter", ())),
            gopher=GopherParams.from_config(section.get("gopher", {})),
            c4=C4Params.from_config(section.get("c4", {})),
            fineweb=FineWebParams.from_config(section.get("fineweb", {})),
        )


@dataclass(frozen=True)
class Rule:
    """``<rule_set>.<name>``: the document fails when ``signal`` is below (``min``) or above
    (``max``) the threshold config key ``name``, or (``flag``, a switch) is not zero."""

    rule_set: str
    name: str
    signal: str
    kind: str

    @property
    def label(self) -> str:
        return f"{self.rule_set}.{self.name}"


def _gopher_rules() -> list[Rule]:
    signal_of = {"min_words": "words", "max_words": "words"}
    rules = []
    for key in (f.name for f in fields(GopherParams)):
        kind, signal = key.split("_", 1)
        rules.append(Rule("gopher", key, signal_of.get(key, signal), kind))
    return rules


RULES: tuple[Rule, ...] = (
    *_gopher_rules(),
    Rule("c4", "min_sentences", "c4_sentences", "min"),
    Rule("c4", "lorem_ipsum", "c4_lorem_ipsum", "flag"),
    Rule("c4", "curly_bracket", "c4_curly_bracket", "flag"),
    Rule("fineweb", "line_punct_ratio", "fineweb_line_punct_ratio", "min"),
    Rule("fineweb", "short_line_ratio", "fineweb_short_line_ratio", "max"),
    Rule("fineweb", "char_dup_ratio", "fineweb_char_dup_ratio", "max"),
    Rule("fineweb", "newline_ratio", "fineweb_newline_ratio", "max"),
)
