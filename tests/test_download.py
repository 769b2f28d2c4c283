"""Tests of the download stage against real servers on 127.0.0.1, an HTTP server and moto's
S3 server (no network mocks)."""

from __future__ import annotations

import gzip
import hashlib
import http.client
import io
import json
import os
import random
import re
import ssl
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import boto3
import pytest
import trustme
from conftest import FEW_PARTITIONS, SAMPLE_WARCS, corpus_bytes, snakemake
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from corpusbuilder.config import ConfigError, validate_config
from corpusbuilder.download import fetch as fetching
from corpusbuilder.download import http_download, transfer
from corpusbuilder.download import s3 as s3_module
from corpusbuilder.download.fetch import fetch
from corpusbuilder.download.inputs import check_input_paths, resolve_sources
from corpusbuilder.download.sources import shard_name
from corpusbuilder.download.transfer import DownloadError

REPO = Path(__file__).resolve().parents[1]
FAST = {"retries": 3, "backoff": 0.001, "timeout": 5}


class _Handler(BaseHTTPRequestHandler):
    """Serves ``server.files[name]`` at ``/{mode}/{name}``, honouring ``Range: bytes=N-``.

    Modes: ``ok``; ``drop`` (first request: full Content-Length, half the body, close);
    ``stall`` (first request: half the body, then silence until the test ends); ``flaky`` (500
    twice, then ok); ``error`` (always 500); ``norange`` (first request dropped half-way, then the
    Range header is ignored).
    """

    def do_GET(self):
        server = self.server
        with server.lock:
            server.requests.append((self.path, self.headers.get("Range")))
            attempt = sum(path == self.path for path, _ in server.requests)
        _, mode, name = self.path.split("/", 2)
        body = server.files.get(name)
        if body is None:
            self.send_error(404)
            return
        if mode == "error" or (mode == "flaky" and attempt <= 2):
            self.send_error(500)
            return
        if mode == "to-ftp":
            self.send_response(302)
            self.send_header("Location", f"ftp://127.0.0.1/{name}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if mode == "trickle":  # a byte at a time, slowly, until the client gives up
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for byte in body[:200]:
                if server.finished.is_set():
                    return
                try:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(0.02)
            return
        start = 0
        etag = f'"{hashlib.sha256(body).hexdigest()[:16]}"'
        requested = self.headers.get("Range")
        if self.headers.get("If-Range") not in (None, etag):
            requested = None  # RFC 9110: the file changed since, send it whole
        if requested and mode != "norange":
            start = int(re.fullmatch(r"bytes=(\d+)-", requested)[1])
            if start >= len(body):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(body)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        rest = body[start:]
        self.send_header("ETag", etag)
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        if attempt == 1 and mode in ("drop", "norange", "stall"):
            self.wfile.write(rest[: len(rest) // 2])
            if mode == "stall":
                server.finished.wait(10)
            return  # HTTP/1.0: returning closes the connection
        self.wfile.write(rest)

    def log_message(self, *args):
        """Keep the test server's access log out of pytest's output."""


def _serve(monkeypatch, tls_context: ssl.SSLContext | None = None):
    # A proxy configured in the environment must not intercept requests to the test server.
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    if tls_context is not None:
        httpd.socket = tls_context.wrap_socket(httpd.socket, server_side=True)
    httpd.scheme = "https" if tls_context else "http"
    httpd.files, httpd.requests = {}, []
    httpd.lock, httpd.finished = threading.Lock(), threading.Event()
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    )
    thread.start()
    yield httpd
    httpd.finished.set()
    httpd.shutdown()
    httpd.server_close()
    thread.join()


@pytest.fixture
def server(monkeypatch):
    yield from _serve(monkeypatch)


@pytest.fixture(scope="module")
def certificate_authority(tmp_path_factory):
    """A certificate authority of the tests' own (trustme) with a server certificate for 127.0.0.1,
    and the file of its root certificate."""
    authority = trustme.CA()
    bundle = tmp_path_factory.mktemp("tls") / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    return authority.issue_cert("127.0.0.1"), bundle


@pytest.fixture
def https_server(monkeypatch, certificate_authority):
    """The same server behind TLS. Clients trust it as they would a site's private CA: through
    SSL_CERT_FILE, which this process and the Snakemake runs it starts inherit."""
    certificate, bundle = certificate_authority
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    certificate.configure_cert(context)
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    yield from _serve(monkeypatch, context)


def url(server, mode: str, name: str) -> str:
    return f"{server.scheme}://127.0.0.1:{server.server_port}/{mode}/{name}"


@pytest.fixture(scope="module")
def warc_bytes() -> bytes:
    """A gzipped WARC of 20 response records with random bodies, about 200 kB."""
    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=True)
    rng = random.Random(7)
    for i in range(20):
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.0")
        payload = io.BytesIO(rng.randbytes(10_000))
        uri = f"http://example.com/{i}"
        writer.write_record(
            writer.create_warc_record(uri, "response", payload=payload, http_headers=headers)
        )
    return buffer.getvalue()


@pytest.fixture
def served(server, warc_bytes):
    server.files["crawl-00.warc.gz"] = warc_bytes
    return server


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- HTTP ---------------------------------------------------------------------------------


def test_download_writes_bytes_and_sidecar(served, warc_bytes, tmp_path):
    dest = tmp_path / "data/warc/crawl-00.warc.gz"
    source = url(served, "ok", "crawl-00.warc.gz")
    meta = fetch(source, dest, **FAST)
    assert dest.read_bytes() == warc_bytes
    assert json.loads((tmp_path / "data/warc/crawl-00.warc.gz.json").read_text()) == meta
    assert meta["source"] == source and meta["method"] == "http"
    assert meta["size"] == len(warc_bytes) and meta["sha256"] == sha256(warc_bytes)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", meta["when"])
    assert not (tmp_path / "data/warc/crawl-00.warc.gz.part").exists()


def test_dropped_connection_resumes_with_range(served, warc_bytes, tmp_path):
    dest = tmp_path / "x.warc.gz"
    meta = fetch(url(served, "drop", "crawl-00.warc.gz"), dest, **FAST)
    assert sha256(dest.read_bytes()) == meta["sha256"] == sha256(warc_bytes)
    assert [rng for _, rng in served.requests] == [None, f"bytes={len(warc_bytes) // 2}-"]


def test_dropped_https_connection_resumes_with_range(https_server, warc_bytes, tmp_path):
    https_server.files["crawl-00.warc.gz"] = warc_bytes
    dest = tmp_path / "x.warc.gz"
    meta = fetch(url(https_server, "drop", "crawl-00.warc.gz"), dest, **FAST)
    assert sha256(dest.read_bytes()) == meta["sha256"] == sha256(warc_bytes)
    assert [rng for _, rng in https_server.requests] == [None, f"bytes={len(warc_bytes) // 2}-"]


def test_an_untrusted_https_certificate_is_refused_not_retried(
    https_server, warc_bytes, tmp_path, monkeypatch
):
    monkeypatch.delenv("SSL_CERT_FILE")
    https_server.files["crawl-00.warc.gz"] = warc_bytes
    with pytest.raises(DownloadError, match="CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
        fetch(url(https_server, "ok", "crawl-00.warc.gz"), tmp_path / "x.warc.gz", **FAST)
    assert not (tmp_path / "x.warc.gz").exists()


def test_partial_file_of_an_earlier_run_is_resumed(served, warc_bytes, tmp_path):
    dest = tmp_path / "x.warc.gz"
    (tmp_path / "x.warc.gz.part").write_bytes(warc_bytes[:1000])
    fetch(url(served, "ok", "crawl-00.warc.gz"), dest, **FAST)
    assert dest.read_bytes() == warc_bytes
    assert [rng for _, rng in served.requests] == ["bytes=1000-"]


def test_read_timeout_is_retried_and_resumed(served, warc_bytes, tmp_path):
    dest = tmp_path / "x.warc.gz"
    fetch(url(served, "stall", "crawl-00.warc.gz"), dest, retries=1, backoff=0, timeout=0.2)
    assert dest.read_bytes() == warc_bytes
    assert [rng for _, rng in served.requests] == [None, f"bytes={len(warc_bytes) // 2}-"]


def test_server_errors_are_retried_with_exponential_backoff(served, warc_bytes, tmp_path):
    messages = []
    source = url(served, "flaky", "crawl-00.warc.gz")
    fetch(source, tmp_path / "x.warc.gz", retries=3, backoff=0.01, log=messages.append)
    assert (tmp_path / "x.warc.gz").read_bytes() == warc_bytes
    assert len(served.requests) == 3
    retries = [m for m in messages if "retry" in m]
    assert "HTTP 500" in retries[0] and "retry 1 of 3 in 0.01 s" in retries[0]
    assert "retry 2 of 3 in 0.02 s" in retries[1]


def test_retries_run_out_with_a_clear_error(served, tmp_path):
    source = url(served, "error", "crawl-00.warc.gz")
    with pytest.raises(DownloadError, match=re.escape(source) + ".*3 failed attempt"):
        fetch(source, tmp_path / "x.warc.gz", retries=2, backoff=0)
    assert len(served.requests) == 3
    assert not (tmp_path / "x.warc.gz").exists() and not (tmp_path / "x.warc.gz.json").exists()


def test_unreachable_server_is_a_clear_error(tmp_path):
    # A port that was free a moment ago: connecting is refused at once.
    with ThreadingHTTPServer(("127.0.0.1", 0), _Handler) as probe:
        port = probe.server_port
    with pytest.raises(DownloadError, match="cannot connect"):
        fetch(f"http://127.0.0.1:{port}/x.warc.gz", tmp_path / "x.warc.gz", retries=1, backoff=0)


def test_server_ignoring_range_restarts_from_zero(served, warc_bytes, tmp_path):
    messages = []
    dest = tmp_path / "x.warc.gz"
    meta = fetch(url(served, "norange", "crawl-00.warc.gz"), dest, **FAST, log=messages.append)
    assert dest.read_bytes() == warc_bytes and meta["sha256"] == sha256(warc_bytes)
    assert served.requests[1][1] is not None  # the resume was asked for, and refused
    assert any("ignored the Range request" in m for m in messages)


def test_complete_partial_file_finishes_on_416(served, warc_bytes, tmp_path):
    dest = tmp_path / "x.warc.gz"
    (tmp_path / "x.warc.gz.part").write_bytes(warc_bytes)
    meta = fetch(url(served, "ok", "crawl-00.warc.gz"), dest, **FAST)
    assert dest.read_bytes() == warc_bytes and meta["size"] == len(warc_bytes)
    assert len(served.requests) == 1


def test_partial_file_longer_than_the_resource_restarts(served, warc_bytes, tmp_path):
    dest = tmp_path / "x.warc.gz"
    (tmp_path / "x.warc.gz.part").write_bytes(warc_bytes + b"stale tail")
    fetch(url(served, "ok", "crawl-00.warc.gz"), dest, **FAST)
    assert dest.read_bytes() == warc_bytes
    assert [rng for _, rng in served.requests] == [f"bytes={len(warc_bytes) + 10}-", None]


def test_404_fails_at_once_without_output(served, tmp_path):
    dest = tmp_path / "x.warc.gz"
    source = url(served, "ok", "no-such.warc.gz")
    with pytest.raises(DownloadError, match=re.escape(source) + ": HTTP 404"):
        fetch(source, dest, **FAST)
    assert len(served.requests) == 1
    assert not dest.exists() and not (tmp_path / "x.warc.gz.json").exists()


def test_leftover_symlinked_part_is_not_written_through(served, warc_bytes, tmp_path):
    original = tmp_path / "original.warc.gz"
    original.write_bytes(b"local bytes")
    (tmp_path / "x.warc.gz.part").symlink_to(original)
    fetch(url(served, "ok", "crawl-00.warc.gz"), tmp_path / "x.warc.gz", **FAST)
    assert original.read_bytes() == b"local bytes"
    assert (tmp_path / "x.warc.gz").read_bytes() == warc_bytes


def test_progress_lines_are_rate_limited(served, tmp_path, monkeypatch):
    source = url(served, "ok", "crawl-00.warc.gz")
    monkeypatch.setattr(http_download, "CHUNK_SIZE", 50_000)
    quiet = []
    fetch(source, tmp_path / "a.warc.gz", **FAST, log=quiet.append)
    assert len(quiet) == 1 and "sha256" in quiet[0]  # a fast download logs only its outcome

    monkeypatch.setattr(transfer, "PROGRESS_INTERVAL", 0)
    chatty = []
    fetch(source, tmp_path / "b.warc.gz", **FAST, log=chatty.append)
    progress = chatty[:-1]
    assert len(progress) >= 3
    line = re.compile(r"b\.warc\.gz\.part: [\d.]+ MB of [\d.]+ MB \([\d.]+%\) at [\d.]+ MB/s")
    assert all(line.fullmatch(m) for m in progress)
    assert progress[-1].split(" (")[1].startswith("100.0%")


# --- local inputs -------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["absolute", "relative", "file-url"])
def test_local_input_is_symlinked(form, warc_bytes, tmp_path, monkeypatch):
    original = tmp_path / "in dir" / "crawl.warc.gz"
    original.parent.mkdir()
    original.write_bytes(warc_bytes)
    monkeypatch.chdir(tmp_path)
    forms = {
        "absolute": str(original),
        "relative": "in dir/crawl.warc.gz",
        "file-url": original.as_uri(),
    }
    source = forms[form]
    dest = tmp_path / "data/warc/crawl.warc.gz"
    meta = fetch(source, dest)
    assert dest.is_symlink() and dest.resolve() == original.resolve()
    assert meta == json.loads((tmp_path / "data/warc/crawl.warc.gz.json").read_text())
    assert (
        meta["method"] == "link"
        and meta["sha256"] == sha256(warc_bytes)
        and meta["source"] == source
    )


def test_local_input_is_copied_on_request(warc_bytes, tmp_path):
    original = tmp_path / "crawl.warc.gz"
    original.write_bytes(warc_bytes)
    dest, meta_path = tmp_path / "out/crawl.warc.gz", tmp_path / "out/crawl.json"
    meta = fetch(str(original), dest, meta_path=meta_path, copy_local=True)
    assert not dest.is_symlink() and dest.read_bytes() == warc_bytes
    assert meta["method"] == "copy" and json.loads(meta_path.read_text()) == meta
    assert not (tmp_path / "out/crawl.warc.gz.json").exists()


def test_missing_local_file_names_the_path(tmp_path):
    missing = tmp_path / "nowhere" / "crawl.warc.gz"
    with pytest.raises(FileNotFoundError, match=re.escape(str(missing))):
        fetch(str(missing), tmp_path / "x.warc.gz")
    assert not (tmp_path / "x.warc.gz").exists()


# --- shard names --------------------------------------------------------------------------

CC_URL = (
    "https://data.commoncrawl.org/crawl-data/CC-MAIN-2024-10/segments/1707947473347.0/warc/"
    "CC-MAIN-20240220211055-20240221001055-00000.warc.gz"
)


@pytest.mark.parametrize(
    "source, expected",
    [
        (CC_URL, "CC-MAIN-20240220211055-20240221001055-00000"),
        ("../../etc/passwd", "passwd"),
        ("..\\..\\windows\\evil.gz", "evil"),
        ("/abs/path/x.warc.gz", "x"),
        ("http://host/dl/shard.warc.gz?sig=a/b&next=../y#part", "shard"),
        ("http://host/get?file=other.warc.gz", "get"),
        ("http://example.com/", "example.com"),
        ("file:///data/a%20b.warc", "a_b"),
        ("naïve crawl.WARC.GZ", "naive_crawl"),
        (".hidden.warc.gz", "hidden"),
        ("-rf.warc", "rf"),
        ("s3://commoncrawl/crawl-data/CC-MAIN-2024-10/segments/1/warc/x-00001.warc.gz", "x-00001"),
    ],
)
def test_shard_name(source, expected):
    assert shard_name(source) == expected


NASTY = [
    "データ.warc.gz",
    "..",
    "/",
    ".warc.gz",
    "file:///",
    "---.gz",
    "x" * 300 + ".gz",
    "a/../c$;|`rm`.warc",
]


@pytest.mark.parametrize("source", NASTY)
def test_shard_names_are_safe_file_names(source):
    name = shard_name(source)
    # The workflow's wildcard constraint on {shard}, and room left in a 255-byte file name.
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name) and len(name) <= 100
    assert shard_name(source) == name


def test_nameless_inputs_get_distinct_hashed_names():
    names = [shard_name(s) for s in ["データ.warc.gz", "日本.warc.gz", ".."]]
    assert all(re.fullmatch(r"shard-[0-9a-f]{8}", n) for n in names) and len(set(names)) == 3


REJECTED = [
    "ftp://host/x.warc.gz",
    "javascript:alert(1)",
    "s3://bucket/",
    "s3:///x.warc.gz",
    "data:text/plain,hi",
    "file://otherhost/x.warc.gz",
    "http:///x.warc.gz",
    "http://host/a b.warc.gz",
]


@pytest.mark.parametrize("source", REJECTED)
def test_unsupported_inputs_are_rejected_by_name(source, tmp_path):
    for call, args in (
        (shard_name, [source]),
        (resolve_sources, [[source]]),
        (fetch, [source, tmp_path / "x"]),
    ):
        with pytest.raises(ValueError, match=re.escape(repr(source))):
            call(*args)


# --- resolving inputs ---------------------------------------------------------------------


def test_resolve_sources_keeps_order_and_disambiguates(tmp_path):
    warcs = [
        "a/x.warc.gz",
        "b/x.warc.gz",
        "http://h/x.warc",
        "http://h/X.gz",
        "x-2.warc.gz",
        "/abs/y.gz",
    ]
    assert resolve_sources(warcs, base_dir=tmp_path) == {
        "x": str(tmp_path / "a/x.warc.gz"),
        "x-2": str(tmp_path / "b/x.warc.gz"),
        "x-3": "http://h/x.warc",
        "X-4": "http://h/X.gz",  # case-insensitive file systems would merge X and x
        "x-2-2": str(tmp_path / "x-2.warc.gz"),
        "y": "/abs/y.gz",
    }


def test_folders_and_globs_are_their_warcs_sorted_in_their_place(tmp_path):
    """Issue 56: a user with 300 WARCs wrote 300 lines. A folder is its *.warc.gz and *.warc
    files, a glob its matches, sorted where the entry stands; the same file name in two folders
    makes two shards."""
    for name in (
        "crawl/b.warc.gz",
        "crawl/a.warc",
        "crawl/notes.txt",
        "crawl/.hidden.warc.gz",
        "crawl/sub/c.warc.gz",
        "more/a.warc.gz",
        "more/b.warc.gz",
        "odd/[1].warc.gz",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "crawl" / "dir.warc.gz").mkdir()
    shards = resolve_sources(
        ["http://h/first.warc.gz", "crawl", "more/*.warc.gz", "odd/[1].warc.gz"],
        base_dir=tmp_path,
    )
    assert shards == {
        "first": "http://h/first.warc.gz",
        "a": str(tmp_path / "crawl/a.warc"),
        "b": str(tmp_path / "crawl/b.warc.gz"),
        "a-2": str(tmp_path / "more/a.warc.gz"),
        "b-2": str(tmp_path / "more/b.warc.gz"),
        "1": str(tmp_path / "odd/[1].warc.gz"),  # an existing file is itself, not a pattern
    }
    # ** descends; an absolute pattern and a file:// URL's path are globs as well
    assert list(resolve_sources(["**/c.warc.gz"], base_dir=tmp_path).values()) == [
        str(tmp_path / "crawl/sub/c.warc.gz")
    ]
    assert resolve_sources([f"file://{tmp_path}/more/?.warc.gz"], base_dir=Path("/")) == {
        "a": str(tmp_path / "more/a.warc.gz"),
        "b": str(tmp_path / "more/b.warc.gz"),
    }
    with pytest.raises(ValueError, match="glob 'more/\\*.warc' matches no file"):
        resolve_sources(["more/*.warc"], base_dir=tmp_path)
    # a folder whose WARCs are all in its subfolders holds none (** reaches them)
    (tmp_path / "nested" / "sub").mkdir(parents=True)
    (tmp_path / "nested" / "sub" / "d.warc.gz").write_bytes(b"")
    with pytest.raises(ValueError, match="folder 'nested' holds no \\*.warc.gz or \\*.warc file"):
        resolve_sources(["nested"], base_dir=tmp_path)
    with pytest.raises(ValueError, match="more than once"):
        resolve_sources(["more", "more/a.warc.gz"], base_dir=tmp_path)


@pytest.mark.parametrize("warcs", [["a.warc.gz", "./a.warc.gz"], ["http://h/a.warc.gz"] * 2])
def test_repeated_input_is_rejected(warcs, tmp_path):
    with pytest.raises(ValueError, match="more than once"):
        resolve_sources(warcs, base_dir=tmp_path)


def test_warcs_must_be_a_list():
    with pytest.raises(ValueError, match="must be a list"):
        resolve_sources("crawl.warc.gz")


LISTING = [
    "crawl-data/CC-MAIN-2024-10/segments/1/warc/CC-MAIN-20240220211055-20240221001055-00000.warc.gz",
    "",
    "crawl-data/CC-MAIN-2024-10/segments/1/warc/CC-MAIN-20240220211055-20240221001055-00001.warc.gz",
    "crawl-data/CC-MAIN-2024-10/segments/2/warc/CC-MAIN-20240220232447-20240221022447-00002.warc.gz",
]


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("base_url", ["https://data.example.org", "https://data.example.org/"])
def test_cc_listing_takes_the_first_entries_joined_to_the_base(compressed, base_url, tmp_path):
    text = "\n".join(LISTING).encode() + b"\n"
    name = "warc.paths.gz" if compressed else "warc.paths"
    (tmp_path / name).write_bytes(gzip.compress(text) if compressed else text)
    shards = resolve_sources(["local.warc.gz"], name, base_url, cc_limit=2, base_dir=tmp_path)
    assert shards == {
        "local": str(tmp_path / "local.warc.gz"),
        "CC-MAIN-20240220211055-20240221001055-00000": "https://data.example.org/" + LISTING[0],
        "CC-MAIN-20240220211055-20240221001055-00001": "https://data.example.org/" + LISTING[2],
    }


def test_cc_listing_is_fetched_over_http(server, tmp_path):
    server.files["warc.paths.gz"] = gzip.compress("\n".join(LISTING).encode())
    base = url(server, "ok", "")
    listing = url(server, "ok", "warc.paths.gz")
    shards = resolve_sources([], cc_listing=listing, cc_base_url=base)
    assert list(shards.values()) == [base + LISTING[0], base + LISTING[2], base + LISTING[3]]
    assert resolve_sources([], cc_listing=listing, cc_base_url=base, cc_limit=0) == {}


def test_cc_listing_entry_climbing_out_of_the_base_is_rejected(tmp_path):
    (tmp_path / "warc.paths").write_text("a.warc.gz\n../../etc/passwd\n")
    with pytest.raises(ValueError, match=r"'\.\./\.\./etc/passwd'"):
        resolve_sources([], cc_listing="warc.paths", cc_base_url="/data/mirror", base_dir=tmp_path)


def test_missing_cc_listing_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "warc.paths.gz"))):
        resolve_sources([], cc_listing="warc.paths.gz", cc_base_url="https://h/", base_dir=tmp_path)


