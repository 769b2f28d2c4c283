"""Site-level boilerplate: character n-grams frequent across one host's pages are useless.

Ikeda et al. (alternation counts): for a set D of documents of one site, the top a% most frequent
character n-grams form W; the range string r_x(W) marks each character covered by an n-gram of W;
the alternation count A_D(n, a) is the number of 0/1 boundaries in r over all documents (Def. 2).
FindOptimal (Fig. 3) walks from the cut point (2, 1) to (n, a+1) or (n+1, a) while the count
decreases: too-short n-grams cover article text too and chop it up, too-long ones miss template.

Here the documents are the texts of a host's pages as extract segmented them (all blocks, in
page order, one space between blocks) rather than raw HTML, and a block mostly covered by W is
site boilerplate. `combine` feeds such blocks into jusText's context-sensitive pass as bad
(Algorithm 2.3), as block de-duplication feeds its duplicates (thesis §3.5.2).

Counting is vectorised over a host's concatenated text: the n-gram hashes of length n+1 are
those of length n extended by one character (h·B + c, wrapping uint64), and an n-gram seen once
has only unique extensions, so each longer n hashes and counts only the starts still repeated.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import numpy as np

from corpusbuilder.config import dataclass_values
from corpusbuilder.contracts.tables import BAD, cleaned_page_mask, kept_block_mask
from corpusbuilder.extraction.justext import JustextParams, classify_after_removal

if TYPE_CHECKING:
    import pandas as pd

MODES = ("off", "mark", "combine")


@dataclass(frozen=True)
class SiteBoilerplateParams:
    """Config section `extract.site_boilerplate`; the cut-point walk is Ikeda et al. §3 (Fig. 3)."""

    mode: str = "off"  # off | mark (column only) | combine (marked blocks are bad in Algorithm 2.3)
    min_pages_per_host: int = 3  # with fewer pages nothing is "frequent across the site"
    min_coverage: float = 0.8  # share of a block's characters covered by useless n-grams
    max_pages_per_host: int = 200  # pages per host the cut point is found on (all are marked)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"site_boilerplate.mode {self.mode!r}: use one of {', '.join(MODES)}")

    @classmethod
    def from_config(cls, section: dict) -> SiteBoilerplateParams:
        values = dataclass_values(cls, section)
        if values.get("mode") is False:  # YAML 1.1 reads a bare `off` as false
            values["mode"] = "off"
        return cls(**values)


_SPACE = re.compile(r"\s+")
_BASE = np.uint64(0x100000001B3)  # odd and above any code point: short n-grams hash injectively


def preprocess(text: str) -> str:
    """Tabs and newlines are spaces, runs of spaces one space (Ikeda et al. §3)."""
    return _SPACE.sub(" ", text).strip()


def host_of(uri: str) -> str:
    """The site a page belongs to: its host name, lower-cased, without a leading "www."."""
    return (urlsplit(uri).hostname or "").lower().removeprefix("www.")


# --------------------------------------------------------------------------- one host's text


@dataclass(frozen=True)
class HostText:
    """A host's documents concatenated: code points, and where each document starts and ends."""

    codes: np.ndarray  # uint64, the documents back to back
    starts: np.ndarray  # int64 per document
    ends: np.ndarray  # int64 per character: the end of its document

    @classmethod
    def of(cls, docs: Sequence[str]) -> HostText:
        joined = "".join(docs)
        codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
        lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
        bounds = np.concatenate([[0], np.cumsum(lengths)])
        return cls(codes, bounds[:-1], np.repeat(bounds[1:], lengths))

    def __len__(self) -> int:
        return len(self.codes)

    def head(self, documents: int) -> HostText:
        """The first `documents` documents (a prefix of the concatenation)."""
        if documents >= len(self.starts):
            return self
        end = int(self.starts[documents])
        return HostText(self.codes[:end], self.starts[:documents], self.ends[:end])

    def valid_starts(self, n: int) -> int:
        """How many n-grams the documents hold (none crosses a document boundary)."""
        return int(np.maximum(np.diff(np.append(self.starts, len(self))) - n + 1, 0).sum())


@dataclass(frozen=True)
class NgramLevel:
    """The n-grams of one length n that occur twice or more, at every start where they occur."""

    n: int
    positions: np.ndarray  # start of each repeated n-gram occurrence
    hashes: np.ndarray  # its polynomial hash
    counts: np.ndarray  # how often its n-gram occurs in the host's documents
    ranked: np.ndarray  # countsort: counts of the distinct repeated n-grams, most frequent first
    distinct: int  # distinct n-grams of length n, those seen once included

    def threshold(self, a: int) -> int:
        """The count of the a%-th most frequent n-gram; every n-gram as frequent is in W.

        With a few pages whole templates tie, and cutting a tie at an arbitrary rank would split
        the template. An n-gram seen once is never frequent, whatever its rank.
        """
        rank = math.ceil(self.distinct * a / 100) - 1
        return max(int(self.ranked[rank]) if 0 <= rank < len(self.ranked) else 1, 2)

    def useless_starts(self, a: int) -> np.ndarray:
        """Starts of the occurrences of W(n, a)."""
        return self.positions[self.counts >= self.threshold(a)]

    def useless_hashes(self, a: int) -> np.ndarray:
        return np.unique(self.hashes[self.counts >= self.threshold(a)])


