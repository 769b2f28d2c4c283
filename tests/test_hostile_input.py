"""A hostile-input campaign (issue 40): WARC framing, hostile pages, outputs that must stay XML,
faults of the setup and of the machine, downloads, the command line and names from strangers.

Every fixture is written here. What each attack must show: records in = rows out (no record
swallowed, none read twice), no text lost that a reader would keep, every output well-formed,
and every fault one line that names what to fix, with a non-zero exit.
"""

from __future__ import annotations

import errno
import gzip
import io
import os
import re
import stat
import subprocess
import sys
import tempfile
import threading
import zipfile
import zlib
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import snakemake
from lxml import etree
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from corpusbuilder.cli.main import main as cli_main
from corpusbuilder.common.faults import CorruptFileError, fault_line
from corpusbuilder.common.io import write_table
from corpusbuilder.common.logs import job_cost
from corpusbuilder.config import ConfigError, validate_config
from corpusbuilder.contracts.corpus import ExportDocument
from corpusbuilder.contracts.tables import read_table
from corpusbuilder.contracts.tokenfile import read_tokens
from corpusbuilder.download.fetch import fetch
from corpusbuilder.download.sources import parse_source, shard_name
from corpusbuilder.download.transfer import DownloadError, incomplete_warc
from corpusbuilder.export import to_prevertical, to_vertical
from corpusbuilder.extraction.extract import ExtractParams, clean_page, extract_shard
from corpusbuilder.extraction.warc import iter_warc_records

REPO = Path(__file__).resolve().parents[1]
PARAMS = ExtractParams(learned=False)

SENTENCE = (
    "When we set out in the morning the river was still covered with a thin layer of mist, and "
    "the boats that are moored along the bank were hardly visible from the path we walked on."
)


def page(number: int) -> bytes:
    return (
        f"<html><head><title>Page {number}</title></head><body><h1>Walk {number}</h1>"
        f"<p>{SENTENCE} This was walk number {number}.</p><p>{SENTENCE}</p></body></html>"
    ).encode()


def record(number: int, gzipped: bool = False) -> bytes:
    """One response record (a gzip member when ``gzipped``) of page ``number``."""
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=gzipped)
    headers = StatusAndHeaders(
        "200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1"
    )
    writer.write_record(
        writer.create_warc_record(
            f"http://walks.example/{number}",
            "response",
            payload=io.BytesIO(page(number)),
            http_headers=headers,
        )
    )
    return out.getvalue()


def rows_of(path: Path) -> list:
    return list(iter_warc_records(path, PARAMS))


def uris_read(rows) -> list[str]:
    return [r.uri for r in rows if r.body is not None]


def with_length(data: bytes, change: int) -> bytes:
    """A plain record whose WARC Content-Length is off by ``change`` bytes."""
    found = re.search(rb"Content-Length: (\d+)", data)
    assert found
    return data.replace(found[0], b"Content-Length: %d" % (int(found[1]) + change), 1)


# ------------------------------------------------------------------ 1. WARC framing


@pytest.mark.parametrize("change", [1, 10, 300, 1500, 5000])
@pytest.mark.parametrize("position", [0, 1, 3])
def test_a_content_length_too_large_swallows_no_record(tmp_path, position, change):
    records = [record(i) for i in range(5)]
    records[position] = with_length(records[position], change)
    path = tmp_path / "in.warc"
    path.write_bytes(b"".join(records))
    rows = rows_of(path)
    assert len(rows) == 5
    if position < 4:
        assert uris_read(rows) == [f"http://walks.example/{i}" for i in range(5)]


@pytest.mark.parametrize("change", [-1, -10, -60])
@pytest.mark.parametrize("position", [1, 2])
def test_a_content_length_too_small_loses_no_record(tmp_path, position, change):
    records = [record(i) for i in range(4)]
    records[position] = with_length(records[position], change)
    path = tmp_path / "in.warc"
    path.write_bytes(b"".join(records))
    rows = rows_of(path)
    assert len(rows) == 4
    assert uris_read(rows) == [f"http://walks.example/{i}" for i in range(4)]
    assert page(position).rstrip() in rows[position].body  # read to where the next one begins


