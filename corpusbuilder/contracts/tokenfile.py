"""The token file, ``work/tokens/{shard}.npz``: the one writer and the readers of the layout the
tokenise stage hands to the n-gram stage, block de-duplication and the report.

One uncompressed ``.npy`` member per field, so that a reader can take a shard whole
(`read_tokens`) or stream its tokens piece by piece without loading it (`read_token_pieces`),
and a ``writer`` member naming the versions that wrote it (`common.versions`, `token_file_writer`).
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from corpusbuilder.common.faults import names_the_file
from corpusbuilder.common.io import atomic_path, npy_header
from corpusbuilder.common.versions import writer_json
from corpusbuilder.contracts.survivors import block_rows, good_after_dedup
from corpusbuilder.contracts.tables import kept_block_mask

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class TokenStream:
    """A shard's kept text as flat arrays: the tokens of block b are
    ``token_hash[block_offsets[b]:block_offsets[b + 1]]``; block b is block ``block_index[b]``
    of document ``doc_ids[block_doc[b]]``. Documents in crawl order, blocks in page order."""

    token_hash: np.ndarray  # uint64
    is_punct: np.ndarray  # bool
    is_stop: np.ndarray  # bool
    block_offsets: np.ndarray  # int64, n_blocks + 1
    block_doc: np.ndarray  # int32
    block_index: np.ndarray  # int32
    doc_ids: np.ndarray  # str
    # Given as None, these three are filled by __post_init__, so a stream always has them:
    # bool: the token starts a sentence (`tokenise.sentence_starts`); None: each block is one
    sentence_start: np.ndarray = None  # type: ignore[assignment]
    # bool: the token starts a whitespace chunk of the text; None: each token is one
    chunk_start: np.ndarray = None  # type: ignore[assignment]
    # int32: where its chunk ends in its block's ``text.split()``, with the chunks without a
    # token after it (`tokenise.chunk_ends`); None: every chunk holds a token
    chunk_end: np.ndarray = None  # type: ignore[assignment]
    # The tokens' texts, so that export writes the vertical file without tokenising again:
    # int32, the token's type (its text is ``token_types(stream)[type_id]``), and uint8, the
    # shard's types in UTF-8, one a line (a token holds no white space). Empty: a stream made
    # without its texts (`of_blocks`, a file written before they were stored).
    type_id: np.ndarray = None  # type: ignore[assignment]
    types: np.ndarray = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        tokens = len(self.token_hash)
        if self.sentence_start is None:
            self.sentence_start = block_starts(self.block_offsets, tokens)
        if self.chunk_start is None:
            self.chunk_start = np.ones(tokens, bool)
        if self.chunk_end is None:
            self.chunk_end = chunk_ends_of_starts(self.chunk_start, self.block_offsets)
        if self.type_id is None:
            self.type_id = np.empty(0, np.int32)
        if self.types is None:
            self.types = np.empty(0, np.uint8)

    def has_texts(self) -> bool:
        """Does the stream carry its tokens' texts (`type_id`, `types`)."""
        tokens = int(self.block_offsets[-1]) if len(self.block_offsets) else 0
        return len(self.type_id) == tokens

    @classmethod
    def of_blocks(
        cls, token_hash, block_offsets, is_punct=None, is_stop=None, doc_id: str = "input"
    ) -> TokenStream:
        """Tokens not tied to a shard's documents (text given by hand, a benchmark's corpus): every
        block belongs to one document, ``doc_id``; flags not given are False."""
        count, blocks = len(token_hash), len(block_offsets) - 1
        return cls(
            token_hash=np.asarray(token_hash, dtype=np.uint64),
            is_punct=np.zeros(count, bool) if is_punct is None else np.asarray(is_punct, bool),
            is_stop=np.zeros(count, bool) if is_stop is None else np.asarray(is_stop, bool),
            block_offsets=np.asarray(block_offsets, dtype=np.int64),
            block_doc=np.zeros(blocks, np.int32),
            block_index=np.arange(blocks, dtype=np.int32),
            doc_ids=np.array([doc_id]),
        )


