#!/usr/bin/env python3
"""Download speed of corpusbuilder.download.fetch against servers on this machine, each beside a
peer that only copies the bytes, measured in the same run (interleaved rounds):

- http: fetch (`.part` file, Range-ready, sha256 sidecar, WARC check) from a local HTTP server;
  peer `urllib.request.urlretrieve`.
- s3: fetch (HEAD, If-Match GET, size and MD5 check, sha256 sidecar, WARC check) from moto's S3
  server; peer boto3's `download_file` (its managed, multi-threaded transfer).

The object is a gzipped WARC of random-body records (incompressible, `--mb` megabytes). Both
servers are single Python processes on localhost, so the figures are the client's overhead
against a fast source, not a network's speed: read the ratio. Also reported: the time of the
sidecar's sha256 and of the S3 MD5 check alone (each a pass over the finished file).

    python bench/bench_download.py               # 64 MB, 3 rounds
    python bench/bench_download.py --mb 16 --rounds 1

Results go to bench/results/download.json (the machine description beside them).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import io
import json
import logging
import os
import random
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import boto3
from moto.server import ThreadedMotoServer
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))
from run_all import machine_info  # noqa: E402

from corpusbuilder.download.fetch import fetch  # noqa: E402

RESULTS = HERE / "results" / "download.json"
RECORD_BYTES = 100_000


def write_warc(path: Path, megabytes: int) -> None:
    """A gzipped WARC of response records with random (incompressible) bodies."""
    rng = random.Random(7)
    with open(path, "wb") as out:
        writer = WARCWriter(out, gzip=True)
        for i in range(megabytes * 1_000_000 // RECORD_BYTES):
            headers = StatusAndHeaders(
                "200 OK", [("Content-Type", "application/octet-stream")], protocol="HTTP/1.0"
            )
            record = writer.create_warc_record(
                f"http://example.com/{i}",
                "response",
                http_headers=headers,
                payload=io.BytesIO(rng.randbytes(RECORD_BYTES)),
            )
            writer.write_record(record)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        """No access log on the terminal."""


def digest(path: Path, algorithm: str) -> str:
    """One pass over the file, as the sidecar's sha256 and the S3 MD5 check make."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def timed(call) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=int, default=64, help="size of the WARC in megabytes")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's access log
    os.environ.update(
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_DEFAULT_REGION="us-east-1",
        no_proxy="127.0.0.1",
    )

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "served").mkdir()
        warc = tmp / "served" / "crawl.warc.gz"
        write_warc(warc, args.mb)
        size = warc.stat().st_size

        http = ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(tmp / "served"))
        )
        threading.Thread(target=http.serve_forever, daemon=True).start()
        moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        moto.start()
        endpoint = "http://{}:{}".format(*moto.get_host_and_port())
        client = boto3.client("s3", endpoint_url=endpoint)
        client.create_bucket(Bucket="bench")
        client.put_object(Bucket="bench", Key="crawl.warc.gz", Body=warc.read_bytes())

        http_url = f"http://127.0.0.1:{http.server_port}/crawl.warc.gz"
        runs = {
            "http_fetch": lambda dest: fetch(http_url, dest, expect_warc=True, log=lambda _: None),
            "http_urlretrieve": lambda dest: urllib.request.urlretrieve(http_url, dest),
            "s3_fetch": lambda dest: fetch(
                "s3://bench/crawl.warc.gz",
                dest,
                expect_warc=True,
                s3={"endpoint_url": endpoint},
                log=lambda _: None,
            ),
            "s3_boto3_download_file": lambda dest: client.download_file(
                "bench", "crawl.warc.gz", str(dest)
            ),
        }
        seconds: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.rounds):
            for name, run in runs.items():
                dest = tmp / "out" / f"{name}.warc.gz"
                dest.parent.mkdir(exist_ok=True)
                seconds[name].append(timed(functools.partial(run, dest)))
                assert dest.stat().st_size == size
                dest.unlink()
        digest_s = {
            algorithm: min(
                timed(functools.partial(digest, warc, algorithm)) for _ in range(args.rounds)
            )
            for algorithm in ("sha256", "md5")
        }
        moto.stop()
        http.shutdown()

    best = {name: min(times) for name, times in seconds.items()}
    result = {
        "megabytes": round(size / 1e6, 1),
        "rounds": args.rounds,
        "mb_per_s": {name: round(size / 1e6 / s, 1) for name, s in best.items()},
        "ratio_http": round(best["http_urlretrieve"] / best["http_fetch"], 2),
        "ratio_s3": round(best["s3_boto3_download_file"] / best["s3_fetch"], 2),
        "sha256_pass_s": round(digest_s["sha256"], 3),
        "md5_pass_s": round(digest_s["md5"], 3),
        "seconds": {name: [round(s, 3) for s in times] for name, times in seconds.items()},
        "machine": machine_info(),
    }
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    print(
        json.dumps(
            {key: value for key, value in result.items() if key not in ("seconds", "machine")},
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