# --- the Snakemake script -----------------------------------------------------------------


@pytest.mark.workflow
def test_snakemake_script_downloads_one_shard(served, warc_bytes, tmp_path):
    """A shard of two WARCs (input.warcs_per_shard: 2), the first one's connection dropped once."""
    sources = {
        "crawl-00": url(served, "drop", "crawl-00.warc.gz"),
        "crawl-01": url(served, "ok", "crawl-00.warc.gz"),
    }
    (tmp_path / "Snakefile").write_text(
        f"""
rule download:
    output:
        warcs=directory("data/warc/{{shard}}"),
    params:
        sources={sources!r},
        staging="data/warc/.partial",
        retries=2,
        backoff=0.001,
        timeout=5,
    log:
        "logs/download/{{shard}}.log",
    script:
        {str(REPO / "scripts/download.py")!r}
"""
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    run = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1", "data/warc/crawl-00"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    for name, source in sources.items():
        assert (tmp_path / f"data/warc/crawl-00/{name}.warc.gz").read_bytes() == warc_bytes
        meta = json.loads((tmp_path / f"data/warc/crawl-00/{name}.json").read_text())
        assert meta["sha256"] == sha256(warc_bytes) and meta["source"] == source
    log = (tmp_path / "logs/download/crawl-00.log").read_text()
    assert "retry 1 of 2" in log and "sha256" in log


def test_a_file_that_changed_between_attempts_is_downloaded_again_whole(
    server, warc_bytes, tmp_path
):
    """Issue 17: a resumed download could append the new version's tail to the old one's head.
    The resumed request carries If-Range with the first response's ETag; the changed file comes
    back whole."""
    server.files["crawl-00.warc.gz"] = warc_bytes
    dest = tmp_path / "crawl-00.warc.gz"
    with pytest.raises(DownloadError):
        fetch(url(server, "drop", "crawl-00.warc.gz"), dest, retries=0, backoff=0.001, timeout=5)
    assert 0 < (tmp_path / "crawl-00.warc.gz.part").stat().st_size < len(warc_bytes)
    changed = warc_bytes[: len(warc_bytes) // 3] + gzip.compress(
        b"WARC/1.0\r\nWARC-Type: resource\r\n\r\n"
    )
    server.files["crawl-00.warc.gz"] = changed
    meta = fetch(url(server, "ok", "crawl-00.warc.gz"), dest, **FAST)
    assert dest.read_bytes() == changed and meta["sha256"] == sha256(changed)
    assert server.requests[-1][1] is not None  # it did ask to resume
    assert not (tmp_path / "crawl-00.warc.gz.validator").exists()


def test_a_page_that_is_no_warc_is_not_saved_as_one(server, tmp_path):
    """Issue 17: a 72-byte "please log in" page was saved as the WARC and reported a success."""
    server.files["crawl-00.warc.gz"] = (
        b"<html><body>Please log in to download this file.</body></html>\n"
    )
    dest = tmp_path / "crawl-00.warc.gz"
    with pytest.raises(DownloadError, match="not a WARC"):
        fetch(url(server, "ok", "crawl-00.warc.gz"), dest, **FAST, expect_warc=True)
    assert not dest.exists() and not (tmp_path / "crawl-00.warc.gz.part").exists()


def test_a_redirect_to_ftp_is_not_followed(served, tmp_path):
    with pytest.raises(DownloadError, match="ftp://"):
        fetch(url(served, "to-ftp", "crawl-00.warc.gz"), tmp_path / "x.warc.gz", **FAST)


def test_a_trickling_server_is_a_failed_attempt_not_a_wait_forever(served, tmp_path, monkeypatch):
    """Issue 17: a byte a second passes every read time-out; the minimum rate over a window
    ends the attempt (here 1 kB/s over 0.3 s; 60 s in production)."""
    monkeypatch.setattr(transfer, "SLOW_WINDOW", 0.3)
    started = time.monotonic()
    with pytest.raises(DownloadError, match="bytes/s"):
        fetch(
            url(served, "trickle", "crawl-00.warc.gz"),
            tmp_path / "x.warc.gz",
            retries=0,
            backoff=0.001,
            timeout=5,
        )
    assert time.monotonic() - started < 3


def test_the_retry_delay_stops_growing(served, tmp_path, monkeypatch):
    waits = []
    monkeypatch.setattr(fetching.time, "sleep", waits.append)
    monkeypatch.setattr(fetching, "MAX_RETRY_DELAY", 7.0)
    with pytest.raises(DownloadError):
        fetch(
            url(served, "error", "crawl-00.warc.gz"),
            tmp_path / "x.warc.gz",
            retries=4,
            backoff=2.0,
            timeout=5,
        )
    assert waits == [2.0, 4.0, 7.0, 7.0]


# --- S3 -----------------------------------------------------------------------------------


class _S3Proxy(BaseHTTPRequestHandler):
    """Passes every request on to the S3 server at ``server.upstream`` and records (method, path,
    Range, If-Match). The first ``server.drop_gets`` GETs send their whole Content-Length but
    half the body, then close the connection; ``server.on_drop()`` runs before each such cut."""

    def forward(self):
        server = self.server
        length = int(self.headers.get("Content-Length") or 0)
        upstream = http.client.HTTPConnection(*server.upstream, timeout=10)
        upstream.request(
            self.command,
            self.path,
            body=self.rfile.read(length) if length else None,
            headers=dict(self.headers),
        )
        response = upstream.getresponse()
        body = response.read()
        upstream.close()
        with server.lock:
            server.requests.append(
                (self.command, self.path, self.headers.get("Range"), self.headers.get("If-Match"))
            )
            drop = self.command == "GET" and server.drop_gets > 0
            server.drop_gets -= drop
        if drop:
            server.on_drop()
        self.send_response(response.status)
        for name, value in response.getheaders():
            if name.lower() not in ("connection", "transfer-encoding", "server", "date"):
                self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body[: len(body) // 2] if drop else body)

    do_GET = do_HEAD = do_PUT = forward

    def log_message(self, *args):
        """Keep the proxy's access log out of pytest's output."""


@pytest.fixture
def s3(moto_server):
    """A proxy in front of the moto server, whose bucket `crawl` exists: ``s3.client`` (boto3,
    straight to moto, to set up objects), ``s3.options`` (download.s3 for fetch, through the
    proxy), ``s3.requests`` and ``s3.drop_gets`` (see _S3Proxy)."""
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), _S3Proxy)
    proxy.upstream, proxy.requests, proxy.drop_gets, proxy.lock = (
        moto_server,
        [],
        0,
        threading.Lock(),
    )
    proxy.on_drop = lambda: None
    thread = threading.Thread(
        target=proxy.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    )
    thread.start()
    proxy.client = boto3.client("s3", endpoint_url="http://{}:{}".format(*moto_server))
    proxy.client.create_bucket(Bucket="crawl")
    proxy.options = {"endpoint_url": f"http://127.0.0.1:{proxy.server_port}"}
    yield proxy
    proxy.shutdown()
    proxy.server_close()
    thread.join()