FIELDS = tuple(TokenStream.__dataclass_fields__)
TEXT_FIELDS = ("type_id", "types")  # fields a file written before they were stored lacks
# the member that names the file's writer: a JSON string, not a field of the stream
WRITER_MEMBER = "writer"


def encode_types(types: list[str]) -> np.ndarray:
    """`TokenStream.types` of a shard's token types, in type id order."""
    return np.frombuffer("\n".join(types).encode("utf-8", "surrogatepass"), np.uint8)


def token_types(stream: TokenStream) -> list[str]:
    """The texts of a stream's token types, indexed by `TokenStream.type_id`."""
    if not stream.has_texts():
        raise ValueError(
            "the token file holds no token texts (written before they were stored): re-run tokenise"
        )
    if not len(stream.types):
        return []
    return stream.types.tobytes().decode("utf-8", "surrogatepass").split("\n")


def block_starts(block_offsets: np.ndarray, tokens: int) -> np.ndarray:
    """Per token: is it the first of its block (the sentence starts of a file that has none)."""
    first = np.zeros(tokens + 1, bool)
    first[np.asarray(block_offsets[:-1], np.int64)] = True
    return first[:tokens]


def chunk_ends_of_starts(chunk_start: np.ndarray, block_offsets: np.ndarray) -> np.ndarray:
    """`TokenStream.chunk_end` where every whitespace chunk holds a token: the chunks opened in
    the token's block up to it."""
    opened = np.concatenate(([0], np.cumsum(chunk_start, dtype=np.int64)))
    block_offsets = np.asarray(block_offsets, np.int64)
    before = np.repeat(opened[block_offsets[:-1]], np.diff(block_offsets))
    return (opened[1:] - before).astype(np.int32)


def write_token_stream(stream: TokenStream, path: Path | str) -> None:
    fields = vars(stream).copy()
    fields[WRITER_MEMBER] = np.array(writer_json())
    with atomic_path(path) as tmp, open(tmp, "wb") as out:
        np.savez(out, **fields)


@names_the_file
def token_file_writer(path: Path | str) -> dict | None:
    """The versions that wrote a token file (`common.versions`); None for one written before
    token files were stamped."""
    with np.load(path, allow_pickle=False) as archive:
        if WRITER_MEMBER not in archive.files:
            return None
        return json.loads(str(archive[WRITER_MEMBER]))


@names_the_file
def read_tokens(path: Path | str, fields: tuple[str, ...] = FIELDS) -> TokenStream:
    """A token file's stream, whole, or only the named ``fields`` (the others are then empty: a
    reader that needs a few of a large shard's arrays loads only those). A file written without
    sentence or chunk starts (by an earlier version, or by hand) reads as one sentence per block,
    one chunk per token, and without chunk ends as chunks that all hold a token; one written
    without the tokens' texts has empty `TokenStream.type_id` and `types`."""

    def chunk_start(a):
        return a["chunk_start"] if "chunk_start" in a.files else np.ones(len(a["token_hash"]), bool)

    optional = {
        "sentence_start": lambda a: block_starts(a["block_offsets"], len(a["token_hash"])),
        "chunk_start": chunk_start,
        "chunk_end": lambda a: chunk_ends_of_starts(chunk_start(a), a["block_offsets"]),
    }
    with np.load(path, allow_pickle=False) as archive:
        read = {
            name: archive[name]
            if name in archive.files or name not in optional
            else optional[name](archive)
            for name in fields
            if name in archive.files or name in optional or name not in TEXT_FIELDS
        }
    return TokenStream(**{name: read.get(name, np.empty(0)) for name in FIELDS})


def _npy_member(archive: zipfile.ZipFile, name: str):
    """An open member of an .npz positioned at its data, with its dtype and length."""
    member = archive.open(f"{name}.npy")
    count, dtype = npy_header(member)
    return member, dtype, count


def token_count(path: Path | str, field: str = "token_hash") -> int:
    """The tokens of a token file (or the length of another of its fields), from its header
    alone (members are uncompressed .npy)."""
    with zipfile.ZipFile(path) as archive:
        member, _, count = _npy_member(archive, field)
        member.close()
    return count


def document_count(path: Path | str) -> int:
    """The documents of a token file, from its header alone."""
    return token_count(path, "doc_ids")


