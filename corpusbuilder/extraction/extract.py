"""Stage `extract`: WARC records → one document row per record and jusText-classified blocks.

Thesis ch. 2: every HTML page is segmented into blocks and classified by jusText (§2.7). This
module is the shard loop around it: records come from `warc` (every record a row, with the
reason it was skipped when it is not a page), bodies are decoded by `decoding`, the page's
language picks its stop list, and the blocks are classified by a jusText preset or the learned
`best` classifier.
"""

from __future__ import annotations

import logging
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path

from lxml import etree

from corpusbuilder.common import stoplists
from corpusbuilder.common.faults import JobFault
from corpusbuilder.common.identifiers import identify_sample
from corpusbuilder.common.io import ParquetBatchWriter, write_table
from corpusbuilder.common.package_data import SHIPPED_ARTICLE_MODEL, shipped_peer_model
from corpusbuilder.config import (
    COMMENTS_NEED_BEST,
    ConfigError,
    dataclass_values,
    written_by_the_workflow,
)
from corpusbuilder.contracts.tables import (
    BLOCKS_SCHEMA,
    CLEANED,
    DOCS_SCHEMA,
    METADATA_COLUMNS,
    SKIPPED,
    is_cleaned_page,
    is_kept_block,
    kept_block_mask,
    read_table,
    stage_table,
)
from corpusbuilder.extraction import compiled_walks, missing_compiled_modules
from corpusbuilder.extraction.classifier import FEATURE_NAMES, page_title
from corpusbuilder.extraction.decoding import UndecodableError, decode_html, replaced_characters
from corpusbuilder.extraction.justext import PRESETS, JustextParams, classify, classify_context_free
from corpusbuilder.extraction.metadata import NO_METADATA, Metadata, extract_metadata
from corpusbuilder.extraction.model import classify_page, load_model
from corpusbuilder.extraction.nesting import TooDeepError
from corpusbuilder.extraction.peers import PEER_CHOICES, PeerRuns, require_peers
from corpusbuilder.extraction.segmentation import count_stopwords, parse_html, segment_blocks
from corpusbuilder.extraction.site_boilerplate import (
    SiteBoilerplateParams,
    mark_blocks,
    recount_good,
)
from corpusbuilder.extraction.warc import WarcRecord, iter_warc_records

log = logging.getLogger(__name__)

HTML_CONTENT_TYPES = ("text/html", "application/xhtml+xml")
BEST_PRESET = "best"
# The settings of ExtractParams that decide how a page is read: decoded, its language guessed, its
# stop list picked. The gold pages are read with them too, by the evaluation and by the training
# of the models it scores, so that both read pages as the extract stage does.
READING_KEYS = ("max_control_share", "language_sample_chars", "stoplist_fallback")


