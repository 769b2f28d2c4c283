"""Near-duplicate documents by min-hash.

Spasojević & Poncin, "Large Scale Page-Based Book Similarity Clustering": text is normalised
(lower case, alphanumerics only), cut into 5-word shingles with 64-bit fingerprints (§III-B), and
summarised by k min-hashes — per document (100) and per page (34). Two signatures agreeing in C of
k positions estimate the resemblance |A∩B|/|A∪B| as C/k (Eq. 1). Pairs come from collision
counting (their Algorithm 1: every min-hash value is a bucket, every pair in a bucket gets a
count) or, for large collections, from LSH banding, which only compares documents that agree on
all rows of at least one band. How two paginated documents relate (§IV) is `book_relations`.

The thesis' alternatives are here too: Broder's super-shingles (§3.2.1) and Charikar's simhash
(§3.2.2), so they can be compared on the same fingerprints (bench/bench_similarity.py).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from corpusbuilder.config import dataclass_values

if TYPE_CHECKING:
    import pandas as pd

MASK64 = np.uint64(0xFFFFFFFFFFFFFFFF)
EMPTY = np.iinfo(np.uint64).max  # the min-hash of an empty set: collides with nothing real


@dataclass(frozen=True)
class MinHashParams:
    """Spasojević & Poncin §III-B and Fig. 2: 5-word shingles, 100 hashes a book, 34 a page."""

    shingle_words: int = 5
    k: int = 100  # min-hashes per document
    k_page: int = 34  # min-hashes per page
    seed: int = 20110101  # the hash family; both sides of a comparison must share it
    bands: int | None = None  # LSH banding (b bands of k/b rows); None = collision counting
    max_bucket: int = 1000  # larger buckets are paired block by block, this many documents a side

    @classmethod
    def from_config(cls, section: dict) -> MinHashParams:
        """From the `similarity` config section (its other keys are the
        stage's, not the hashing's)."""
        return cls(**dataclass_values(cls, section))


# --------------------------------------------------------------------------- features


_WORD = re.compile(r"\w+")


def normalised_words(text: str) -> list[str]:
    """'(Nice) Day !' → ['nice', 'day']: lower case, non-alphanumerics dropped (§III-B)."""
    return _WORD.findall(text.lower())


def _mix64(x: np.ndarray) -> np.ndarray:
    # splitmix64's finaliser: spreads every input bit over the whole word
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _word_hash(word: str) -> int:
    return int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "little")


def _word_hashes(words: Sequence[str]) -> np.ndarray:
    return np.fromiter(map(_word_hash, words), dtype=np.uint64, count=len(words))


def _shingles(words: Sequence[str], n: int) -> np.ndarray:
    """The 64-bit fingerprint of each n-word shingle, in text order, repeats included."""
    return _batch_shingles(_word_hashes(words), np.array([len(words)]), n)


def _batch_shingles(h: np.ndarray, lengths: np.ndarray, n: int) -> np.ndarray:
    """The shingles of documents whose words' hashes are ``h``, concatenated (document i has
    ``lengths[i]`` words), concatenated in turn: `_shingle_counts` of them a document. The
    mixing rounds run over the whole batch at once; a window running into the next document is
    dropped, and a document shorter than n is one shingle of all its words — its value after as
    many rounds as it has words."""
    ends = np.cumsum(lengths)
    starts = ends - lengths
    padded = np.concatenate([h, np.zeros(n - 1, np.uint64)])
    fp = np.zeros(len(h), dtype=np.uint64)
    short: list[tuple[np.ndarray, np.ndarray]] = []
    with np.errstate(over="ignore"):
        for j in range(n):  # position-dependent mixing: "a b c" and "c b a" differ
            fp = _mix64(fp ^ padded[j : j + len(h)])
            ending = starts[lengths == j + 1] if j < n - 1 else starts[:0]
            short.append((ending, fp[ending]))
    for where, value in short:
        fp[where] = value
    # a document's positions from its last shingle's on hold none: +1 there, −1 at its end
    dropped = np.bincount(starts + _shingle_counts(lengths, n), minlength=len(h) + 1)
    dropped -= np.bincount(ends, minlength=len(h) + 1)
    return fp[np.cumsum(dropped[:-1]) == 0]


def _shingle_counts(lengths: np.ndarray, n: int) -> np.ndarray:
    """Shingles of documents of these many words: one a window of n, one for a shorter text."""
    return np.where(lengths >= n, lengths - n + 1, np.minimum(lengths, 1))


def shingle_fingerprints(words: Sequence[str], n: int = 5) -> np.ndarray:
    """Distinct 64-bit fingerprints of the n-word shingles (a shorter text is one shingle)."""
    return np.unique(_shingles(words, n))


@functools.cache
def hash_family(k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """k functions x → a·x + b over uint64 (odd a: each is a bijection of the fingerprints).
    Made once per (k, seed) — a new generator per document was a tenth of its signature — and
    read-only, as every caller shares it."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2**63, size=k, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    b = rng.integers(0, 2**63, size=k, dtype=np.uint64)
    a.flags.writeable = b.flags.writeable = False
    return a, b


