"""The command line: clean-html over a directory, extract of one shard, --help."""

from __future__ import annotations

import gzip
import subprocess
import sys

import pandas as pd
import pytest
from conftest import write_warc
from test_extract import ARTICLE

from corpusbuilder.cli.main import main

GERMAN = (
    "<html><body><nav><a href='/'>Start</a> | <a href='/k'>Kontakt</a></nav>"
    "<p>Als wir am Morgen aufbrachen, lag noch ein dünner Nebel über dem Fluss, und die Boote, die "
    "am Ufer festgemacht sind, waren vom Weg aus kaum zu sehen. Wir gingen etwa eine Stunde, bevor "
    "die Sonne durchkam und das Wasser zu glänzen begann, und wir blieben bis zum Nachmittag.</p>"
    "</body></html>"
)


def run(*args):
    return subprocess.run(
        [sys.executable, "-m", "corpusbuilder.cli.main", *args], capture_output=True, text=True
    )


@pytest.mark.slow
def test_clean_html_writes_good_blocks_per_page(tmp_path):
    pages, out = tmp_path / "pages", tmp_path / "out"
    pages.mkdir()
    (pages / "walk.html").write_text(ARTICLE)
    (pages / "fluss.html").write_text(GERMAN)
    (pages / "notes.txt").write_text("not a page")
    (pages / "blank.html").write_text("<html><body>  </body></html>")
    (pages / "noise.html").write_bytes(bytes(range(256)) * 16)
    # jusText's thresholds: on this five-block page the learned preset keeps the lone copyright
    # line (p = 0.84); test_clean_html_with_the_best_preset covers it on a page with a template
    result = run("clean-html", str(pages), str(out), "--preset", "default")
    assert result.returncode == 0, result.stderr
    # a skipped page leaves no empty file that would read as a page cleaned to nothing
    assert sorted(p.name for p in out.iterdir()) == ["blank.txt", "fluss.txt", "walk.txt"]
    # an empty output that is no verdict of the classifier says so
    assert "blank.html: no text in the page" in result.stderr
    assert "noise.html: skipped (" in result.stderr
    assert f"4 pages into {out}: 2 cleaned, 1 without text, 1 skipped" in result.stderr
    # a file where the folder of outputs should go: one line, no traceback
    refused = run("clean-html", str(pages), str(out / "walk.txt"))
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith(
        "walk.txt: not a directory; a directory of pages cleans into a directory"
    )
    walk = (out / "walk.txt").read_text().splitlines()
    assert walk[0].startswith("A walk along the river") or walk[0].startswith("When we set out")
    assert not any("All rights reserved" in line for line in walk)
    assert (out / "fluss.txt").read_text().startswith("Als wir am Morgen")


def test_clean_html_with_a_forced_stop_list_and_preset(tmp_path):
    pages, out = tmp_path / "pages", tmp_path / "out"
    pages.mkdir()
    (pages / "fluss.html").write_text(GERMAN)
    # With the English stop list the German paragraph has no stop words: it is boilerplate.
    assert (
        run("clean-html", str(pages), str(out), "--language", "en", "--preset", "C").returncode == 0
    )
    assert (out / "fluss.txt").read_text() == ""
    assert run("clean-html", str(pages), str(out), "--language", "German").returncode == 0
    assert (out / "fluss.txt").read_text().startswith("Als wir am Morgen")
    bad = run("clean-html", str(pages), str(out), "--language", "Klingon")
    assert bad.returncode == 2 and "no stop list" in bad.stderr


def test_extract_one_shard_by_hand(tmp_path):
    warc = write_warc(
        tmp_path / "one.warc.gz", [{"uri": "http://a.example/walk", "body": ARTICLE.encode()}]
    )
    result = run("extract", str(warc), str(tmp_path / "one"))
    assert result.returncode == 0, result.stderr
    docs = pd.read_parquet(tmp_path / "one.docs.parquet")
    assert docs["doc_id"].tolist() == ["one:0"] and docs["reason"].tolist() == ["ok"]
    assert len(pd.read_parquet(tmp_path / "one.blocks.parquet")) > 0


