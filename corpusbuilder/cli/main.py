"""The `corpusbuilder` command: single stages by hand, on the same library the workflow runs.

The full build is `snakemake --cores N` in the checkout; these subcommands are for looking at
one page, one shard or one config at a time, and run from any directory once the package is
installed (the schema, stop lists and model ship inside it).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from corpusbuilder.cli.outputs import STDIO, no_stdout, output_path, shown
from corpusbuilder.common.faults import JobFault, fault_line, not_utf8_line
from corpusbuilder.config import WORKFLOW_CONFIG_PATH, ConfigError, load_config


def _extract_params(args):
    from corpusbuilder.api import extract_params

    return extract_params(
        load_config(args.config),
        getattr(args, "preset", None),
        getattr(args, "comments", None),
        getattr(args, "peers", None),
    )


def _cleaned(
    body: bytes, params, stoplist_name: str | None, name: str, fmt: str
) -> tuple[str, str]:
    """One page's output in ``fmt`` (txt: its good blocks one a line; json: one JSON line) and
    what became of it: "cleaned", "skipped" (undecodable, too many blocks) or "no text"."""
    import json

    from corpusbuilder.api import clean_html_with
    from corpusbuilder.extraction.extract import TooManyBlocksError, UndecodableError

    try:
        page = clean_html_with(body, params, stoplist_name)
    except (UndecodableError, TooManyBlocksError) as error:
        print(f"{name}: skipped ({error})", file=sys.stderr)
        return (
            "" if fmt == "txt" else json.dumps({"file": name, "error": str(error)}) + "\n"
        ), "skipped"
    status = "cleaned" if page.paragraphs else "no text"
    if status == "no text":
        # an empty output is then no verdict of the classifier: say so
        print(f"{name}: no text in the page", file=sys.stderr)
    good = [paragraph.text for paragraph in page.paragraphs if paragraph.kept]
    if fmt == "txt":
        return "".join(text + "\n" for text in good), status
    record = {
        "file": name,
        "language": page.language,
        "stoplist": page.stoplist,
        "text": page.text,
        "paragraphs": good,
    }
    return json.dumps(record, ensure_ascii=False) + "\n", status


def _write_pages(
    target: str, names: list[str], outputs: list[tuple[str, str]], fmt: str, why: str
) -> None:
    """Each page's output as OUT/<name>.txt (or .json), OUT made if missing."""
    out_dir = Path(target)
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(f"{target}: not a directory; {why}")
    out_dir.mkdir(parents=True, exist_ok=True)
    suffix = ".txt" if fmt == "txt" else ".json"
    for name, (text, status) in zip(names, outputs):
        # a skipped page's empty .txt would read as a page cleaned to nothing; its json line
        # says why it was skipped
        if status != "skipped" or fmt == "json":
            (out_dir / f"{Path(name).stem}{suffix}").write_text(text, encoding="utf-8")


def _is_directory(target: str) -> bool:
    """OUT names a directory: an existing one, or a path ending in a slash (made if missing)."""
    return target != STDIO and (target.endswith(("/", os.sep)) or Path(target).is_dir())