@dataclass(frozen=True)
class ExtractParams:
    """What the extract stage keeps and how it cleans it (config section `extract`)."""

    min_bytes: int = 64  # bodies shorter than this cannot hold a page worth cleaning
    max_bytes: int = 5_000_000  # bodies longer than this are skipped, never read whole
    html_content_types: tuple[str, ...] = HTML_CONTENT_TYPES
    max_control_share: float = 0.02  # share of C0 control bytes above which a body is binary
    language_sample_chars: int = 2000  # raw page text used to pick the stop list
    # a page cut into more blocks is skipped as too-many-blocks: memory and time grow with the
    # blocks (the learned preset's features most), and no article has this many
    max_blocks: int = 5000
    # a page in a language without a bundled list: "page" (its own most
    # frequent words) or a list name
    stoplist_fallback: str = "page"
    justext: JustextParams = field(default_factory=lambda: PRESETS["default"])
    # "best" (the default preset, as in the schema): the learned block classifier
    # (corpusbuilder.extraction.classifier) decides instead of jusText's thresholds; `model` is a
    # retrained model file (rule `train`), None = the one shipped.
    learned: bool = True
    model: Path | None = None
    # What counts as content, as trafilatura's users know it: True keeps all running text, reader
    # comments too, as the thesis' jusText and corpora do (§2.7); False the article alone. The
    # `best` preset has a model per scope; the jusText presets are the thesis' scope only.
    comments: bool = True
    # Other extractors whose output the `best` preset also reads (extraction.peers; the `peers`
    # extra): "none", "resiliparse" or "all" (with trafilatura and readability-lxml). Better
    # leave-one-source-out but slower ("all": a fifteenth of the speed), so none by default.
    peers: str = "none"
    site_boilerplate: SiteBoilerplateParams = SiteBoilerplateParams()

    def __post_init__(self) -> None:
        if not self.comments and not self.learned:
            raise ConfigError(COMMENTS_NEED_BEST)
        if self.peers not in PEER_CHOICES:
            raise ConfigError(
                f"config key 'extract.peers': {self.peers!r} is not one of "
                f"{', '.join(PEER_CHOICES)}"
            )
        if self.peers != "none" and not self.learned:
            raise ConfigError(
                f"config key 'extract.peers': {self.peers} needs preset best; the jusText presets "
                "read no other extractor's output"
            )

    @property
    def model_file(self) -> Path | None:
        """The `best` preset's model: ``model`` if given, else the one shipped for the scope
        (None: the package's ``models/best.npz``, which keeps comments)."""
        if self.model is not None:
            return self.model
        if self.peers != "none":
            return shipped_peer_model(self.peers, self.comments)
        return None if self.comments else SHIPPED_ARTICLE_MODEL

    @property
    def peer_columns(self) -> tuple[str, ...]:
        """The feature columns of the chosen peers (`peers.PEER_FEATURE_NAMES`), () for none."""
        return PEER_CHOICES[self.peers]

    @property
    def feature_names(self) -> tuple[str, ...]:
        """The columns the `best` preset's model reads: the block features, then the peers'."""
        return FEATURE_NAMES + self.peer_columns

    def check_peers(self) -> None:
        """Raise ConfigError naming extract.peers when a chosen peer's package is missing."""
        try:
            require_peers(self.peer_columns)
        except ImportError as error:
            raise ConfigError(f"config key 'extract.peers': {self.peers} {error}") from None

    def with_preset(self, preset: str) -> ExtractParams:
        """These settings with another preset: a jusText one (thesis Table 2.7) or "best"."""
        if preset == BEST_PRESET:
            return replace(self, learned=True)
        return replace(self, learned=False, justext=PRESETS[preset])

    @classmethod
    def from_config(cls, section: dict) -> ExtractParams:
        """Build from the validated `extract` config section (preset + per-threshold overrides)."""
        values = dataclass_values(cls, section)
        preset = section.get("preset", BEST_PRESET)
        values["justext"] = JustextParams.of_preset(preset, values.get("justext", {}))
        values["learned"] = preset == BEST_PRESET
        values["site_boilerplate"] = SiteBoilerplateParams.from_config(
            values.get("site_boilerplate", {})
        )
        values["html_content_types"] = tuple(values.get("html_content_types", HTML_CONTENT_TYPES))
        values["model"] = Path(values["model"]) if values.get("model") else None
        return cls(**values)


class TooManyBlocksError(ValueError):
    """A page cut into more blocks than `max_blocks` (its row's reason says how many)."""


# --------------------------------------------------------------------------- page language

_HIDDEN_TEXT_TAGS = frozenset({"script", "style"})


