"""The stage: every shard's duplicate n-grams, the global processing order, the buckets, the
pass over them, and the per-shard output tables."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from corpusbuilder.common.io import atomic_path, write_table
from corpusbuilder.contracts.ngramfiles import read_duplicate_ngrams
from corpusbuilder.contracts.tables import DEDUP_SCHEMA, kept_block_mask, read_table, stage_table
from corpusbuilder.contracts.tokenfile import TokenStream, read_tokens
from corpusbuilder.dedup.context import (
    PageBlocks,
    Reclassify,
    page_blocks,
    page_classes_after_dedup,
)
from corpusbuilder.dedup.document import dedup_shard_document
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.dedup.provenance_log import Provenance
from corpusbuilder.dedup.sentences import (
    first_words_of_chunks,
    inner_sentence_starts,
    removed_chunks,
)
from corpusbuilder.dedup.spill import SpilledShards
from corpusbuilder.dedup.state import OutputRuns, check_state, kept_ngrams, preload_output
from corpusbuilder.dedup.store import duplicate_ngram_store, truncate_hashes
from corpusbuilder.ngrams.hashing import kind_mask, kind_words, ngram_hashes, ngram_starts

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger("corpusbuilder.dedup")

# --- shard preparation: n-grams of every document, only the duplicate ones kept ----------------


@dataclass
class ShardNgrams:
    """One shard's documents reduced to what de-duplication reads: units in word positions and
    the duplicate n-grams (G₂₊ ∪ G_out members), all in shard-wide word positions."""

    doc_ids: list[str]
    block_doc: np.ndarray  # int32, document of each block
    block_index: np.ndarray  # int32, block's index in its page
    word_offsets: np.ndarray  # int64, n_blocks + 1, blocks in words of the chosen kind
    doc_blocks: np.ndarray  # int64, n_docs + 1, each document's block range
    dup_handles: np.ndarray  # the duplicate n-grams as `store.locate` names them
    dup_starts: np.ndarray
    doc_ngrams: np.ndarray  # int64, n-grams per document
    doc_duplicates: np.ndarray  # int64, duplicate n-grams per document
    pages: PageBlocks | None = None  # every block of the pages, for the context-sensitive pass
    sentence_starts: np.ndarray | None = (
        None  # sentence mode: word positions starting a sentence inside a block
    )
    chunk_start: np.ndarray | None = None  # span mode: per word, does it start a whitespace chunk

    def duplicate_share(self) -> np.ndarray:
        """Share of each document's n-grams that are duplicate (the §3.5 ordering key)."""
        return np.divide(
            self.doc_duplicates,
            self.doc_ngrams,
            out=np.zeros(len(self.doc_ngrams)),
            where=self.doc_ngrams > 0,
        )

    def document_units(self, doc: int, level: str) -> np.ndarray:
        first, last = self.doc_blocks[doc], self.doc_blocks[doc + 1]
        if level == "document":
            return self.word_offsets[[first, last]]
        return self.word_offsets[first : last + 1]

    def document_sentence_starts(self, doc: int) -> np.ndarray | None:
        """Sentence mode: the words at which a sentence starts inside
        one of the document's blocks."""
        if self.sentence_starts is None:
            return None
        first, last = self.word_offsets[self.doc_blocks[[doc, doc + 1]]]
        lo, hi = np.searchsorted(self.sentence_starts, [first, last])
        return self.sentence_starts[lo:hi]

    def document_chunk_starts(self, doc: int) -> np.ndarray | None:
        if self.chunk_start is None:
            return None
        first, last = self.word_offsets[self.doc_blocks[[doc, doc + 1]]]
        return self.chunk_start[first:last]

    def document_duplicates(self, doc: int) -> tuple[np.ndarray, np.ndarray]:
        first, last = self.word_offsets[self.doc_blocks[[doc, doc + 1]]]
        lo, hi = np.searchsorted(self.dup_starts, [first, last])
        return self.dup_handles[lo:hi], self.dup_starts[lo:hi]


