"""Preamble and epilogue boilerplate of plain-text collections by frequent lines.

Kaser & Lemire, "Removing manually generated boilerplate from electronic texts: experiments with
Project Gutenberg e-books" (Algorithm 1). Boilerplate pasted by hand into thousands of files keeps
its line breaks, so its *lines* recur across the collection while body lines almost never do:

- pass 1 counts the pre-processed lines of the top `p_max` and bottom `e_max` non-trivial lines
  of every file in a frequent-lines structure (§3.3: exact, 64-bit checksums, hashed counters,
  Generalized Majority);
- pass 2 walks each file from its first frequent line until `gap_max` infrequent lines in a row
  (the preamble ends at the last frequent line seen), and the same backwards for the epilogue.

Line numbers are 1-based lines of the original file (trivial lines included), as the paper
measures its errors (§4.1). Files are read twice, never held together in memory.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from corpusbuilder.common.io import atomic_path
from corpusbuilder.common.stoplists import (
    PAGE,
    page_stoplist,
    stop_tokens,
    stoplist_for,
    writes_without_spaces,
)
from corpusbuilder.config import dataclass_values
from corpusbuilder.contracts.tables import BAD, CLEANED, GOOD, SKIPPED, is_kept_block


@dataclass(frozen=True)
class FrequentLinesParams:
    """Algorithm 1 and its counting structures; defaults are the paper's (§3.1, §3.3.4, §4)."""

    k: int = 10  # a line is frequent when it occurs more than K times (§3.1)
    p_max: int = 300  # preamble bound, in non-trivial lines (§3.1 idea 4)
    e_max: int = 300  # epilogue bound, in non-trivial lines
    gap_max: int = 10  # infrequent lines in a row that end a preamble/epilogue (Algorithm 1)
    min_chars: int = 30  # shorter pre-processed lines are trivial (§3.1)
    backend: str = "exact"  # exact | checksum (§3.3.3) | hashed (§3.3.4) | gm (§3.3.5)
    hash_bits: int = 23  # hashed: 2^bits saturating 8-bit counters (§4: 23-bit hash)
    gm_counters: int = 100_000  # gm: number of counters c (§4: c = 10^5)
    gm_min_count: int = 5  # gm: counter value above which a monitored line is frequent (§4 fn. 2)
    heuristics: bool = False  # add the regular-expression rules of §3.4

    @classmethod
    def from_config(cls, section: dict) -> FrequentLinesParams:
        return cls(**dataclass_values(cls, section))


BACKENDS = ("exact", "checksum", "hashed", "gm")


# --------------------------------------------------------------------------- §3.1 preprocessing

_STARS = re.compile(r"\*+")
_DASHES = re.compile(r"-+")
_SPACES = re.compile(r"\s+")


def preprocess_line(line: str) -> str:
    """Trim, then runs of '*', '-' and white space become '***', '---' and ' ' (§3.1)."""
    line = _SPACES.sub(" ", line.strip())
    return _DASHES.sub("---", _STARS.sub("***", line))


def is_trivial(line: str, min_chars: int = 30) -> bool:
    """Short or letterless pre-processed lines ("CHAPTER ONE.", rules
    of stars) are skipped (§3.1)."""
    return len(line) < min_chars or not any(ch.isalpha() for ch in line)


def line_hash(line: str) -> int:
    """A stable 64-bit fingerprint (Python's hash() is salted per process)."""
    return int.from_bytes(hashlib.blake2b(line.encode("utf-8"), digest_size=8).digest(), "little")


@dataclass
class TextFile:
    """One file's raw lines and its non-trivial lines: 0-based positions, text, fingerprints."""

    raw_lines: list[bytes]
    positions: np.ndarray  # int64, index into raw_lines of each non-trivial line
    lines: list[str]  # pre-processed non-trivial lines
    hashes: np.ndarray  # uint64 fingerprints of `lines`