def gets(s3) -> list[tuple[str | None, str | None]]:
    """(Range, If-Match) of every GET the proxy passed on."""
    return [(rng, if_match) for method, _, rng, if_match in s3.requests if method == "GET"]


S3_KEY = "crawl-data/CC-MAIN-2024-10/segments/1/warc/crawl-00.warc.gz"
S3_URL = f"s3://crawl/{S3_KEY}"


@pytest.fixture
def s3_object(s3, warc_bytes) -> str:
    """The ETag of warc_bytes stored at S3_URL."""
    return s3.client.put_object(Bucket="crawl", Key=S3_KEY, Body=warc_bytes)["ETag"]


def test_s3_object_is_fetched_with_its_sidecar(s3, s3_object, warc_bytes, tmp_path):
    dest = tmp_path / "data/warc/crawl-00.warc.gz"
    meta = fetch(S3_URL, dest, s3=s3.options, expect_warc=True, **FAST)
    assert dest.read_bytes() == warc_bytes
    assert json.loads((tmp_path / "data/warc/crawl-00.warc.gz.json").read_text()) == meta
    assert meta["source"] == S3_URL and meta["method"] == "s3"
    assert meta["size"] == len(warc_bytes) and meta["sha256"] == sha256(warc_bytes)
    assert [method for method, *_ in s3.requests] == ["HEAD", "GET"] and gets(s3) == [
        (None, s3_object)
    ]
    assert sorted(p.name for p in dest.parent.iterdir()) == [
        "crawl-00.warc.gz",
        "crawl-00.warc.gz.json",
    ]


