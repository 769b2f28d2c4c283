"""The extractors the evaluation compares, each a function of one prepared page.

A page is decoded, parsed and cut into blocks once per reading (:func:`prepare_page`, with the
stop list of its guessed language as the extract stage picks it): jusText with every preset, the
keep-everything baseline and DefaultExtractor classify the same jusText blocks, so their
differences are the classifiers' alone; the learned `best` classifier reads the blocks the extract
stage gives it, which also break at HTML5's block-level elements. BTE tokenises the parsed tree
itself (§2.6.1). External references
(the ``justext`` package, trafilatura, resiliparse, readability-lxml, boilerpy3) get the decoded
HTML and are offered only when importable; they are never dependencies of the library.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from corpusbuilder.common import stoplists
from corpusbuilder.contracts.tables import GOOD
from corpusbuilder.extraction import peers
from corpusbuilder.extraction.classifier import page_title
from corpusbuilder.extraction.extract import (
    ExtractParams,
    UndecodableError,
    decode_html,
    guess_page_language,
    segment_page,
)
from corpusbuilder.extraction.justext import PRESETS, JustextParams, classify
from corpusbuilder.extraction.model import BlockModel, classify_page, load_model
from corpusbuilder.extraction.segmentation import Block, parse_html

from .baselines import bte_extract, classify_default_extractor
from .gold import GoldPage
from .metrics import fragment_lengths

log = logging.getLogger(__name__)


@dataclass
class PreparedPage:
    """A page as every extractor starts from it."""

    html: str  # decoded
    root: object  # lxml element, or None for an empty page
    blocks: list[Block]
    stoplist: str | None  # the stop list the blocks were counted with (None: none named)
    language: str = ""  # the page's guessed language ("" when not guessed)
    params: ExtractParams = field(default_factory=ExtractParams)  # the settings it was read with


@dataclass(frozen=True)
class Extraction:
    """An extractor's output text; fragment lengths when the extractor keeps or drops blocks."""

    text: str
    fragments: list[int] | None = None


def decode_page(
    body: bytes, http_charset: str | None, params: ExtractParams = ExtractParams()
) -> str:
    """The page's text, decoded as the extract stage decodes it (raises UndecodableError)."""
    return decode_html(body, http_charset, params.max_control_share)[0]


def decoded_html(page: GoldPage, params: ExtractParams = ExtractParams()) -> str:
    """A gold page's HTML as the extract stage decodes it; "" for an undecodable page, which every
    extractor is then scored on as empty output."""
    try:
        return decode_page(page.html, page.http_charset, params)
    except UndecodableError as error:
        log.warning(
            "%s %s: undecodable (%s), scored as empty output", page.dataset, page.page_id, error
        )
        return ""


# The two ways a page is cut into blocks (justext.segment_blocks): jusText's own (§2.7.1, the
# package's blocks), and the learned classifier's (structure hints, and blocks that break at
# HTML5's block-level elements too).
JUSTEXT_BLOCKS, LEARNED_BLOCKS = "justext", "learned"
READINGS = (JUSTEXT_BLOCKS, LEARNED_BLOCKS)


def prepare_page(
    html: str, params: ExtractParams = ExtractParams(), reading: str = JUSTEXT_BLOCKS
) -> PreparedPage:
    """Parse, guess the language, pick its stop list and segment into blocks (§2.7.1) as
    ``reading`` (JUSTEXT_BLOCKS or LEARNED_BLOCKS) cuts them."""
    if reading not in READINGS:
        raise ValueError(f"unknown reading {reading!r}: one of {', '.join(READINGS)}")
    root = parse_html(html)
    if root is None:
        return PreparedPage(html, None, [], "", params=params)
    language, _ = guess_page_language(root, params.language_sample_chars)
    name, blocks = segment_page(
        root, language, params.stoplist_fallback, structure_hints=reading == LEARNED_BLOCKS
    )
    return PreparedPage(html, root, blocks, name, language, params)


def extraction_of_blocks(texts: list[str], kept: list[bool]) -> Extraction:
    """Kept blocks one per line, fragments measured in characters (§2.9.10)."""
    return Extraction(
        "\n".join(text for text, keep in zip(texts, kept) if keep),
        fragment_lengths([len(text) for text in texts], kept),
    )


def justext_kept(blocks: list[Block], params: JustextParams) -> list[bool]:
    """jusText's verdict per block (Algorithms 2.2 and 2.3): True = good."""
    return [cls == GOOD for cls in classify(blocks, params)[1]]


def run_justext(params: JustextParams) -> Callable[[PreparedPage], Extraction]:
    def run(page: PreparedPage) -> Extraction:
        return extraction_of_blocks(
            [b.text for b in page.blocks], justext_kept(page.blocks, params)
        )

    return run


def run_learned(
    model: BlockModel | None = None, comments: bool = True
) -> Callable[[PreparedPage], Extraction]:
    """The `best` preset: a learned block classifier on the LEARNED_BLOCKS reading (None: the
    shipped model); a model of extract.peers runs its peers in the scope of ``comments``."""

    def run(page: PreparedPage) -> Extraction:
        classes = classify_page(
            page.blocks, page_title(page.root), page.html, model or load_model(), comments
        )
        return extraction_of_blocks([b.text for b in page.blocks], [cls == GOOD for cls in classes])

    return run


def run_keep_all(page: PreparedPage) -> Extraction:
    """The baseline that keeps every text block (Tables 2.5–2.9 "baseline")."""
    return extraction_of_blocks([b.text for b in page.blocks], [True] * len(page.blocks))


def run_default_extractor(page: PreparedPage) -> Extraction:
    """Algorithm 2.1 on jusText's blocks (DefExt_lxml of §2.9.6)."""
    kept = classify_default_extractor(
        [b.n_words for b in page.blocks], [b.link_density for b in page.blocks]
    )
    return extraction_of_blocks([b.text for b in page.blocks], kept)


