"""The Python API: a page or a WARC cleaned as the workflow cleans it, without Snakemake.

`clean_html` is the first line of use (``corpusbuilder.clean_html(html)``, the kept text);
`clean_html_paragraphs` gives every block with jusText's verdicts, as ``justext.justext()``
gives its paragraphs; `clean_html_page` adds what was decided about the page as a whole
(language, stop list, charset, and its `Metadata`: title, author, date published, site name,
canonical URL); `iter_documents` yields the documents the extract stage keeps of
one WARC. All of them run the extract stage's own code (`corpusbuilder.extraction.extract`) with
the settings of a config (the workflow's ``config/config.yaml`` format, the schema's defaults
where it is silent), and the `corpusbuilder` command calls them.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from corpusbuilder.common import stoplists
from corpusbuilder.config import ConfigError, load_config, load_schema, validate_config
from corpusbuilder.contracts.tables import is_kept_block
from corpusbuilder.contracts.text import one_line, page_text
from corpusbuilder.download.sources import shard_name
from corpusbuilder.download.transfer import looks_like_warc
from corpusbuilder.extraction.extract import (
    BEST_PRESET,
    CleanedPage,
    ExtractParams,
    ShardSummary,
    block_rows,
    check_setup,
    clean_page,
    cleaned_records,
)
from corpusbuilder.extraction.justext import PRESETS
from corpusbuilder.extraction.metadata import Metadata
from corpusbuilder.extraction.site_boilerplate import mark_blocks

if TYPE_CHECKING:
    pass

#: A config: a YAML file in the workflow's format, the same as a mapping, or None (the
#: schema's defaults). Only its `extract` section is read here.
ConfigSource = str | Path | Mapping[str, Any] | None

AUTO = "auto"


@dataclass(frozen=True)
class Paragraph:
    """One block of a page (thesis §2.7.1) with the features jusText classifies it by (§2.7.2)
    and its verdicts: `cf_class` the context-free class (bad, short, near-good, good) and
    `final_class` the class after the context-sensitive pass (§2.7.3) or the learned classifier."""

    text: str  # white space inside the block one space
    kept: bool  # final_class is "good"
    cf_class: str
    final_class: str
    heading: bool  # inside h1-h6
    xpath: str  # "/html[1]/body[1]/div[2]/p[1]"
    dom_path: str  # "html.body.div.p"
    n_chars: int
    n_words: int
    n_stopwords: int
    link_density: float  # share of the block's characters inside <a>
    stopword_density: float  # share of its words in the page's stop list


@dataclass(frozen=True)
class Page:
    """A page cleaned: its blocks in page order and what was decided for the page as a whole."""

    paragraphs: tuple[Paragraph, ...]
    language: str  # ISO 639-1 code guessed from the page's text; "" when a stop list was given
    language_probability: float
    stoplist: (
        str | None
    )  # the stop list the blocks were counted with ("page": the page's own words)
    charset: str
    charset_source: str  # bom, http, meta, utf8-valid, utf8-lenient, detected; str: given as text
    metadata: Metadata  # what the page says about itself: title, author, published, ...

    @property
    def text(self) -> str:
        """The kept blocks, a blank line between two."""
        return page_text(p.text for p in self.paragraphs if p.kept)


@dataclass(frozen=True)
class Provenance:
    """Where a document comes from and how it was cleaned."""

    warc: str  # the WARC's name as the workflow names it (file name without .warc.gz)
    record_index: int  # the record's position in its WARC, from 0
    offset: int  # the record's byte offset in the WARC file
    record_id: str  # WARC-Record-ID
    date: str  # WARC-Date: when the page was fetched
    charset: str
    preset: str  # the jusText preset (default, A-D) or best


@dataclass(frozen=True)
class Document:
    """A page of a WARC cleaned as the extract stage cleans it: `id` is its docs table id."""

    id: str
    url: str
    language: str  # the extract stage's guess from the page's text (ISO 639-1)
    text: str  # the kept blocks, a blank line between two
    provenance: Provenance
    metadata: Metadata  # what the page says about itself: title, author, published, ...


@dataclass(frozen=True)
class CleanedText(Metadata):
    """`clean_html(..., with_metadata=True)`: the text a page keeps and the page's metadata in
    one flat record, as trafilatura's ``bare_extraction`` gives them (``date`` there is
    ``published`` here)."""

    text: str = ""


@overload
def clean_html(
    html: str | bytes,
    *,
    preset: str = ...,
    language: str = ...,
    comments: bool | None = ...,
    peers: str | None = ...,
    config: ConfigSource = ...,
    url: str | None = ...,
    with_metadata: Literal[False] = ...,
) -> str: ...


@overload
def clean_html(
    html: str | bytes,
    *,
    preset: str = ...,
    language: str = ...,
    comments: bool | None = ...,
    peers: str | None = ...,
    config: ConfigSource = ...,
    url: str | None = ...,
    with_metadata: Literal[True],
) -> CleanedText: ...


def clean_html(
    html: str | bytes,
    *,
    preset: str = BEST_PRESET,
    language: str = AUTO,
    comments: bool | None = None,
    peers: str | None = None,
    config: ConfigSource = None,
    url: str | None = None,
    with_metadata: bool = False,
) -> str | CleanedText:
    """The text a page keeps: its good blocks, white space inside each one space, a blank line
    ("\\n\\n") between two; "" when nothing is kept. With ``with_metadata``, a `CleanedText`:
    that text as ``.text`` beside the page's title, author, published (YYYY-MM-DD), sitename and
    canonical_url (None where the page says nothing).

    ``html``: the page, as text or as bytes in any charset (found as the extract stage finds it).
    ``preset``: ``"best"`` (the learned block classifier) or a jusText preset, ``"default"``
    (the justext package's thresholds) or thesis Table 2.7's ``"A"``-``"D"``. ``language``:
    ``"auto"`` (guess it from the page, as the extract stage does), an ISO 639-1 code (``"de"``)
    or a stop list name (``"German"``). ``comments``: what counts as content, as
    trafilatura's ``include_comments`` — True keeps all running text, reader comments too (the
    thesis' scope), False the article alone (preset best only); None: the config's
    ``extract.comments`` (default True). ``peers``: other extractors whose output the `best`
    preset also reads, ``"none"``, ``"resiliparse"`` or ``"all"`` (the `peers` extra; None: the
    config's ``extract.peers``, default none). ``config``: see `ConfigSource`; its extract section's
    other keys (jusText thresholds, max_blocks, model, ...) apply, ``preset`` replaces its preset.
    ``url``: where the page comes from, against which a relative canonical link is resolved.

    Raises ConfigError (a ValueError) naming a bad preset, language or config key, and
    ValueError for a page that cannot be cleaned (binary bytes, more blocks than
    extract.max_blocks) and for a file's path given as the page (a str without ``<`` that names
    a file or ends in .html or .htm).
    """
    # the text alone: building every block's Paragraph cost an eighth of the page's time
    page = _cleaned(
        html, extract_params(config, preset, comments, peers), forced_stoplist(language), url
    )
    if with_metadata:
        return CleanedText(**asdict(page.metadata), text=_kept_text(page.blocks))
    return _kept_text(page.blocks)


def clean_html_paragraphs(
    html: str | bytes,
    *,
    preset: str = BEST_PRESET,
    language: str = AUTO,
    comments: bool | None = None,
    peers: str | None = None,
    config: ConfigSource = None,
) -> list[Paragraph]:
    """Every block of the page in page order, kept or not, with its features and classes;
    arguments and errors as `clean_html`."""
    return list(
        clean_html_page(
            html, preset=preset, language=language, comments=comments, peers=peers, config=config
        ).paragraphs
    )


def clean_html_page(
    html: str | bytes,
    *,
    preset: str = BEST_PRESET,
    language: str = AUTO,
    comments: bool | None = None,
    peers: str | None = None,
    config: ConfigSource = None,
    url: str | None = None,
) -> Page:
    """The page's blocks (`clean_html_paragraphs`) with its language, stop list, charset and
    metadata; arguments and errors as `clean_html`."""
    return clean_html_with(
        html, extract_params(config, preset, comments, peers), forced_stoplist(language), url
    )


def clean_html_with(
    html: str | bytes, params: ExtractParams, stoplist: str | None, url: str | None = None
) -> Page:
    """`clean_html_page` with its settings resolved once for many pages: ``params`` from
    `extract_params`, ``stoplist`` from `forced_stoplist` (None: the page's language decides)."""
    return _page(_cleaned(html, params, stoplist, url))


# a tagless str ending so names a page's file, even one that does not exist
HTML_SUFFIXES = (".html", ".htm")


def _cleaned(
    html: str | bytes, params: ExtractParams, stoplist: str | None, url: str | None = None
) -> CleanedPage:
    if isinstance(html, str):
        if "<" not in html and "\n" not in html and len(html) < 4096:
            # a page without one tag that names a file, or a missing one by its suffix, is a
            # path given by mistake: cleaned, it would be "" and read as a page without text
            if os.path.isfile(html):
                raise ValueError(
                    f"html: {html!r} is a file's path, not a page; give its content "
                    "(Path(...).read_bytes())"
                )
            if html.strip().lower().endswith(HTML_SUFFIXES):
                raise ValueError(
                    f"html: {html!r} is a file's name (no such file here), not a page; give "
                    "the page's content (Path(...).read_bytes())"
                )
        # a lone surrogate (text decoded with surrogateescape) has no UTF-8: it becomes "?", the
        # rest of the page stays valid UTF-8 and is decoded as it was given
        page = clean_page(
            html.encode("utf-8", errors="replace"), "utf-8", params, stoplist, url=url
        )
        # given as text, the page was decoded by the caller: no charset was read or guessed
        page.charset_source = "str"
        return page
    if isinstance(html, bytes):
        return clean_page(html, None, params, stoplist, url=url)
    raise TypeError(f"html: a str or bytes, not {type(html).__name__}")


def _kept_text(blocks: list) -> str:
    """The good blocks, white space inside each one space, a blank line between two."""
    return page_text(one_line(b.text) for b in blocks if is_kept_block(b.final_class))


def iter_documents(warc_path: str | Path, config: ConfigSource = None) -> Iterator[Document]:
    """The documents the extract stage keeps of one WARC, in the WARC's order: each page cleaned
    into at least one good block, with the id of its row in the docs table (``<warc>:<index>``,
    the WARC named as the workflow names it), its URL, language and kept text.

    Records that are no page (requests, redirects, other content types, ...) and pages without
    a kept block yield nothing; the extract stage counts them by reason in its docs table
    (``corpusbuilder extract``). With extract.site_boilerplate.mode ``combine`` the WARC is read
    whole before the first document, since a host's pages decide each other's blocks.

    Raises, when called: FileNotFoundError for a missing file, IsADirectoryError for a directory
    (one WARC file a call), ConfigError for a file that is not a WARC or a bad config (naming
    the key); while iterating: an I/O error of the environment, and RuntimeError when every page
    of the WARC failed to be cleaned.
    """
    path = Path(warc_path)
    if path.is_dir():
        raise IsADirectoryError(
            errno.EISDIR, "Is a directory; iter_documents reads one WARC file", str(path)
        )
    if not path.is_file():
        raise FileNotFoundError(errno.ENOENT, "No such file", str(path))
    if not looks_like_warc(path):
        raise ConfigError(
            f"{path}: not a WARC file (no WARC record at its start, plain or gzipped)"
        )
    params, preset = _settings(_config_key(config), None, None, None)
    return _documents(path, params, preset)


def extract_params(
    config: ConfigSource = None,
    preset: str | None = None,
    comments: bool | None = None,
    peers: str | None = None,
) -> ExtractParams:
    """The extract stage's settings from a config, with ``preset``, ``comments`` and ``peers``
    (None: the config's) in place of its own; the config's single jusText thresholds still apply
    on top."""
    return _settings(_config_key(config), preset, comments, peers)[0]


def forced_stoplist(language: str) -> str | None:
    """The stop list a ``language`` argument names: None for ``"auto"`` (the page's language
    decides), else the list of an ISO 639-1 code (``"de"``) or a list's name (``"German"``)."""
    if language == AUTO:
        return None
    names = {name.lower(): name for name in stoplists.available_stoplists()}
    name = names.get(language.lower()) or stoplists.stoplist_name_for(language)
    if name is None:
        raise ConfigError(
            f"language {language!r}: no stop list; use auto, an ISO 639-1 code or one of "
            + ", ".join(sorted(names.values()))
        )
    return name


@lru_cache(maxsize=1)
def _schema() -> dict:
    return load_schema()


def _config_key(config: ConfigSource) -> tuple:
    """A config as a key of `_settings`: a mapping by its JSON, a file by its path, the time it
    was last written and its size (so an edited file is read again)."""
    if config is None or isinstance(config, Mapping):
        return ("mapping", json.dumps(config or {}, sort_keys=True, default=str))
    if isinstance(config, (str, Path)):
        path = Path(config).absolute()
        try:
            stat = path.stat()
        except OSError:
            return ("file", str(path), None)  # load_config says what is wrong with it
        return ("file", str(path), stat.st_mtime_ns, stat.st_size)
    raise TypeError(f"config: a path, a mapping or None, not {type(config).__name__}")


@lru_cache(maxsize=64)
def _settings(
    key: tuple, preset: str | None, comments: bool | None, peers: str | None
) -> tuple[ExtractParams, str]:
    """The extract settings of a config (`_config_key`) and the name of their preset, once per
    config: validating a config costs more than cleaning a page, and a loop over pages calls
    `clean_html` with the same one."""
    if key[0] == "file":
        config = load_config(Path(key[1]))
    else:
        config = validate_config(json.loads(key[1]), _schema())
    section = dict(config["extract"])
    if preset is not None:
        if preset != BEST_PRESET and preset not in PRESETS:
            raise ConfigError(f"preset {preset!r}: not one of {', '.join([*PRESETS, BEST_PRESET])}")
        section["preset"] = preset
    if comments is not None:
        section["comments"] = comments
    if peers is not None:
        section["peers"] = peers
    params = ExtractParams.from_config(section)
    check_setup(params)
    return params, section["preset"]


def _page(page: CleanedPage) -> Page:
    return Page(
        paragraphs=tuple(
            Paragraph(
                text=" ".join(block.text.split()),
                kept=is_kept_block(block.final_class),
                cf_class=block.cf_class,
                final_class=block.final_class,
                heading=block.heading,
                xpath=block.xpath,
                dom_path=block.dom_path,
                n_chars=block.n_chars,
                n_words=block.n_words,
                n_stopwords=block.n_stopwords,
                link_density=block.link_density,
                stopword_density=block.stopword_density,
            )
            for block in page.blocks
        ),
        language=page.language,
        language_probability=page.language_probability,
        stoplist=page.stoplist,
        charset=page.charset,
        charset_source=page.charset_source,
        metadata=page.metadata,
    )


def _documents(path: Path, params: ExtractParams, preset: str) -> Iterator[Document]:
    warc = shard_name(str(path))
    records: Iterable[tuple[dict, CleanedPage | None]] = cleaned_records(
        [(warc, path)], warc, params, ShardSummary()
    )
    if params.site_boilerplate.mode == "combine":
        records = _site_marked(list(records), params)
    for row, page in records:
        text = _kept_text(page.blocks) if page else ""
        if page and text:
            yield Document(
                id=row["doc_id"],
                url=row["uri"],
                language=row["page_language"],
                text=text,
                provenance=Provenance(
                    warc=warc,
                    record_index=row["record_index"],
                    offset=row["offset"],
                    record_id=row["warc_record_id"] or "",
                    date=row["date"] or "",
                    charset=row["charset"],
                    preset=preset,
                ),
                metadata=page.metadata,
            )


def _site_marked(
    records: list[tuple[dict, CleanedPage | None]], params: ExtractParams
) -> list[tuple[dict, CleanedPage | None]]:
    """The records with the final classes Ikeda et al.'s site-level pass gives their blocks in
    mode `combine`, as the extract stage rewrites its blocks table (`mark_site_boilerplate`)."""
    import pandas as pd

    docs = pd.DataFrame([row for row, _ in records])
    blocks = pd.DataFrame(
        [block for row, page in records if page for block in block_rows(row["doc_id"], page)]
    )
    if blocks.empty:
        return records
    marked = mark_blocks(blocks, docs, params.site_boilerplate, params.justext)
    classes = iter(marked["final_class"].tolist())
    for _, page in records:
        for block in page.blocks if page else []:
            block.final_class = next(classes)
    return records
