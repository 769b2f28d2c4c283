"""Stage `quality`: per corpus document, the quality signals of the pipelines corpus users run
today, and the rules of each that the document fails.

The thesis stops at boilerplate and duplicates; Gopher, C4 and FineWeb go on to score what is
left and drop the worst. Each signal here is computed as its paper states it and as datatrove
(HuggingFace's implementation of all three, whose verdicts tests/test_quality.py compares) reads
it, on the document's exported text (its blocks joined by blank lines):

- Gopher quality filters (Rae et al. 2021, App. A, "Quality filtering"): ``words`` (tokens with
  a character that is not punctuation), ``mean_word_length`` (of those), ``symbol_word_ratio``
  (``#`` or ellipses per token, the larger), ``bullet_lines`` and ``ellipsis_lines`` (share of
  lines starting with a bullet, ending in an ellipsis), ``alpha_words`` (share of tokens with a
  letter), ``stop_words`` (distinct stop words of the document's language);
- Gopher repetition filters (App. A, Table A1): ``dup_line_frac`` / ``dup_para_frac`` (lines,
  paragraphs that repeat an earlier one) and their ``_char_frac`` (their characters over the
  text's), ``top_{2,3,4}gram_char_frac`` (characters of the most frequent n-gram, all its
  occurrences), ``dup_{5..10}gram_char_frac`` (characters in n-grams seen before);
- C4 (Raffel et al. 2020, §2.2 "Colossal Clean Crawled Corpus"): ``c4_punct_lines`` (share of
  lines ending in terminal punctuation), ``c4_sentences`` (in the lines C4 keeps),
  ``c4_lorem_ipsum`` and ``c4_curly_bracket`` (a kept line has one), ``c4_javascript_lines`` and
  ``c4_policy_lines`` (lines C4 removes for naming JavaScript or a cookie / terms policy);
- FineWeb (Penedo et al. 2024, §3.3 "Developing additional heuristic filters"):
  ``fineweb_line_punct_ratio`` (lines ending in terminal punctuation), ``fineweb_short_line_ratio``
  (lines of at most 30 characters), ``fineweb_char_dup_ratio`` (characters of repeated lines over
  the text's, newlines left out), ``fineweb_newline_ratio`` (newlines per token).

Words are the tokens of the project's tokeniser (`corpusbuilder.tokenise`, thesis §3.6), which
splits punctuation off words as datatrove's (spaCy's) does, but keeps ``don't`` and ``re-use``
whole. In scripts written without spaces (Chinese, Japanese, Thai, Lao, Khmer, Myanmar) every
character is a token, so a "word" is a character there: ``words`` counts characters, and
``mean_word_length`` is about 1, below Gopher's minimum of 3 — Gopher's word rules (and C4's
three words a line) were set for English and fail every such document; `quality.filter` should
not hold the gopher set for such a corpus. Stop words come from the project's stop lists for the
document's language (`corpusbuilder.common.stoplists`), compared lower-cased; a language without
a list has none, and fails ``gopher.min_stop_words``.

C4 drops lines as well as pages; here no text is changed: the lines C4 would remove count in
its signals, and only its page-level rules (``c4.min_sentences``, ``c4.lorem_ipsum``,
``c4.curly_bracket``) are rules. A rule is named ``<set>.<config key of its threshold>``.

The package: `params` (config, rules), `words` (the word cut), `signals` (per document, and a
shard's documents at once), `ngrams` (the n-gram signals of a shard at once), `filters`
(verdicts, the stage's table), `_cut`, `_lines` and `_ngrams` (the word cut, line tests and
n-gram signals compiled, built by setup.py; the modules above are their reference and fallback).
"""

from corpusbuilder.quality.filters import quality_table, rule_failures, score_shard
from corpusbuilder.quality.params import (
    RULE_SETS,
    RULES,
    C4Params,
    FineWebParams,
    GopherParams,
    QualityParams,
    Rule,
)
from corpusbuilder.quality.signals import (
    document_signals,
    duplicate_ngram_chars,
    ngram_hashes,
    top_ngram_chars,
)
from corpusbuilder.quality.words import TokenTypes, web_words

__all__ = [
    "RULES",
    "RULE_SETS",
    "C4Params",
    "FineWebParams",
    "GopherParams",
    "QualityParams",
    "Rule",
    "TokenTypes",
    "document_signals",
    "duplicate_ngram_chars",
    "ngram_hashes",
    "quality_table",
    "rule_failures",
    "score_shard",
    "top_ngram_chars",
    "web_words",
]