def visible_text_sample(root, sample_chars: int) -> str:
    """The first ``sample_chars`` characters of the text in the page's <body> (else its root)
    outside <script> and <style>, each whitespace run one space.

    A walk that stops once it has the sample: the XPath ``.//text()[not(ancestor::script or
    ancestor::style)]`` over the whole page, joined and cut, gave the same sample in four times
    the time (and was a quarter of the extract stage's work per page).
    """
    body = root.find("body")
    scope = body if body is not None else root
    words: list[str] = []
    length = -1  # of " ".join(words)
    walker = etree.iterwalk(scope, events=("start", "end", "comment", "pi"))
    for event, el in walker:
        if event == "start":
            if el.tag in _HIDDEN_TEXT_TAGS:
                walker.skip_subtree()  # its tail still comes with its end event
                continue
            piece = el.text
        elif el is scope:
            break
        else:
            piece = el.tail
        if piece:
            for word in piece.split():
                words.append(word)
                length += len(word) + 1
            if length >= sample_chars:
                break
    return " ".join(words)[:sample_chars]


def guess_page_language(root, sample_chars: int) -> tuple[str, float]:
    """ISO 639-1 code and probability of a page's visible text, to choose its stop list."""
    return identify_sample(visible_text_sample(root, sample_chars))


def segment_page(
    root, language: str, fallback: str, structure_hints: bool = True
) -> tuple[str | None, list]:
    """jusText's blocks of a page (§2.7.1; with ``structure_hints``, as the `best` preset reads
    them, also cut at HTML5's block-level elements) with stop words counted by the list of its
    language, else by ``fallback``'s; with fallback `page`, by a list of the page's own most
    frequent words (`stoplists.page_stoplist`), or letters where the language has no spaces.
    ``structure_hints``: as `segment_blocks` takes it."""
    name, stoplist = stoplists.stoplist_for(language, fallback)
    blocks = segment_blocks(root, stoplist, structure_hints)
    if name == stoplists.PAGE:
        by_characters = stoplists.writes_without_spaces(language)
        tokens = partial(stoplists.stop_tokens, by_characters=by_characters)
        count_stopwords(
            blocks, stoplists.page_stoplist((b.text for b in blocks), by_characters), tokens
        )
    return name, blocks


# --------------------------------------------------------------------------- the stage


@dataclass
class CleanedPage:
    """A page after decoding and jusText: what the docs and blocks tables need of it."""

    charset: str
    charset_source: str
    language: str
    language_probability: float
    stoplist: str | None  # None: no list named for the language and no fallback
    blocks: list
    replaced_characters: int = 0  # broken bytes of a leniently decoded UTF-8 page
    title: str = ""  # the page's <title>, a feature of the learned classifier
    html: str = field(default="", repr=False)  # the decoded page, which extract.peers reads
    metadata: Metadata = NO_METADATA  # its title, author, date published, ... (`metadata`)


def segmented_page(
    body: bytes,
    http_charset: str | None,
    params: ExtractParams,
    stoplist_name: str | None = None,
    url: str | None = None,
) -> CleanedPage:
    """Decode, parse, pick the stop list by the page's language and cut the page into jusText's
    blocks (§2.7.1; the `best` preset's also at HTML5's block-level elements), not yet classified;
    read its metadata off the same tree (``url``: where it was fetched, `extract_metadata`).

    `stoplist_name` forces one stop list instead of guessing the page's language.
    """
    text, charset, charset_source = decode_html(body, http_charset, params.max_control_share)
    replaced = replaced_characters(text) if charset_source == "utf8-lenient" else 0
    root = parse_html(text)
    if root is None:
        return CleanedPage(charset, charset_source, "", 0.0, "", [], replaced)
    if stoplist_name is None:
        language, probability = guess_page_language(root, params.language_sample_chars)
        stoplist_name, blocks = segment_page(
            root, language, params.stoplist_fallback, params.learned
        )
    else:
        language, probability = "", 0.0
        blocks = segment_blocks(root, stoplists.load_stoplist(stoplist_name), params.learned)
    if len(blocks) > params.max_blocks:
        raise TooManyBlocksError(
            f"too-many-blocks: {len(blocks)} (extract.max_blocks {params.max_blocks})"
        )
    # the title is a feature of the learned classifier only: the jusText presets skip the lookup
    return CleanedPage(
        charset,
        charset_source,
        language,
        probability,
        stoplist_name,
        blocks,
        replaced,
        page_title(root) if params.learned else "",
        text,
        extract_metadata(root, url),
    )