@pytest.mark.parametrize("kinds", ["ppgg", "gpgp", "pgpg", "gggp", "pggp", "gppg"])
def test_plain_records_and_gzip_members_mixed_in_one_file(tmp_path, kinds):
    path = tmp_path / "in.warc.gz"
    path.write_bytes(b"".join(record(i, kind == "g") for i, kind in enumerate(kinds)))
    rows = rows_of(path)
    assert [r.reason for r in rows] == [""] * len(kinds)
    assert uris_read(rows) == [f"http://walks.example/{i}" for i in range(len(kinds))]


@pytest.mark.parametrize("grouping", [(4,), (2, 2), (1, 3), (3, 1), (1, 1, 2), (2, 1, 1)])
def test_a_gzip_member_of_several_records_yields_each(tmp_path, grouping):
    members, number = [], 0
    for size in grouping:
        members.append(gzip.compress(b"".join(record(number + i) for i in range(size))))
        number += size
    path = tmp_path / "in.warc.gz"
    path.write_bytes(b"".join(members))
    rows = rows_of(path)
    assert [r.reason for r in rows] == [""] * number
    assert uris_read(rows) == [f"http://walks.example/{i}" for i in range(number)]
    assert [r.record_index for r in rows] == list(range(number))


@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("stray", [b"\r\n\r\n\r\n", b"junk between records\r\n", bytes(range(256))])
def test_stray_bytes_between_records_cost_no_record(tmp_path, gzipped, stray):
    path = tmp_path / "in.warc.gz"
    path.write_bytes(record(0, gzipped) + stray + record(1, gzipped) + record(2, gzipped))
    rows = rows_of(path)
    assert uris_read(rows) == [f"http://walks.example/{i}" for i in range(3)]
    # the stray bytes are at most one row of their own, never a record's
    assert len(rows) - 3 == sum(r.warc_type == "error" for r in rows) <= 1


@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("keep", [0.3, 0.6, 0.95])
def test_a_file_cut_off_keeps_every_record_before_the_cut(tmp_path, gzipped, keep):
    whole = [record(i, gzipped) for i in range(3)]
    path = tmp_path / "in.warc.gz"
    path.write_bytes(b"".join(whole[:2]) + whole[2][: int(len(whole[2]) * keep)])
    rows = rows_of(path)
    assert uris_read(rows)[:2] == ["http://walks.example/0", "http://walks.example/1"]
    assert len(rows) == 3 and rows[2].reason.startswith("truncated")


@pytest.mark.parametrize("how", ["plain", "member stream stops", "member bytes cut"])
def test_a_last_record_cut_at_any_byte_is_truncated_or_whole(tmp_path, how):
    """Every cut of the last record: in its WARC headers (once read as a record of type
    "warc-type-re", one without HTTP headers, or a malformed one), in its HTTP headers (once a
    response of status 20, or one without a Content-Type), in its body. Its row says truncated,
    unless all of its block is there."""
    last = record(2)
    block_end = last.index(b"</html>") + len(b"</html>")
    if how == "member bytes cut":
        last = record(2, gzipped=True)
    path = tmp_path / "in.warc.gz"
    gzipped = how != "plain"
    before = record(0, gzipped) + record(1, gzipped)
    wrong = []
    for cut_at in range(1, len(last)):
        cut = last[:cut_at]
        if how == "member stream stops":  # a member without its end block and trailer
            packer = zlib.compressobj(wbits=31)
            cut = packer.compress(cut) + packer.flush(zlib.Z_SYNC_FLUSH)
        whole = cut_at >= block_end
        if how == "member bytes cut":  # whole when only the member's trailer is missing
            whole = len(zlib.decompressobj(31).decompress(cut)) >= block_end
        path.write_bytes(before + cut)
        rows = rows_of(path)
        assert uris_read(rows)[:2] == ["http://walks.example/0", "http://walks.example/1"]
        assert len(rows) == 3, cut_at
        read_whole = rows[2].body == page(2)
        if whole != read_whole or whole == rows[2].reason.startswith("truncated"):
            wrong.append((cut_at, last[:cut_at][-20:], rows[2].reason[:80]))
    assert not wrong, wrong[:10]