def cmd_clean_html(args) -> int:
    from corpusbuilder.api import forced_stoplist
    from corpusbuilder.download.transfer import starts_a_warc_record

    params = _extract_params(args)
    stoplist_name = forced_stoplist(args.language)
    source, target = args.input, args.output
    if source != STDIO and Path(source).is_dir():
        pages = sorted(Path(source).glob("*.html"))
        if not pages:
            raise ConfigError(f"no *.html files in {source}")
        if target == STDIO and args.format == "txt":
            raise ConfigError(
                "a directory of pages cleans into a directory (give OUT), or to stdout with "
                "--format json"
            )
        outputs = [
            _cleaned(path.read_bytes(), params, stoplist_name, path.name, args.format)
            for path in pages
        ]
        if target == STDIO:
            sys.stdout.write("".join(text for text, _ in outputs))
        else:
            _write_pages(
                target,
                [path.name for path in pages],
                outputs,
                args.format,
                "a directory of pages cleans into a directory",
            )
        statuses = [status for _, status in outputs]
        print(
            f"{len(pages)} pages into {target}: {statuses.count('cleaned')} cleaned, "
            f"{statuses.count('no text')} without text, {statuses.count('skipped')} skipped",
            file=sys.stderr,
        )
        return 0
    if source == STDIO:
        body, name = sys.stdin.buffer.read(), "<stdin>"
    elif Path(source).is_file():
        body, name = Path(source).read_bytes(), Path(source).name
    else:
        raise ConfigError(f"{source}: no such file or directory")
    if starts_a_warc_record(body[:4096]):
        # a usage error, not a page skipped: exit 0 with an empty output read as a crawl cleaned
        # to nothing
        warc = "FILE" if source == STDIO else source
        raise ConfigError(
            f"{name if source == STDIO else source} is a WARC file; clean-html cleans HTML "
            f"pages: for a WARC's, run corpusbuilder extract {warc} OUT_PREFIX"
        )
    if _is_directory(target) and source == STDIO:
        raise ConfigError(
            f"{target}: a page on stdin has no name to write under in a directory; give OUT as a "
            "file, or - for stdout"
        )
    output = _cleaned(body, params, stoplist_name, name, args.format)
    if target == STDIO:
        sys.stdout.write(output[0])
    elif _is_directory(target):
        _write_pages(target, [name], [output], args.format, "an OUT ending in / names one")
    else:
        Path(target).write_text(output[0], encoding="utf-8")
    return 0


def cmd_extract(args) -> int:
    from corpusbuilder.common.logs import setup_logging
    from corpusbuilder.download.transfer import looks_like_warc
    from corpusbuilder.extraction.extract import extract_shard

    no_stdout(args.out_prefix, "OUT_PREFIX: the two tables")
    # as the workflow's check of input.warcs: a file that does not start with a WARC record is no
    # shard with 0 records but a wrong argument
    if not looks_like_warc(Path(args.warc)):
        raise ConfigError(
            f"{args.warc}: not a WARC file (no WARC record at its start, plain or gzipped)"
        )
    setup_logging()
    prefix = Path(args.out_prefix)
    shard = args.shard or prefix.name
    summary = extract_shard(
        [(shard, Path(args.warc))],
        shard,
        Path(f"{prefix}.docs.parquet"),
        Path(f"{prefix}.blocks.parquet"),
        _extract_params(args),
    )
    print(
        f"{prefix}.docs.parquet: {summary.records} records; {prefix}.blocks.parquet: "
        f"{summary.blocks} blocks"
    )
    return 0


def cmd_check_config(args) -> int:
    from corpusbuilder.download.inputs import check_input_paths
    from corpusbuilder.extraction.extract import check_planned_settings

    path = args.config or WORKFLOW_CONFIG_PATH
    if not path.exists():
        raise ConfigError(
            f"config file not found: {path} (run it in the workflow's directory, or give one "
            "with --config)"
        )
    config = load_config(path)
    check_input_paths(config, Path.cwd())
    check_planned_settings(config["extract"], Path.cwd())
    print(f"{path}: valid")
    return 0


def cmd_strip_frequent_lines(args) -> int:
    from corpusbuilder.extraction.frequent_lines import (
        FrequentLinesParams,
        strip_frequent_lines,
        text_files,
    )

    if not Path(args.in_dir).is_dir():
        raise ConfigError(f"{args.in_dir}: no such directory")
    no_stdout(args.out_dir, "OUT_DIR: the bodies and boundaries.tsv")
    if not text_files(args.in_dir):
        raise ConfigError(f"no *.txt files in {args.in_dir}")
    section = load_config(args.config)["frequent_lines"]
    params = FrequentLinesParams.from_config(
        {
            **section,
            "backend": args.backend or section["backend"],
            "heuristics": args.heuristics or section["heuristics"],
        }
    )
    found = strip_frequent_lines(Path(args.in_dir), Path(args.out_dir), params)
    print(
        f"{len(found)} files; boundaries in {Path(args.out_dir) / 'boundaries.tsv'}",
        file=sys.stderr,
    )
    return 0