def clean_page(
    body: bytes,
    http_charset: str | None,
    params: ExtractParams,
    stoplist_name: str | None = None,
    peer_runs: PeerRuns | None = None,
    url: str | None = None,
) -> CleanedPage:
    """:func:`segmented_page`, then jusText's classification (§2.7), or the learned classifier's
    with ``params.learned`` (its peers' runs counted into ``peer_runs``)."""
    page = segmented_page(body, http_charset, params, stoplist_name, url)
    if not page.blocks:
        return page
    if params.learned:
        # The learned classes are final (Algorithm 2.3's context is among the model's features);
        # jusText's context-free classes stay beside them, for the context pass that block
        # de-duplication and site-level boilerplate run again once blocks are removed (§3.5.2).
        final_classes = classify_page(
            page.blocks,
            page.title,
            page.html,
            load_model(params.model_file),
            params.comments,
            peer_runs,
        )
        cf_classes = classify_context_free(page.blocks, params.justext)
    else:
        cf_classes, final_classes = classify(page.blocks, params.justext)
    for block, cf_class, final_class in zip(page.blocks, cf_classes, final_classes):
        block.cf_class = cf_class
        block.final_class = final_class
    return page


@dataclass
class ShardSummary:
    """Counts for the log and the caller: records by outcome and skip reason."""

    records: int = 0
    attempted: int = 0  # records whose body was read to be cleaned
    pages: int = 0
    blocks: int = 0
    good_blocks: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    peers: PeerRuns = field(default_factory=PeerRuns)  # extract.peers: pages a peer failed on

    def count(self, reason: str) -> None:
        key = reason.split(":", 1)[0]
        self.reasons[key] = self.reasons.get(key, 0) + 1


def cleaned_records(
    warcs: Sequence[tuple[str, Path]],
    shard: str,
    params: ExtractParams,
    summary: ShardSummary,
    progress_every: int = 500,
    read: Callable[[Path, ExtractParams], Iterator[WarcRecord]] = iter_warc_records,
) -> Iterator[tuple[dict, CleanedPage | None]]:
    """Every record of a shard's WARCs, ``(name, path)`` in crawl order, as its docs row and the
    page cleaned from it (None unless the row's reason is ``ok``), counted into ``summary``.

    A record's id is its WARC's name and its index there, so it is the same whichever shard
    holds the WARC; ``record_index`` counts on across the shard's WARCs (crawl order). A WARC cut
    short ends with its truncated row, and the next WARC is read all the same.
    A fault of one page is that page's row (reason ``error-…``); a fault of the environment — an
    I/O or memory error — is raised, and so is a JobFault after the last record when every
    page failed, rather than hand on error rows that later stages take for a corpus. `read` reads
    a WARC's records: a part's of a split WARC (`warc_parts.read_part`), or all of them."""
    for warc, path in warcs:
        for record in read(path, params):
            row = _doc_row(shard, warc, summary.records, record)
            summary.records += 1
            page = None
            if record.body is not None:
                summary.attempted += 1
                page = _clean_record(row, record.body, record.http_charset, params, summary)
            if not is_cleaned_page(row["outcome"]):
                summary.count(row["reason"])
                if row["reason"].startswith("truncated"):
                    log.warning(
                        "%s: reading stopped at offset %d: %s", warc, record.offset, row["reason"]
                    )
            yield row, page
            if summary.records % progress_every == 0:
                log.info(
                    "%s: %d records, %d pages, %d blocks",
                    shard,
                    summary.records,
                    summary.pages,
                    summary.blocks,
                )
    failed = {
        reason: count for reason, count in summary.reasons.items() if reason.startswith("error-")
    }
    if failed and sum(failed.values()) == summary.attempted:
        raise JobFault(
            f"{shard}: every page failed ({', '.join(failed)}): a fault of the code or the "
            "machine, not of the pages; see the log"
        )
    summary.peers.check(shard)