@pytest.mark.parametrize("how", ["member stream stops", "member bytes cut"])
def test_a_member_of_several_records_cut_at_any_byte_keeps_every_whole_record(tmp_path, how):
    """A whole WARC gzipped as one member, cut off: every record before the cut is read, the one
    cut is truncated (unless all of its block is there), and nothing after it is made up."""
    plain = [record(i) for i in range(3)]
    block_ends, start = [], 0
    for data in plain:
        block_ends.append(start + data.index(b"</html>") + len(b"</html>"))
        start += len(data)
    whole = b"".join(plain)
    member = gzip.compress(whole)
    path = tmp_path / "in.warc.gz"
    wrong = []
    for cut_at in range(1, len(whole if how == "member stream stops" else member)):
        if how == "member stream stops":
            packer = zlib.compressobj(wbits=31)
            path.write_bytes(packer.compress(whole[:cut_at]) + packer.flush(zlib.Z_SYNC_FLUSH))
            there = cut_at
        else:
            path.write_bytes(member[:cut_at])
            there = len(zlib.decompressobj(31).decompress(member[:cut_at]))
        rows = rows_of(path)
        whole_records = sum(end <= there for end in block_ends)
        # bytes of a record after the whole ones; a member that inflates to nothing is a row too
        after_them = there > sum(map(len, plain[:whole_records])) or not whole_records
        cut_record = whole_records < 3 and after_them
        expected = [""] * whole_records + ["truncated"] * cut_record
        got = ["truncated" if r.reason.startswith("truncated") else r.reason for r in rows]
        read = uris_read(rows) == [f"http://walks.example/{i}" for i in range(whole_records)]
        if got != expected or not read:
            wrong.append((cut_at, there, [r.reason[:60] for r in rows]))
    assert not wrong, wrong[:5]


def test_a_whole_shard_with_every_kind_of_framing_fault_is_one_row_a_record(tmp_path):
    """The stage, not only the reader: rows in the docs table = records written."""
    parts = [record(0), with_length(record(1), 700), record(2), record(3, True)]
    parts.append(gzip.compress(record(4) + record(5)))
    parts.append(record(6))
    path = tmp_path / "in.warc.gz"
    path.write_bytes(b"".join(parts))
    docs, blocks = tmp_path / "s.docs.parquet", tmp_path / "s.blocks.parquet"
    extract_shard([("s", path)], "s", docs, blocks, PARAMS)
    table = pd.read_parquet(docs)
    assert len(table) == 7
    assert (table["reason"] == "ok").all()


# ------------------------------------------------------------------ 3. hostile pages


@pytest.mark.parametrize("tag", ["div", "span", "b", "font"])
@pytest.mark.parametrize("depth", [300, 3000, 100_000])
def test_text_inside_deep_nesting_is_kept(tag, depth):
    html = f"<html><body>{f'<{tag}>' * depth}<p>{SENTENCE}</p>{f'</{tag}>' * depth}</body></html>"
    cleaned = clean_page(html.encode(), "utf-8", PARAMS)
    assert any(SENTENCE[:40] in block.text for block in cleaned.blocks)


# ------------------------------------------------------------------ 4. outputs that stay XML

FORBIDDEN = ["\ufffe", "\uffff", "\x00", "\x1b", "\x0b", "\ufdd0", "\U0001ffff", "\U0010fffe"]