def test_help_explains_every_command():
    result = run("--help")
    assert result.returncode == 0
    for command in ("clean-html", "extract", "check-config"):
        assert command in result.stdout
    # every option says what it does and its default
    assert "default 2" in run("dup-ngrams", "--help").stdout
    assert "default 0.5" in run("similar-pairs", "--help").stdout
    assert "OUT_PREFIX.docs.parquet" in run("extract", "--help").stdout


def test_strip_frequent_lines_writes_bodies_and_boundaries(tmp_path):
    from fixtures.make_ebooks import make_ebooks

    truth = make_ebooks(tmp_path / "in", n_files=60, seed=3)
    result = run(
        "strip-frequent-lines", str(tmp_path / "in"), str(tmp_path / "out"), "--heuristics"
    )
    assert result.returncode == 0, result.stderr
    rows = (tmp_path / "out" / "boundaries.tsv").read_text().splitlines()
    assert len(rows) >= len(truth)
    assert len(list((tmp_path / "out").glob("*.txt"))) == len(list((tmp_path / "in").glob("*.txt")))


def test_similar_pairs_over_an_exported_corpus(tmp_path):
    import json

    text = "the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat " * 5
    docs = [
        {"id": "s:1", "url": "u1", "language": "en", "paragraphs": [text]},
        {"id": "s:2", "url": "u2", "language": "en", "paragraphs": [text + " and one more line"]},
        {
            "id": "s:3",
            "url": "u3",
            "language": "en",
            "paragraphs": ["an entirely different page about rivers and boats " * 5],
        },
    ]
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs))
    assert (
        run(
            "similar-pairs", str(corpus), str(tmp_path / "pairs.tsv"), "--threshold", "0.5"
        ).returncode
        == 0
    )
    pairs = [line.split("\t") for line in (tmp_path / "pairs.tsv").read_text().splitlines()]
    assert [(a, b) for a, b, _ in pairs] == [("s:1", "s:2")]
    assert 0.65 < float(pairs[0][2]) < 0.95  # 17 shared of 21 distinct shingles: resemblance 0.81


def test_dup_ngrams_by_hand(tmp_path):
    (tmp_path / "in.txt").write_text("a b c d e f g h\nx a b c d e f g h y\nz z z z z z\n")
    result = run(
        "dup-ngrams",
        str(tmp_path / "in.txt"),
        str(tmp_path / "out.tsv"),
        "--n",
        "5",
        "--mem-mb",
        "1",
    )
    assert result.returncode == 0, result.stderr
    rows = [line.split("\t") for line in (tmp_path / "out.tsv").read_text().splitlines()]
    assert rows[0] == ["2", "z z z z z"] or ["2", "z z z z z"] in rows
    assert sorted(text for _, text in rows) == [
        "a b c d e",
        "b c d e f",
        "c d e f g",
        "d e f g h",
        "z z z z z",
    ]


def test_clean_html_with_the_best_preset(tmp_path):
    from test_classifier import NEWS

    pages, out = tmp_path / "pages", tmp_path / "out"
    pages.mkdir()
    (pages / "news.html").write_bytes(NEWS.read_bytes())
    result = run("clean-html", str(pages), str(out), "--preset", "best")
    assert result.returncode == 0, result.stderr
    lines = (out / "news.txt").read_text().splitlines()
    assert any(line.startswith("After three years") for line in lines)
    assert not any(line in ("Home", "Contact us") or line.startswith("©") for line in lines)
    assert "best, the learned block classifier" in run("clean-html", "--help").stdout


def test_check_config_outside_a_workflow_directory_asks_for_one(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["check-config"]) == 2
    assert "config/config.yaml" in capsys.readouterr().err


def test_commands_outside_a_workflow_directory_take_the_schema_defaults(tmp_path, monkeypatch):
    from corpusbuilder.config import load_config, load_schema

    monkeypatch.chdir(tmp_path)
    config = load_config()
    assert (
        config["extract"]["preset"]
        == load_schema()["properties"]["extract"]["properties"]["preset"]["default"]
    )
    assert config["input"]["warcs"] == []