def test_s3_dropped_connection_resumes_by_range_of_the_same_object(
    s3, s3_object, warc_bytes, tmp_path
):
    s3.drop_gets = 1
    lines = []
    meta = fetch(S3_URL, tmp_path / "x.warc.gz", s3=s3.options, log=lines.append, **FAST)
    assert (tmp_path / "x.warc.gz").read_bytes() == warc_bytes and meta["sha256"] == sha256(
        warc_bytes
    )
    (first, _), (resumed, if_match) = gets(s3)
    # what arrived before the drop is kept, but for the chunk it cut short
    kept = int(re.fullmatch(r"bytes=(\d+)-", resumed)[1])
    assert first is None and 0 < kept <= len(warc_bytes) // 2 and if_match == s3_object
    assert any("retry 1 of 3" in line for line in lines)


def test_partial_s3_download_of_an_earlier_run_is_resumed(s3, s3_object, warc_bytes, tmp_path):
    (tmp_path / "x.warc.gz.part").write_bytes(warc_bytes[:1000])
    fetch(S3_URL, tmp_path / "x.warc.gz", s3=s3.options, **FAST)
    assert (tmp_path / "x.warc.gz").read_bytes() == warc_bytes
    assert gets(s3) == [("bytes=1000-", s3_object)]


def test_s3_object_replaced_since_the_download_began_is_downloaded_again_whole(
    s3, s3_object, warc_bytes, tmp_path
):
    """The partial file began with another version (its ETag kept beside it): resuming would
    join two versions, so the download restarts from zero."""
    (tmp_path / "x.warc.gz.part").write_bytes(b"old version " * 100)
    (tmp_path / "x.warc.gz.part.validator").write_text('"0123456789abcdef0123456789abcdef"')
    lines = []
    fetch(S3_URL, tmp_path / "x.warc.gz", s3=s3.options, log=lines.append, **FAST)
    assert (tmp_path / "x.warc.gz").read_bytes() == warc_bytes
    assert gets(s3) == [(None, s3_object)] and "changed since the download began" in lines[0]
    assert not (tmp_path / "x.warc.gz.part.validator").exists()