def decode_line(raw: bytes) -> str:
    # E-texts are ASCII, Latin-1 or UTF-8; a line that is not UTF-8 is read
    # as Latin-1, which never fails.
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def read_text_file(path: Path, min_chars: int = 30) -> TextFile:
    raw_lines = Path(path).read_bytes().splitlines(keepends=True)
    positions, lines = [], []
    for index, raw in enumerate(raw_lines):
        line = preprocess_line(decode_line(raw))
        if not is_trivial(line, min_chars):
            positions.append(index)
            lines.append(line)
    hashes = np.fromiter((line_hash(line) for line in lines), dtype=np.uint64, count=len(lines))
    return TextFile(raw_lines, np.asarray(positions, dtype=np.int64), lines, hashes)


def top_and_bottom(n_lines: int, p_max: int, e_max: int) -> np.ndarray:
    """Indices of the first p_max and last e_max non-trivial lines, each
    once (short files overlap)."""
    head = np.arange(min(p_max, n_lines))
    tail = np.arange(max(n_lines - e_max, len(head)), n_lines)
    return np.concatenate([head, tail])


# ------------------------------------------------------------------------- §3.3 counting structures


class ExactCounts:
    """§3.3.1: line → count, exact and the largest."""

    def __init__(self, params: FrequentLinesParams):
        self.k = params.k
        self.counts: dict[str, int] = {}

    def add(self, lines: list[str], hashes: np.ndarray) -> None:
        counts = self.counts
        for line in lines:
            counts[line] = counts.get(line, 0) + 1

    def frequent(self, lines: list[str], hashes: np.ndarray) -> np.ndarray:
        return np.fromiter(
            (self.counts.get(line, 0) > self.k for line in lines), dtype=bool, count=len(lines)
        )

    def memory_bytes(self) -> int:
        # dict slots (~100 B with the int) plus the strings themselves
        return sum(49 + len(line) for line in self.counts) + 100 * len(self.counts)


class ChecksumCounts:
    """§3.3.3: 64-bit fingerprint → count; collisions are negligible at 64 bits."""

    def __init__(self, params: FrequentLinesParams):
        self.k = params.k
        self.keys = np.empty(0, dtype=np.uint64)
        self.values = np.empty(0, dtype=np.int64)
        self._pending: list[np.ndarray] = []

    def add(self, lines: list[str], hashes: np.ndarray) -> None:
        self._pending.append(hashes)

    def _merge(self) -> None:
        # Batches are merged lazily as sorted arrays: a dict of Python
        # ints would cost ~100 B a line.
        if not self._pending:
            return
        keys, counts = np.unique(np.concatenate(self._pending), return_counts=True)
        self._pending = []
        all_keys = np.concatenate([self.keys, keys])
        all_values = np.concatenate([self.values, counts])
        self.keys, inverse = np.unique(all_keys, return_inverse=True)
        self.values = np.bincount(inverse, weights=all_values).astype(np.int64)

    def frequent(self, lines: list[str], hashes: np.ndarray) -> np.ndarray:
        self._merge()
        where = np.searchsorted(self.keys, hashes).clip(max=max(len(self.keys) - 1, 0))
        if not len(self.keys):
            return np.zeros(len(hashes), dtype=bool)
        return (self.keys[where] == hashes) & (self.values[where] > self.k)

    def memory_bytes(self) -> int:
        self._merge()
        return self.keys.nbytes + self.values.nbytes


class HashedCounters:
    """§3.3.4: the fingerprint's low `hash_bits` bits index an array of saturating 8-bit counters.

    No false negatives; false positives when a line shares its counter with frequent lines or with
    enough infrequent ones (the paper bounds their rate by p·(n−1)/c for skewed data).
    """

    def __init__(self, params: FrequentLinesParams):
        if params.k >= 255:
            raise ValueError("hashed counters are 8-bit: k must be below 255")
        self.k = params.k
        self.mask = np.uint64((1 << params.hash_bits) - 1)
        self.counters = np.zeros(1 << params.hash_bits, dtype=np.uint8)

    def add(self, lines: list[str], hashes: np.ndarray) -> None:
        slots, counts = np.unique(hashes & self.mask, return_counts=True)
        self.counters[slots] = np.minimum(self.counters[slots].astype(np.int64) + counts, 255)

    def frequent(self, lines: list[str], hashes: np.ndarray) -> np.ndarray:
        return self.counters[hashes & self.mask] > self.k

    def memory_bytes(self) -> int:
        return self.counters.nbytes