def shard_ngrams(
    tokens: TokenStream,
    params: DedupParams,
    store,
    blocks: pd.DataFrame | None = None,
    seen_starts: np.ndarray | None = None,
) -> ShardNgrams:
    """Hash every n-gram of a shard's tokens at once and keep the duplicate ones (with `blocks`,
    the shard's blocks.parquet, every block of its pages for the context-sensitive pass). With
    `seen_starts` (sorted; the partitioned mode, no `store`), the duplicate n-grams are those
    starting at these words, and their handles are their positions in it."""
    words, word_offsets, kept_tokens = kind_words(tokens, params.kind)
    sentences = (
        None
        if params.level != "sentence"
        else inner_sentence_starts(tokens.sentence_start, kept_tokens, word_offsets)
    )
    if seen_starts is None:
        hashes, starts = ngram_hashes(words, word_offsets, params.n)
        duplicate, handles = store.locate(truncate_hashes(hashes, params.hash_bits))
    else:  # the occurrences are known by where they start: no n-gram is hashed again
        starts = ngram_starts(word_offsets, params.n)
        duplicate = np.isin(starts, seen_starts, assume_unique=True)
        handles = np.searchsorted(seen_starts, starts[duplicate])
    block_doc = np.asarray(tokens.block_doc, np.int32)
    doc_ids = [str(d) for d in tokens.doc_ids]
    doc_blocks = np.searchsorted(block_doc, np.arange(len(doc_ids) + 1)).astype(np.int64)
    if np.any(np.diff(block_doc) < 0):
        raise ValueError(
            "token file: blocks of a document must be contiguous and in document order"
        )
    doc_of_start = np.searchsorted(word_offsets[doc_blocks], starts, side="right") - 1
    return ShardNgrams(
        doc_ids=doc_ids,
        block_doc=block_doc,
        block_index=np.asarray(tokens.block_index, np.int32),
        word_offsets=word_offsets,
        doc_blocks=doc_blocks,
        dup_handles=handles,
        dup_starts=starts[duplicate],
        doc_ngrams=np.bincount(doc_of_start, minlength=len(doc_ids)),
        doc_duplicates=np.bincount(doc_of_start[duplicate], minlength=len(doc_ids)),
        pages=None
        if blocks is None
        else page_blocks(blocks, doc_ids, block_doc, tokens.block_index),
        sentence_starts=sentences,
        chunk_start=None
        if params.level != "span"
        else first_words_of_chunks(tokens.chunk_start, kept_tokens),
    )


def processing_order(shares: list[np.ndarray], order: str) -> np.ndarray:
    """(shard, document) pairs in processing order: by increasing share of duplicate n-grams,
    ties in crawl order (§3.5), or crawl order alone."""
    shard = np.concatenate(
        [np.full(len(s), i, np.int32) for i, s in enumerate(shares)] + [np.empty(0, np.int32)]
    )
    position = np.concatenate(
        [np.arange(len(s), dtype=np.int32) for s in shares] + [np.empty(0, np.int32)]
    )
    if order == "dup-share":
        keys = np.concatenate(list(shares) + [np.empty(0)])
        ranked = np.lexsort((position, shard, keys))
    else:
        ranked = np.lexsort((position, shard))
    return np.stack([shard[ranked], position[ranked]], axis=1)


def buckets(
    order: np.ndarray, doc_tokens: list[np.ndarray], bucket_tokens: int
) -> list[np.ndarray]:
    """Cut the processing order into consecutive runs of at most `bucket_tokens` tokens
    (a single longer document makes a bucket of its own)."""
    sizes = np.array([doc_tokens[s][d] for s, d in order], dtype=np.int64)
    bucket_of = np.cumsum(sizes) // max(bucket_tokens, 1)
    cuts = np.flatnonzero(np.diff(bucket_of)) + 1
    return [part for part in np.split(order, cuts) if len(part)]


# --- the stage ---------------------------------------------------------------------------------


@dataclass
class Shard:
    name: str
    tokens: Path
    blocks: Path
    output: Path