@pytest.mark.parametrize("character", FORBIDDEN, ids=[f"U+{ord(c):04X}" for c in FORBIDDEN])
@pytest.mark.parametrize("where", ["text", "url"])
def test_vertical_and_prevertical_stay_well_formed(character, where):
    text = f"A river{character}walk {character}in the mist"
    url = f"http://walks.example/{character}" if where == "url" else "http://walks.example/"
    doc = ExportDocument(id="s:0", url=url, language="en", paragraphs=[text], headings=[False])
    for render in (to_vertical, to_prevertical):
        out = render(doc)
        etree.fromstring(out.encode("utf-8"))  # raises on what XML forbids
        assert character not in out
        assert "river" in out and "mist" in out


# ------------------------------------------------------------------ 5. faults as one line


def one_line(text: str) -> bool:
    return len(text.strip().splitlines()) == 1 and "Traceback" not in text


def test_a_full_disk_is_one_line_naming_the_output(tmp_path):
    with pytest.raises(OSError) as caught:
        with open("/dev/full", "wb") as full:
            full.write(b"x" * (1 << 20))
            full.flush()
    line = fault_line(caught.value)
    assert line and "no space left" in line and one_line(line)


def test_an_output_that_is_a_pipe_or_a_device_is_written_not_replaced(tmp_path, monkeypatch):
    """`-o /dev/stdout`, a FIFO or a link to /dev/null is a stream: an atomic replace would put
    a plain file where it was (as root, over the device itself)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    write_table(pa.table({"n": [1, 2, 3]}), fifo)
    reader.join(timeout=30)
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert pq.read_table(io.BytesIO(received[0])).column("n").to_pylist() == [1, 2, 3]
    null = tmp_path / "null"
    null.symlink_to("/dev/null")
    write_table(pa.table({"n": [1]}), null)
    assert null.is_symlink() and stat.S_ISCHR(null.stat().st_mode)
    assert not list(tmp_path.rglob(".*.tmp"))


def test_stdout_redirected_to_a_file_stays_the_shells_stream(tmp_path):
    """/dev/stdout leads to the file the shell opened (here through a link of our own, so that a
    failure replaces no device): replacing that file would leave the shell's stream empty."""
    stdout = tmp_path / "stdout"
    stdout.symlink_to("/proc/self/fd/1")
    with open(tmp_path / "redirected.parquet", "wb") as redirected:
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys, pyarrow as pa; from corpusbuilder.common.io import write_table; "
                "write_table(pa.table({'n': [1, 2]}), sys.argv[1])",
                str(stdout),
            ],
            stdout=redirected,
            check=True,
        )
    assert stdout.is_symlink()
    assert pq.read_table(tmp_path / "redirected.parquet").column("n").to_pylist() == [1, 2]


@pytest.mark.parametrize(
    "number, words",
    [
        (errno.ENOSPC, "no space left"),
        (errno.EROFS, "read-only"),
        (errno.EFBIG, "file-size limit"),
        (errno.EDQUOT, "quota"),
        (errno.EMFILE, "open files"),
    ],
)
def test_each_fault_of_the_machine_names_the_file_and_the_cause(number, words):
    line = fault_line(OSError(number, "as the kernel says", "/data/out.parquet"))
    assert line and words in line and "/data/out.parquet" in line and one_line(line)


def test_pyarrows_errno_in_its_message_is_understood():
    line = fault_line(
        OSError("[Errno 28] Error writing bytes to file. Detail: [errno 28] No space")
    )
    assert line and "no space left" in line


def test_out_of_memory_is_one_line():
    with pytest.raises(MemoryError) as caught:
        bytearray(1 << 62)
    line = fault_line(caught.value)
    assert line and "out of memory" in line and one_line(line)


def test_a_bug_keeps_its_traceback():
    assert fault_line(KeyError("doc_id")) is None