def cmd_similar_pairs(args) -> int:
    from corpusbuilder.contracts.corpus import CorpusFormatError
    from corpusbuilder.similarity.minhash import write_similar_pairs_tsv

    try:
        count = write_similar_pairs_tsv(
            [Path(args.corpus)], output_path(args.out_tsv), args.threshold
        )
    except CorpusFormatError as error:
        raise ConfigError(
            f"{error}; give a corpus as export writes it (results/corpus/*.jsonl.gz)"
        ) from None
    print(f"{count} pairs above {args.threshold} in {shown(args.out_tsv)}", file=sys.stderr)
    return 0


def cmd_dup_ngrams(args) -> int:
    from corpusbuilder.ngrams.stage import dup_ngrams_from_text

    try:
        count = dup_ngrams_from_text(
            args.input, output_path(args.output), args.n, args.mem_mb, args.min_count
        )
    except UnicodeDecodeError as error:  # the input's: the output is written as UTF-8
        raise ConfigError(not_utf8_line(args.input, error)) from None
    print(f"{shown(args.output)}: {count} duplicate {args.n}-grams", file=sys.stderr)
    return 0


def cmd_compare_books(args) -> int:
    from dataclasses import asdict

    from corpusbuilder.similarity.books import compare_paginated, read_pages
    from corpusbuilder.similarity.minhash import MinHashParams

    pages = []
    for path in (args.book_a, args.book_b):
        if not Path(path).is_file():
            raise ConfigError(f"{path}: no such file")
        try:
            pages.append(read_pages(path))
        except UnicodeDecodeError as error:
            raise ConfigError(not_utf8_line(path, error)) from None
        if not pages[-1]:
            raise ConfigError(f"{path}: no text")
    pages_a, pages_b = pages
    relation, signals = compare_paginated(
        pages_a, pages_b, MinHashParams.from_config(load_config(args.config)["similarity"])
    )
    print(relation)
    for name, value in asdict(signals).items():
        print(f"{name}\t{value:.4f}")
    return 0


def cmd_slurm_status(args) -> int:
    from corpusbuilder.cli.slurm_status import job_state, snakemake_status, unknown_job_reason

    notes: dict[str, str] = {}
    state = job_state(args.job_id, notes)
    status = snakemake_status(state)
    if not state:
        # stdout is the one word Snakemake reads, and a non-zero exit would stop its whole run:
        # the reason goes to stderr, which it shows
        print(
            f"corpusbuilder slurm-status: {unknown_job_reason(args.job_id, notes)}",
            file=sys.stderr,
        )
    print(status)
    return 0