class GeneralizedMajority:
    """§3.3.5, Algorithm 2 (Misra–Gries): c counters; an unmonitored line with no free counter
    decrements them all. Afterwards every line occurring ≥ n/(c+1) times is monitored; with
    skewed data the lines with large counts are the frequent ones (§3.3.5, §4).

    Counters hold 64-bit fingerprints, not strings, as the paper suggests for speed (§4.2).
    """

    def __init__(self, params: FrequentLinesParams):
        self.capacity = params.gm_counters
        self.min_count = params.gm_min_count
        self.counts: dict[int, int] = {}

    def add(self, lines: list[str], hashes: np.ndarray) -> None:
        counts, capacity = self.counts, self.capacity
        for key in hashes.tolist():
            if key in counts:
                counts[key] += 1
            elif len(counts) < capacity:
                counts[key] = 1
            else:
                # Each decrement-all removes `capacity` units of count, so it runs at most
                # n/capacity times: O(n) over the stream.
                self.counts = counts = {item: c - 1 for item, c in counts.items() if c > 1}

    def frequent(self, lines: list[str], hashes: np.ndarray) -> np.ndarray:
        counts = self.counts
        return np.fromiter(
            (counts.get(key, 0) > self.min_count for key in hashes.tolist()),
            dtype=bool,
            count=len(hashes),
        )

    def memory_bytes(self) -> int:
        return 100 * len(self.counts)  # dict slot + two Python ints


def make_counter(params: FrequentLinesParams):
    try:
        kind = {
            "exact": ExactCounts,
            "checksum": ChecksumCounts,
            "hashed": HashedCounters,
            "gm": GeneralizedMajority,
        }[params.backend]
    except KeyError:
        raise ValueError(
            f"unknown frequent-lines backend {params.backend!r}; use one of {', '.join(BACKENDS)}"
        ) from None
    return kind(params)


# --------------------------------------------------------------------------- §3.4 heuristics

# The paper's Java expressions, with the epilogue rule's missing opening parenthesis restored.
PREAMBLE_RULE = re.compile(
    r"[\s*]*\*\s?(START\sOF\s(THE|THIS)\sPROJECT\sGUTENBERG|END[\s*]THE\sSMALL\sPRINT!)"
)
EPILOGUE_RULE = re.compile(
    r"(This|THIS|this|Is|IS|is|The|THE|the|Of|OF|of|[*\s])*(End|END|end)"
    r"(\s|Of|OF|of|The|THE|the|This|THIS|this)*(Project\s+Gutenberg|PROJECT\s+GUTENBERG)"
)


def _heuristic_preamble(lines: list[str]) -> int | None:
    """Index of the last top line that the §3.4 preamble rule says belongs to the preamble."""
    hits = [i for i, line in enumerate(lines) if PREAMBLE_RULE.match(line)]
    return hits[-1] if hits else None


def _heuristic_epilogue(lines: list[str]) -> int | None:
    hits = [
        i for i, line in enumerate(lines) if EPILOGUE_RULE.match(line) or line.startswith("ETEXT")
    ]
    return hits[0] if hits else None


# --------------------------------------------------------------------------- Algorithm 1


@dataclass(frozen=True)
class Boundaries:
    """1-based original-file lines: last preamble line (0: none), first
    epilogue line (None: none)."""

    name: str
    preamble_end: int
    epilogue_start: int | None
    n_lines: int


def count_frequent_lines(files: Iterable[Path], params: FrequentLinesParams):
    """Pass 1: the frequent-lines structure over every file's top and bottom lines."""
    counter = make_counter(params)
    for path in files:
        text = read_text_file(path, params.min_chars)
        chosen = top_and_bottom(len(text.lines), params.p_max, params.e_max)
        counter.add([text.lines[i] for i in chosen], text.hashes[chosen])
    return counter