def _level(text: HostText, n: int, positions: np.ndarray, hashes: np.ndarray) -> NgramLevel:
    """Count the n-grams starting at `positions`; every other start holds an n-gram seen once."""
    import pandas as pd

    ids, uniques = pd.factorize(hashes, sort=False)
    per_id = np.bincount(ids, minlength=len(uniques))
    counts = per_id[ids]
    repeated = counts >= 2
    singletons = text.valid_starts(n) - len(positions)
    return NgramLevel(
        n,
        positions[repeated],
        hashes[repeated],
        counts[repeated],
        np.sort(per_id[per_id >= 2])[::-1],
        len(uniques) + singletons,
    )


def first_level(text: HostText) -> NgramLevel:
    """Single characters (n = 1), the start of the incremental walk."""
    return _level(text, 1, np.arange(len(text), dtype=np.int64), text.codes.copy())


def next_level(text: HostText, level: NgramLevel) -> NgramLevel:
    """Length n+1 from length n: only repeated n-grams can have repeated extensions."""
    fits = level.positions + level.n < text.ends[level.positions]
    positions = level.positions[fits]
    hashes = level.hashes[fits] * _BASE + text.codes[positions + level.n]
    return _level(text, level.n + 1, positions, hashes)


def char_ngram_hashes(text: HostText, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every n-gram's hash (the same polynomial as the levels) and its start."""
    starts = np.flatnonzero(np.arange(len(text)) + n <= text.ends)
    hashes = text.codes[starts].copy()
    for j in range(1, n):
        hashes *= _BASE
        hashes += text.codes[starts + j]
    return hashes, starts


def covered(length: int, starts: np.ndarray, n: int) -> np.ndarray:
    """Where r_x(W) is 0: characters inside some occurrence of a useless n-gram."""
    depth = np.bincount(starts, minlength=length + 1) - np.bincount(
        starts + n, minlength=length + 1
    )
    return np.cumsum(depth[:length]) > 0


def alternation_count(text: HostText, starts: np.ndarray, n: int) -> int:
    """A_D(W): 0/1 boundaries of the range strings, summed over the documents (Def. 2)."""
    flips = np.diff(covered(len(text), starts, n))
    joins = text.starts[(text.starts > 0) & (text.starts < len(text))]
    flips[joins - 1] = False  # a document's last character and the next one's first
    return int(np.count_nonzero(flips))


def walk(text: HostText) -> tuple[int, int, NgramLevel]:
    """FindOptimal (Fig. 3) on a host's text: the cut point (n, a) reached from (2, 1) by
    decreasing alternation counts, and the n-grams of length n."""
    longest = int(np.diff(np.append(text.starts, len(text))).max(initial=0))
    levels = {2: next_level(text, first_level(text))}

    def count(n: int, a: int) -> int:
        if n not in levels:
            levels[n] = next_level(text, levels[n - 1])
        return alternation_count(text, levels[n].useless_starts(a), n)

    n, a = 2, 1
    current = count(n, a)
    while n <= longest and a < 100:
        more_a, more_n = count(n, a + 1), count(n + 1, a)
        if current <= more_a and current <= more_n:
            break
        if more_a < more_n:
            a, current = a + 1, more_a
        else:
            levels.pop(n)  # O_cur := O_next; the shorter ranking is never needed again
            n, current = n + 1, more_n
    return n, a, levels[n]


def find_optimal(docs: Sequence[str]) -> tuple[int, int]:
    """FindOptimal (Fig. 3) on documents: the cut point (n, a)."""
    n, a, _ = walk(HostText.of([preprocess(d) for d in docs]))
    return n, a


def block_coverage(
    text: HostText, block_lengths: Sequence[np.ndarray], useless: np.ndarray, n: int
) -> list[np.ndarray]:
    """Per page, the share of each block's characters covered by the useless n-grams `useless`.

    `text` holds each page as its blocks joined by one space, as one document: an n-gram of W
    that spans two blocks covers both (templates run across block boundaries).
    """
    hashes, starts = char_ngram_hashes(text, n)
    inside = np.concatenate(
        [[0], np.cumsum(covered(len(text), starts[np.isin(hashes, useless)], n))]
    )
    out = []
    for doc_start, lengths in zip(text.starts, block_lengths):
        block_starts = doc_start + np.concatenate([[0], np.cumsum(lengths[:-1] + 1)]).astype(
            np.int64
        )
        hits = inside[block_starts + lengths] - inside[block_starts]
        out.append(np.divide(hits, lengths, out=np.zeros(len(lengths)), where=lengths > 0))
    return out


def host_boilerplate(
    pages: Sequence[Sequence[str]], params: SiteBoilerplateParams
) -> list[np.ndarray]:
    """One host's pages (each a list of block texts) → per page, which blocks are site boilerplate.

    The cut point and W are found on the first `max_pages_per_host` pages; every page is marked.
    """
    if len(pages) < params.min_pages_per_host:
        return [np.zeros(len(page), dtype=bool) for page in pages]
    blocks = [[preprocess(b) for b in page] for page in pages]
    text = HostText.of([" ".join(page) for page in blocks])
    sample = text.head(params.max_pages_per_host)
    n, a, level = walk(sample)
    lengths = [np.fromiter(map(len, page), dtype=np.int64, count=len(page)) for page in blocks]
    coverage = block_coverage(text, lengths, level.useless_hashes(a), n)
    return [shares >= params.min_coverage for shares in coverage]


def combined_classes(
    cf_classes: Sequence[str],
    final_classes: Sequence[str],
    site: Sequence[bool] | np.ndarray,
    n_chars: Sequence[int],
    heading: Sequence[bool],
    justext: JustextParams,
) -> tuple[list[str], list[str]]:
    """`combine`: site-boilerplate blocks enter Algorithm 2.3 as bad, so short and near-good
    blocks between them turn bad too. Returns the new context-free and final classes."""
    cf = [BAD if marked else cls for cls, marked in zip(cf_classes, site)]
    return cf, classify_after_removal(
        list(cf_classes), list(final_classes), list(site), list(n_chars), list(heading), justext
    )


# --------------------------------------------------------------------------- a shard's tables


def mark_blocks(
    blocks: pd.DataFrame, docs: pd.DataFrame, params: SiteBoilerplateParams, justext: JustextParams
) -> pd.DataFrame:
    """Extract's blocks table (page order) with `site_boilerplate` set per host of `docs`' uri;
    in `combine` mode its cf_class and final_class too."""
    import pandas as pd

    out = blocks.copy()
    out["site_boilerplate"] = False
    if params.mode == "off" or out.empty:
        return out
    uri = docs.loc[cleaned_page_mask(docs)].set_index("doc_id")["uri"]
    doc_ids = out["doc_id"].to_numpy()
    bounds = np.flatnonzero(np.r_[True, doc_ids[1:] != doc_ids[:-1], True])
    spans = pd.DataFrame({"doc_id": doc_ids[bounds[:-1]], "first": bounds[:-1], "last": bounds[1:]})
    spans["host"] = spans["doc_id"].map(uri).fillna("").map(host_of)
    texts = out["text"].tolist()
    marked = np.zeros(len(out), dtype=bool)
    for name, host in spans.groupby("host", sort=False):
        if not name or len(host) < params.min_pages_per_host:  # no URL, no site
            continue
        pages = [texts[first:last] for first, last in zip(host["first"], host["last"])]
        for first, last, page_marks in zip(
            host["first"], host["last"], host_boilerplate(pages, params)
        ):
            marked[first:last] = page_marks
    out["site_boilerplate"] = marked
    if params.mode == "combine":
        cf, final = out["cf_class"].to_numpy(object), out["final_class"].to_numpy(object)
        n_chars, heading = out["n_chars"].tolist(), out["heading"].tolist()
        for first, last in zip(spans["first"], spans["last"]):
            if marked[first:last].any():
                cf[first:last], final[first:last] = combined_classes(
                    cf[first:last],
                    final[first:last],
                    marked[first:last],
                    n_chars[first:last],
                    heading[first:last],
                    justext,
                )
        out["cf_class"], out["final_class"] = cf, final
    return out


def recount_good(docs: pd.DataFrame, blocks: pd.DataFrame) -> pd.DataFrame:
    """docs with n_good_blocks / n_good_words recounted from blocks' final classes."""
    good = blocks[kept_block_mask(blocks)].groupby("doc_id")["n_words"].agg(["size", "sum"])
    out = docs.copy()
    ok = cleaned_page_mask(out)
    out.loc[ok, "n_good_blocks"] = (
        out.loc[ok, "doc_id"].map(good["size"]).fillna(0).astype(np.int32)
    )
    out.loc[ok, "n_good_words"] = out.loc[ok, "doc_id"].map(good["sum"]).fillna(0).astype(np.int32)
    return out
