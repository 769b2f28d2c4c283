"""onion, the peer of block de-duplication (thesis §3.5; the reference of the dedup issue: "the
public onion C tool, n = 10, t = 0.5"), run on exactly the tokens our dedup stage sees and scored
with bench_dedup's metric, to tell the algorithm's figures from the input's.

    # the real C tool, built from PyPI's copy of its source
    bash bench/build_onion.sh
    # jusText text of every page, tokenised
    python bench/bench_dedup.py crawl --stage '' --work DIR
    python bench/onion_reference.py DIR --ours DIR/dedup \\
        --onion bench/results/tmp/onion/onion-tokens/onion \\
        bench/results/tmp/onion/onion-ngrams/onion \\
        --simulate onion,1,tokens justext,0,tokens none,0,tokens

--onion BINARY: the C tool (n = 10, t = 0.5, its own smoothing) on the blocks written as a vertical
file (a token per line, a <p> per block, a <doc> per page, crawl order), cut by the tokeniser the
streams were made with (the `raw` layout: bench_dedup's regex; `stage`: the tokenise stage's), so
the tool sees the tokens the metric counts.
--simulate SMOOTHING,CROSS,COUNT: onion's loop re-enacted in numpy, to vary one thing at a time:
SMOOTHING onion (non-removed runs of <= 20 tokens between removed paragraphs or page ends go),
justext (our context-sensitive pass) or none; CROSS 1 = n-grams cross paragraphs inside a page as
onion's do, 0 = block-bound as ours; COUNT tokens = a paragraph's words covered by already seen
n-grams (src/ of the tool), ngrams = already-seen n-grams ending in it (src_sc/). Input order,
n = 10, t = 0.5, a page's n-grams join the seen set after the page is judged.
--ours DIR: our dedup stage's outputs for the same shards.

Each run prints and saves (section `onion_reference` of results/dedup.json) the share of duplicate
10-gram instances removed and of distinct 10-grams kept, counted inside blocks (bench_dedup's
metric) and across blocks of a page.
"""

from __future__ import annotations

import argparse
import itertools
import re
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from bench_dedup import TOKEN, kept_after, load_words, pattern_suffix, save, tengram_metric

from corpusbuilder.contracts.tokenfile import read_tokens
from corpusbuilder.dedup.context import page_blocks
from corpusbuilder.extraction.justext import PRESETS, reclassifier
from corpusbuilder.ngrams.hashing import ngram_hashes
from corpusbuilder.tokenise import tokenise

N, THRESHOLD, MAX_STUB = 10, 0.5, 20
ONION_BUFFER = 335_544_320  # the tool's default -b

# jusText's pass of the default preset, as the dedup rules hand it over
JUSTEXT = reclassifier(PRESETS["default"])


def shard_paths(directory: Path, layout: str) -> tuple[list[Path], list[Path]]:
    """Token streams and block tables of a workflow `work` dir (stage) or a bench work dir (raw)."""
    if layout == "stage":
        names = sorted(p.name.removesuffix(".npz") for p in (directory / "tokens").glob("*.npz"))
        return (
            [directory / "tokens" / f"{x}.npz" for x in names],
            [directory / "extract" / f"{x}.blocks.parquet" for x in names],
        )
    names = sorted(
        p.name.removesuffix(".npz") for p in directory.glob("*.npz") if "." not in p.stem
    )
    return [directory / f"{x}.npz" for x in names], [
        directory / f"{x}.blocks.parquet" for x in names
    ]