def test_s3_object_replaced_between_two_attempts_is_not_spliced(
    s3, s3_object, warc_bytes, tmp_path
):
    """The object is replaced while the first GET is under way: the second attempt sees another
    ETag and starts from zero, rather than appending the new version's tail to the old head."""
    replacement = warc_bytes[: len(warc_bytes) // 3] + gzip.compress(
        b"WARC/1.0\r\nWARC-Type: resource\r\n\r\n"
    )
    s3.drop_gets = 1
    s3.on_drop = lambda: s3.client.put_object(Bucket="crawl", Key=S3_KEY, Body=replacement)
    meta = fetch(S3_URL, tmp_path / "x.warc.gz", s3=s3.options, **FAST)
    assert (tmp_path / "x.warc.gz").read_bytes() == replacement and meta["sha256"] == sha256(
        replacement
    )
    new_etag = f'"{hashlib.md5(replacement).hexdigest()}"'
    assert gets(s3) == [(None, s3_object), (None, new_etag)]


def test_s3_bytes_that_do_not_have_the_etags_md5_are_downloaded_again(
    s3, s3_object, warc_bytes, tmp_path
):
    """A partial file of unknown origin (no ETag kept) is resumed; the MD5 of the result is not
    the object's, so the download starts again from zero."""
    (tmp_path / "x.warc.gz.part").write_bytes(bytes(1000))
    lines = []
    fetch(S3_URL, tmp_path / "x.warc.gz", s3=s3.options, log=lines.append, **FAST)
    assert (tmp_path / "x.warc.gz").read_bytes() == warc_bytes
    assert gets(s3) == [("bytes=1000-", s3_object), (None, s3_object)]
    assert "do not have the object's MD5" in lines[0]


