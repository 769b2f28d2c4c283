"""Stage `tokenise`: the kept clean text as flat token arrays for the n-gram stages (thesis §3.6).

Thesis §3.6: "The texts were tokenised using a simple regular expression based tokeniser. The
tokeniser splits input to tokens such as words, punctuation marks, numbers and other entities
often found on the Web, such as e-mail addresses or URLs." Table 3.3 then builds n-grams of
three kinds — all tokens, no punctuation ("tokens starting with punctuation characters"), no
punctuation and no stop words — so every token carries `is_punct` and `is_stop`.

The tokeniser (`tokenise`), deterministic for a given Python (its Unicode tables):

1. the text is NFC-normalised; soft hyphens are removed and zero-width spaces and byte-order
   marks become spaces (invisible, but they would split or glue words);
2. with ``cjk_chars`` (default), each character of a script written without spaces — Han,
   Hiragana, Katakana, Thai, Lao, Khmer, Myanmar (`NO_SPACE_SCRIPTS`) — gets spaces around it:
   one token per character, as word segmentation would need a dictionary;
3. the text is split at whitespace and each chunk is matched left to right against, in order:

   - URL: ``http://``, ``https://``, ``ftp://`` or ``www.`` up to the next whitespace, less
     trailing punctuation (``see https://x.org/a).`` → ``https://x.org/a``, ``)``, ``.``);
   - e-mail address: ``john.doe+tag@mail.example.org``;
   - number: digits with inner ``.`` or ``,`` groups (``1,000.50``, ``3.14``, ``2024``);
   - word: a letter, then letters, combining marks, ZWNJ/ZWJ, digits or underscores, with
     single inner apostrophes or hyphens (``don't``, ``re-use``, ``हिन्दी``, ``mp3``);
   - anything else: one character (punctuation and symbols each make one token).

A token is punctuation (`is_punct`) when its first character is Unicode punctuation or a symbol
(thesis: "tokens starting with punctuation characters"), and a stop word (`is_stop`) when its
lower-cased form is in the stop list of its document's language (`corpusbuilder.common.stoplists`; a
language without a list has none). `token_hash` is the first 8 bytes of BLAKE2b over the token's
UTF-8 (lower-cased first if ``lowercase``; case is kept by default, as the thesis' n-grams do):
stable across shards, runs and machines.

Sentences (`sentence_starts`): a token starts a sentence when it opens its block, or when it
opens a whitespace chunk of the text, the chunk before ends in a sentence-final mark (``.``, ``!``,
``?``, ``…``, their full-width forms; a closing quote or bracket may follow it) and the token does
not begin with a lower-case letter. Boundaries fall between whitespace chunks only, so a block's
sentences are runs of its chunks (`block_sentences`) and tokenising them one by one gives the
block's tokens; text written without spaces keeps a block one sentence. No abbreviation list:
"Mr. Smith" is cut after "Mr.", which costs block de-duplication's sentence mode (its one user)
only a finer unit.

Speed: most whitespace chunks recur ("the", "of", "said,"), so a shard's blocks are split at
white space by Arrow and only its distinct chunks are cut, those of ASCII letters alone taken as
one token each, the rest by one regular-expression pass over them all (`tokenise_blocks`);
numpy spreads their type ids to every chunk. Hashes, the punctuation and stop-word flags are
computed once per type and spread to tokens with numpy. `Vocabulary.chunk_ids` (one text at a
time, with a memo of chunks) gives the same tokens, for the callers that have one text.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import re
import unicodedata
from collections.abc import Callable, Iterable, Sized
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, cast

import numpy as np

from corpusbuilder.common import stoplists
from corpusbuilder.common.arrays import factorize
from corpusbuilder.common.scripts import NO_SPACE_CHAR
from corpusbuilder.common.scripts import char_class as _char_class
from corpusbuilder.config import dataclass_values
from corpusbuilder.contracts.survivors import Survivors, id_rows
from corpusbuilder.contracts.tokenfile import TokenStream, encode_types

if TYPE_CHECKING:
    import pyarrow as pa

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TokeniseParams:
    """Tokenisation (config section `tokenise`), thesis §3.6."""

    cjk_chars: bool = True  # one token per character in scripts written without spaces
    lowercase: bool = False  # hash tokens lower-cased (the thesis keeps case)

    @classmethod
    def from_config(cls, section: dict) -> TokeniseParams:
        return cls(**dataclass_values(cls, section))


_INVISIBLE = {"\u00ad": "", "\u200b": " ", "\ufeff": " "}  # soft hyphen, zero-width space, BOM


def _combining_mark_ranges() -> list[tuple[int, int]]:
    """Code point ranges of Unicode category M. Planes 2-13 hold only ideographs and unassigned
    code points, 15-16 private use, so planes 0, 1 and 14 are all there is to scan."""
    ranges: list[tuple[int, int]] = []
    for code in (*range(0x20000), *range(0xE0000, 0xF0000)):
        if unicodedata.category(chr(code))[0] == "M":
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    return ranges


@lru_cache(maxsize=1)
def token_pattern() -> re.Pattern:
    """One token of a whitespace-free chunk: URL | e-mail | number | word | any other character."""
    word_char = rf"[\w{_char_class(_combining_mark_ranges())}\u200c\u200d]"
    url = r"(?:https?://|ftp://|www\.)[^\s<>\"]*[^\s<>\"'.,;:!?()\[\]{}«»“”‘’]"
    email = r"(?=[\w.+-]*+@)\w[\w.+-]*@\w[\w-]*(?:\.\w[\w-]*)+"
    number = r"\d+(?:[.,]\d+)*"
    word = rf"[^\W\d_]{word_char}*+(?:['’\-‐]{word_char}++)*+"
    return re.compile(rf"{url}|{email}|{number}|{word}|\S")


def prepare_text(text: str, cjk_chars: bool) -> str:
    """Steps 1 and 2 of the module doc: normalise, drop invisibles, space out no-space scripts."""
    text = unicodedata.normalize("NFC", text)
    if not text.isascii():  # (str.translate would look up every character in Python: 40x slower)
        for char, replacement in _INVISIBLE.items():
            if char in text:
                text = text.replace(char, replacement)
        if cjk_chars and NO_SPACE_CHAR.search(text):
            text = NO_SPACE_CHAR.sub(r" \g<0> ", text)
    return text


def tokenise(text: str, cjk_chars: bool = True) -> list[str]:
    """The tokens of `text` (see the module doc)."""
    find = token_pattern().findall
    return [token for chunk in prepare_text(text, cjk_chars).split() for token in find(chunk)]


class Vocabulary:
    """Token types of a shard, numbered in order of first appearance, and a memo of the
    whitespace chunks already tokenised (chunk -> type ids), cleared when it grows too big."""

    def __init__(self, cjk_chars: bool = True, max_memo: int = 1_000_000):
        self.cjk_chars = cjk_chars
        self.max_memo = max_memo
        self.types: dict[str, int] = {}
        self._memo: dict[str, tuple[int, ...]] = {}
        self._find = token_pattern().findall

    def _tokenise_chunk(self, chunk: str) -> tuple[int, ...]:
        if len(self._memo) >= self.max_memo:
            self._memo.clear()
        types = self.types
        # Preparing a chunk alone gives what preparing the text gives (no step joins or splits
        # across white space); it may split the chunk (a zero-width space, no-space scripts),
        # and leaves an ASCII one as it is. A part of letters only is one word; the regular
        # expression would say so, slowly.
        parts = (chunk,) if chunk.isascii() else prepare_text(chunk, self.cjk_chars).split()
        tokens = [t for part in parts for t in ((part,) if part.isalpha() else self._find(part))]
        ids = self._memo[chunk] = tuple([types.setdefault(t, len(types)) for t in tokens])
        return ids

    def chunk_ids(self, text: str) -> list[tuple[int, ...]]:
        """Type ids of the tokens of `text`, one tuple per whitespace chunk of the text as given
        (the chunks sentences are made of; `tokenise` gives the same tokens)."""
        chunks = text.split()
        found = list(map(self._memo.get, chunks))  # loops in C: most chunks are in the memo
        missing = 0
        while True:  # only the chunks not in the memo are visited in Python
            try:
                missing = found.index(None, missing)
            except ValueError:  # no None is left
                return cast("list[tuple[int, ...]]", found)
            found[missing] = self._memo.get(chunks[missing]) or self._tokenise_chunk(
                chunks[missing]
            )

    def number(self, tokens: np.ndarray) -> np.ndarray:
        """Type ids of distinct tokens (an object array), new types numbered in their order."""
        types = self.types
        ids = np.fromiter(
            map(types.get, tokens, itertools.repeat(-1)), dtype=np.int64, count=len(tokens)
        )
        new = np.flatnonzero(ids < 0)
        ids[new] = len(types) + np.arange(len(new))
        types.update(zip(tokens[new].tolist(), ids[new].tolist()))
        return ids

    def type_list(self) -> list[str]:
        return list(self.types)


def token_hashes(types: list[str], lowercase: bool = False) -> np.ndarray:
    """uint64 hash of each token type: BLAKE2b-64 of its UTF-8, little-endian."""
    blake2b = hashlib.blake2b
    digests = b"".join(
        [
            blake2b(t.encode("utf-8", "surrogatepass"), digest_size=8).digest()
            for t in (map(str.lower, types) if lowercase else types)
        ]
    )
    return np.frombuffer(digests, dtype="<u8").astype(np.uint64)


def word_hashes(words) -> np.ndarray:
    """token_hashes of a whole sequence of words, hashing each distinct word once."""
    if len(words) == 0:
        return np.empty(0, np.uint64)
    ids, vocabulary = factorize(np.asarray(words, dtype=object))
    return token_hashes(vocabulary.tolist())[ids]


def first_char_flags(types: list[str], flag: Callable[[str], bool]) -> np.ndarray:
    """Per type, ``flag`` of its first character, computed once per distinct character."""
    firsts = [t[0] for t in types]
    flags = {c: flag(c) for c in set(firsts)}
    return np.fromiter(map(flags.__getitem__, firsts), dtype=bool, count=len(types))


def punctuation_types(types: list[str]) -> np.ndarray:
    """Types whose first character is punctuation or a symbol (Unicode categories P*, S*)."""
    return first_char_flags(types, lambda c: unicodedata.category(c)[0] in "PS")


def stopword_table(lowered: list[str], stoplists: list[frozenset[str]]) -> np.ndarray:
    """Per stop list and type (`lowered`: the types lower-cased): is it a stop word. Each list's
    words are looked up among the distinct lowered types, not each type in each list."""
    codes, distinct = factorize(np.asarray(lowered, dtype=object))
    position = dict(zip(distinct.tolist(), range(len(distinct))))
    table = np.zeros((len(stoplists), len(distinct)), dtype=bool)
    for row, stoplist in enumerate(stoplists):
        table[row, [position[w] for w in stoplist if w in position]] = True
    return table[:, codes]


def stoplist_for_language(code: str | None) -> frozenset[str]:
    """The stop list of a language code from the language stage; empty if it has none."""
    return stoplists.stoplist_for(code)[1]


def tokenise_blocks(
    texts: Iterable[str], vocabulary: Vocabulary, batch_blocks: int = 25_000
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(type id of every token, block offsets, whether each token opens a whitespace chunk, and
    where in its block's ``text.split()`` its chunk ends: `chunk_ends`) for a sequence of block
    texts (a list, a pandas column, an Arrow array).

    Per batch of ``batch_blocks`` blocks, Arrow splits the texts at white space (the characters
    ``str.split`` splits at, every code point checked) and numbers the distinct chunks in order
    of first appearance; only those are cut (`distinct_chunk_ids`), and numpy spreads their type
    ids to every chunk: no loop per block or per chunk. Types are numbered in order of first
    appearance, as tokenising the chunks one by one would (`Vocabulary.chunk_ids`): a type's
    first token is in the first occurrence of its chunk. A batch of 100,000 blocks held 0.3 GB
    more than one of 25,000 (its Arrow lists of chunks) on a shard of 17 M tokens."""
    import pyarrow.compute as pc

    strings = _large_strings(texts)
    # per token (type ids, chunk openers, chunk ends) and per block (tokens), batch by batch: a
    # batch's per-chunk arrays (a chunk is about a token) go with it, so that only a few bytes a
    # token are held across the shard
    ids, openers, ends, block_tokens = [np.empty(0, np.int32)], [np.empty(0, bool)], [], []
    chunks = 0
    for first in range(0, len(strings), batch_blocks):
        batch = strings.slice(first, batch_blocks)
        lists = pc.utf8_split_whitespace(batch)
        nonempty = pc.greater(pc.binary_length(pc.list_flatten(lists)), 0)  # Arrow keeps an
        # empty chunk at each end of a text; the chunks are held once, as their distinct values
        parent = pc.list_parent_indices(lists).filter(nonempty).to_numpy()
        encoded = pc.dictionary_encode(pc.list_flatten(lists).filter(nonempty))
        del lists, nonempty
        table_ids, table_lengths = distinct_chunk_ids(encoded.dictionary, vocabulary)
        codes = encoded.indices.to_numpy()
        lengths = table_lengths[codes]
        ids.append(
            table_ids.astype(np.int32)[
                token_places((np.cumsum(table_lengths) - table_lengths)[codes], lengths)
            ]
        )
        chunk_offsets = np.concatenate(([0], np.cumsum(np.bincount(parent, minlength=len(batch)))))
        tokens_before = np.concatenate(([0], np.cumsum(lengths)))
        block_tokens.append(np.diff(tokens_before[chunk_offsets]))
        openers.append(chunk_openers(lengths, int(tokens_before[-1])))
        ends.append(chunk_ends(lengths, chunk_offsets))
        chunks += len(lengths)
        log.info(
            "tokenise: %d blocks, %d chunks, %d types",
            first + len(batch),
            chunks,
            len(vocabulary.types),
        )
    return (
        np.concatenate(ids),
        np.concatenate(([0], np.cumsum(np.concatenate(block_tokens or [np.empty(0, np.int64)])))),
        np.concatenate(openers),
        np.concatenate(ends or [np.empty(0, np.int32)]),
    )