def extract_shard(
    warcs: Sequence[tuple[str, Path]],
    shard: str,
    docs_path: Path,
    blocks_path: Path,
    params: ExtractParams,
    progress_every: int = 500,
    read: Callable[[Path, ExtractParams], Iterator[WarcRecord]] = iter_warc_records,
) -> ShardSummary:
    """Read a shard's WARCs, ``(name, path)`` in crawl order, and write its docs and blocks
    tables (atomically, in batches): a row per record and per block, as `cleaned_records` yields
    them. An unreadable model, an I/O or memory error, or a shard in which every page failed
    fails the job, and no table is written."""
    check_setup(params)
    summary = ShardSummary()
    with (
        ParquetBatchWriter(docs_path, DOCS_SCHEMA) as docs,
        ParquetBatchWriter(blocks_path, BLOCKS_SCHEMA) as blocks_out,
    ):
        for row, page in cleaned_records(warcs, shard, params, summary, progress_every, read):
            docs.append(row)
            if page is not None:
                for block_row in block_rows(row["doc_id"], page):
                    blocks_out.append(block_row)
    if params.site_boilerplate.mode != "off":
        summary.good_blocks = mark_site_boilerplate(docs_path, blocks_path, params)
    log.info(
        "%s: done: %d records, %d pages cleaned, %d blocks (%d good); skipped: %s",
        shard,
        summary.records,
        summary.pages,
        summary.blocks,
        summary.good_blocks,
        ", ".join(f"{k}={v}" for k, v in sorted(summary.reasons.items())) or "none",
    )
    return summary


def check_setup(params: ExtractParams) -> None:
    """Fail before the first page on what every page needs (the model and its peers' packages,
    the fallback stop list, the bundled stop lists): a fault of the setup, never a row per page
    it would spoil. Says so when a compiled walk is missing: same results, but slower, which a
    user should know."""
    if missing := missing_compiled_modules():
        log.warning("extraction runs %s", compiled_walks(missing))
    check_settings(params)
    if params.learned:
        params.check_peers()
    if not stoplists.available_stoplists():
        raise JobFault(
            f"no stop lists in {stoplists.STOPLIST_DIR}: the installed package is incomplete"
        )


def check_settings(params: ExtractParams, load_the_model: bool = True) -> None:
    """The extract settings that need more than the schema to check, as a ConfigError naming the
    key: the model (unless ``load_the_model`` is False) loads and reads the chosen peers, and the
    fallback stop list exists."""
    if params.learned and load_the_model:
        try:
            peers = load_model(params.model_file).peers
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
            raise ConfigError(
                "config key 'extract.model': cannot load "
                f"{params.model_file or 'the shipped model'}: "
                f"{type(error).__name__}: {str(error)[:200]}"
            ) from None
        if peers != params.peer_columns:
            raise ConfigError(
                f"config key 'extract.peers': {params.peers}, but the model {params.model_file} "
                f"reads {', '.join(peers) or 'no peer'}"
            )
    if params.stoplist_fallback != stoplists.PAGE:
        try:
            stoplists.load_stoplist(params.stoplist_fallback)
        except ValueError as error:
            raise ConfigError(f"config key 'extract.stoplist_fallback': {error}") from None


def check_planned_settings(section: dict, base_dir: Path) -> ExtractParams:
    """`check_settings` before any job runs (the workflow as it plans, `check-config`). The
    model the train rule writes is left to the extract job, since the workflow rewrites it when
    the settings change; so are the peers' packages, which a job's own environment (conda) may
    hold where the workflow's does not."""
    params = ExtractParams.from_config(section)
    check_settings(
        params,
        load_the_model=params.model is None or not written_by_the_workflow(params.model, base_dir),
    )
    return params