@pytest.mark.parametrize(
    "source", ["s3://crawl/missing.warc.gz", "s3://no-such-bucket/crawl-00.warc.gz"]
)
def test_missing_s3_object_is_one_clear_error_without_retries(s3, source, tmp_path):
    with pytest.raises(
        DownloadError, match=re.escape(source) + r": no such bucket or object \(S3 404\)$"
    ):
        fetch(source, tmp_path / "x.warc.gz", s3=s3.options, **FAST)
    assert len(s3.requests) == 1 and list(tmp_path.iterdir()) == []


def test_denied_s3_access_is_one_clear_error(s3, s3_object, tmp_path):
    """moto refuses a request without credentials, as AWS does for Common Crawl's bucket."""
    with pytest.raises(
        DownloadError, match=re.escape(S3_URL) + r": access denied .*download\.s3\.anonymous"
    ):
        fetch(S3_URL, tmp_path / "x.warc.gz", s3={**s3.options, "anonymous": True}, **FAST)
    assert len(s3.requests) == 1


def test_s3_without_credentials_says_where_they_go(s3, s3_object, monkeypatch, tmp_path):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(
        DownloadError, match=re.escape(S3_URL) + ": no AWS credentials .*AWS_ACCESS_KEY_ID"
    ):
        fetch(S3_URL, tmp_path / "x.warc.gz", s3=s3.options, **FAST)
    assert s3.requests == []


