"""Baseline extractors of the thesis' comparison, reimplemented on lxml (§2.6.1, §2.6.4, §2.9.6).

* BTE (Finn et al., thesis §2.6.1): the page is a sequence of tokens, each a tag (B=1) or a word
  (B=0); the extract is the span [i, j] maximising
  T(i,j) = Σ_{n<i} B_n + Σ_{i≤n≤j} (1 − B_n) + Σ_{n>j} B_n.
  The tags outside the span equal all tags minus the tags inside it, so T(i,j) = (#tags on the
  page) + (#words − #tags inside [i, j]): maximising T is finding the maximum-sum contiguous
  subsequence with +1 per word and −1 per tag (:func:`max_scoring_span`, Kadane, linear time).
  As §2.9.6 notes, the best span always consists of whole text nodes, so the words of one text
  node are one token of weight +#words.
* boilerpipe DefaultExtractor (Algorithm 2.1, "NumWords/LinkDensity classifier"): a decision
  tree over the word count and link density of the current, previous and next block
  (:func:`classify_default_extractor`). The evaluation feeds it jusText's blocks (split at
  block-level tags, links kept inside blocks, as boilerpipe splits), with jusText's link density.
"""

from __future__ import annotations

from collections.abc import Sequence

from lxml import etree
from lxml.html.defs import empty_tags

from corpusbuilder.extraction.segmentation import PARAGRAPH_TAGS

# What every algorithm in the thesis' comparison drops before looking at the page (§2.8.2).
BTE_IGNORED_TAGS = frozenset({"head", "script", "style", "select"})


def max_scoring_span(weights: Sequence[int]) -> tuple[int, int] | None:
    """Inclusive bounds (i, j) of the contiguous run with the largest positive sum, or None.

    On ties the earliest span wins, and of equal spans starting there the shortest.
    """
    best, best_span = 0, None
    running, start = 0, 0
    for index, weight in enumerate(weights):
        if running <= 0:
            running, start = weight, index
        else:
            running += weight
        if running > best:
            best, best_span = running, (start, index)
    return best_span


def bte_tokens(root) -> list[tuple[int, str]]:
    """The page as BTE tokens: (−1, separator) per tag, (+#words, text) per text node.

    Start and end tags are one token each, a void element (<br>, <img>) one. The separator is
    the line break a block-level tag or <br> puts into the extracted text ("" for inline tags),
    so words on either side of a block boundary do not run together. Comments and the elements
    in :data:`BTE_IGNORED_TAGS` vanish with their content; the text after them stays.
    """
    tokens: list[tuple[int, str]] = []
    if root is None:
        return tokens

    def add_text(text: str | None) -> None:
        if text:
            tokens.append((len(text.split()), text))

    walker = etree.iterwalk(root, events=("start", "end", "comment", "pi"))
    for event, element in walker:
        if event in ("comment", "pi"):
            add_text(element.tail)
            continue
        tag = element.tag
        skipped = tag in BTE_IGNORED_TAGS
        separator = "\n" if tag in PARAGRAPH_TAGS or tag == "br" else ""
        if event == "start":
            if skipped:
                walker.skip_subtree()
                continue
            tokens.append((-1, separator))
            add_text(element.text)
        else:
            if not skipped and not (tag in empty_tags and len(element) == 0 and not element.text):
                tokens.append((-1, separator))
            if element is not root:
                add_text(element.tail)
    return tokens


def bte_extract(root) -> str:
    """BTE's extract of a parsed page: the text of the best-scoring token span (§2.6.1)."""
    tokens = bte_tokens(root)
    span = max_scoring_span([weight for weight, _ in tokens])
    if span is None:
        return ""
    first, last = span
    return "".join(text for _, text in tokens[first : last + 1]).strip()


def classify_default_extractor(
    num_words: Sequence[int], link_density: Sequence[float]
) -> list[bool]:
    """Algorithm 2.1 (boilerpipe DefaultExtractor's tree); True = content.

    The blocks before the first and after the last are empty (0 words, link density 0), as
    boilerpipe's document edges are.
    """
    count = len(num_words)
    content = []
    for i in range(count):
        curr_words, curr_density = num_words[i], link_density[i]
        prev_words = num_words[i - 1] if i > 0 else 0
        prev_density = link_density[i - 1] if i > 0 else 0.0
        next_words = num_words[i + 1] if i + 1 < count else 0
        if curr_density > 0.333333:
            content.append(False)
        elif prev_density <= 0.555556:
            content.append(curr_words > 16 or next_words > 15 or prev_words > 4)
        else:
            content.append(curr_words > 40 or next_words > 17)
    return content