def _minhashes(
    fingerprints: np.ndarray, counts: np.ndarray, k: int, seed: int, chunk: int = 8192
) -> np.ndarray:
    """(documents × k) min over each document's fingerprints of (a_i·x + b_i), i = 1..k; the
    fingerprints are the documents' concatenated, ``counts[d]`` of document d's. All EMPTY for
    a document without any. The products are made ``chunk`` fingerprints at a time (k × chunk
    temporaries, a row per function: its minima are over contiguous memory) and reduced per
    piece of a document in the chunk."""
    a, b = hash_family(k, seed)
    a, b = a[:, None], b[:, None]
    ends = np.cumsum(counts)
    starts = ends - counts
    out = np.full((len(counts), k), EMPTY, dtype=np.uint64)
    # one buffer for every chunk's products: a new one each time was as dear as the products
    buffer = np.empty((k, min(chunk, len(fingerprints))), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for first in range(0, len(fingerprints), chunk):
            x = fingerprints[first : first + chunk]
            held = np.arange(
                np.searchsorted(ends, first, side="right"),
                np.searchsorted(starts, first + len(x), side="left"),
            )
            held = held[counts[held] > 0]  # the documents with a fingerprint in the chunk
            values = np.multiply(a, x, out=buffer[:, : len(x)])
            values += b
            pieces = np.minimum.reduceat(values, np.maximum(starts[held] - first, 0), axis=1)
            out[held] = np.minimum(out[held], pieces.T)
    return out


# A batch of documents is closed once it holds this many characters (a longer document is a
# batch of its own): its text, words, hashes and shingles are some 50 bytes a word, and the
# min-hashes are made a chunk of shingles at a time.
BATCH_CHARS = 1 << 23

# Between two documents of a batch: a word that no lower-cased text holds (`normalised_words`),
# so the batch is cut into words at once and its documents told apart after.
_BETWEEN = "A"


def document_signatures(
    texts: Iterable[str], params: MinHashParams = MinHashParams()
) -> np.ndarray:
    """(documents × k) uint64 min-hash matrix. The minimum over a document's shingles is that
    over their set, so they are not made distinct (a sort per document). The documents are
    taken in batches of about `BATCH_CHARS` characters, each cut into words and each of its
    distinct words hashed once (every distinct word of all the documents, once: a dict of their
    vocabulary), its shingles and min-hashes made by numpy over the whole batch."""
    known: dict[str, int] = {}
    rows = [np.empty((0, params.k), dtype=np.uint64)]
    for batch in _batches(texts):
        h, lengths = _batch_word_hashes(batch, known)
        shingles = _batch_shingles(h, lengths, params.shingle_words)
        counts = _shingle_counts(lengths, params.shingle_words)
        rows.append(_minhashes(shingles, counts, params.k, params.seed))
    return np.concatenate(rows)


def _batches(texts: Iterable[str]) -> Iterator[list[str]]:
    batch: list[str] = []
    size = 0
    for text in texts:
        batch.append(text)
        size += len(text)
        if size >= BATCH_CHARS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _batch_word_hashes(texts: list[str], known: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """The hashes of the texts' words (`normalised_words`), concatenated, and each text's count
    of them. ``known`` (word → hash) is filled as it goes."""
    from corpusbuilder.common.arrays import factorize

    words = _WORD.findall(f"\n{_BETWEEN}\n".join([t.lower() for t in texts]))
    codes, distinct = factorize(np.array(words, dtype=object))
    new = set(distinct).difference(known)
    known.update(zip(new, map(_word_hash, new)))
    hashes = np.fromiter(map(known.get, distinct), dtype=np.uint64, count=len(distinct))
    between = codes == (distinct.tolist().index(_BETWEEN) if len(texts) > 1 else -1)
    bounds = np.flatnonzero(between)
    lengths = np.diff(bounds, prepend=-1, append=len(codes)) - 1
    return hashes[codes[~between]], lengths


def estimated_resemblance(sig_a: np.ndarray, sig_b: np.ndarray) -> np.ndarray:
    """C/k along the last axis (Eq. 1); EMPTY positions never count as collisions."""
    return ((sig_a == sig_b) & (sig_a != EMPTY)).mean(axis=-1)


# --------------------------------------------------------------------------- pairs and clusters


def _buckets(keys: np.ndarray) -> Iterator[np.ndarray]:
    """The sorted row indices of each group of rows sharing a key, for groups of two or more."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    sizes = np.diff(np.r_[starts, len(keys)])
    for start, size in zip(starts[sizes > 1], sizes[sizes > 1]):
        yield np.sort(order[start : start + size]).astype(np.int64)


def group_count(params: MinHashParams) -> int:
    """Bucketings the pairing runs: one per LSH band, or per min-hash (collision counting)."""
    return params.k if params.bands is None else params.bands


def group_columns(group: int, params: MinHashParams) -> range:
    """The min-hash columns one group buckets by: its min-hash function (collision counting) or
    its LSH band's r = k/b rows."""
    if params.bands is None:
        return range(group, group + 1)
    if params.k % params.bands:
        raise ValueError(f"k={params.k} is not a multiple of bands={params.bands}")
    rows = params.k // params.bands
    return range(group * rows, (group + 1) * rows)


def group_key(
    columns: np.ndarray, docs: np.ndarray, empty: np.ndarray, params: MinHashParams
) -> np.ndarray:
    """Each document's bucket key in one group, from that group's columns of its signature: the
    min-hash itself (collision counting) or the band's values mixed; an empty document's key is
    its own (~ its corpus index ``docs``), so it pairs with nothing."""
    if params.bands is None:
        key = columns[:, 0]
    else:
        key = np.zeros(len(columns), dtype=np.uint64)
        for column in columns.T:
            key = _mix64(key ^ column)
    return np.where(empty, ~docs.astype(np.uint64), key)


def candidate_pair_blocks(
    signatures: np.ndarray, params: MinHashParams = MinHashParams()
) -> Iterator[np.ndarray]:
    """(m × 2) blocks of index pairs (a < b) worth scoring, each of at most ``max_bucket``² pairs.

    Collision counting (bands None): any pair sharing one min-hash value — the paper's
    Algorithm 1, exhaustive for every pair with C ≥ 1. LSH banding: rows b·r = k; a pair is a
    candidate when all r values of one band agree, probability 1 − (1 − s^r)^b for resemblance s
    — a steep S-curve around (1/b)^(1/r) (e.g. 20 bands of 5 rows: 0.55). Pairs may repeat
    across blocks (see `bucket_pair_blocks`).
    """
    docs = np.arange(len(signatures), dtype=np.int64)
    empty = signatures[:, 0] == EMPTY
    keyed = (
        (group_key(signatures[:, group_columns(g, params)], docs, empty, params), docs)
        for g in range(group_count(params))
    )
    return bucket_pair_blocks(keyed, params.max_bucket)


def bucket_pair_blocks(
    keyed: Iterable[tuple[np.ndarray, np.ndarray]], block: int
) -> Iterator[np.ndarray]:
    """The pairs (a < b) of documents sharing a bucket, in blocks of at most ``block``² pairs.
    ``keyed``: bucket keys and the documents' corpus indices (increasing), a group at a time or
    a part of a group holding each of its buckets whole. A bucket larger than ``block`` (a
    near-duplicate cluster, or a shingle every page of a site shares) still gives all its pairs,
    block by block; a large bucket whose members recur in another group is paired once."""
    pending: list[np.ndarray] = []
    pending_pairs = 0
    large_seen: set[bytes] = set()
    for keys, docs in keyed:
        for members in _buckets(keys):
            members = docs[members]
            if len(members) <= block:
                i, j = np.triu_indices(len(members), k=1)
                if pending_pairs + len(i) > block * block:
                    yield np.concatenate(pending)
                    pending, pending_pairs = [], 0
                pending.append(np.column_stack([members[i], members[j]]))
                pending_pairs += len(i)
                continue
            fingerprint = hashlib.blake2b(members.tobytes(), digest_size=16).digest()
            if fingerprint in large_seen:
                continue
            large_seen.add(fingerprint)
            for first in range(0, len(members), block):
                rows = members[first : first + block]
                for second in range(first, len(members), block):
                    cols = members[second : second + block]
                    a, b = np.meshgrid(rows, cols, indexing="ij")
                    keep = a < b
                    yield np.column_stack([a[keep], b[keep]])
    if pending:
        yield np.concatenate(pending)


def candidate_pairs(signatures: np.ndarray, params: MinHashParams = MinHashParams()) -> np.ndarray:
    """Every candidate pair once, sorted (see `candidate_pair_blocks`)."""
    blocks = list(candidate_pair_blocks(signatures, params))
    if not blocks:
        return np.empty((0, 2), dtype=np.int64)
    return np.unique(np.concatenate(blocks), axis=0)


def similar_pairs(
    signatures: np.ndarray, threshold: float, params: MinHashParams = MinHashParams()
) -> pd.DataFrame:
    """Index pairs (a < b) whose estimated resemblance exceeds `threshold`, with the estimate.
    Candidates are scored a block at a time: memory holds one block and the pairs found."""
    import pandas as pd

    found = [np.empty((0, 2), dtype=np.int64)]
    for pairs in candidate_pair_blocks(signatures, params):
        estimate = estimated_resemblance(signatures[pairs[:, 0]], signatures[pairs[:, 1]])
        found.append(np.unique(pairs[estimate > threshold], axis=0))
    pairs = np.unique(np.concatenate(found), axis=0)
    estimate = (
        estimated_resemblance(signatures[pairs[:, 0]], signatures[pairs[:, 1]])
        if len(pairs)
        else np.empty(0)
    )
    return pd.DataFrame({"a": pairs[:, 0], "b": pairs[:, 1], "resemblance": estimate})


def cluster_labels(n: int, pairs: Iterable[tuple[int, int]]) -> np.ndarray:
    """Union-find over the pairs: each item's cluster is the smallest index in its component."""
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]  # path halving
            i = parent[i]
        return i

    for a, b in pairs:
        ra, rb = root(int(a)), root(int(b))
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return np.array([root(i) for i in range(n)], dtype=np.int64)


def resemblance_dedup(ids: Sequence[str], pairs: pd.DataFrame, threshold: float = 0.9) -> list[str]:
    """Thesis Table 3.4 "rsmbl. de-dupl": cluster pairs above `threshold` by transitivity, keep the
    first document of each cluster (corpus order), return the ids of all the others."""
    strong = pairs[pairs["resemblance"] > threshold]
    labels = cluster_labels(len(ids), zip(strong["a"], strong["b"]))
    return [ids[i] for i in np.flatnonzero(labels != np.arange(len(ids))).tolist()]


def corpus_signatures(
    documents: Iterable[dict], params: MinHashParams = MinHashParams()
) -> tuple[list[str], np.ndarray]:
    """Exported-corpus documents ({"id", "paragraphs", ...}) → their ids and min-hash
    signatures: the part of the stage linear in the words, run per shard."""
    ids, texts = [], []
    for doc in documents:
        ids.append(doc["id"])
        texts.append("\n".join(doc["paragraphs"]))
    return ids, document_signatures(texts, params)


def corpus_similar_pairs(
    documents: Iterable[dict], threshold: float = 0.5, params: MinHashParams = MinHashParams()
) -> pd.DataFrame:
    """Exported-corpus documents ({"id", "paragraphs", ...}) → id_a, id_b, resemblance, cluster."""
    return signature_similar_pairs(*corpus_signatures(documents, params), threshold, params)


def signature_similar_pairs(
    ids: Sequence[str], signatures: np.ndarray, threshold: float, params: MinHashParams
) -> pd.DataFrame:
    """`corpus_similar_pairs` from the signatures (every shard's, in corpus order)."""
    ids_array = np.array(ids, dtype=object)
    return named_pairs(similar_pairs(signatures, threshold, params), ids_array.__getitem__)


def named_pairs(pairs: pd.DataFrame, ids_of: Callable[[np.ndarray], np.ndarray]) -> pd.DataFrame:
    """Index pairs (a, b, resemblance; sorted) → id_a, id_b, resemblance, cluster (the id of the
    first document of each pair's cluster); ``ids_of`` gives the ids of sorted document indices.
    The clusters are found among the paired documents alone: a cluster's first document is one
    of them, so it is the same as over the corpus, and nothing is held per unpaired document."""
    import pandas as pd

    a, b = pairs["a"].to_numpy(np.int64), pairs["b"].to_numpy(np.int64)
    paired = np.unique(np.concatenate([a, b]))
    local_a, local_b = np.searchsorted(paired, a), np.searchsorted(paired, b)
    labels = cluster_labels(len(paired), zip(local_a, local_b))
    ids = np.asarray(ids_of(paired), dtype=object)
    return pd.DataFrame(
        {
            "id_a": ids[local_a],
            "id_b": ids[local_b],
            "resemblance": pairs["resemblance"].to_numpy(dtype=np.float32),
            "cluster": ids[labels[local_a]],
        }
    )


def write_similar_pairs_tsv(
    corpus_paths: Sequence[Path | str],
    out_path: Path | str,
    threshold: float = 0.5,
    params: MinHashParams = MinHashParams(),
) -> int:
    """CLI engine: corpus .jsonl[.gz] files →
    `id_a<TAB>id_b<TAB>resemblance` lines; returns the count."""
    from corpusbuilder.common.io import atomic_path
    from corpusbuilder.contracts.corpus import read_corpus

    documents = (doc for path in corpus_paths for doc in read_corpus(Path(path)))
    pairs = corpus_similar_pairs(documents, threshold, params)
    with atomic_path(out_path) as tmp:
        tmp.write_text(
            "".join(
                f"{a}\t{b}\t{r:.4f}\n" for a, b, r in zip(pairs.id_a, pairs.id_b, pairs.resemblance)
            ),
            encoding="utf-8",
        )
    return len(pairs)


# ------------------------------------------------------------------------- thesis §3.2.1 and §3.2.2


def super_shingles(signature: np.ndarray, groups: int) -> np.ndarray:
    """Broder: the sketch cut into `groups` groups of s = k/groups elements, each hashed (§3.2.1).
    Two documents of resemblance ρ share ≥ r of them with probability Eq. 3.1."""
    s = len(signature) // groups
    out = np.zeros(groups, dtype=np.uint64)
    for column in signature[: groups * s].reshape(groups, s).T:
        out = _mix64(out ^ column)
    return out


def simhash(fingerprints: np.ndarray, weights: np.ndarray | None = None) -> np.uint64:
    """Charikar (§3.2.2): each feature's 64 bits as ±1, summed (weighted), sign → bit."""
    if not len(fingerprints):
        return np.uint64(0)
    bits = np.unpackbits(
        fingerprints.astype("<u8").view(np.uint8).reshape(-1, 8), axis=1, bitorder="little"
    )
    signs = bits.astype(np.int64) * 2 - 1
    w = np.ones(len(fingerprints), dtype=np.int64) if weights is None else weights
    total = w @ signs
    return np.packbits((total >= 0).astype(np.uint8), bitorder="little").view("<u8")[0]


def hamming(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.bitwise_count(np.bitwise_xor(a, b))