@dataclass
class BlockVerdicts:
    """Per-block results of one shard, filled bucket by bucket; in sentence and span modes also
    the parts removed from blocks that keep the rest."""

    share: np.ndarray
    duplicate: np.ndarray
    duplicate_of: np.ndarray  # global document index
    removed: list[tuple[int, int, int, int]] = field(
        default_factory=list
    )  # (block, first word, end, document)

    @classmethod
    def empty(cls, blocks: int) -> BlockVerdicts:
        return cls(
            np.zeros(blocks, np.float32), np.zeros(blocks, bool), np.full(blocks, -1, np.int32)
        )


@dataclass
class DedupStats:
    documents: int = 0
    documents_processed: int = 0  # documents holding at least one duplicate n-gram
    duplicate_ngrams: int = 0
    store_bytes: int = 0
    spilled_bytes: int = 0  # the prepared shards pass 1 wrote for pass 2 (removed after it)
    tokens: int = 0
    partly_kept_blocks: int = (
        0  # sentence and span modes: blocks that lost some parts and kept others
    )
    removed_parts: int = 0  # the parts they lost
    blocks: dict = field(default_factory=dict)  # final class → blocks (of the deduplicated ones)
    words: dict = field(default_factory=dict)  # final class → words (blocks.parquet n_words)
    seconds: dict = field(default_factory=dict)


@dataclass
class Plan:
    """What pass 1 learns of the corpus: the processing order of its documents, their sizes and
    ids, and the per-block verdicts to fill; every shard as pass 1
    prepared it, spilled for pass 2."""

    order: np.ndarray  # (shard, document) pairs in processing order
    doc_tokens: list[np.ndarray]
    doc_ids: list[list[str]]
    doc_base: np.ndarray  # global index of each shard's first document
    verdicts: list[BlockVerdicts]
    prepared: SpilledShards
    earlier_ids: list[str] = field(
        default_factory=list
    )  # documents of the corpus de-duplicated against

    def all_ids(self) -> np.ndarray:
        """Document ids by global index: this corpus's in crawl order, then the earlier corpus's
        that own an n-gram this one repeats."""
        return np.array(
            [i for ids in self.doc_ids for i in ids] + self.earlier_ids or [""], dtype=object
        )


def dedup_corpus(
    shards: list[Shard],
    duplicates_path: Path | str,
    stats_path: Path | str | None,
    params: DedupParams,
    reclassify: Reclassify,
    against: Path | str | None = None,
    state_path: Path | str | None = None,
) -> DedupStats:
    """The dedup stage over every shard: tokens + blocks + G₂₊ → per-shard override tables.

    `against`: the state of an earlier corpus, whose output n-grams count as already output
    (`dedup.against`); `state_path`: where this corpus's state goes (the earlier one merged in)."""
    started = time.perf_counter()
    stats = DedupStats()
    store = duplicate_ngram_store(read_duplicate_ngrams(duplicates_path), params)
    stats.duplicate_ngrams = len(store)
    stats.store_bytes = store.nbytes
    if against is not None:
        check_state(against, params)  # before the long pass 1
    scratch = shards[0].output.parent if shards else Path(".")
    plan = plan_documents(shards, store, params, stats, scratch)
    stats.seconds["order"] = round(time.perf_counter() - started, 3)

    provenance = Provenance(scratch)
    if against is not None:
        plan.earlier_ids = preload_output(against, store, params, provenance, stats.documents)
    units = remove_duplicate_units(plan, store, provenance, params, reclassify, stats)
    # duplicate_of: the sets are given up for a table of who sent what to output
    owners = store.owner_table()
    del store
    fill_duplicate_of(plan.verdicts, units, provenance.resolve(owners))
    del owners
    stats.seconds["dedup"] = round(time.perf_counter() - started - stats.seconds["order"], 3)

    runs = (
        None
        if state_path is None
        else OutputRuns(Path(state_path).parent, against, [i for ids in plan.doc_ids for i in ids])
    )
    write_shard_outputs(shards, plan, params, reclassify, stats, runs)
    stats.seconds["total"] = round(time.perf_counter() - started, 3)
    if runs is not None:
        runs.write(state_path, params)
        stats.seconds["state"] = round(time.perf_counter() - started - stats.seconds["total"], 3)
    if stats_path is not None:
        with atomic_path(stats_path) as tmp:
            tmp.write_text(json.dumps({"params": asdict(params), **asdict(stats)}, indent=1) + "\n")
    log.info(
        "dedup: %d documents, %d tokens, blocks %s, %.1f s",
        stats.documents,
        stats.tokens,
        stats.blocks,
        stats.seconds["total"],
    )
    return stats