def test_s3_without_boto3_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "boto3", None)  # import boto3 raises ImportError
    with pytest.raises(DownloadError, match=re.escape("pip install 'corpusbuilder[s3]'")):
        fetch(S3_URL, tmp_path / "x.warc.gz")
    # and the workflow's config check says so, naming the key, before any job runs
    config = validate_config(
        {
            "input": {
                "cc_paths": {
                    "listing": "s3://commoncrawl/crawl-data/CC-MAIN-2024-10/warc.paths.gz",
                    "base_url": "s3://commoncrawl/",
                    "limit": 1,
                }
            }
        }
    )
    with pytest.raises(
        ConfigError, match=r"^config key 'input\.cc_paths\.listing': s3:// inputs need boto3"
    ):
        check_input_paths(config, tmp_path)


@pytest.mark.parametrize(
    "head, md5",
    [
        ({"ETag": '"e65657c813effa08fb54bbb4fe30dba7"'}, "e65657c813effa08fb54bbb4fe30dba7"),
        (
            {"ETag": '"e65657c813effa08fb54bbb4fe30dba7"', "ServerSideEncryption": "AES256"},
            "e65657c813effa08fb54bbb4fe30dba7",
        ),
        ({"ETag": '"e65657c813effa08fb54bbb4fe30dba7-3"'}, None),  # uploaded in 3 parts
        ({"ETag": '"e65657c813effa08fb54bbb4fe30dba7"', "ServerSideEncryption": "aws:kms"}, None),
        ({"ETag": '"e65657c813effa08fb54bbb4fe30dba7"', "SSECustomerAlgorithm": "AES256"}, None),
    ],
)
def test_only_a_plain_md5_etag_is_checked(head, md5):
    assert s3_module._plain_md5(head) == md5


