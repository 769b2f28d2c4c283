"""Other extractors' verdicts as features of the `best` preset (``extract.peers``).

Not in the thesis. With ``extract.peers: resiliparse`` the learned classifier also reads, per
block, how much of it resiliparse's main content keeps; with ``all``, also trafilatura's
(``include_comments`` as the scope says) and readability-lxml's. Each feature is the share of the
block's words (`common.scripts` units) that sit in a word trigram of that extractor's output, the
alignment that labels the training blocks from gold text; a block under three words counts as
covered when its whole text appears in the output. The trees learn where to trust each peer.
Leave-one-source-out this gains about .005 mean F1 with resiliparse and .009–.011 with all three
(docs/extraction-scope.md).

The peers are optional packages (``pip install 'corpusbuilder[peers]'``), never dependencies of
the library, and they cost: resiliparse little, readability-lxml and trafilatura most of the
time of a page (``all`` runs at about a fifteenth of the `best` preset's speed).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from corpusbuilder.common.faults import JobFault
from corpusbuilder.common.scripts import unit_tokens

log = logging.getLogger(__name__)

# a model's features after classifier.FEATURE_NAMES: some of these, in this order
PEER_FEATURE_NAMES = ("in_trafilatura", "in_readability", "in_resiliparse")
# extract.peers: the peers each choice runs
PEER_CHOICES: dict[str, tuple[str, ...]] = {
    "none": (),
    "resiliparse": ("in_resiliparse",),
    "all": PEER_FEATURE_NAMES,
}
# the module each peer needs, and its name for pip
PEER_PACKAGES = {
    "in_trafilatura": ("trafilatura", "trafilatura"),
    "in_readability": ("readability", "readability-lxml"),
    "in_resiliparse": ("resiliparse", "resiliparse"),
}
LABEL_NGRAM = 3  # the trigrams that align a block with a text (and training's labels with gold)


def trigrams(words: Sequence[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + LABEL_NGRAM]) for i in range(len(words) - LABEL_NGRAM + 1)}


def coverage(words: Sequence[str], grams: set[tuple[str, ...]]) -> float:
    """Share of ``words`` inside at least one trigram of ``grams``."""
    covered = np.zeros(len(words), dtype=bool)
    for i in range(len(words) - LABEL_NGRAM + 1):
        if tuple(words[i : i + LABEL_NGRAM]) in grams:
            covered[i : i + LABEL_NGRAM] = True
    return float(covered.mean())


def contained(words: Sequence[str], spaced_text: str) -> bool:
    """Whether ``words`` appear in a row in ``spaced_text`` (words joined by single spaces, with a
    space at each end)."""
    return f" {' '.join(words)} " in spaced_text


_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F))


def _token_hashes(words: Sequence[str]) -> np.ndarray:
    return np.fromiter(map(hash, words), dtype=np.int64, count=len(words)).view(np.uint64)


def _bigram_hashes(hashes: np.ndarray) -> np.ndarray:
    """One 64-bit hash per bigram start: the two token hashes mixed (wrapping uint64)."""
    if len(hashes) < 2:
        return np.zeros(0, dtype=np.uint64)
    return hashes[:-1] * _MIX[0] ^ hashes[1:]


def _trigram_hashes(hashes: np.ndarray) -> np.ndarray:
    """One 64-bit hash per trigram start."""
    if len(hashes) < LABEL_NGRAM:
        return np.zeros(0, dtype=np.uint64)
    return hashes[:-2] * _MIX[1] ^ _bigram_hashes(hashes[1:])


@dataclass(frozen=True)
class BlockTokens:
    """A page's blocks as one array of token hashes; what every peer's coverage reads of them is
    derived once, whichever peers are run."""

    hashes: np.ndarray  # uint64, every block's tokens (script units, lower-cased) in page order
    bounds: np.ndarray  # block i's tokens are hashes[bounds[i] : bounds[i + 1]]

    @cached_property
    def lengths(self) -> np.ndarray:
        return np.diff(self.bounds)

    @cached_property
    def trigrams(self) -> np.ndarray:
        """The hash of the trigram starting at each token but the last two (one that spans two
        blocks too: :attr:`in_block` says which)."""
        return _trigram_hashes(self.hashes)

    @cached_property
    def in_block(self) -> np.ndarray:
        """Whether the trigram starting at each token lies inside its block (its first and last
        token share the block)."""
        owner = np.repeat(np.arange(len(self.lengths)), self.lengths)
        return owner[:-2] == owner[2:]

    @cached_property
    def short_pairs(self) -> np.ndarray:
        """The bigram hash of each two-token block."""
        return _bigram_hashes(self.hashes)[self.bounds[:-1][self.lengths == 2]]


def block_tokens(block_texts: Sequence[str]) -> BlockTokens:
    words = [unit_tokens(text.lower()) for text in block_texts]
    return BlockTokens(
        _token_hashes([word for mine in words for word in mine]),
        np.concatenate([[0], np.cumsum([len(mine) for mine in words])]).astype(np.intp),
    )


def text_coverage(blocks: BlockTokens | Sequence[str], text: str) -> np.ndarray:
    """Per block, the share of its tokens inside a trigram of ``text`` (see the module
    docstring): the figure :func:`coverage` over :func:`trigrams` gives (:func:`contained` for a
    block of one or two tokens; 0 for a block without any), in numpy over token hashes."""
    if not isinstance(blocks, BlockTokens):
        blocks = block_tokens(blocks)
    theirs = _token_hashes(unit_tokens(text.lower()))
    count = len(blocks.hashes)
    hit = np.isin(blocks.trigrams, _trigram_hashes(theirs)) & blocks.in_block
    covered = np.zeros(count, dtype=bool)
    for shift in range(LABEL_NGRAM):
        covered[shift : count - LABEL_NGRAM + 1 + shift] |= hit
    sums = np.concatenate([[0], np.cumsum(covered)])
    lengths, starts = blocks.lengths, blocks.bounds[:-1]
    shares = np.zeros(len(lengths), dtype=np.float32)
    long = lengths >= LABEL_NGRAM
    shares[long] = (sums[blocks.bounds[1:]] - sums[starts])[long] / lengths[long]
    # a block of one or two tokens is covered where the text has them in a row
    shares[lengths == 1] = np.isin(blocks.hashes[starts[lengths == 1]], theirs)
    shares[lengths == 2] = np.isin(blocks.short_pairs, _bigram_hashes(theirs))
    return shares


def require_peers(peers: Sequence[str]) -> None:
    """Raise ImportError naming the packages when a peer's is missing."""
    import importlib.util

    missing = [
        pip
        for module, pip in (PEER_PACKAGES[p] for p in peers)
        if not importlib.util.find_spec(module)
    ]
    if missing:
        raise ImportError(f"needs {', '.join(missing)}: pip install 'corpusbuilder[peers]'")


