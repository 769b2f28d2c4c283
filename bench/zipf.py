"""Synthetic token streams for the n-gram benchmark: Zipf-distributed words in blocks, with
copied passages planted, written as work/tokens-style shards (token_hash, is_punct, is_stop,
block_offsets).

Word ranks follow Zipf's law (exponent `a`); rank r's token hash is a fixed random 64-bit value,
ranks below 40 are flagged stop words and every 12th rank is punctuation, so all three n-gram
kinds have work to do. Blocks have geometric lengths (mean `block_mean`). A `copy_share` of each
shard is overwritten with passages (20–400 tokens) copied from earlier in the same shard or
from the previous shard, so the duplicate n-grams are both within and across shards.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from corpusbuilder.contracts.tokenfile import TokenStream, write_token_stream


def zipf_shard(
    rng,
    tokens: int,
    vocabulary: np.ndarray,
    a: float,
    block_mean: float,
    copy_share: float,
    previous: np.ndarray | None,
):
    ranks = rng.zipf(a, tokens) - 1
    ranks = np.where(ranks < len(vocabulary), ranks, rng.integers(0, len(vocabulary), tokens))
    lengths = rng.geometric(1 / block_mean, int(tokens / block_mean * 1.2) + 16)
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    offsets = np.append(offsets[offsets < tokens], tokens).astype(np.int64)
    planted = 0
    while planted < copy_share * tokens:
        length = int(rng.integers(20, 400))
        target = int(rng.integers(0, tokens - length))
        source_ranks = previous if previous is not None and rng.random() < 0.3 else ranks
        source = int(rng.integers(0, len(source_ranks) - length))
        ranks[target : target + length] = source_ranks[source : source + length]
        planted += length
    return ranks, offsets


def write_zipf_corpus(
    out_dir: Path | str,
    tokens: int,
    shard_tokens: int = 10_000_000,
    seed: int = 0,
    vocabulary_size: int = 2_000_000,
    a: float = 1.15,
    block_mean: float = 40,
    copy_share: float = 0.05,
) -> list[Path]:
    """Write ceil(tokens / shard_tokens) shards; return their paths in crawl order."""
    rng = np.random.default_rng(seed)
    vocabulary = rng.integers(0, 2**64 - 1, vocabulary_size, dtype=np.uint64)
    is_stop_rank = np.arange(vocabulary_size) < 40
    is_punct_rank = np.arange(vocabulary_size) % 12 == 5
    out_dir = Path(out_dir)
    paths, previous = [], None
    for shard, begin in enumerate(range(0, tokens, shard_tokens)):
        ranks, offsets = zipf_shard(
            rng, min(shard_tokens, tokens - begin), vocabulary, a, block_mean, copy_share, previous
        )
        paths.append(out_dir / f"zipf-{shard:03d}.npz")
        write_token_stream(
            TokenStream.of_blocks(
                vocabulary[ranks], offsets, is_punct_rank[ranks], is_stop_rank[ranks]
            ),
            paths[-1],
        )
        previous = ranks
    return paths


def write_zipf_text(
    path: Path | str,
    tokens: int,
    seed: int = 0,
    vocabulary_size: int = 200_000,
    a: float = 1.15,
    block_mean: float = 40,
    copy_share: float = 0.05,
) -> int:
    """One Zipf shard with planted copies as plain text, a block per line and rank r spelled as
    a word of its own (`corpusbuilder dup-ngrams`' input); returns the number of tokens."""
    rng = np.random.default_rng(seed)
    ranks, offsets = zipf_shard(
        rng, tokens, np.arange(vocabulary_size), a, block_mean, copy_share, None
    )
    # short words for frequent ranks, as in a language: rank r in base 36
    spelled = np.array([np.base_repr(r, 36).lower() for r in range(vocabulary_size)], dtype=object)
    with open(path, "w", encoding="utf-8") as out:
        for begin, end in zip(offsets[:-1], offsets[1:]):
            out.write(" ".join(spelled[ranks[begin:end]]) + "\n")
    return tokens


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--tokens", type=int, default=10_000_000)
    parser.add_argument("--shard-tokens", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for path in write_zipf_corpus(args.out_dir, args.tokens, args.shard_tokens, args.seed):
        print(path)