def test_cc_listing_and_its_warcs_on_s3(s3, tmp_path):
    s3.client.put_object(
        Bucket="crawl",
        Key="crawl-data/CC-MAIN-2024-10/warc.paths.gz",
        Body=gzip.compress("\n".join(LISTING).encode()),
    )
    shards = resolve_sources(
        [],
        cc_listing="s3://crawl/crawl-data/CC-MAIN-2024-10/warc.paths.gz",
        cc_base_url="s3://crawl/",
        cc_limit=2,
        s3=s3.options,
    )
    assert shards == {
        "CC-MAIN-20240220211055-20240221001055-00000": "s3://crawl/" + LISTING[0],
        "CC-MAIN-20240220211055-20240221001055-00001": "s3://crawl/" + LISTING[2],
    }


def test_missing_cc_listing_on_s3_is_one_clear_error(s3):
    listing = "s3://crawl/crawl-data/CC-MAIN-1999-01/warc.paths.gz"
    with pytest.raises(
        ValueError,
        match=re.escape(f"cannot read listing {listing!r}") + ".*no such bucket or object",
    ):
        resolve_sources([], cc_listing=listing, cc_base_url="s3://crawl/", s3=s3.options)


# --- remote inputs in the workflow ----------------------------------------------------------


@pytest.mark.workflow
@pytest.mark.slow
def test_s3_and_flaky_https_inputs_build_the_corpus_of_local_files(
    https_server, s3, tmp_path, sample_build
):
    """The sample crawl's WARCs from S3 (the first GET of each cut off half-way) and over HTTPS
    (the drop mode) make the same corpus, byte for byte, as the same WARCs read as local files."""
    warcs = SAMPLE_WARCS
    for warc in warcs[:2]:
        s3.client.put_object(Bucket="crawl", Key=f"sample/{warc.name}", Body=warc.read_bytes())
    https_server.files[warcs[2].name] = warcs[2].read_bytes()
    s3.drop_gets = 2
    remote = [
        f"s3://crawl/sample/{warcs[0].name}",
        f"s3://crawl/sample/{warcs[1].name}",
        url(https_server, "drop", warcs[2].name),
    ]
    download_options = {"retries": 2, "backoff": 0.01, "timeout": 10, "s3": s3.options}
    result = snakemake(
        tmp_path,
        config={"input": {"warcs": remote}, "download": download_options, **FEW_PARTITIONS},
    )
    assert result.returncode == 0, result.stderr[-4000:]
    meta = {p.name: json.loads(p.read_text()) for p in (tmp_path / "data/warc").glob("*/*.json")}
    assert [m["method"] for _, m in sorted(meta.items())] == ["s3", "s3", "http"]
    assert [m["source"] for _, m in sorted(meta.items())] == remote
    assert s3.drop_gets == 0 and len(gets(s3)) == 4  # both S3 downloads were cut off, then resumed
    assert [rng for _, rng in https_server.requests] == [
        None,
        f"bytes={warcs[2].stat().st_size // 2}-",
    ]
    expected = corpus_bytes(sample_build)
    assert len(expected) == 9 and corpus_bytes(tmp_path) == expected