def trafilatura_text(html: str, comments: bool) -> str:
    import trafilatura

    return trafilatura.extract(html, include_comments=comments) or ""


def _readability_article(html: str):
    """readability-lxml's article, parsed (None when it is empty)."""
    from readability import Document

    from corpusbuilder.extraction.segmentation import parse_html

    # it logs a traceback for each page it cannot parse, then raises, which peer_texts handles
    logging.getLogger("readability.readability").setLevel(logging.CRITICAL)
    return parse_html(Document(html).summary(html_partial=True))


def readability_text(html: str) -> str:
    """readability-lxml's article as its users read it, one block per line: its blocks as jusText
    cuts a page (§2.7.1), so that a word an inline tag splits (``e<i>x</i>ample``,
    ``<a>Radon</a>-Situation``) stays one word. What the evaluation scores."""
    from corpusbuilder.extraction.segmentation import segment_blocks

    return "\n".join(
        block.text
        for block in segment_blocks(_readability_article(html), frozenset(), structure_hints=False)
    )


def readability_text_nodes(html: str) -> str:
    """readability-lxml's article, one text node per line: what the ``in_readability`` feature
    reads. A trigram across an inline tag, a link's edge most often, then counts as not in
    readability's output, and the feature is better for it: leave-one-source-out with all three
    peers, .9503 against .9476 from :func:`readability_text` (article scope; with comments .9473
    against .9450; docs/extraction-scope.md, variant 29)."""
    root = _readability_article(html)
    if root is None:
        return ""
    return "\n".join(" ".join(t.split()) for t in root.itertext() if t.strip())