def test_a_config_that_is_not_yaml_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("extract: {preset: [unclosed\n")
    assert main(["check-config", "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "is not YAML" in err and len(err.strip().splitlines()) == 1


WRAPPED = ARTICLE.replace("we set out", "we set\n   out")  # a hard line wrap inside a paragraph


def test_clean_html_pipes_like_its_peers(tmp_path):
    """A page on stdin, the good blocks on stdout, one block a line whatever the source's wraps."""
    piped = subprocess.run(
        [sys.executable, "-m", "corpusbuilder.cli.main", "clean-html", "-", "--preset", "default"],
        input=WRAPPED.encode(),
        capture_output=True,
    )
    assert piped.returncode == 0, piped.stderr
    lines = piped.stdout.decode().splitlines()
    assert any(line.startswith("When we set out in the morning") for line in lines)
    assert not any("All rights reserved" in line for line in lines)


@pytest.mark.slow
def test_clean_html_file_to_file_and_json(tmp_path):
    import json

    page = tmp_path / "walk.html"
    page.write_text(WRAPPED)
    assert (
        run("clean-html", str(page), str(tmp_path / "walk.txt"), "--preset", "default").returncode
        == 0
    )
    assert "When we set out" in (tmp_path / "walk.txt").read_text()
    result = run("clean-html", str(page), "--format", "json", "--preset", "default")
    record = json.loads(result.stdout)
    assert (
        record["file"] == "walk.html"
        and record["language"] == "en"
        and record["stoplist"] == "English"
    )
    assert record["text"] == "\n\n".join(record["paragraphs"]) and all(
        "\n" not in p for p in record["paragraphs"]
    )
    directory = run("clean-html", str(tmp_path), "--format", "json", "--preset", "default")
    assert [json.loads(line)["file"] for line in directory.stdout.splitlines()] == ["walk.html"]


def test_clean_html_errors_are_one_line(tmp_path):
    missing = run("clean-html", str(tmp_path / "nothing.html"))
    assert (
        missing.returncode == 2
        and missing.stderr.strip().count("\n") == 0
        and "no such file" in missing.stderr
    )
    (tmp_path / "pages").mkdir()
    empty = run("clean-html", str(tmp_path / "pages"), str(tmp_path / "out"))
    assert empty.returncode == 2 and "no *.html files" in empty.stderr


def test_clean_html_on_a_warc_says_to_use_extract(tmp_path):
    """Issue 56: a WARC given to clean-html printed `skipped (binary)` and exited 0, an empty
    output a script takes for a crawl without text; it is a wrong command: exit 2, one line."""
    write_warc(tmp_path / "crawl.warc.gz", [{"uri": "http://x.example/", "body": ARTICLE.encode()}])
    (tmp_path / "crawl.warc").write_bytes(
        gzip.decompress((tmp_path / "crawl.warc.gz").read_bytes())
    )
    for name in ("crawl.warc.gz", "crawl.warc"):
        said = run("clean-html", str(tmp_path / name), str(tmp_path / "out.txt"))
        assert said.returncode == 2 and said.stderr.strip().count("\n") == 0, said.stderr
        assert f"corpusbuilder extract {tmp_path / name} OUT_PREFIX" in said.stderr
        assert not (tmp_path / "out.txt").exists()
    piped = subprocess.run(
        [sys.executable, "-m", "corpusbuilder.cli.main", "clean-html", "-"],
        input=(tmp_path / "crawl.warc.gz").read_bytes(),
        capture_output=True,
        text=False,
    )
    assert piped.returncode == 2 and b"<stdin> is a WARC file" in piped.stderr, piped.stderr


def test_version():
    import corpusbuilder
    from corpusbuilder.extraction import compiled_walks

    result = run("--version")
    assert result.returncode == 0
    assert (
        result.stdout.strip() == f"corpusbuilder {corpusbuilder.__version__} ({compiled_walks()})"
    )


@pytest.mark.parametrize(
    "missing, said",
    [
        ([], "compiled walks"),
        (["_walk", "_trees", "_features", "_classes"], "Python walks, with the same results"),
        (["_walk"], "compiled walks, but Python for the segmentation walk,"),
        (["_trees", "_classes"], "but Python for the tree walk, jusText's classes,"),
    ],
)
def test_version_and_the_extract_log_say_which_walks_are_compiled(
    monkeypatch, caplog, missing, said
):
    """An install without every compiled module (no compiler, another lxml, a checkout pulled
    but not rebuilt) says so, and how to get them, in --version and in extract's log."""
    import corpusbuilder.extraction as extraction
    from corpusbuilder.extraction.extract import ExtractParams, check_setup

    monkeypatch.setattr(extraction, "missing_compiled_modules", lambda: list(missing))
    walks = extraction.compiled_walks()
    assert said in walks
    assert ("pip install -e ." in walks) == bool(missing)
    monkeypatch.setattr(
        "corpusbuilder.extraction.extract.missing_compiled_modules", lambda: list(missing)
    )
    with caplog.at_level("WARNING", logger="corpusbuilder.extraction.extract"):
        check_setup(ExtractParams(learned=False))
    assert [r.getMessage() for r in caplog.records] == (
        [f"extraction runs {walks}"] * bool(missing)
    )


def test_slurm_status_waits_when_the_scheduler_does_not_answer(monkeypatch):
    """Issue 17: a transient scheduler time-out used to read as `failed`, so the profile would
    resubmit a running job. No answer is `running` (asked again); a job nobody knows is `failed`."""
    from corpusbuilder.cli import slurm_status

    def timed_out(command, **kwargs):
        raise subprocess.TimeoutExpired(command, 60)

    monkeypatch.setattr(slurm_status.subprocess, "run", timed_out)
    assert slurm_status.snakemake_status(slurm_status.job_state("42")) == "running"

    def socket_error(command, **kwargs):
        return subprocess.CompletedProcess(
            command, 1, "", "slurm_load_jobs error: Socket timed out on send/recv"
        )

    monkeypatch.setattr(slurm_status.subprocess, "run", socket_error)
    assert slurm_status.snakemake_status(slurm_status.job_state("42")) == "running"

    def forgotten(command, **kwargs):
        if command[0] == "sacct":
            return subprocess.CompletedProcess(
                command, 1, "", "Slurm accounting storage is disabled"
            )
        return subprocess.CompletedProcess(
            command, 1, "", "slurm_load_jobs error: Invalid job id specified"
        )

    monkeypatch.setattr(slurm_status.subprocess, "run", forgotten)
    assert slurm_status.snakemake_status(slurm_status.job_state("42")) == "failed"


@pytest.mark.slow
def test_bad_paths_and_inputs_are_one_line_not_a_traceback(tmp_path):
    """Issue 17: a missing file, a directory where a file belongs, a binary text input, a missing
    folder, a zero memory budget: one line and a non-zero exit, never a traceback."""
    (tmp_path / "folder").mkdir()
    (tmp_path / "binary.txt").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "not-gzip.jsonl.gz").write_text("plain text\n")
    (tmp_path / "not-json.jsonl").write_text("plain text\n")
    (tmp_path / "no-id.jsonl").write_text('{"text": "a document without an id"}\n')
    (tmp_path / "no-object.jsonl").write_text("[1, 2]\n")
    corpus = gzip.compress(
        b"".join(
            b'{"id": "s:%d", "paragraphs": ["word %d and more words"]}\n' % (i, i)
            for i in range(200)
        )
    )
    (tmp_path / "cut.jsonl.gz").write_bytes(corpus[: len(corpus) // 2])
    damaged = bytearray(corpus)
    damaged[30:60] = bytes(30)
    (tmp_path / "damaged.jsonl.gz").write_bytes(bytes(damaged))
    (tmp_path / "good.jsonl.gz").write_bytes(corpus)
    for args in (
        ["extract", str(tmp_path / "missing.warc.gz"), str(tmp_path / "out")],
        ["extract", str(tmp_path / "folder"), str(tmp_path / "out")],
        ["extract", str(tmp_path / "binary.txt"), str(tmp_path / "out")],
        ["similar-pairs", str(tmp_path / "not-gzip.jsonl.gz"), str(tmp_path / "out.tsv")],
        ["similar-pairs", str(tmp_path / "not-json.jsonl"), str(tmp_path / "out.tsv")],
        ["similar-pairs", str(tmp_path / "no-id.jsonl"), str(tmp_path / "out.tsv")],
        ["similar-pairs", str(tmp_path / "no-object.jsonl"), str(tmp_path / "out.tsv")],
        ["similar-pairs", str(tmp_path / "cut.jsonl.gz"), str(tmp_path / "out.tsv")],
        ["similar-pairs", str(tmp_path / "damaged.jsonl.gz"), str(tmp_path / "out.tsv")],
        [
            "similar-pairs",
            str(tmp_path / "good.jsonl.gz"),
            str(tmp_path / "out.tsv"),
            "--threshold",
            "7",
        ],
        ["dup-ngrams", str(tmp_path / "binary.txt"), str(tmp_path / "out.tsv")],
        ["dup-ngrams", str(tmp_path / "missing.txt"), str(tmp_path / "out.tsv")],
        ["similar-pairs", str(tmp_path / "missing.jsonl.gz"), str(tmp_path / "out.tsv")],
        ["strip-frequent-lines", str(tmp_path / "missing"), str(tmp_path / "out")],
        ["dup-ngrams", str(tmp_path / "binary.txt"), str(tmp_path / "out.tsv"), "--mem-mb", "0"],
    ):
        result = run(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert "Traceback" not in result.stderr, (args, result.stderr)
        assert result.stderr.strip().splitlines()[-1].startswith("corpusbuilder"), (
            args,
            result.stderr,
        )
    # a file that is no WARC is a wrong argument, not a shard of 0 records
    assert not (tmp_path / "out.docs.parquet").exists()


def test_a_full_disk_fails_the_extract_instead_of_writing_error_rows(tmp_path):
    """Issue 17 item 1 with a real limit: `ulimit -f` caps what the process may write, and writes
    past it fail with EFBIG (SIGXFSZ ignored, as a job under a quota sees it). The command fails
    on its own output; no docs table is left as if the shard had been read."""
    from corpusbuilder.common.identifiers import load_derived_tables

    load_derived_tables()  # in the user's cache, so that the limit meets the tables, not the cache
    warc = write_warc(
        tmp_path / "in.warc.gz",
        [{"uri": f"http://a.example/{i}", "body": ARTICLE.encode() * 20} for i in range(40)],
    )
    script = (  # 4 KB: the docs table of the 40 pages takes 10 KB
        f"trap '' XFSZ; ulimit -f 4; exec {sys.executable} -m corpusbuilder.cli.main extract "
        f"--preset default {warc} {tmp_path / 'out' / 's'}"
    )
    (tmp_path / "out").mkdir()
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode != 0, result.stderr[-2000:]
    assert not (tmp_path / "out" / "s.docs.parquet").exists()
    assert "file-size limit" in result.stderr and str(tmp_path / "out") in result.stderr, (
        result.stderr[-2000:]
    )


@pytest.mark.slow
def test_dash_is_stdout_for_every_output_file(tmp_path):
    """`-` as OUTPUT.tsv / OUT.tsv writes the data to stdout, not to a file named `-`; the
    summary line goes to stderr, so stdout is the data alone. Outputs that are no single file
    (extract's two tables, strip-frequent-lines' folder) refuse `-` in one line."""
    import json

    (tmp_path / "in.txt").write_text("a b c d e f g h\nx a b c d e f g h y\nz z z z z z\n")
    text = "the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat " * 5
    (tmp_path / "c.jsonl").write_text(
        "".join(
            json.dumps({"id": f"s:{i}", "paragraphs": [text + " more" * i]}) + "\n" for i in (1, 2)
        )
    )

    def run_in(*args):
        return subprocess.run(
            [sys.executable, "-m", "corpusbuilder.cli.main", *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )

    for args, to_file, summary in (
        (["dup-ngrams", "in.txt"], "dup.tsv", "stdout: 5 duplicate 5-grams"),
        (["similar-pairs", "c.jsonl"], "pairs.tsv", "1 pairs above 0.5 in stdout"),
    ):
        extra = ["--n", "5"] if args[0] == "dup-ngrams" else []
        piped = run_in(*args, "-", *extra)
        assert piped.returncode == 0, piped.stderr
        assert not (tmp_path / "-").exists()
        assert run_in(*args, to_file, *extra).returncode == 0
        assert piped.stdout == (tmp_path / to_file).read_text() != ""
        assert summary in piped.stderr
    for args in (
        ["extract", str(tmp_path / "in.txt"), "-"],
        ["strip-frequent-lines", str(tmp_path), "-"],
    ):
        refused = run_in(*args)
        assert refused.returncode == 2 and refused.stdout == ""
        assert refused.stderr.strip().count("\n") == 0 and "cannot go to stdout" in refused.stderr
    assert not (tmp_path / "-").exists() and not (tmp_path / "-.docs.parquet").exists()
    # a reader that stops early (`| head`): no traceback, the exit of a tool killed by SIGPIPE
    import random

    rng = random.Random(0)  # some 90,000 3-grams of 50 words seen twice or more: > a pipe's buffer
    rows = [" ".join(str(rng.randrange(50)) for _ in range(20)) for _ in range(20000)]
    (tmp_path / "many.txt").write_text("\n".join(rows) + "\n")
    headed = subprocess.run(
        [
            "bash",
            "-c",
            f"{sys.executable} -m corpusbuilder.cli.main dup-ngrams many.txt - --n 3 | head -1;"
            " exit ${PIPESTATUS[0]}",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert headed.returncode == 141 and headed.stderr == "", headed.stderr
    assert len(headed.stdout.splitlines()) == 1


def test_strip_frequent_lines_writes_0_for_no_epilogue_and_refuses_an_empty_folder(tmp_path):
    """docs/other-methods.md: boundaries are 1-based, 0 for none; a folder without *.txt files
    is a wrong argument, as clean-html's without *.html files."""
    from fixtures.make_ebooks import make_ebooks

    make_ebooks(tmp_path / "in", n_files=30, seed=1)
    (tmp_path / "in" / "zz-plain.txt").write_text("A line of plain prose nobody else wrote.\n" * 3)
    assert run("strip-frequent-lines", str(tmp_path / "in"), str(tmp_path / "out")).returncode == 0
    rows = [
        line.split("\t") for line in (tmp_path / "out" / "boundaries.tsv").read_text().splitlines()
    ]
    assert all(len(row) == 3 and row[1].isdigit() and row[2].isdigit() for row in rows), rows
    assert ["zz-plain.txt", "0", "0"] in rows
    (tmp_path / "empty").mkdir()
    empty = run("strip-frequent-lines", str(tmp_path / "empty"), str(tmp_path / "out2"))
    assert empty.returncode == 2, empty.stderr
    assert empty.stderr.strip() == f"corpusbuilder: no *.txt files in {tmp_path / 'empty'}"
    assert not (tmp_path / "out2").exists()


def test_a_text_input_that_is_not_utf8_is_named(tmp_path):
    """The one line names the file, and the byte is counted from the file's start (Python's own
    offset is into the 8 KB chunk it was decoding). A corpus that is not UTF-8 says what was
    expected, as one that is not JSON does."""
    from corpusbuilder.common.faults import utf8_error_offset

    late = tmp_path / "late.txt"
    late.write_bytes(b"a b c\n" * 5000 + b"caf\xe9\n")
    assert utf8_error_offset(late) == 30003
    result = run("dup-ngrams", str(late), str(tmp_path / "d.tsv"))
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"corpusbuilder: {late}: not UTF-8 text (invalid continuation byte at byte 30003)"
    )
    page = tmp_path / "some.html"
    page.write_bytes(b'<html><meta charset="latin-1"><body>caf\xe9 \xe9t\xe9</body></html>\n')
    packed = tmp_path / "latin.jsonl.gz"
    packed.write_bytes(gzip.compress(b'{"id": "caf\xe9", "paragraphs": []}\n'))
    for corpus, said in (
        (page, f"{page}: not UTF-8 text (invalid continuation byte at byte 39)"),
        (packed, f"{packed}: its gzip content is not UTF-8 text (invalid continuation byte)"),
    ):
        pairs = run("similar-pairs", str(corpus), str(tmp_path / "p.tsv"))
        assert pairs.returncode == 2
        assert pairs.stderr.strip() == (
            f"corpusbuilder: {said}; give a corpus as export writes it (results/corpus/*.jsonl.gz)"
        )


def test_clean_html_comment_flags_exclude_each_other():
    result = run("clean-html", "-", "--comments", "--no-comments")
    assert result.returncode == 2
    assert "--no-comments: not allowed with argument --comments" in result.stderr
    assert "[--comments | --no-comments]" in run("clean-html", "--help").stdout


@pytest.mark.slow
def test_clean_html_one_page_into_a_directory(tmp_path):
    """OUT ending in / is a directory, made if missing, the page's <name>.txt in it, as the
    folder form writes; an existing directory too. A page on stdin has no name to give it."""
    page = tmp_path / "walk.html"
    page.write_text(WRAPPED)
    result = run("clean-html", str(page), f"{tmp_path / 'outdir_x'}/", "--preset", "default")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "outdir_x").is_dir()
    assert "When we set out" in (tmp_path / "outdir_x" / "walk.txt").read_text()
    json_out = run("clean-html", str(page), str(tmp_path / "outdir_x"), "--format", "json")
    assert json_out.returncode == 0, json_out.stderr
    assert sorted(p.name for p in (tmp_path / "outdir_x").iterdir()) == ["walk.json", "walk.txt"]
    piped = subprocess.run(
        [sys.executable, "-m", "corpusbuilder.cli.main", "clean-html", "-", f"{tmp_path}/"],
        input=WRAPPED.encode(),
        capture_output=True,
    )
    assert piped.returncode == 2 and b"has no name" in piped.stderr
    (tmp_path / "file").write_text("")
    into_a_file = run("clean-html", str(page), f"{tmp_path / 'file'}/")
    assert into_a_file.returncode == 2 and "not a directory" in into_a_file.stderr


def test_slurm_status_says_why_a_job_counts_as_failed(monkeypatch, capsys):
    """Snakemake reads one word on stdout and stops on a non-zero exit: those stay; stderr says
    why a job nobody knows is `failed` (an id that is none, SLURM not installed)."""
    from corpusbuilder.cli import slurm_status

    def not_installed(command, **kwargs):
        raise FileNotFoundError(2, "No such file or directory", command[0])

    monkeypatch.setattr(slurm_status.subprocess, "run", not_installed)
    assert main(["slurm-status", "abc"]) == 0
    out, err = capsys.readouterr()
    assert out == "failed\n"
    assert err == (
        "corpusbuilder slurm-status: job abc: not a SLURM job id; squeue, scontrol, sacct not "
        "found (is SLURM installed here?); counted as failed\n"
    )

    def no_accounting(command, **kwargs):
        if command[0] == "sacct":
            raise FileNotFoundError(2, "No such file or directory", "sacct")
        return subprocess.CompletedProcess(
            command, 1, "", "slurm_load_jobs error: Invalid job id specified\n"
        )

    monkeypatch.setattr(slurm_status.subprocess, "run", no_accounting)
    assert main(["slurm-status", "4242"]) == 0
    out, err = capsys.readouterr()
    assert out == "failed\n"
    assert err == (
        "corpusbuilder slurm-status: job 4242: sacct not found; "
        "slurm_load_jobs error: Invalid job id specified; counted as failed\n"
    )

    def running(command, **kwargs):
        return subprocess.CompletedProcess(command, 0, "RUNNING\n", "")

    monkeypatch.setattr(slurm_status.subprocess, "run", running)
    assert main(["slurm-status", "4242_3"]) == 0
    assert capsys.readouterr() == ("running\n", "")