def mark_site_boilerplate(docs_path: Path, blocks_path: Path, params: ExtractParams) -> int:
    """Rewrite a shard's tables with Ikeda et al.'s site-level marks; returns the good blocks left.

    Hosts are the shard's own: the pass needs every page of a host, and a shard is what one
    extract job sees.
    """
    docs, blocks = read_table(docs_path), read_table(blocks_path)
    blocks = mark_blocks(blocks, docs, params.site_boilerplate, params.justext)
    write_table(stage_table(blocks, BLOCKS_SCHEMA), blocks_path)
    if (
        params.site_boilerplate.mode == "combine"
    ):  # `mark` adds a column; only `combine` changes classes
        docs = recount_good(docs, blocks)
        write_table(stage_table(docs, DOCS_SCHEMA), docs_path)
    log.info(
        "site boilerplate (%s): %d of %d blocks marked",
        params.site_boilerplate.mode,
        int(blocks["site_boilerplate"].sum()),
        len(blocks),
    )
    return int(kept_block_mask(blocks).sum())


def _doc_row(shard: str, warc: str, record_index: int, record: WarcRecord) -> dict:
    return {
        "doc_id": f"{warc}:{record.record_index}",
        "shard": shard,
        "record_index": record_index,
        "warc": warc,
        "offset": record.offset,
        "warc_type": record.warc_type,
        "uri": record.uri,
        "warc_record_id": record.record_id or None,
        "date": record.date or None,
        "status": record.status,
        "content_type": record.content_type,
        "charset": None,
        "charset_source": None,
        "replaced_characters": None,
        "page_language": None,
        "page_language_probability": None,
        "stoplist": None,
        "outcome": SKIPPED,
        "reason": record.reason,
        "n_blocks": 0,
        "n_good_blocks": 0,
        "n_good_words": 0,
        **dict.fromkeys(METADATA_COLUMNS),
    }


def _clean_record(
    row: dict, body: bytes, http_charset: str | None, params: ExtractParams, summary: ShardSummary
) -> CleanedPage | None:
    """Clean a record's body into ``row``; the page when it has blocks, else None (the row's
    reason says why)."""
    try:
        page = clean_page(body, http_charset, params, peer_runs=summary.peers, url=row["uri"])
    except (UndecodableError, TooManyBlocksError, TooDeepError) as error:
        row["reason"] = str(error)
        return None
    except (OSError, MemoryError):
        raise  # the machine's fault, not the page's: the job fails rather than write an empty shard
    except Exception as error:  # noqa: BLE001 - one hostile page must not stop the shard
        log.exception("%s: cleaning failed", row["doc_id"])
        row["reason"] = f"error-{type(error).__name__}"
        return None
    row.update(
        charset=page.charset,
        charset_source=page.charset_source,
        replaced_characters=page.replaced_characters,
        page_language=page.language,
        page_language_probability=page.language_probability,
        stoplist=page.stoplist,
        **asdict(page.metadata),
    )
    if not page.blocks:
        row["reason"] = "no-text"
        return None
    good = [b for b in page.blocks if is_kept_block(b.final_class)]
    row.update(
        outcome=CLEANED,
        reason=CLEANED,
        n_blocks=len(page.blocks),
        n_good_blocks=len(good),
        n_good_words=sum(b.n_words for b in good),
    )
    summary.pages += 1
    summary.blocks += len(page.blocks)
    summary.good_blocks += len(good)
    return page


def block_rows(doc_id: str, page: CleanedPage) -> Iterator[dict]:
    """The blocks table's rows of a cleaned page, in page order."""
    for index, block in enumerate(page.blocks):
        yield {
            "doc_id": doc_id,
            "block_index": index,
            "text": block.text,
            "dom_path": block.dom_path,
            "xpath": block.xpath,
            "heading": block.heading,
            "n_chars": block.n_chars,
            "n_words": block.n_words,
            "n_stopwords": block.n_stopwords,
            "link_density": block.link_density,
            "stopword_density": block.stopword_density,
            "cf_class": block.cf_class,
            "final_class": block.final_class,
            "site_boilerplate": False,
        }
