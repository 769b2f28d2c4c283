#!/usr/bin/env python3
"""Build the bundled sample crawl: resources/sample/sample-0{0,1,2}.warc.gz and truth.tsv.

The pages are hand-written HTML files under ``resources/sample/pages/<site>/`` (original text
written for this project), listed in crawl order in ``resources/sample/manifest.tsv``:

    shard  url  status  content_type  file  kind  of  lang  location

(``-`` for an empty field; ``file`` is relative to ``pages/``, ``-`` for an empty body).

Each shard becomes one WARC file written with warcio, one gzip member per record: a warcinfo
record first, then for every manifest row a ``request`` record followed by its ``response``
record (or a single ``resource`` record for ``dns:`` URLs). Everything that could vary between
runs is fixed — WARC-Date comes from a fixed clock, WARC-Record-IDs are UUIDv5 of the record
type and URL — so rebuilding gives byte-identical files (for the same zlib).

``truth.tsv`` lists every response and resource record with its position in the file:
``record`` is the 0-based index of the record among *all* records of that WARC file, in file
order, counting the warcinfo record (index 0) and the request records; ``id`` is
``{shard}:{record}``, the document id the pipeline uses.

    python tools/make_sample.py                 # rebuild resources/sample in place
    python tools/make_sample.py --out /tmp/x    # build elsewhere (tests compare the bytes)
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import email.utils
import hashlib
import io
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

REPO = Path(__file__).resolve().parents[1]
SAMPLE_DIR = REPO / "resources" / "sample"
MANIFEST_COLUMNS = [
    "shard",
    "url",
    "status",
    "content_type",
    "file",
    "kind",
    "of",
    "lang",
    "location",
]
TRUTH_COLUMNS = [
    "shard",
    "record",
    "id",
    "warc_type",
    "url",
    "status",
    "content_type",
    "kind",
    "lang",
    "of",
    "of_id",
    "sha1",
]

WARC_VERSION = "1.0"
CRAWL_START = dt.datetime(2025, 3, 15, 10, 0, 0, tzinfo=dt.timezone.utc)
SECONDS_PER_FETCH = 7
ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://corpusbuilder.example/sample-crawl")
USER_AGENT = "corpusbuilder-sample/1.0 (+https://corpusbuilder.example/bot; hand-made sample crawl)"
REASONS = {
    200: "OK",
    301: "Moved Permanently",
    302: "Found",
    404: "Not Found",
    500: "Internal Server Error",
}
SERVERS = {  # what each (fictional) host answers in its Server header
    "harbourledger.example": "nginx",
    "www.harbourledger.example": "nginx",
    "m.harbourledger.example": "nginx",
    "slowloaves.example": "Apache",
    "forum.trailhead.example": "Apache/2.4.62 (Debian)",
    "lingvistika.univerzita-brezno.example": "Apache",
    "www.univerzita-brezno.example": "Apache",
    "www.bergsport-huber.example": "nginx",
    "www.deux-versants.example": "Apache/2.2.22 (Unix)",
    "www.coastalwire.example": "cloudfront",
    "www.homebakerscollective.example": "nginx",
}


@dataclass
class Row:
    shard: str
    url: str
    status: str
    content_type: str
    file: str
    kind: str
    of: str
    lang: str
    location: str

    def get(self, field: str) -> str | None:
        value = getattr(self, field)
        return None if value == "-" else value


def read_manifest(path: Path) -> list[Row]:
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader)
        if header != MANIFEST_COLUMNS:
            raise SystemExit(f"{path}: expected columns {MANIFEST_COLUMNS}, got {header}")
        rows = []
        for lineno, fields in enumerate(reader, start=2):
            if len(fields) != len(MANIFEST_COLUMNS):
                raise SystemExit(
                    f"{path}:{lineno}: {len(fields)} fields, expected {len(MANIFEST_COLUMNS)}"
                )
            rows.append(Row(*fields))
    return rows


def record_id(kind: str, key: str) -> str:
    return f"<urn:uuid:{uuid.uuid5(ID_NAMESPACE, kind + ' ' + key)}>"


def warc_date(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def ip_address(host: str) -> str:
    """A stable address in TEST-NET-1 (RFC 5737) for each fictional host."""
    return f"192.0.2.{1 + hashlib.sha1(host.encode()).digest()[0] % 250}"


def body_of(row: Row, pages: Path) -> bytes:
    name = row.get("file")
    return b"" if name is None else (pages / name).read_bytes()


def http_response_headers(row: Row, body: bytes, when: dt.datetime) -> StatusAndHeaders:
    status = int(row.status)
    host = urlsplit(row.url).hostname or ""
    headers = [
        ("Date", email.utils.format_datetime(when, usegmt=True)),
        ("Server", SERVERS.get(host, "nginx")),
    ]
    if row.get("content_type"):
        headers.append(("Content-Type", row.content_type))
    headers.append(("Content-Length", str(len(body))))
    if row.get("location"):
        headers.append(("Location", row.location))
    headers.append(("Connection", "close"))
    return StatusAndHeaders(
        f"{status} {REASONS.get(status, 'Unknown')}", headers, protocol="HTTP/1.1"
    )


def http_request_headers(url: str) -> StatusAndHeaders:
    parts = urlsplit(url)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    headers = [
        ("Host", parts.netloc),
        ("User-Agent", USER_AGENT),
        ("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
        ("Accept-Language", "en-GB,en;q=0.9,de;q=0.7,cs;q=0.6,fr;q=0.5,es;q=0.4"),
        ("Accept-Encoding", "identity"),
        ("Connection", "close"),
    ]
    return StatusAndHeaders(f"GET {target} HTTP/1.1", headers, is_http_request=True)


def write_shard(
    shard: str, rows: list[Row], pages: Path, out: Path, shard_no: int
) -> list[dict[str, str]]:
    """Write `out`/<shard>.warc.gz; return its truth rows."""
    filename = f"{shard}.warc.gz"
    clock = CRAWL_START + dt.timedelta(hours=shard_no)
    truth: list[dict[str, str]] = []
    index = 0
    with (out / filename).open("wb") as fh:
        writer = WARCWriter(fh, gzip=True, warc_version=WARC_VERSION)

        info = writer.create_warcinfo_record(
            filename,
            {
                "software": "corpusbuilder tools/make_sample.py (warcio)",
                "format": "WARC File Format 1.0",
                "description": "Hand-made sample crawl of fictional sites for corpusbuilder's "
                "demo and tests; see resources/sample/README.md",
                "isPartOf": "corpusbuilder-sample",
                "robots": "classic",
                "http-header-user-agent": USER_AGENT,
            },
        )
        info.rec_headers.replace_header("WARC-Record-ID", record_id("warcinfo", filename))
        info.rec_headers.replace_header("WARC-Date", warc_date(clock))
        writer.write_record(info)
        index += 1

        for row in rows:
            clock += dt.timedelta(seconds=SECONDS_PER_FETCH)
            body = body_of(row, pages)
            if row.url.startswith("dns:"):
                rec = writer.create_warc_record(
                    row.url,
                    "resource",
                    payload=io.BytesIO(body),
                    length=len(body),
                    warc_content_type=row.content_type,
                    warc_headers_dict={
                        "WARC-Type": "resource",
                        "WARC-Target-URI": row.url,
                        "WARC-Record-ID": record_id("resource", row.url),
                        "WARC-Date": warc_date(clock),
                    },
                )
                writer.write_record(rec)
                truth.append(truth_row(shard, index, "resource", row, body))
                index += 1
                continue

            host = urlsplit(row.url).hostname or ""
            response_id = record_id("response", row.url)
            request = writer.create_warc_record(
                row.url,
                "request",
                payload=io.BytesIO(b""),
                length=0,
                http_headers=http_request_headers(row.url),
                warc_headers_dict={
                    "WARC-Type": "request",
                    "WARC-Target-URI": row.url,
                    "WARC-Record-ID": record_id("request", row.url),
                    "WARC-Date": warc_date(clock),
                    "WARC-Concurrent-To": response_id,
                },
            )
            writer.write_record(request)
            index += 1

            response = writer.create_warc_record(
                row.url,
                "response",
                payload=io.BytesIO(body),
                length=len(body),
                http_headers=http_response_headers(row, body, clock),
                warc_headers_dict={
                    "WARC-Type": "response",
                    "WARC-Target-URI": row.url,
                    "WARC-Record-ID": response_id,
                    "WARC-Date": warc_date(clock),
                    "WARC-IP-Address": ip_address(host),
                    "WARC-Warcinfo-ID": record_id("warcinfo", filename),
                },
            )
            writer.write_record(response)
            truth.append(truth_row(shard, index, "response", row, body))
            index += 1
    return truth


def truth_row(shard: str, index: int, warc_type: str, row: Row, body: bytes) -> dict[str, str]:
    return {
        "shard": shard,
        "record": str(index),
        "id": f"{shard}:{index}",
        "warc_type": warc_type,
        "url": row.url,
        "status": row.status,
        "content_type": row.content_type,
        "kind": row.kind,
        "lang": row.lang,
        "of": row.of,
        "of_id": "-",
        "sha1": hashlib.sha1(body).hexdigest(),
    }


def build(manifest: Path, pages: Path, out: Path) -> list[dict[str, str]]:
    rows = read_manifest(manifest)
    shards: dict[str, list[Row]] = {}
    for row in rows:
        shards.setdefault(row.shard, []).append(row)
    out.mkdir(parents=True, exist_ok=True)
    truth: list[dict[str, str]] = []
    for shard_no, shard in enumerate(sorted(shards)):
        truth.extend(write_shard(shard, shards[shard], pages, out, shard_no))

    # Copies point at their original by URL (`of`) and by document id (`of_id`); an original
    # always comes earlier in crawl order, so "first copy wins" keeps it.
    by_url = {t["url"]: t for t in truth}
    order = {t["id"]: i for i, t in enumerate(truth)}
    for t in truth:
        if t["of"] != "-":
            original = by_url.get(t["of"])
            if original is None:
                raise SystemExit(f"{t['url']}: its original {t['of']} is not in the manifest")
            if order[original["id"]] >= order[t["id"]]:
                raise SystemExit(f"{t['url']}: its original must come earlier in crawl order")
            t["of_id"] = original["id"]

    with (out / "truth.tsv").open("w", encoding="utf-8", newline="\n") as f:
        f.write("\t".join(TRUTH_COLUMNS) + "\n")
        for t in truth:
            f.write("\t".join(t[c] for c in TRUTH_COLUMNS) + "\n")
    return truth


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Write the sample crawl's WARC shards and truth.tsv from the hand-written "
        "pages."
    )
    parser.add_argument(
        "--manifest",
        type=Path,
        default=SAMPLE_DIR / "manifest.tsv",
        help="default: resources/sample/manifest.tsv",
    )
    parser.add_argument(
        "--pages", type=Path, default=SAMPLE_DIR / "pages", help="default: resources/sample/pages"
    )
    parser.add_argument(
        "--out", type=Path, default=SAMPLE_DIR, help="output directory (default: resources/sample)"
    )
    args = parser.parse_args(argv)
    truth = build(args.manifest, args.pages, args.out)
    shards = sorted({t["shard"] for t in truth})
    total = 0
    for shard in shards:
        size = (args.out / f"{shard}.warc.gz").stat().st_size
        total += size
        print(
            f"{shard}.warc.gz: {sum(t['shard'] == shard for t in truth)} response/resource "
            f"records, {size:,} bytes"
        )
    print(f"total {total:,} bytes; truth.tsv: {len(truth)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