def _positive(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, not {text}")
    return value


def _share(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, not {text}")
    return value


def _at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {text}")
    return value


class _Version(argparse.Action):
    """--version, which also says whether the package was built with its compiled walks (it
    imports lxml to find out, so only when asked)."""

    def __call__(self, parser, namespace, values, option_string=None):
        from corpusbuilder import __version__
        from corpusbuilder.extraction import compiled_walks

        print(f"corpusbuilder {__version__} ({compiled_walks()})")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="corpusbuilder",
        description="Web crawls (WARC) to a clean, de-duplicated text corpus. The full build is "
        "`snakemake --cores N` in the checkout; these subcommands run single steps by hand.",
    )
    parser.add_argument(
        "--version",
        action=_Version,
        nargs=0,
        help="show the version and whether the `best` preset's walks are compiled, and exit",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(
        name,
        func,
        help_text,
        config_help=f"config file (default: {WORKFLOW_CONFIG_PATH} when the working "
        "directory has one, else the schema's defaults)",
    ):
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--config", type=Path, help=config_help)
        sub.set_defaults(func=func)
        return sub

    presets = [
        "default",
        "A",
        "B",
        "C",
        "D",
        "best",
    ]  # justext.PRESETS + "best", without importing lxml
    preset_help = (
        "jusText preset (default, thesis Table 2.7 A-D) or best, the learned block classifier "
        "(default: the config's)"
    )
    clean = add(
        "clean-html",
        cmd_clean_html,
        "Clean HTML pages with jusText or the learned classifier: a page file, - (one page on "
        "stdin) or a directory of *.html files, into a file, - (stdout) or a directory "
        "(<name>.txt or <name>.json per page). txt: the good blocks, one a line; json: one line "
        "per page with file, language, stoplist, text and paragraphs.",
    )
    clean.add_argument(
        "input",
        metavar="IN",
        help="a page, - for stdin, or a directory of *.html files (its subfolders are not read)",
    )
    clean.add_argument(
        "output",
        metavar="OUT",
        nargs="?",
        default="-",
        help="a file, - for stdout (the default), or a directory: an existing one or a path "
        "ending in / (made if missing) gets <name>.txt (or .json) per page; a directory IN "
        "needs a directory, or - with --format json",
    )
    clean.add_argument(
        "--format", choices=["txt", "json"], default="txt", help="output format (default txt)"
    )
    clean.add_argument(
        "--language",
        default="auto",
        help="stop list: auto (guess per page; the default), a language name (German) or ISO code "
        "(de)",
    )
    clean.add_argument("--preset", choices=presets, help=preset_help)
    comments = clean.add_mutually_exclusive_group()
    comments.add_argument(
        "--comments",
        action="store_const",
        const=True,
        default=None,
        help="keep reader comments and all running text; default: the config's "
        "extract.comments (true)",
    )
    comments.add_argument(
        "--no-comments",
        dest="comments",
        action="store_const",
        const=False,
        help="keep the article alone, without reader comments (preset best only)",
    )
    clean.add_argument(
        "--peers",
        choices=["none", "resiliparse", "all"],
        help="preset best also reads other extractors' output: resiliparse, or all (also "
        "trafilatura and readability-lxml; pip install 'corpusbuilder[peers]'); better, slower; "
        "default: the config's extract.peers (none)",
    )

    extract = add(
        "extract",
        cmd_extract,
        "Extract one WARC shard: write OUT_PREFIX.docs.parquet "
        "(a row per record, with skip reasons) and OUT_PREFIX.blocks.parquet (jusText blocks).",
    )
    extract.add_argument(
        "warc", metavar="WARC", help="a WARC file, plain or gzipped (.warc, .warc.gz)"
    )
    extract.add_argument(
        "out_prefix",
        metavar="OUT_PREFIX",
        help="where the two tables go: OUT_PREFIX.docs.parquet and OUT_PREFIX.blocks.parquet",
    )
    extract.add_argument(
        "--shard", help="shard name used in document ids (default: OUT_PREFIX's file name)"
    )
    extract.add_argument("--preset", choices=presets, help=preset_help)

    dup = add(
        "dup-ngrams",
        cmd_dup_ngrams,
        "Every n-gram seen at least --min-count times in INPUT (plain text, one block per line, "
        "tokens split on white space), by suffix sorting in memory-bounded chunks; OUTPUT: "
        "count<TAB>n-gram, most frequent first.",
    )
    dup.add_argument("input", metavar="INPUT.txt")
    dup.add_argument("output", metavar="OUTPUT.tsv", help="a file, or - for stdout")
    dup.add_argument(
        "--n",
        type=int,
        default=10,
        choices=range(3, 21),
        metavar="N",
        help="n-gram length, 3-20 (default 10, the thesis' §3.4)",
    )
    dup.add_argument(
        "--mem-mb",
        type=_positive,
        default=256,
        help="memory budget of one chunk, in MB (> 0; default 256)",
    )
    dup.add_argument(
        "--min-count",
        type=_at_least_one,
        default=2,
        help="write the n-grams seen at least this many times (≥ 1; default 2, the duplicates)",
    )

    strip = add(
        "strip-frequent-lines",
        cmd_strip_frequent_lines,
        "Remove the preambles and epilogues that many *.txt files of IN_DIR share (Kaser & "
        "Lemire's frequent lines); write each body to OUT_DIR under the same name, and "
        "OUT_DIR/boundaries.tsv.",
    )
    strip.add_argument("in_dir", metavar="IN_DIR", help="a directory of *.txt files")
    strip.add_argument("out_dir", metavar="OUT_DIR", help="a directory, made if missing")
    strip.add_argument(
        "--backend",
        choices=["exact", "checksum", "hashed", "gm"],
        help="line counting structure (default: the config's frequent_lines.backend)",
    )
    strip.add_argument(
        "--heuristics", action="store_true", help="add the Project Gutenberg regular expressions"
    )

    pairs = add(
        "similar-pairs",
        cmd_similar_pairs,
        "Write id_a, id_b and the estimated resemblance (min-hash of 5-word shingles) of every "
        "pair of documents of an exported corpus above a threshold.",
    )
    pairs.add_argument("corpus", metavar="CORPUS.jsonl[.gz]", help="a corpus as export writes it")
    pairs.add_argument("out_tsv", metavar="OUT.tsv", help="a file, or - for stdout")
    pairs.add_argument(
        "--threshold",
        type=_share,
        default=0.5,
        help="write the pairs whose estimated resemblance is above this, 0-1 (default 0.5)",
    )

    books = add(
        "compare-books",
        cmd_compare_books,
        "How two paginated documents relate (Spasojevic & Poncin): SAME_PAGINATION, "
        "DIFFERENT_PAGINATION, CONTIGUOUS_SUBSET, OVERLAPPING_TEXT, or NO_OVERLAP when no page "
        "of one resembles a page of the other (the paper classifies only similar pairs), then "
        "the page-level signals it was decided from. A.txt and B.txt: UTF-8 text, pages "
        "separated by form feeds, as pdftotext writes them.",
    )
    books.add_argument("book_a", metavar="A.txt")
    books.add_argument("book_b", metavar="B.txt")

    add(
        "check-config",
        cmd_check_config,
        "Validate a config file and its input paths, as the workflow does before it plans any job.",
        config_help=f"config file (default: {WORKFLOW_CONFIG_PATH}, which the "
        "working directory must then have)",
    )

    status_help = (
        "Print running, success or failed for a SLURM job id, as Snakemake's cluster-generic "
        "executor asks it (the status command of profiles/cluster-generic). A job no SLURM "
        "command knows (an invalid id, SLURM not installed) is failed, and stderr says why; the "
        "exit is 0 whenever a status was printed, as Snakemake stops the run on any other."
    )
    status = commands.add_parser("slurm-status", help=status_help, description=status_help)
    status.add_argument("job_id", metavar="JOBID")
    status.set_defaults(func=cmd_slurm_status)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ConfigError as error:
        print(f"corpusbuilder: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # stdout's reader stopped early (`| head`): stop quietly as other tools do, the exit
        # status a shell shows for one killed by SIGPIPE; stdout to /dev/null so that Python's
        # own flush at exit does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as error:
        # a path given on the command line that is not what the
        # command reads: one line, no traceback
        print(f"corpusbuilder: {error.filename or ''}: {error.strerror or error}", file=sys.stderr)
        return 2
    except (OSError, MemoryError, JobFault) as error:
        line = fault_line(error)
        if line is None:
            raise
        print(f"corpusbuilder: {line}", file=sys.stderr)
        return 1
    except UnicodeDecodeError as error:
        print(
            f"corpusbuilder: an input is not UTF-8 text ({error.reason} at byte {error.start})",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
