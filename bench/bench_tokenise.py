"""Benchmark the tokeniser: tokens per second per core (target: 1 M).

Texts are the good blocks of extract's blocks tables (``--blocks``) or, by default, the visible
text of the shared crawl's HTML pages cut at their line breaks (see bench_language.py). Timed,
in CPU seconds (``time.process_time``), is what the stage does per shard short of I/O: blocks
→ type ids (`tokenise_blocks`: Arrow splits, the distinct chunks cut), then hashes,
punctuation and stop-word flags per type, spread to tokens with numpy. For comparison, the plain
regular expression over every block (`tokenise`, no memo) is timed too.

    python bench/bench_tokenise.py
    python bench/bench_tokenise.py --blocks work/extract/*.blocks.parquet
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_language import CRAWL, crawl_page_texts  # noqa: E402

from corpusbuilder.tokenise import (  # noqa: E402
    Vocabulary,
    punctuation_types,
    sentence_starts,
    stoplist_for_language,
    stopword_table,
    token_hashes,
    tokenise,
    tokenise_blocks,
)


def block_texts(paths: list[str]) -> list[str]:
    blocks = pd.concat(pd.read_parquet(p, columns=["text", "final_class"]) for p in paths)
    return blocks.loc[blocks["final_class"] == "good", "text"].tolist()


def stage_work(texts: list[str]) -> int:
    vocabulary = Vocabulary()
    ids, offsets, chunk_first, _ = tokenise_blocks(texts, vocabulary)
    types = vocabulary.type_list()
    sentence_starts(ids, chunk_first, offsets, types)
    token_hashes(types)[ids]
    punctuation_types(types)[ids]
    stopword_table(types, [stoplist_for_language("en")])[0][ids]
    return len(ids)


def regex_only(texts: list[str]) -> int:
    return sum(len(tokenise(text)) for text in texts)


def best_of(function, texts: list[str], rounds: int) -> tuple[int, float]:
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        tokens = function(texts)
        best = min(best, time.process_time() - started)
    return tokens, best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--blocks",
        nargs="+",
        metavar="PARQUET",
        help="extract blocks tables (good blocks are used)",
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="repetitions; the fastest counts (default 3)"
    )
    args = parser.parse_args(argv)
    if args.blocks:
        texts = block_texts(args.blocks)
    else:
        if not CRAWL.is_dir():
            parser.error(f"no crawl at {CRAWL}; pass --blocks")
        import re

        texts = [
            line
            for page in crawl_page_texts(sorted(CRAWL.glob("*.warc.gz")))
            for line in re.split(r"(?<=[.!?]) ", page)
        ]
    tokenise("warm up: build the pattern")
    chars = sum(map(len, texts))
    print(f"{len(texts)} blocks, {chars / 1e6:.1f} M characters")
    for name, function in (
        ("stage (distinct chunks)", stage_work),
        ("regex only, no memo", regex_only),
    ):
        tokens, seconds = best_of(function, texts, args.rounds)
        print(
            f"{name:22s} {tokens:>10d} tokens  {seconds:6.2f} s  {tokens / seconds / 1e6:5.2f} M "
            "tokens/s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