def doc_offsets(tokens_path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Each page's first token and first block (plus the end), from a token stream."""
    t = read_tokens(tokens_path, ("block_offsets", "block_doc", "doc_ids"))
    block_offsets, block_doc, docs = t.block_offsets, t.block_doc, len(t.doc_ids)
    first_block = np.searchsorted(block_doc, np.arange(docs + 1))
    return block_offsets[first_block], first_block


def block_count(tokens_path: Path) -> int:
    return len(read_tokens(tokens_path, ("block_offsets",)).block_offsets) - 1


# --- the C tool -----------------------------------------------------------------------------------


def write_vertical(
    tokens_paths: list[Path], blocks_paths: list[Path], tokens_of, path: Path
) -> None:
    """The token streams' blocks as onion's input, each block's text cut by `tokens_of` (the
    stream's own tokeniser, checked against its token counts). A token starting with '<' would be
    read as a tag: it gets a leading space, which no token has (tokens never hold whitespace), so
    it stays distinct."""
    with path.open("w") as out:
        for tokens_path, blocks_path in zip(tokens_paths, blocks_paths):
            t = read_tokens(tokens_path, ("doc_ids", "block_doc", "block_index", "block_offsets"))
            doc_ids = np.asarray(t.doc_ids).astype(str)[t.block_doc]
            texts = pd.read_parquet(
                blocks_path, columns=["doc_id", "block_index", "text"]
            ).set_index(["doc_id", "block_index"])["text"]
            texts = texts.reindex(pd.MultiIndex.from_arrays([doc_ids, t.block_index]))
            previous = None
            for doc_id, text, length in zip(doc_ids, texts, np.diff(t.block_offsets)):
                words = tokens_of(text)
                if len(words) != length:
                    sys.exit(f"{tokens_path}: its tokens are not the tokeniser's of {blocks_path}")
                if doc_id != previous:
                    out.write("</doc>\n<doc>\n" if previous is not None else "<doc>\n")
                    previous = doc_id
                out.write(
                    "<p>\n"
                    + "".join((" " + w if w[0] == "<" else w) + "\n" for w in words)
                    + "</p>\n"
                )
            out.write("</doc>\n")


def run_onion(
    binary: str, tokens_paths: list[Path], blocks_paths: list[Path], tokens_of, n: int = N
) -> list[np.ndarray]:
    """The tool's kept flag per block, from its per-paragraph marks (build_onion.sh adds them)."""
    with tempfile.TemporaryDirectory() as tmp:
        vertical, listing = Path(tmp) / "input.vert", Path(tmp) / "files.txt"
        write_vertical(tokens_paths, blocks_paths, tokens_of, vertical)
        if vertical.stat().st_size >= ONION_BUFFER:
            sys.exit(
                f"{binary}: the refactored tool reads one {ONION_BUFFER}-byte buffer per input "
                "file; the input is larger"
            )
        listing.write_text(f"{vertical}\n")
        stdout = subprocess.run(
            [
                binary,
                "-n",
                str(n),
                "-t",
                str(THRESHOLD),
                "-l",
                str(MAX_STUB),
                "-q",
                "-D",
                "bench",
                "-L",
                str(listing),
                "-O",
                tmp + "/",
            ],  # it appends names bare
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    removed = np.array(
        [line.endswith("1") for line in stdout.splitlines() if line.startswith("PAR\t")]
    )
    ends = np.cumsum([block_count(p) for p in tokens_paths])
    if len(removed) != ends[-1]:
        sys.exit(
            f"{binary}: {len(removed)} paragraph marks for {ends[-1]} blocks; build it with "
            "build_onion.sh"
        )
    return [~part for part in np.split(removed, ends[:-1])]


# --- onion's loop in numpy ------------------------------------------------------------------------


def onion_stubs(removed: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """onion's smoothing: a run of kept paragraphs of <= MAX_STUB tokens between removed
    paragraphs (or the page's ends) goes too."""
    removed = removed.copy()
    last, run = -1, 0
    for i in range(len(lengths) + 1):
        if i == len(lengths) or removed[i]:
            if run <= MAX_STUB:
                removed[last + 1 : i] = True
            last, run = i, 0
        else:
            run += lengths[i]
    return removed


def simulate(
    tokens_paths: list[Path], blocks_paths: list[Path], smoothing: str, cross: bool, count: str
) -> list[np.ndarray]:
    """onion's loop (see the module docstring for the three knobs): a kept flag per block."""
    shards = []
    for path in tokens_paths:
        words, block_offsets = load_words(path, "all")
        page_tokens, first_block = doc_offsets(path)
        hashes, starts = ngram_hashes(words, page_tokens if cross else block_offsets, N)
        shards.append((block_offsets, page_tokens, first_block, hashes, starts))
    unique, counts = np.unique(
        np.concatenate([hashes for *_, hashes, _ in shards]), return_counts=True
    )
    repeated = unique[counts >= 2]
    # an n-gram seen once in the whole input can never be seen again, so like onion with its list
    # of duplicate hashes (-f) only the repeated ones need remembering
    seen: set[int] = set()
    kept_shards = []
    for shard, (block_offsets, page_tokens, first_block, hashes, starts) in enumerate(shards):
        is_repeated = np.isin(hashes, repeated)
        ends = starts + N - 1
        kept = np.ones(len(block_offsets) - 1, bool)
        if smoothing == "justext":
            t = read_tokens(tokens_paths[shard])
            pages = page_blocks(
                pd.read_parquet(blocks_paths[shard]),
                [str(x) for x in t.doc_ids],
                t.block_doc,
                t.block_index,
            )
        for page in range(len(page_tokens) - 1):
            lo, hi = page_tokens[page], page_tokens[page + 1]
            b0, b1 = first_block[page], first_block[page + 1]
            if b1 == b0:
                continue
            a, z = np.searchsorted(starts, [lo, hi])
            page_hashes, page_ends, page_repeated = hashes[a:z], ends[a:z], is_repeated[a:z]
            # seen: earlier in this page, or output by an earlier page
            bad = np.ones(len(page_hashes), bool)
            bad[np.unique(page_hashes, return_index=True)[1]] = False
            output_before = np.fromiter(
                (h in seen for h in page_hashes[page_repeated].tolist()),
                bool,
                count=int(page_repeated.sum()),
            )
            bad[np.flatnonzero(page_repeated)[output_before]] = True
            bounds = block_offsets[b0 : b1 + 1]
            lengths = np.diff(bounds)
            block_of_end = np.searchsorted(bounds, page_ends, side="right") - 1
            if count == "ngrams":
                covered = np.bincount(block_of_end[bad], minlength=len(lengths))
            else:
                last = page_ends[bad]
                first = np.maximum(last - N + 1, bounds[block_of_end[bad]])
                diff = np.zeros(hi - lo + 1, np.int64)
                np.add.at(diff, first - lo, 1)
                np.add.at(diff, last + 1 - lo, -1)
                covered_before = np.concatenate(([0], np.cumsum(np.cumsum(diff[:-1]) > 0)))
                covered = covered_before[bounds[1:] - lo] - covered_before[bounds[:-1] - lo]
            removed = (lengths > 0) & (covered > THRESHOLD * lengths)
            if smoothing == "onion":
                removed = onion_stubs(removed, lengths)
            elif smoothing == "justext" and removed.any():
                removed |= ~pages.kept_blocks(page, b0, removed, JUSTEXT, 0)
            kept[b0:b1] = ~removed
            seen.update(page_hashes[page_repeated & ~removed[block_of_end]].tolist())
        kept_shards.append(kept)
    return kept_shards


# --- scoring --------------------------------------------------------------------------------------


def cross_block_metric(tokens_paths: list[Path], kept: list[np.ndarray] | None) -> dict:
    """10-grams over each page's kept tokens (a flag per token; None = all), crossing blocks."""
    hashes = []
    for i, path in enumerate(tokens_paths):
        words, block_offsets = load_words(path, "all")
        page_tokens, _ = doc_offsets(path)
        keep = np.ones(len(words), bool) if kept is None else kept[i]
        kept_before = np.concatenate(([0], np.cumsum(keep)))
        hashes.append(ngram_hashes(words[keep], kept_before[page_tokens], 10)[0])
    _, counts = np.unique(np.concatenate(hashes), return_counts=True)
    return {
        "duplicate_10gram_instances": int(counts[counts >= 2].sum()),
        "distinct_10grams": len(counts),
    }


def kept_of_outputs(tokens_paths: list[Path], outputs: list[Path]) -> list[np.ndarray]:
    """Our dedup stage's kept flag per token of the token streams (`bench_dedup.kept_after`)."""
    return [kept_after(tokens_path, output) for tokens_path, output in zip(tokens_paths, outputs)]


def per_token(tokens_paths: list[Path], kept_blocks: list[np.ndarray]) -> list[np.ndarray]:
    """A kept flag per block (onion's verdicts) as one per token."""
    return [
        np.repeat(kept, np.diff(load_words(path, "all")[1]))
        for path, kept in zip(tokens_paths, kept_blocks)
    ]


def score(name: str, tokens_paths: list[Path], kept: list[np.ndarray], before: dict) -> dict:
    """The metric of `kept`, a flag per token of each stream."""
    row = {"run": name}
    for scope, metric in (("within_blocks", tengram_metric), ("across_blocks", cross_block_metric)):
        after = metric(tokens_paths, kept)
        row[scope] = {
            "removed_duplicate_10gram_instances": round(
                1
                - after["duplicate_10gram_instances"] / before[scope]["duplicate_10gram_instances"],
                4,
            ),
            "kept_distinct_10grams": round(
                after["distinct_10grams"] / before[scope]["distinct_10grams"], 4
            ),
        }
    print(row, flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "dir",
        type=Path,
        help="bench_dedup --stage '' work dir (raw) or a workflow work dir (stage)",
    )
    parser.add_argument("--layout", choices=["raw", "stage"], default="raw")
    parser.add_argument(
        "--ours", type=Path, help="our dedup outputs ({shard}.parquet) for the same shards"
    )
    parser.add_argument(
        "--onion", nargs="*", default=[], help="onion binaries built by build_onion.sh"
    )
    parser.add_argument(
        "--n",
        type=int,
        nargs="+",
        default=[N],
        help="n-gram lengths the C tool runs with (the metric stays 10-grams)",
    )
    parser.add_argument("--simulate", nargs="*", default=[], metavar="SMOOTHING,CROSS,COUNT")
    parser.add_argument(
        "--token-pattern", default=TOKEN, help="the --token-pattern DIR was tokenised with"
    )
    parser.add_argument(
        "--section",
        help="results/dedup.json section (default: onion_reference, _workflow for a stage dir)",
    )
    args = parser.parse_args()
    # the tool must see the tokens the metric counts: the regex's (raw) or the tokenise stage's
    tokens_of = tokenise if args.layout == "stage" else partial(re.findall, args.token_pattern)
    tokens_paths, blocks_paths = shard_paths(args.dir, args.layout)
    if not tokens_paths:
        parser.error(f"{args.dir}: no token streams (*.npz)")
    before = {
        "within_blocks": tengram_metric(tokens_paths, None),
        "across_blocks": cross_block_metric(tokens_paths, None),
    }
    print("before", before, flush=True)
    rows = []
    if args.ours:
        outputs = [args.ours / f"{p.stem}.parquet" for p in tokens_paths]
        rows.append(
            score(
                f"ours ({args.ours})", tokens_paths, kept_of_outputs(tokens_paths, outputs), before
            )
        )
    for binary, n in itertools.product(args.onion, args.n):
        kept = per_token(tokens_paths, run_onion(binary, tokens_paths, blocks_paths, tokens_of, n))
        rows.append(
            score(
                f"onion C tool ({Path(binary).parent.name})" + (f", n = {n}" if n != N else ""),
                tokens_paths,
                kept,
                before,
            )
        )
    for spec in args.simulate:
        smoothing, cross, count = (spec.split(",") + ["", "", ""])[:3]
        if (
            smoothing not in ("onion", "justext", "none")
            or cross not in ("0", "1")
            or count not in ("tokens", "ngrams")
        ):
            parser.error(f"--simulate {spec}: expected onion|justext|none,0|1,tokens|ngrams")
        kept = per_token(
            tokens_paths, simulate(tokens_paths, blocks_paths, smoothing, cross == "1", count)
        )
        rows.append(
            score(
                f"onion loop in numpy: smoothing={smoothing} cross={cross} count={count}",
                tokens_paths,
                kept,
                before,
            )
        )
    # the workflow's input (a stage dir) and jusText's text of every page
    # (raw) have sections of their own
    save(
        args.section
        or "onion_reference"
        + ("_workflow" if args.layout == "stage" else "")
        + pattern_suffix(args.token_pattern),
        {
            "dir": str(args.dir),
            "layout": args.layout,
            "token_pattern": args.token_pattern,
            "n": N,
            "threshold": THRESHOLD,
            "before": before,
            "runs": rows,
        },
    )


if __name__ == "__main__":
    main()