def plan_documents(
    shards: list[Shard], store, params: DedupParams, stats: DedupStats, scratch: Path
) -> Plan:
    """Pass 1: ordering keys and sizes, one shard at a time. Each shard is read and prepared
    here only, and spilled to a scratch directory in `scratch` for pass 2, so the corpus is
    hashed once and memory holds one prepared shard, whatever its size."""
    shares, doc_tokens, doc_ids, verdicts = [], [], [], []
    spilled = SpilledShards(scratch)
    for s, shard in enumerate(shards):
        tokens = read_tokens(shard.tokens, shard_fields(params))
        prepared = shard_ngrams(tokens, params, store, context_blocks(shard, params))
        spilled.put(s, prepared)
        shares.append(prepared.duplicate_share())
        doc_tokens.append(np.diff(np.asarray(tokens.block_offsets)[prepared.doc_blocks]))
        doc_ids.append(prepared.doc_ids)
        verdicts.append(BlockVerdicts.empty(len(prepared.block_doc)))
        stats.tokens += len(tokens.token_hash)
    doc_base = np.concatenate(([0], np.cumsum([len(ids) for ids in doc_ids]))).astype(np.int64)
    stats.documents = int(doc_base[-1])
    stats.spilled_bytes = spilled.nbytes
    return Plan(
        processing_order(shares, params.order), doc_tokens, doc_ids, doc_base, verdicts, spilled
    )


def shard_fields(params: DedupParams) -> tuple[str, ...]:
    """What `shard_ngrams` reads of a token file: not the tokens' texts, nor the chunks' ends (a
    third of the file), nor the sentences or chunks a level does not cut blocks by."""
    fields = ("token_hash", "is_punct", "is_stop", "block_offsets", "block_doc", "block_index")
    return (
        *fields,
        "doc_ids",
        *(["sentence_start"] if params.level == "sentence" else []),
        *(["chunk_start"] if params.level == "span" else []),
    )


def remove_duplicate_units(
    plan: Plan,
    store,
    provenance: Provenance,
    params: DedupParams,
    reclassify: Reclassify,
    stats: DedupStats,
) -> list[tuple]:
    """Pass 2: Algorithm 3.1, bucket by bucket in processing order (the spilled shards a bucket
    touches are mapped for it, so the pages it reads leave the job's resident set after it);
    fills ``plan.verdicts``' shares and duplicate flags and logs who sent what. Returns, per
    document with duplicate units, (shard, first block of each unit, block after it, and for
    a part of a block its first word and the word after it, else -1), in the order
    `provenance` numbered them."""
    units = []
    for bucket in buckets(plan.order, plan.doc_tokens, params.bucket_tokens):
        prepared = {s: plan.prepared.get(s) for s in np.unique(bucket[:, 0])}
        for s, d in bucket:
            shard = prepared[s]
            if shard.doc_duplicates[d] == 0:
                continue
            stats.documents_processed += 1
            result, first, stop = dedup_shard_document(shard, d, params, reclassify, store)
            provenance.record(result, int(plan.doc_base[s] + d))
            assert result.unit_block is not None and result.unit_offsets is not None  # always set
            # a block goes when all its units go; a document-level verdict
            # is broadcast to all its blocks
            whole = (
                np.bincount(
                    result.unit_block, weights=~result.duplicate, minlength=len(result.share)
                )
                == 0
            )
            plan.verdicts[s].share[first:stop] = result.share
            plan.verdicts[s].duplicate[first:stop] = whole
            if result.duplicate.any():
                bounds = (
                    np.arange(first, stop + 1)
                    if params.level != "document"
                    else np.array([first, stop])
                )
                at = result.unit_block[result.duplicate]
                part = ~whole[at]
                words = np.flatnonzero(result.duplicate)
                part_first = np.where(part, result.unit_offsets[words], -1)
                part_end = np.where(part, result.unit_offsets[words + 1], -1)
                units.append((s, bounds[at], bounds[at + 1], part_first, part_end))
        del prepared
    plan.prepared.cleanup()
    return units