def token_places(first: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``np.concatenate([np.arange(f, f + n) for f, n in zip(first, lengths)])``: per token, its
    place in a table where its chunk's tokens start at ``first``, as one running sum over the
    tokens (8 bytes a token held; a repeat plus an arange held three times that)."""
    bearing = lengths > 0
    first, lengths = first[bearing], lengths[bearing]
    steps = np.ones(int(lengths.sum()), np.int64)
    if len(steps):
        jumps = np.empty(len(first), np.int64)
        jumps[0] = first[0]
        jumps[1:] = first[1:] - (first[:-1] + lengths[:-1] - 1)
        steps[np.cumsum(lengths) - lengths] = jumps
    return np.cumsum(steps, out=steps)


# A word of ASCII letters with one ASCII mark after or before it ("said,", "(see"): the regular
# expression cuts it into the word and the mark (the mark is no "_", which words hold; neither a
# URL nor an e-mail address can be the whole chunk)
_MARK = r"[!-/:-@\[-\^`{-~]"
_TRAILING_MARK = rf"^[A-Za-z]+{_MARK}$"
_LEADING_MARK = rf"^{_MARK}[A-Za-z]+$"


def distinct_chunk_ids(chunks: pa.Array, vocabulary: Vocabulary) -> tuple[np.ndarray, np.ndarray]:
    """Type ids of the tokens of distinct whitespace chunks (Arrow strings), flat, and each
    chunk's token count. A chunk of ASCII letters is one token as it is, one with a mark after or
    before them two (`_TRAILING_MARK`, `_LEADING_MARK`), cut in Arrow; the others are prepared
    and cut by one `findall` over them all, a line break between two chunks, which no token holds
    or crosses and no step of `prepare_text` changes or joins across (so each chunk gives what
    `Vocabulary.chunk_ids` gives it). New types are numbered in order of first appearance."""
    import pyarrow.compute as pc

    words = chunks.to_numpy(zero_copy_only=False)
    plain = pc.and_(pc.string_is_ascii(chunks), pc.ascii_is_alpha(chunks))
    plain = plain.to_numpy(zero_copy_only=False)
    trailing = pc.match_substring_regex(chunks, _TRAILING_MARK)
    leading = pc.match_substring_regex(chunks, _LEADING_MARK)
    # (which chunks, their first token, their second) for the chunks cut in Arrow
    pairs = [
        (pc.utf8_slice_codeunits(chunks.filter(mask), *first), second, mask)
        for mask, first, second in (
            (trailing, (0, -1), (-1, None)),
            (leading, (0, 1), (1, None)),
        )
    ]
    paired = np.zeros(len(words), bool)
    lengths = np.ones(len(words), np.int64)
    for _, _, mask in pairs:
        at = mask.to_numpy(zero_copy_only=False)
        paired |= at
        lengths[at] = 2
    other = np.flatnonzero(~(plain | paired))
    flat_other = np.empty(0, object)
    if len(other):
        cut = np.array(
            _separated_pattern().findall(
                prepare_text("\n".join(words[other].tolist()), vocabulary.cjk_chars)
            ),
            dtype=object,
        )
        separator = cut == "\n"
        lengths[other] = np.diff(np.concatenate(([-1], np.flatnonzero(separator), [len(cut)]))) - 1
        flat_other = cut[~separator]
    starts = np.cumsum(lengths) - lengths
    flat = np.empty(int(lengths.sum()), object)
    flat[starts[plain]] = words[plain]
    for first, second, mask in pairs:
        at = starts[mask.to_numpy(zero_copy_only=False)]
        flat[at] = first.to_numpy(zero_copy_only=False)
        flat[at + 1] = pc.utf8_slice_codeunits(chunks.filter(mask), *second).to_numpy(
            zero_copy_only=False
        )
    flat[token_places(starts[other], lengths[other])] = flat_other
    codes, distinct = factorize(flat)
    return vocabulary.number(distinct)[codes], lengths


@lru_cache(maxsize=1)
def _separated_pattern() -> re.Pattern:
    """`token_pattern`, and a line break as a token of its own (`distinct_chunk_ids`)."""
    return re.compile(token_pattern().pattern + "|\n")


def _large_strings(texts: Iterable[str]) -> pa.Array:
    """Block texts as one Arrow array of large strings (a shard's text may pass 2 GB)."""
    import pyarrow as pa

    strings = (
        texts
        if isinstance(texts, pa.Array | pa.ChunkedArray)
        else pa.array(texts if isinstance(texts, Sized) else list(texts), pa.large_string())
    )
    strings = strings.cast(pa.large_string())  # before combining: the offsets may pass 2**31
    return strings.combine_chunks() if isinstance(strings, pa.ChunkedArray) else strings


def chunk_openers(lengths: np.ndarray, tokens: int) -> np.ndarray:
    """Per token: is it the first of its whitespace chunk (chunks without a token open nothing);
    `lengths`: tokens per chunk."""
    first = np.zeros(tokens + 1, bool)
    first[np.cumsum(lengths) - lengths] = True
    return first[:tokens]


def chunk_ends(lengths: np.ndarray, chunk_offsets: np.ndarray) -> np.ndarray:
    """Per token: the index in its block's whitespace chunks (``text.split()``) just past its own
    chunk and the chunks without a token that follow it (a lone soft hyphen goes with the chunk
    before it). Block de-duplication cuts a block's text with these, so export applies its
    removed parts to ``text.split()`` without the tokeniser (`tokenfile.TokenStream`).
    `lengths`: tokens per chunk of every block; `chunk_offsets`: each block's first chunk."""
    block = np.repeat(np.arange(len(chunk_offsets) - 1), np.diff(chunk_offsets))
    bearing = np.flatnonzero(lengths > 0)
    following = np.append(bearing[1:], len(lengths))
    block_end = chunk_offsets[block[bearing] + 1]
    end = np.minimum(following, block_end) - chunk_offsets[block[bearing]]
    return np.repeat(end.astype(np.int32), lengths[bearing])


# Sentence-final marks, and the closing quotes and brackets that may follow one (module doc)
SENTENCE_FINAL = frozenset(".!?…。！？‼⁇⁈⁉؟।")
SENTENCE_CLOSERS = frozenset("\"'”’»)]」』")


def sentence_starts(
    ids: np.ndarray, chunk_first: np.ndarray, block_offsets: np.ndarray, types: list[str]
) -> np.ndarray:
    """Per token (type ids into `types`): does it start a sentence (module doc) — in numpy over
    the whole shard, with a flag per type, not a loop per token."""
    final = np.fromiter(map(SENTENCE_FINAL.__contains__, types), bool, len(types))[ids]
    closer = np.fromiter(map(SENTENCE_CLOSERS.__contains__, types), bool, len(types))[ids]
    lower = first_char_flags(types, str.islower)[ids]
    ends = final.copy()
    ends[1:] |= closer[1:] & final[:-1]
    starts = np.zeros(len(ids), bool)
    starts[1:] = chunk_first[1:] & ends[:-1] & ~lower[1:]
    block_starts = block_offsets[:-1][np.diff(block_offsets) > 0]
    starts[block_starts] = True
    return starts


def block_sentences(text: str, cjk_chars: bool = True) -> list[str]:
    """The sentences of one block's text (`sentence_starts`), each its whitespace chunks joined by
    one space, as export writes a block; a chunk without a token stays with the sentence before."""
    vocabulary = Vocabulary(cjk_chars)
    found = vocabulary.chunk_ids(text)
    lengths = np.fromiter(map(len, found), dtype=np.int64, count=len(found))
    ids = np.fromiter(
        itertools.chain.from_iterable(found), dtype=np.int64, count=int(lengths.sum())
    )
    starts = sentence_starts(
        ids, chunk_openers(lengths, len(ids)), np.array([0, len(ids)]), vocabulary.type_list()
    )
    opens = np.zeros(len(found), bool)
    opens[lengths > 0] = starts[(np.cumsum(lengths) - lengths)[lengths > 0]]
    chunks = np.array(text.split(), dtype=object)
    return (
        [" ".join(part) for part in np.split(chunks, np.flatnonzero(opens[1:]) + 1)]
        if len(chunks)
        else []
    )


def tokenise_shard(
    kept: Survivors,
    params: TokeniseParams,
    stoplist_for: Callable[[str | None], frozenset[str]] = stoplist_for_language,
) -> TokenStream:
    """Tokens of the surviving blocks (`survivors.survivors`: the documents kept by the language
    filter and exact de-duplication, their good blocks less those dropped by language)."""
    import pyarrow.compute as pc

    documents, blocks = kept.documents, kept.blocks
    doc_ids = np.asarray(documents["doc_id"].to_pylist(), dtype=str)
    vocabulary = Vocabulary(params.cjk_chars)
    ids, block_offsets, chunk_first, chunk_end = tokenise_blocks(blocks["text"], vocabulary)
    types = vocabulary.type_list()

    # Stop words: one row of type flags per language present, picked per
    # token by its block's document.
    codes, language_of_doc = np.unique(
        np.asarray(pc.fill_null(documents["language"], "").to_pylist(), dtype=str),
        return_inverse=True,
    )
    stop_by_language = stopword_table(
        [t.lower() for t in types], [stoplist_for(code or None) for code in codes]
    )
    block_doc = id_rows(blocks["doc_id"], documents["doc_id"]).astype(np.int32)
    # a byte a token, not 8: a shard holds a few languages (issue 59's peak at 17 M words)
    token_language = np.repeat(
        language_of_doc.reshape(-1).astype(np.min_scalar_type(len(codes)))[block_doc],
        np.diff(block_offsets),
    )

    stream = TokenStream(
        token_hash=token_hashes(types, params.lowercase)[ids],
        is_punct=punctuation_types(types)[ids],
        is_stop=stop_by_language[token_language, ids],
        block_offsets=block_offsets,
        block_doc=block_doc,
        block_index=np.asarray(blocks["block_index"], dtype=np.int32),
        doc_ids=doc_ids,
        sentence_start=sentence_starts(ids, chunk_first, block_offsets, types),
        chunk_start=chunk_first,
        chunk_end=chunk_end,
        type_id=ids,
        types=encode_types(types),
    )
    log.info(
        "tokenise: %d documents, %d blocks, %d tokens of %d types, %d punctuation, %d stop words",
        len(doc_ids),
        len(block_doc),
        len(ids),
        len(types),
        stream.is_punct.sum(),
        stream.is_stop.sum(),
    )
    return stream