def _last_of_run(frequent: np.ndarray, gap_max: int, skip_to_first: bool = True) -> int | None:
    """Algorithm 1's walk: go on until `gap_max` infrequent lines in a row; the index of the last
    frequent line seen, or None when none was. The preamble's walk starts at the first frequent
    line ("skip till frequent line seen"); the epilogue's starts at the file's last line, so
    `gap_max` infrequent lines there end it before any frequent line ("no epilogue was seen")."""
    hits = np.flatnonzero(frequent)
    if not len(hits) or (not skip_to_first and hits[0] >= gap_max):
        return None
    # A gap of gap_max infrequent lines is a jump of more than gap_max between frequent indices.
    breaks = np.flatnonzero(np.diff(hits) > gap_max)
    return int(hits[breaks[0]] if len(breaks) else hits[-1])


def _max_or_none(a: int | None, b: int | None) -> int | None:
    return a if b is None else b if a is None else max(a, b)


def find_boundaries(
    text: TextFile, counter, params: FrequentLinesParams, name: str = ""
) -> Boundaries:
    """Pass 2 for one file: preamble end and epilogue start (Algorithm 1, plus §3.4 if asked)."""
    n = len(text.lines)
    top = min(params.p_max, n)
    frequent = counter.frequent(text.lines, text.hashes)
    # The walks stay inside the bounds of §3.1 idea 4: a frequent line
    # deep in the body is no preamble.
    pre = _last_of_run(frequent[:top], params.gap_max)
    if params.heuristics:
        pre = _max_or_none(pre, _heuristic_preamble(text.lines[:top]))
    # The epilogue follows the preamble: in a short file the bottom window would reach into it.
    bottom = max(n - params.e_max, 0 if pre is None else pre + 1)
    back = _last_of_run(frequent[bottom:][::-1], params.gap_max, skip_to_first=False)
    epi = None if back is None else n - 1 - back
    if params.heuristics:
        rule_epi = _heuristic_epilogue(text.lines[bottom:])
        if rule_epi is not None:
            epi = bottom + rule_epi if epi is None else min(epi, bottom + rule_epi)
    return Boundaries(
        name=name,
        preamble_end=0 if pre is None else int(text.positions[pre]) + 1,
        epilogue_start=None if epi is None else int(text.positions[epi]) + 1,
        n_lines=len(text.raw_lines),
    )


def collection_boundaries(
    files: list[Path], params: FrequentLinesParams
) -> Iterator[tuple[Boundaries, TextFile]]:
    """Both passes of Algorithm 1 over a collection; yields each file's boundaries and its text."""
    counter = count_frequent_lines(files, params)
    for path in files:
        text = read_text_file(path, params.min_chars)
        yield find_boundaries(text, counter, params, Path(path).name), text


def body_slice(boundaries: Boundaries) -> slice:
    """0-based slice of the original lines between the preamble and the epilogue."""
    end = boundaries.n_lines if boundaries.epilogue_start is None else boundaries.epilogue_start - 1
    return slice(boundaries.preamble_end, end)


def text_files(in_dir: Path | str) -> list[Path]:
    return sorted(p for p in Path(in_dir).glob("*.txt") if p.is_file())


def boundaries_tsv_line(b: Boundaries) -> str:
    """file, last preamble line, first epilogue line: 1-based, 0 for none (as preamble_end)."""
    return f"{b.name}\t{b.preamble_end}\t{b.epilogue_start or 0}\n"