def fill_duplicate_of(
    verdicts: list[BlockVerdicts], units: list[tuple], owner_of_unit: np.ndarray
) -> None:
    """Each duplicate unit's blocks, or removed part, name the document it duplicates
    (`Provenance.resolve`)."""
    for (s, firsts, stops, part_firsts, part_ends), owner in zip(
        units, np.split(owner_of_unit, np.cumsum([len(unit[1]) for unit in units]))
    ):
        for first, stop, part_first, part_end, doc in zip(
            firsts, stops, part_firsts, part_ends, owner
        ):
            if part_first < 0:
                verdicts[s].duplicate_of[first:stop] = doc
            else:
                verdicts[s].removed.append((int(first), int(part_first), int(part_end), int(doc)))


def write_shard_outputs(
    shards: list[Shard],
    plan: Plan,
    params: DedupParams,
    reclassify: Reclassify,
    stats: DedupStats,
    runs: OutputRuns | None = None,
) -> None:
    """Pass 3: the context-sensitive pass on pages with duplicates, and the override tables;
    with `runs`, each shard's output n-grams go to the state's runs."""
    all_ids = plan.all_ids()
    for s, (shard, shard_verdicts) in enumerate(zip(shards, plan.verdicts)):
        fields = ["doc_ids", "block_doc", "block_index"]
        if shard_verdicts.removed:  # parts to take from words to tokens
            fields += ["block_offsets", "is_punct", "is_stop", "chunk_start", "chunk_end"]
        if runs is not None:  # the n-grams again, for the state
            fields += ["token_hash", "block_offsets", "is_punct", "is_stop"]
        tokens = read_tokens(shard.tokens, tuple(dict.fromkeys(fields)))
        table = shard_output(
            read_table(shard.blocks, BLOCK_COLUMNS),
            tokens,
            shard_verdicts,
            all_ids,
            reclassify,
            params,
        )
        count_verdicts(stats, table)
        write_table(stage_table(table, DEDUP_SCHEMA), shard.output)
        if runs is not None:
            hashes, docs = kept_ngrams(tokens, table, params)
            runs.add(hashes, docs + plan.doc_base[s])


BLOCK_COLUMNS = [
    "doc_id",
    "block_index",
    "cf_class",
    "final_class",
    "n_chars",
    "heading",
    "n_words",
]


def context_blocks(shard: Shard, params: DedupParams) -> pd.DataFrame | None:
    """What the context-sensitive pass reads of a shard's blocks, when it judges blocks."""
    if params.level == "document":
        return None
    return read_table(shard.blocks, BLOCK_COLUMNS)


def removed_part_lists(
    verdicts: BlockVerdicts, tokens: TokenStream, params: DedupParams, all_ids: np.ndarray
) -> tuple[pd.Series, ...]:
    """Per tokenised block, the parts removed from it — first token and the token after it,
    counted from the block's first token — the documents they duplicate, and the same parts in
    the block's whitespace chunks (`removed_chunks`), which export cuts the text with (None for
    a block kept whole or removed whole). A part's words are taken back to tokens: under a kind
    other than `all`, punctuation at its edges stays."""
    import pandas as pd

    lists = [[None] * len(verdicts.share) for _ in range(5)]
    if verdicts.removed:
        block, first, end, doc = np.array(verdicts.removed, np.int64).T
        order = np.lexsort((first, block))
        block, first, end, doc = block[order], first[order], end[order], doc[order]
        token_of_word = np.flatnonzero(kind_mask(params.kind, tokens.is_punct, tokens.is_stop))
        offsets = np.asarray(tokens.block_offsets, np.int64)
        first, end = token_of_word[first], token_of_word[end - 1] + 1
        chunk_first, chunk_last = removed_chunks(first, end, offsets[block + 1], tokens)
        first, end = first - offsets[block], end - offsets[block]
        cuts = np.flatnonzero(np.diff(block)) + 1
        for b, f, e, d, cf, cl in zip(
            block[np.r_[0, cuts]].tolist(),
            np.split(first, cuts),
            np.split(end, cuts),
            np.split(doc, cuts),
            np.split(chunk_first, cuts),
            np.split(chunk_last, cuts),
        ):
            whole = cl > cf  # a part inside one chunk cuts none: the chunk stays whole
            lists[0][b], lists[1][b], lists[2][b] = (
                f.tolist(),
                e.tolist(),
                all_ids[np.maximum(d, 0)].tolist(),
            )
            lists[3][b], lists[4][b] = cf[whole].tolist(), cl[whole].tolist()
    return tuple(pd.Series(values, dtype=object) for values in lists)