def run_bte(page: PreparedPage) -> Extraction:
    """BTE's single span (§2.6.1): one fragment by construction."""
    text = bte_extract(page.root)
    return Extraction(text, [len(text)] if text else [])


@functools.cache
def _package_stoplists() -> dict[str, frozenset[str]]:
    """The ``justext`` package's stop lists by name, read once (it reads a file per call)."""
    import justext

    return {name: justext.get_stoplist(name) for name in justext.get_stoplists()}


# Languages the extract stage counts with a shared list where the package has one of their own.
_PACKAGE_OWN_LISTS = {"hr": "Croatian", "bs": "Bosnian"}


def package_stoplist_name(html: str, params: ExtractParams = ExtractParams()) -> str:
    """The ``justext`` package's stop list for a page, as its users pick one: the list of the
    page's language, guessed as the extract stage guesses it, when the package has that list;
    else its English list, the one its documentation uses (the package has no fallback)."""
    root = parse_html(html)
    language = (
        guess_page_language(root, params.language_sample_chars)[0] if root is not None else ""
    )
    name = _PACKAGE_OWN_LISTS.get(language) or (
        stoplists.stoplist_name_for(language) if language else None
    )
    return name if name in _package_stoplists() else "English"


def run_justext_package(page: PreparedPage) -> Extraction:
    """The reference ``justext`` package (3.0.2) with its defaults and the stop list of the page's
    language (:func:`package_stoplist_name`; its time includes that parse and guess, which its
    users need too)."""
    import justext

    stoplist = _package_stoplists()[package_stoplist_name(page.html, page.params)]
    paragraphs = justext.justext(page.html, stoplist)
    return extraction_of_blocks(
        [p.text for p in paragraphs], [not p.is_boilerplate for p in paragraphs]
    )


def run_trafilatura(page: PreparedPage) -> Extraction:
    """trafilatura's ``extract`` with its defaults (comments and tables included): its users'
    choice for all running text, the scope ``extract.comments: true``."""
    return Extraction(peers.trafilatura_text(page.html, comments=True))


def run_trafilatura_article(page: PreparedPage) -> Extraction:
    """trafilatura's ``extract`` with ``include_comments=False``: its users' choice for the
    article alone, the scope ``extract.comments: false``."""
    return Extraction(peers.trafilatura_text(page.html, comments=False))


def run_resiliparse(page: PreparedPage) -> Extraction:
    """resiliparse's main-content plain text."""
    return Extraction(peers.resiliparse_text(page.html))


def run_readability(page: PreparedPage) -> Extraction:
    """readability-lxml's article HTML, reduced to its text one block per line."""
    return Extraction(peers.readability_text(page.html))


def run_boilerpy3(page: PreparedPage) -> Extraction:
    """boilerpy3's port of boilerpipe's ArticleExtractor (Kohlschütter et al.)."""
    from boilerpy3 import extractors

    return Extraction(extractors.ArticleExtractor(raise_on_failure=False).get_content(page.html))


@dataclass(frozen=True)
class Extractor:
    name: str
    run: Callable[[PreparedPage], Extraction]
    # the blocks it reads, prepare_page's parse, language guess and segmentation: JUSTEXT_BLOCKS
    # or LEARNED_BLOCKS; None for an extractor that reads the decoded HTML alone
    reading: str | None
    module: str | None = None  # an optional package the extractor needs


EXTRACTORS: dict[str, Extractor] = {
    "best": Extractor("best", run_learned(), LEARNED_BLOCKS),
    **{
        f"justext-{preset}": Extractor(f"justext-{preset}", run_justext(params), JUSTEXT_BLOCKS)
        for preset, params in PRESETS.items()
    },
    "keep-all": Extractor("keep-all", run_keep_all, JUSTEXT_BLOCKS),
    "bte": Extractor("bte", run_bte, JUSTEXT_BLOCKS),
    "defext-lxml": Extractor("defext-lxml", run_default_extractor, JUSTEXT_BLOCKS),
    "justext-package": Extractor("justext-package", run_justext_package, None, "justext"),
    "trafilatura": Extractor("trafilatura", run_trafilatura, None, "trafilatura"),
    "trafilatura-article": Extractor(
        "trafilatura-article", run_trafilatura_article, None, "trafilatura"
    ),
    "resiliparse": Extractor("resiliparse", run_resiliparse, None, "resiliparse"),
    "readability": Extractor("readability", run_readability, None, "readability"),
    "boilerpy3": Extractor("boilerpy3", run_boilerpy3, None, "boilerpy3"),
}


# The peers that compare with each scope of `extract.comments`, as their users run them: the
# article alone (readability and resiliparse's main content have no comment option), and all
# running text (trafilatura's default keeps comments; jusText keeps what reads as running text).
SCOPE_PEERS: dict[bool, tuple[str, ...]] = {
    False: ("trafilatura-article", "readability", "resiliparse"),
    True: ("trafilatura", "justext-default", "justext-package"),
}


def available(name: str) -> bool:
    """Whether the extractor can run here (its optional package, if any, is importable)."""
    module = EXTRACTORS[name].module
    return module is None or importlib.util.find_spec(module) is not None


def learned_with(model: BlockModel, name: str = "best", comments: bool = True) -> Extractor:
    """The `best` extractor with another model (a held-out one, in the evaluation)."""
    return Extractor(name, run_learned(model, comments), LEARNED_BLOCKS)


def justext_with(params: JustextParams, name: str = "justext") -> Extractor:
    """An ad-hoc jusText extractor (the sweep's one-threshold variations)."""
    return Extractor(name, run_justext(params), JUSTEXT_BLOCKS)