def test_a_truncated_token_file_is_named(tmp_path):
    path = tmp_path / "s.tokens.npz"
    np.savez(path, token_hash=np.arange(1000, dtype=np.uint64))
    path.write_bytes(path.read_bytes()[:300])
    with pytest.raises(CorruptFileError, match=re.escape(str(path))):
        read_tokens(path, ("token_hash",))


def test_a_token_file_of_garbage_is_named(tmp_path):
    path = tmp_path / "s.tokens.npz"
    path.write_bytes(b"PK\x03\x04 not a zip at all")
    with pytest.raises(CorruptFileError, match="delete it and run again"):
        read_tokens(path, ("token_hash",))


@pytest.mark.parametrize("keep", [0, 10, 100])
def test_a_truncated_table_is_named(tmp_path, keep):
    path = tmp_path / "s.docs.parquet"
    write_table(pa.table({"doc_id": [f"d{i}" for i in range(100)]}), path)
    path.write_bytes(path.read_bytes()[:keep])
    with pytest.raises(CorruptFileError, match=re.escape(str(path))):
        read_table(path)


@pytest.mark.parametrize("garbage", [b"", b"not a model", b"PK\x03\x04broken zip"])
def test_a_garbage_model_names_the_config_key(tmp_path, garbage):
    model = tmp_path / "model.npz"
    model.write_bytes(garbage)
    warc = tmp_path / "in.warc.gz"
    warc.write_bytes(record(0, True))
    with pytest.raises(ConfigError, match="extract.model"):
        extract_shard(
            [("s", warc)],
            "s",
            tmp_path / "d.parquet",
            tmp_path / "b.parquet",
            ExtractParams(model=model),
        )
    assert not list(tmp_path.glob("*.parquet")) and not list(tmp_path.glob(".*tmp"))


@pytest.mark.parametrize("fallback", ["Klingon", "../English", "english ", ""])
def test_an_unknown_stoplist_fallback_fails_the_job_not_the_pages(tmp_path, fallback):
    warc = tmp_path / "in.warc.gz"
    warc.write_bytes(record(0, True))
    with pytest.raises(ConfigError, match="extract.stoplist_fallback"):
        extract_shard(
            [("s", warc)],
            "s",
            tmp_path / "d.parquet",
            tmp_path / "b.parquet",
            ExtractParams(learned=False, stoplist_fallback=fallback),
        )
    assert not list(tmp_path.glob("*.parquet"))


def test_a_shard_in_which_every_page_failed_is_one_line_and_no_table(tmp_path, monkeypatch):
    warc = tmp_path / "in.warc.gz"
    warc.write_bytes(record(0, True) + record(1, True))

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a fault of the code, not of the pages")

    monkeypatch.setattr("corpusbuilder.extraction.extract.clean_page", broken)
    with pytest.raises(RuntimeError, match="every page failed") as caught:
        extract_shard([("s", warc)], "s", tmp_path / "d.parquet", tmp_path / "b.parquet", PARAMS)
    line = fault_line(caught.value)
    assert line and one_line(line) and "s: every page failed" in line
    assert not list(tmp_path.glob("*.parquet")) and not list(tmp_path.glob(".*tmp"))


SCRIPT = """
import errno, sys
from corpusbuilder.common.logs import setup_logging
setup_logging(sys.argv[1])
kind = sys.argv[2]
if kind == "enospc":
    raise OSError(errno.ENOSPC, "No space left on device", "/data/s.docs.parquet")
if kind == "efbig":
    import resource, signal
    from corpusbuilder.common.io import write_table
    import pyarrow as pa
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
    write_table(pa.table({"x": list(range(100000))}), sys.argv[3])
if kind == "memory":
    bytearray(1 << 62)
if kind == "bug":
    {}["doc_id"]
"""