def resiliparse_text(html: str) -> str:
    from resiliparse.extract.html2text import extract_plain_text

    return extract_plain_text(html, main_content=True)


# A peer that raises on a page does so rarely (readability-lxml on 1 of 720 gold pages, the others
# on none; 2026-11-28): failing on every one of this many pages is its installation's fault.
ALWAYS_FAILED_PAGES = 5


@dataclass
class PeerRuns:
    """How many pages the peers ran on, and how many of them each peer failed on (feature names):
    what the extract stage, the training blocks and the self-training sample report, since such a
    page is used all the same."""

    pages: int = 0
    failed: dict[str, int] = field(default_factory=dict)
    first_error: dict[str, str] = field(default_factory=dict)  # what each raised first, for the log

    def always_failed(self) -> list[str]:
        """The peers that failed on every page, when that is at least ALWAYS_FAILED_PAGES."""
        if self.pages < ALWAYS_FAILED_PAGES:
            return []
        return [peer for peer, count in self.failed.items() if count == self.pages]

    def check(self, where: str) -> None:
        """Warn of each peer that failed on some of ``where``'s pages; raise JobFault when one
        failed on every page: a broken peer would leave its column all zeros, with exit 0."""
        broken = self.always_failed()
        for peer, count in sorted(self.failed.items()):
            if peer in broken:
                continue  # the fault below says it
            log.warning(
                "%s: extract.peers: %s failed on %d of %d pages, read as keeping nothing of them "
                "(first: %s)",
                where,
                peer,
                count,
                self.pages,
                self.first_error[peer],
            )
        if broken:
            errors = "; ".join(f"{peer}: {self.first_error[peer]}" for peer in broken)
            raise JobFault(
                f"{where}: extract.peers: {', '.join(broken)} failed on every one of {self.pages} "
                f"pages, a fault of the installation, not of the pages ({errors})"
            )


def peer_texts(
    html: str,
    comments: bool,
    peers: Sequence[str] = PEER_FEATURE_NAMES,
    runs: PeerRuns | None = None,
) -> list[str]:
    """The output of each of ``peers`` (feature names) for a page, counted into ``runs``. A peer
    that fails on a page (each raises on some malformed HTML) counts as keeping nothing of it; a
    missing package, memory or I/O error propagates, as the extract stage's other faults of the
    environment do."""
    extractors = {
        "in_trafilatura": lambda: trafilatura_text(html, comments),
        "in_readability": lambda: readability_text_nodes(html),
        "in_resiliparse": lambda: resiliparse_text(html),
    }
    texts = []
    for peer in peers:
        try:
            texts.append(extractors[peer]())
        except (MemoryError, OSError, ImportError):
            raise  # the environment's fault, not the page's: it fails the job
        except Exception as error:  # noqa: BLE001 - third-party code on one page's HTML
            log.debug("%s failed on a page, read as keeping nothing: %r", peer, error)
            texts.append("")
            if runs is not None:
                runs.failed[peer] = runs.failed.get(peer, 0) + 1
                runs.first_error.setdefault(peer, repr(error)[:200])
    if runs is not None:
        runs.pages += 1
    return texts


def peer_features(block_texts: Sequence[str], texts: Sequence[str]) -> np.ndarray:
    """(blocks × peers) float32: each block's coverage by each peer's output
    (:func:`peer_texts`)."""
    if not block_texts or not texts:
        return np.zeros((len(block_texts), len(texts)), dtype=np.float32)
    blocks = block_tokens(block_texts)
    return np.column_stack([text_coverage(blocks, text) for text in texts])
