"""The final classes of a page once its duplicates are known (thesis §3.5.2, Fig. 3.5): jusText's
context-sensitive pass again with `duplicate` acting as `bad`, so stubs left between removed
duplicates go too."""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from corpusbuilder.contracts.tables import BAD, DUPLICATE, GOOD

if TYPE_CHECKING:
    import pandas as pd

# A page's final classes once some of its blocks are removed: (context-free classes, the
# extractor's final classes, removed, n_chars, heading, removed_as) -> classes. It is the
# extraction stage's jusText pass with the extract config's thresholds
# (`extraction.justext.classify_after_removal`), which the rule script binds and hands over.
Reclassify = Callable[..., list[str]]


def remembered(reclassify: Reclassify) -> Reclassify:
    """`reclassify` answering a page asked again with the same inputs from its first answer:
    `partitioned.judge_shard` asks for each page that lost a block twice (the pass inside the
    document's judgement, then the shard's table), as the same blocks and flags. The key is the
    inputs packed in a few bytes a block (the page's lists as tuples would cost kilobytes a page,
    held from the judgement to the table); an answer is forgotten once it is given again."""
    answers: dict[tuple, list[str]] = {}

    def ask(cf_classes, justext_final, duplicate, n_chars, heading, removed_as):
        key = (
            "\n".join(cf_classes),
            "\n".join(justext_final),
            bytes(duplicate),
            array("q", n_chars).tobytes(),
            bytes(heading),
            removed_as,
        )
        if (known := answers.pop(key, None)) is not None:
            return list(known)
        answers[key] = reclassify(
            cf_classes, justext_final, duplicate, n_chars, heading, removed_as=removed_as
        )
        return list(answers[key])

    return ask


def final_classes(
    cf_classes: list[str],
    justext_final: list[str],
    duplicate: list[bool],
    n_chars: list[int],
    heading: list[bool],
    reclassify: Reclassify,
) -> list[str]:
    """Classes of one page's blocks after de-duplication: duplicate blocks enter Algorithm 2.3
    as "duplicate" (bad for their neighbours), stubs they leave go, and what the extractor already
    found bad stays bad (`Reclassify`)."""
    return reclassify(cf_classes, justext_final, duplicate, n_chars, heading, removed_as=DUPLICATE)


def drop_orphan_stubs(
    classes: list[str], duplicate: list[bool], n_words: list[int], min_words: int
) -> list[str]:
    """A page that lost blocks as duplicates and keeps only blocks too short to hold an n-gram
    (fewer than ``min_words`` words) keeps nothing: what is left are the headings and stubs of
    the copied text, which n-grams cannot judge. jusText's context pass mostly removes them
    already (they are short there); a classifier that keeps headings (preset best) needs this."""
    if not any(duplicate) or any(c == GOOD and w >= min_words for c, w in zip(classes, n_words)):
        return classes
    return [BAD if c == GOOD else c for c in classes]


def page_classes_after_dedup(
    cf_classes: list[str],
    justext_final: list[str],
    duplicate: list[bool],
    n_chars: list[int],
    heading: list[bool],
    n_words: list[int],
    reclassify: Reclassify,
    min_words: int,
) -> list[str]:
    """One page's final classes: the context-sensitive pass with its
    duplicates, then no orphan stubs."""
    classes = final_classes(cf_classes, justext_final, duplicate, n_chars, heading, reclassify)
    return drop_orphan_stubs(classes, duplicate, n_words, min_words)


@dataclass
class PageBlocks:
    """Every block of a shard's pages, tokenised or not (jusText's bad blocks are context too),
    in page order, with what the context-sensitive pass reads; classes as category codes."""

    rows: np.ndarray  # int64, n_docs + 1: each document's rows
    token_block_row: np.ndarray  # int64: the row of each tokenised block
    classes: np.ndarray  # object: the class names the codes index
    cf_class: np.ndarray  # int8 codes
    final_class: np.ndarray  # int8 codes
    n_chars: np.ndarray
    heading: np.ndarray
    n_words: np.ndarray

    def kept_blocks(
        self,
        doc: int,
        first_block: int,
        duplicate: np.ndarray,
        reclassify: Reclassify,
        min_words: int,
    ) -> np.ndarray:
        """Which of a document's tokenised blocks (from `first_block`, flagged `duplicate`) are
        still good once the context-sensitive pass has run with the duplicates."""
        lo, hi = self.rows[doc], self.rows[doc + 1]
        at = self.token_block_row[first_block : first_block + len(duplicate)] - lo
        flags = np.zeros(hi - lo, bool)
        flags[at] = duplicate
        resolved = page_classes_after_dedup(
            self.classes[self.cf_class[lo:hi]].tolist(),
            self.classes[self.final_class[lo:hi]].tolist(),
            flags.tolist(),
            self.n_chars[lo:hi].tolist(),
            self.heading[lo:hi].tolist(),
            self.n_words[lo:hi].tolist(),
            reclassify,
            min_words,
        )
        return np.array(resolved, dtype=object)[at] == GOOD


def page_blocks(
    blocks: pd.DataFrame, doc_ids: list[str], block_doc: np.ndarray, block_index: np.ndarray
) -> PageBlocks:
    """The blocks.parquet rows of the tokenised documents, grouped by document in token order."""
    import pandas as pd

    doc_of = pd.Index(doc_ids).get_indexer(blocks["doc_id"])
    mine = doc_of >= 0
    doc_of = doc_of[mine]
    order = np.argsort(doc_of, kind="stable")  # blocks.parquet keeps a page's blocks in order
    table = blocks[mine].iloc[order]
    doc_of = doc_of[order]
    keys = pd.MultiIndex.from_arrays([doc_of, table["block_index"].to_numpy(np.int64)])
    token_block_row = keys.get_indexer(
        pd.MultiIndex.from_arrays(
            [np.asarray(block_doc, np.int64), np.asarray(block_index, np.int64)]
        )
    )
    if np.any(token_block_row < 0):
        missing = int(np.flatnonzero(token_block_row < 0)[0])
        raise ValueError(
            f"blocks.parquet has no row for tokenised block {block_index[missing]} of document "
            f"{doc_ids[block_doc[missing]]!r}"
        )
    codes, classes = pd.factorize(
        pd.concat([table["cf_class"], table["final_class"]], ignore_index=True)
    )
    codes = codes.astype(np.int8)
    return PageBlocks(
        rows=np.searchsorted(doc_of, np.arange(len(doc_ids) + 1)).astype(np.int64),
        token_block_row=token_block_row.astype(np.int64),
        classes=np.asarray(classes, dtype=object),
        cf_class=codes[: len(table)],
        final_class=codes[len(table) :],
        n_chars=table["n_chars"].to_numpy(np.int64),
        heading=table["heading"].to_numpy(bool),
        n_words=table["n_words"].to_numpy(np.int64),
    )