def shard_output(
    blocks: pd.DataFrame,
    tokens: TokenStream,
    verdicts: BlockVerdicts,
    all_ids: np.ndarray,
    reclassify: Reclassify,
    params: DedupParams,
) -> pd.DataFrame:
    """Every block of the shard's de-duplicated documents with its class after de-duplication
    (plus `n_words`, for the stats); in sentence and span modes, the parts a block lost and whom
    they copy.
    Pages without a duplicate block keep jusText's classes."""
    import pandas as pd

    doc_ids = np.asarray(tokens.doc_ids).astype(str)
    starts, ends, removed_of, chunk_starts, chunk_ends = removed_part_lists(
        verdicts, tokens, params, all_ids
    )
    keyed = pd.DataFrame(
        {
            "doc_id": doc_ids[np.asarray(tokens.block_doc)],
            "block_index": np.asarray(tokens.block_index, np.int32),
            "dup_share": verdicts.share,
            "duplicate": verdicts.duplicate,
            "duplicate_of": pd.Series(all_ids[np.maximum(verdicts.duplicate_of, 0)]).where(
                verdicts.duplicate_of >= 0
            ),
            "removed_starts": starts,
            "removed_ends": ends,
            "removed_duplicate_of": removed_of,
            "removed_chunk_starts": chunk_starts,
            "removed_chunk_ends": chunk_ends,
        }
    )
    table = blocks.loc[blocks["doc_id"].isin(set(doc_ids)), BLOCK_COLUMNS]
    # blocks.parquet order is page order; a left merge keeps it
    table = table.merge(keyed, on=["doc_id", "block_index"], how="left", sort=False)
    duplicate = table["duplicate"].astype("boolean").fillna(False).to_numpy(bool)
    table["duplicate"] = duplicate
    final = table["final_class"].to_numpy(dtype=object).copy()
    page = table["doc_id"].to_numpy(dtype=object)
    starts = (
        np.flatnonzero(np.concatenate(([True], page[1:] != page[:-1])))
        if len(page)
        else np.empty(0, int)
    )
    ends = np.append(starts[1:], len(page))
    touched = np.flatnonzero(np.add.reduceat(duplicate, starts) > 0) if len(page) else starts
    if len(touched):
        cf, n_chars, heading, n_words = (
            table[c].to_numpy() for c in ("cf_class", "n_chars", "heading", "n_words")
        )
        for first, last in zip(starts[touched], ends[touched]):
            final[first:last] = page_classes_after_dedup(
                cf[first:last].tolist(),
                final[first:last].tolist(),
                duplicate[first:last].tolist(),
                n_chars[first:last].tolist(),
                heading[first:last].tolist(),
                n_words[first:last].tolist(),
                reclassify,
                params.n,
            )
    table["final_class"] = final
    return table[[*DEDUP_SCHEMA.names, "n_words"]]


def count_verdicts(stats: DedupStats, table: pd.DataFrame) -> None:
    """Add a shard's output table to the counts: blocks and words per final class, and the
    blocks partly kept (sentence and span modes) with the parts they lost."""
    partly = table["removed_starts"].notna() & kept_block_mask(table)
    stats.partly_kept_blocks += int(partly.sum())
    stats.removed_parts += int(table.loc[partly, "removed_starts"].map(len).sum())
    for cls, group in table.groupby("final_class"):
        stats.blocks[cls] = stats.blocks.get(cls, 0) + len(group)
        stats.words[cls] = stats.words.get(cls, 0) + int(group["n_words"].sum())