@names_the_file
def read_token_pieces(
    path: Path | str, fields: tuple[str, ...], piece_tokens: int
) -> Iterator[tuple[dict[str, np.ndarray], np.ndarray]]:
    """A shard's tokens as pieces of at most ``piece_tokens``: per piece, the named per-token
    fields and the offsets (within the piece) at which a block starts. Only the block offsets
    are held whole, never the tokens."""
    with zipfile.ZipFile(path) as archive:
        with archive.open("block_offsets.npy") as member:
            block_offsets = np.lib.format.read_array(member).astype(np.int64)
        members = {name: _npy_member(archive, name) for name in fields}
        total = len(block_offsets) and int(block_offsets[-1])
        try:
            for begin in range(0, total, piece_tokens):
                count = min(piece_tokens, total - begin)
                arrays = {
                    name: np.frombuffer(m.read(count * dtype.itemsize), dtype=dtype)
                    for name, (m, dtype, _) in members.items()
                }
                block_starts = (
                    block_offsets[
                        np.searchsorted(block_offsets, begin) : np.searchsorted(
                            block_offsets, begin + count
                        )
                    ]
                    - begin
                )
                yield arrays, block_starts
        finally:
            for member, _, _ in members.values():
                member.close()


# --------------------------------------------------------------------------- token-level masks


def tokenised_blocks(tokens: TokenStream, blocks: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per block of a token file (`tokenfile.read_tokens`), in its order: doc_id,
    block_index, tokens (its token count) and, given extract's ``blocks`` rows, their other
    columns (null for a block they lack)."""
    import pandas as pd

    doc_ids = np.asarray(tokens.doc_ids).astype(str)
    table = pd.DataFrame(
        {
            "doc_id": doc_ids[np.asarray(tokens.block_doc, np.int64)]
            if len(doc_ids)
            else np.empty(0, str),
            "block_index": np.asarray(tokens.block_index, np.int64),
            "tokens": np.diff(np.asarray(tokens.block_offsets, np.int64)),
        }
    )
    if blocks is None:
        return table
    return table.merge(
        blocks.astype({"block_index": np.int64}),
        on=["doc_id", "block_index"],
        how="left",
        sort=False,
    )


def kept_tokens(
    tokens: TokenStream, dedup: pd.DataFrame | None, whole_chunks: bool = True
) -> np.ndarray:
    """Per token of a shard's token file (`tokenfile.read_tokens`): does it survive block
    de-duplication — its block is good and no removed part of it (``removed_starts``/``ends``)
    holds it. With ``whole_chunks``, a whitespace chunk that keeps any token keeps all of them,
    as the kept text does (`corpus.kept_text`)."""
    offsets = np.asarray(tokens.block_offsets, np.int64)
    blocks = tokenised_blocks(tokens)
    keep = np.repeat(good_after_dedup(blocks, dedup), blocks["tokens"].to_numpy())
    if dedup is None or "removed_starts" not in dedup:
        return keep
    partly = dedup.loc[dedup["removed_starts"].notna() & kept_block_mask(dedup)]
    row = block_rows(
        partly["doc_id"], partly["block_index"], blocks["doc_id"], blocks["block_index"]
    )
    partly, row = partly[row >= 0], row[row >= 0]  # rows of other shards' blocks say nothing here
    if len(partly):
        lengths = partly["removed_starts"].map(len).to_numpy()
        base = np.repeat(offsets[row], lengths)
        starts = base + np.concatenate(partly["removed_starts"].to_numpy()).astype(np.int64)
        ends = base + np.concatenate(partly["removed_ends"].to_numpy()).astype(np.int64)
        inside = np.zeros(len(keep) + 1, np.int64)  # +1 at a range's start, -1 after it
        np.add.at(inside, starts, 1)
        np.add.at(inside, ends, -1)
        removed = np.cumsum(inside)[:-1] > 0
        if whole_chunks:
            chunk = np.cumsum(tokens.chunk_start) - 1
            removed &= (
                np.bincount(chunk, weights=~removed & keep, minlength=chunk[-1] + 1)[chunk] == 0
            )
        keep &= ~removed
    return keep