@pytest.mark.parametrize("kind", ["enospc", "efbig", "memory"])
def test_a_rule_script_that_meets_a_fault_says_one_line_in_its_log_and_exits_non_zero(
    tmp_path, kind
):
    log = tmp_path / "logs" / "rule.log"
    out = tmp_path / "out" / "x.parquet"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(log), kind, str(out)],
        capture_output=True,
        text=True,
        # no .pyc written under the file-size limit: it would be cut off
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
        timeout=60,
    )
    assert done.returncode != 0
    logged = log.read_text()
    assert one_line(logged) and one_line(done.stderr), (logged, done.stderr)
    assert logged.strip().split(": ", 1)[1] in done.stderr
    if kind == "efbig":
        assert str(out) in logged and "file-size limit" in logged
        assert not out.exists() and not list(out.parent.glob(".*.tmp"))  # nothing half-written


def test_a_bug_in_a_rule_script_puts_its_traceback_in_the_log(tmp_path):
    log = tmp_path / "rule.log"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(log), "bug", "-"],
        capture_output=True,
        text=True,
        # no .pyc written under the file-size limit: it would be cut off
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
        timeout=60,
    )
    assert done.returncode != 0
    assert "Traceback" in log.read_text() and "KeyError" in log.read_text()


def test_a_rule_script_that_succeeds_logs_what_it_cost_as_its_last_line(tmp_path):
    """Snakemake's benchmark files sample a job's CPU every 30 s and miss its end; the script's
    own last line is exact, and bench/scale.py reads it by rule."""
    log = tmp_path / "logs" / "rule.log"
    script = (
        "import sys, types\n"
        "snakemake = types.SimpleNamespace(rule='extract')\n"
        "from corpusbuilder.common.logs import setup_logging\n"
        "setup_logging(sys.argv[1])\n"
        "sum(i * i for i in range(3_000_000))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(log)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    last = log.read_text().strip().splitlines()[-1]
    fields = job_cost(last)
    assert fields is not None, last
    assert fields["rule"] == "extract"
    assert 0.05 < float(fields["cpu_s"]) < 60 and float(fields["max_rss_mb"]) > 5
    assert float(fields["wall_s"]) >= 0


# ------------------------------------------------------------------ 6. config


@pytest.mark.parametrize(
    "section, key",
    [
        ({"extract": {"max_bytes": -1}}, "extract.max_bytes"),
        ({"extract": {"max_bytes": "lots"}}, "extract.max_bytes"),
        ({"extract": {"preset": "E"}}, "extract.preset"),
        ({"extract": {"stoplist_fallback": ""}}, "extract.stoplist_fallback"),
        ({"extract": {"max_blocks": 0}}, "extract.max_blocks"),
        ({"extract": {"model": ""}}, "extract.model"),
        ({"extract": {"no_such_key": 1}}, "extract"),
        ({"download": {"timeout": 0}}, "download.timeout"),
        ({"download": {"retries": -3}}, "download.retries"),
        ({"input": {"warcs_per_shard": 0}}, "input.warcs_per_shard"),
    ],
)
def test_a_bad_config_value_is_named(section, key):
    with pytest.raises(ConfigError, match=re.escape(key)):
        validate_config(section)


# ------------------------------------------------------------------ 7. downloads


class _Liar(BaseHTTPRequestHandler):
    """Serves /warc whole, /short with a Content-Length shorter than the file, /cut as a WARC cut
    mid-record with a matching Content-Length, /page as an HTML page in place of a WARC."""

    def log_message(self, *args):
        pass  # keep the test output free of the server's access log

    def do_GET(self):
        whole = record(0, True) + record(1, True)
        body, length = {
            "/warc": (whole, len(whole)),
            "/short": (whole, len(whole) - 200),
            "/cut": (whole[:-200], len(whole) - 200),
            "/plain-cut": ((record(0) + record(1))[:-100], len(record(0) + record(1)) - 100),
            "/page": (page(0), len(page(0))),
        }[self.path]
        self.send_response(200)
        self.send_header("Content-Length", str(length))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass  # the client may hang up once it has the bytes it was promised (/short)


@pytest.fixture(scope="module")
def liar():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Liar)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.mark.parametrize("path", ["/short", "/cut", "/plain-cut"])
def test_a_cut_off_warc_is_no_successful_download(liar, tmp_path, path, monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    dest = tmp_path / "x.warc.gz"
    with pytest.raises(DownloadError, match="cut-off WARC"):
        fetch(liar + path, dest, expect_warc=True, retries=0, backoff=0.001, timeout=5)
    assert not dest.exists() and not (tmp_path / "x.warc.gz.json").exists()


def test_a_whole_warc_is_a_successful_download(liar, tmp_path, monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    meta = fetch(liar + "/warc", tmp_path / "x.warc.gz", expect_warc=True, retries=0, timeout=5)
    assert meta["size"] == (tmp_path / "x.warc.gz").stat().st_size
    assert incomplete_warc(tmp_path / "x.warc.gz") is None


def test_a_page_in_place_of_a_warc_is_no_download(liar, tmp_path, monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    with pytest.raises(DownloadError, match="not a WARC"):
        fetch(liar + "/page", tmp_path / "x.warc.gz", expect_warc=True, retries=0, timeout=5)


def test_a_whole_file_gzipped_at_once_is_a_complete_warc(tmp_path):
    path = tmp_path / "x.warc.gz"
    path.write_bytes(gzip.compress(record(0) + record(1)))
    assert incomplete_warc(path) is None


# ------------------------------------------------------------------ 8. the command line


def run_cli(capsys, *argv) -> tuple[int, str]:
    status = cli_main(list(argv))
    return status, capsys.readouterr().err


def test_cli_extract_of_a_missing_file_is_one_line(tmp_path, capsys):
    status, err = run_cli(capsys, "extract", str(tmp_path / "none.warc.gz"), str(tmp_path / "o"))
    assert status != 0 and one_line(err) and "none.warc.gz" in err


@pytest.mark.parametrize("content", [b"", b"hello", b"\x1f\x8b\x08garbage", page(0)])
def test_cli_extract_of_what_is_no_warc_is_one_line(tmp_path, capsys, content):
    path = tmp_path / "in.warc.gz"
    path.write_bytes(content)
    status, err = run_cli(capsys, "extract", str(path), str(tmp_path / "o"))
    assert status != 0 and one_line(err) and "not a WARC" in err


def test_cli_extract_of_a_directory_is_one_line(tmp_path, capsys):
    status, err = run_cli(capsys, "extract", str(tmp_path), str(tmp_path / "o"))
    assert status != 0 and one_line(err)


@pytest.mark.parametrize(
    "text, key",
    [
        ("extract: {max_bytes: -5}\n", "extract.max_bytes"),
        ("extract: [1, 2]\n", "extract"),
        ("input: {warcs: 'one.warc.gz'}\n", "input.warcs"),
        ("extract: {stoplist_fallback: Klingon}\n", "extract.stoplist_fallback"),
        ("extract: {stoplist_fallback: ../English}\n", "extract.stoplist_fallback"),
    ],
)
def test_cli_check_config_names_the_key(tmp_path, capsys, text, key):
    config = tmp_path / "config.yaml"
    config.write_text(text)
    status, err = run_cli(capsys, "check-config", "--config", str(config))
    assert status != 0 and one_line(err) and key in err


def test_cli_check_config_of_yaml_that_is_not_yaml_is_one_line(tmp_path, capsys):
    config = tmp_path / "config.yaml"
    config.write_text("extract: {preset: [\n")
    status, err = run_cli(capsys, "check-config", "--config", str(config))
    assert status != 0 and one_line(err) and "not YAML" in err


def test_cli_a_full_disk_is_one_line(tmp_path, capsys, monkeypatch):
    """The extract command writing where the disk is full: one line, the output named."""
    warc = tmp_path / "in.warc.gz"
    warc.write_bytes(record(0, True))

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("corpusbuilder.common.io.os.replace", full)
    status, err = run_cli(capsys, "extract", str(warc), str(tmp_path / "o"))
    assert status != 0 and one_line(err) and "no space left" in err
    assert re.search(r"o\.(docs|blocks)\.parquet", err)


# ------------------------------------------------------------------ 9. names from strangers


@pytest.mark.parametrize(
    "source",
    [
        "../../etc/passwd",
        "http://evil.example/..%2F..%2Fetc%2Fpasswd",
        "http://evil.example/a/../../b.warc.gz",
        "/tmp/$(rm -rf ~).warc.gz",
        "/tmp/`reboot`;.warc.gz",
        "/tmp/.hidden.warc.gz",
        "/tmp/-rf.warc.gz",
        "http://evil.example/%00nul.warc.gz",
        "/tmp/" + "x" * 500 + ".warc.gz",
        "/tmp/\u202eexe.gz.warc",
    ],
)
def test_a_shard_name_is_always_a_plain_file_name(source):
    name = shard_name(source)
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name) and len(name) <= 100


@pytest.mark.parametrize(
    "source",
    [
        "ftp://x.example/a.warc.gz",
        "javascript:alert(1)",
        "file://other-host/a.warc.gz",
        "",
        "http://",
    ],
)
def test_an_input_of_an_unsupported_kind_is_refused_by_name(source):
    with pytest.raises(ValueError, match=re.escape(repr(source)) if source else "empty"):
        parse_source(source)


def test_a_zip_that_is_no_token_file_is_named(tmp_path):
    """A zip archive of the wrong members (an archive swapped in by hand)."""
    path = tmp_path / "s.tokens.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("token_hash.npy", b"\x93NUMPY garbage header")
    with pytest.raises(CorruptFileError, match=re.escape(str(path))):
        read_tokens(path, ("token_hash",))


# ------------------------------------------------------------------ 10. a real workflow run


@pytest.mark.workflow
def test_a_garbage_model_stops_the_workflow_before_any_job_with_one_line(tmp_path):
    """The workflow loads the model as it plans (the extract job would again, before its first
    page): the run fails with the one line naming the key and the file, and no job runs."""
    warc = tmp_path / "walks.warc.gz"
    warc.write_bytes(record(0, True) + record(1, True))
    model = tmp_path / "garbage.npz"
    model.write_bytes(b"PK\x03\x04 this is no model")
    workdir = tmp_path / "run"
    workdir.mkdir()
    config = {"input": {"warcs": [str(warc)]}, "extract": {"model": str(model)}}
    done = snakemake(workdir, "work/extract/walks.docs.parquet", config=config)
    assert done.returncode != 0
    said = [line for line in (done.stdout + done.stderr).splitlines() if "config key" in line]
    assert len(said) == 1 and "bad configuration: config key 'extract.model'" in said[0], said
    assert str(model) in said[0]
    assert not (workdir / "logs").exists()
    assert not list((workdir / "work" / "extract").glob("*parquet*"))


def test_the_extract_job_loads_the_model_the_workflow_left_unchecked(tmp_path):
    """The train rule's own model is not loaded as the workflow plans (a change of settings
    rewrites it): the extract job's setup check, before its first page, is what refuses it."""
    from corpusbuilder.extraction.extract import check_planned_settings, check_setup

    model = tmp_path / "results" / "model" / "best.npz"
    model.parent.mkdir(parents=True)
    model.write_bytes(b"PK\x03\x04 this is no model")
    section = validate_config({"extract": {"model": "results/model/best.npz"}})["extract"]
    params = check_planned_settings(section, tmp_path)
    with pytest.raises(ConfigError, match="config key 'extract.model': cannot load"):
        check_setup(replace(params, model=model))