def strip_frequent_lines(
    in_dir: Path | str, out_dir: Path | str, params: FrequentLinesParams = FrequentLinesParams()
) -> list[Boundaries]:
    """CLI engine: every `*.txt` of in_dir → its body (original bytes) under the same name in
    out_dir, and `out_dir/boundaries.tsv` (file, preamble_end_line, epilogue_start_line; 0 for
    none)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    found = []
    for boundaries, text in collection_boundaries(text_files(in_dir), params):
        with atomic_path(out_dir / boundaries.name) as tmp:
            tmp.write_bytes(b"".join(text.raw_lines[body_slice(boundaries)]))
        found.append(boundaries)
    with atomic_path(out_dir / "boundaries.tsv") as tmp:
        tmp.write_text("".join(map(boundaries_tsv_line, found)), encoding="utf-8")
    return found


def boundary_errors(
    found: Boundaries, true_preamble_end: int, true_epilogue_start: int | None
) -> tuple[int, int]:
    """Errors in original lines, signed as the paper's Figure 8: positive = too few lines removed,
    negative = too many. A missing epilogue counts as starting after the last line."""
    after_end = found.n_lines + 1
    found_epi = found.epilogue_start or after_end
    true_epi = true_epilogue_start or after_end
    return true_preamble_end - found.preamble_end, found_epi - true_epi


# ---------------------------------------------------------------------- text input for the workflow


def paragraphs(lines: list[str]) -> list[str]:
    """Blank-line separated paragraphs, each with its hard line breaks and spacing collapsed."""
    out, current = [], []
    for line in lines + [""]:
        if line.strip():
            current.append(line.strip())
        elif current:
            out.append(" ".join(" ".join(current).split()))
            current = []
    return out


def _block_rows(
    doc_id: str,
    parts: list[tuple[str, list[str]]],
    stopwords: frozenset[str],
    by_characters: bool = False,
) -> list[dict]:
    rows: list[dict] = []
    for final_class, lines in parts:
        for text in paragraphs(lines):
            words = text.split()
            units = [unit.strip(".,;:!?\"'()") for unit in stop_tokens(text, by_characters)]
            n_stop = sum(unit in stopwords for unit in units)
            rows.append(
                {
                    "doc_id": doc_id,
                    "block_index": len(rows),
                    "text": text,
                    "dom_path": "",
                    "xpath": "",
                    "heading": False,
                    "n_chars": len(text),
                    "n_words": len(words),
                    "n_stopwords": n_stop,
                    "link_density": 0.0,
                    "stopword_density": n_stop / max(len(units), 1),
                    "cf_class": final_class,
                    "final_class": final_class,
                }
            )
    return rows


def text_collection_tables(
    in_dir: Path | str,
    shard: str,
    params: FrequentLinesParams,
    stoplist_fallback: str,
    language_sample_chars: int = 2000,
):
    """The `text` input kind: a directory of `.txt` files → docs and blocks rows in the extract
    stage's schemas (one document per file, in name order; blocks are the paragraphs, the body's
    `good`, the preamble's and epilogue's `bad`), so every later stage runs unchanged. A file in a
    language without a stop list counts stop words with ``stoplist_fallback``'s, as extract does
    (config key ``extract.stoplist_fallback``)."""
    from corpusbuilder.extraction.extract import identify_sample

    docs, blocks = [], []
    for index, (found, text) in enumerate(collection_boundaries(text_files(in_dir), params)):
        doc_id = f"{shard}:{index}"
        raw = b"".join(text.raw_lines)
        try:
            raw.decode("utf-8")
            charset, charset_source = "utf-8", "utf8-valid"
        except UnicodeDecodeError:
            charset, charset_source = "latin-1", "detected"  # decode_line's fallback, line by line
        lines = [decode_line(line).rstrip("\r\n") for line in text.raw_lines]
        body = body_slice(found)
        sample = " ".join(" ".join(lines[body]).split())[:language_sample_chars]
        code, probability = identify_sample(sample)
        stoplist, stopwords = stoplist_for(code, stoplist_fallback)
        parts = [(BAD, lines[: body.start]), (GOOD, lines[body]), (BAD, lines[body.stop :])]
        by_characters = stoplist == PAGE and writes_without_spaces(code)
        if stoplist == PAGE:
            stopwords = page_stoplist(paragraphs(lines), by_characters)
        rows = _block_rows(doc_id, parts, stopwords, by_characters)
        good = [row for row in rows if is_kept_block(row["final_class"])]
        docs.append(
            {
                "doc_id": doc_id,
                "shard": shard,
                "record_index": index,
                "offset": 0,
                "warc_type": "text",
                "uri": found.name,
                "status": None,
                "content_type": "text/plain",
                "charset": charset,
                "charset_source": charset_source,
                "page_language": code,
                "page_language_probability": float(probability),
                "stoplist": stoplist,
                "outcome": CLEANED if good else SKIPPED,
                "reason": CLEANED if good else "no-text",
                "n_blocks": len(rows),
                "n_good_blocks": len(good),
                "n_good_words": sum(row["n_words"] for row in good),
            }
        )
        blocks.extend(rows)
    return docs, blocks
