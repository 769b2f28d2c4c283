"""A large WARC read as several shards (input.shard_mb): every record in exactly one part, with
the id it has in the whole WARC; broken members still a row with their reason; what cannot be
split read whole by its first part; the parts named in crawl order; the shard size that keeps
block dedup's shard job within resources.max_mem_mb; the same corpus through the Snakefile."""

from __future__ import annotations

import gzip
import json
import logging
from collections import Counter
from functools import partial
from pathlib import Path

import pandas as pd
import pytest
from conftest import SAMPLE_WARCS, corpus_bytes, ok, snakemake, write_config, write_warc
from test_extract import ARTICLE

from corpusbuilder.common.faults import JobFault
from corpusbuilder.common.sizing import REMOTE_WARC_BYTES, planned_parts
from corpusbuilder.config import ConfigError, validate_config
from corpusbuilder.contracts.warcparts import PartStart, read_part_starts, write_part_starts
from corpusbuilder.dedup.memory import (
    TOKENS_PER_INPUT_BYTE,
    largest_shard_bytes,
    partitioned_job_mb,
)
from corpusbuilder.download.sources import split_shards
from corpusbuilder.extraction.extract import ExtractParams, extract_shard
from corpusbuilder.extraction.warc import iter_warc_records
from corpusbuilder.extraction.warc_parts import index_parts, read_part

PARAMS = ExtractParams.from_config(validate_config({})["extract"])


def rows(records) -> list[tuple]:
    return [(r.record_index, r.offset, r.warc_type, r.uri, r.reason, r.body) for r in records]


def parts_read(path: Path, parts: int) -> list[list[tuple]]:
    starts = index_parts(path, PARAMS, parts)
    return [rows(read_part(path, PARAMS, starts, part)) for part in range(parts)]


def pages(count: int) -> list[dict]:
    return [
        {
            "uri": f"http://example.com/{i}",
            "body": ARTICLE.replace("</body>", f"<p>Page {i}.</p></body>").encode(),
        }
        for i in range(count)
    ]


def broken_warc(tmp_path: Path) -> Path:
    """Forty pages, the 11th member's deflate stream corrupted and the file cut inside its last
    member."""
    path = write_warc(tmp_path / "broken.warc.gz", pages(40))
    data = bytearray(path.read_bytes())
    starts = [i for i in range(len(data)) if data[i : i + 3] == b"\x1f\x8b\x08"]
    middle = starts[10] + 40
    data[middle : middle + 30] = b"\xff" * 30
    path.write_bytes(bytes(data[: starts[-1] + 50]))
    return path


@pytest.mark.parametrize("parts", [1, 2, 3, 7, 40])
def test_the_parts_together_are_the_whole_warcs_records_with_their_ids(parts):
    for path in SAMPLE_WARCS:
        whole = rows(iter_warc_records(path, PARAMS))
        read = parts_read(path, parts)
        assert [row for part in read for row in part] == whole
        if parts <= 3:
            assert all(read), "every part of a WARC of 30-odd members holds records"


@pytest.mark.parametrize("parts", [2, 4, 9])
def test_a_corrupt_and_a_truncated_member_are_rows_with_their_reason_in_one_part(tmp_path, parts):
    path = broken_warc(tmp_path)
    whole = rows(iter_warc_records(path, PARAMS))
    reasons = [row[4] for row in whole if row[2] == "error"]
    assert any(r.startswith("unreadable") for r in reasons), reasons
    assert any(r.startswith("truncated") for r in reasons), reasons
    read = parts_read(path, parts)
    assert [row for part in read for row in part] == whole
    assert sum(map(bool, read)) > 1


def test_extracting_the_parts_counts_what_extracting_the_whole_does(tmp_path):
    path = broken_warc(tmp_path)
    whole = extract_shard(
        [("broken", path)], "broken", tmp_path / "w.docs", tmp_path / "w.blocks", PARAMS
    )
    starts = index_parts(path, PARAMS, 3)
    summaries, docs = [], []
    for part in range(3):
        summaries.append(
            extract_shard(
                [("broken", path)],
                f"broken.part{part}of3",
                tmp_path / f"{part}.docs",
                tmp_path / f"{part}.blocks",
                PARAMS,
                read=partial(read_part, starts=starts, part=part),
            )
        )
        docs.append(pd.read_parquet(tmp_path / f"{part}.docs"))
    assert sum((Counter(s.reasons) for s in summaries), Counter()) == Counter(whole.reasons)
    assert sum(s.pages for s in summaries) == whole.pages > 30
    joined = pd.concat(docs, ignore_index=True)
    alone = pd.read_parquet(tmp_path / "w.docs")
    assert joined["doc_id"].tolist() == alone["doc_id"].tolist()
    same = [c for c in alone.columns if c not in ("shard", "record_index")]
    pd.testing.assert_frame_equal(joined[same], alone[same])
    # a part's record_index is its position in the part, as in any shard
    assert docs[1]["record_index"].tolist() == list(range(len(docs[1])))


def test_a_warc_of_one_gzip_member_is_read_whole_by_its_first_part(tmp_path, caplog):
    members = write_warc(tmp_path / "members.warc.gz", pages(12))
    one = tmp_path / "one.warc.gz"
    one.write_bytes(gzip.compress(gzip.decompress(members.read_bytes())))
    plain = tmp_path / "plain.warc"
    plain.write_bytes(gzip.decompress(members.read_bytes()))
    for path in (one, plain):
        whole = rows(iter_warc_records(path, PARAMS))
        assert len(whole) == 12
        with caplog.at_level(logging.WARNING):
            read = parts_read(path, 4)
        assert read[0] == whole and read[1:] == [[], [], []]
        assert f"{path.name}: cannot be split" in caplog.text


def test_a_part_that_reads_on_past_its_end_fails_rather_than_share_ids(tmp_path):
    path = SAMPLE_WARCS[0]
    starts = index_parts(path, PARAMS, 2)
    wrong = [starts[0], PartStart(starts[1].offset, starts[1].index + 1), starts[2]]
    with pytest.raises(JobFault, match="share ids"):
        list(read_part(path, PARAMS, wrong, 0))


def test_the_starts_file_belongs_to_the_warc_it_was_read_from(tmp_path):
    starts = [PartStart(0, 0), PartStart(100, 3), PartStart(200, 5)]
    write_part_starts(tmp_path / "s.json", "w", 200, starts)
    assert read_part_starts(tmp_path / "s.json", 200) == starts
    with pytest.raises(ValueError, match="the WARC changed"):
        read_part_starts(tmp_path / "s.json", 201)


def test_parts_are_named_after_their_warc_in_crawl_order_and_unique():
    groups = {name: {name: f"/c/{name}.warc.gz"} for name in ("a", "b.part0of2", "c")}
    shards = split_shards(groups, {"b.part0of2": 1, "a": 2, "c": 12})
    assert list(shards) == [
        "a.part0of2",
        "a.part1of2",
        "b.part0of2",
        *(f"c.part{k:02d}of12" for k in range(12)),
    ]
    assert shards["c.part03of12"] == ("c", 3, 12) and shards["b.part0of2"] == ("b.part0of2", 0, 1)
    # a part's name that another WARC already has gets a suffix
    clash = {"b": {"b": "/c/b.warc.gz"}, "b.part0of2": {"b.part0of2": "/c/x.warc.gz"}}
    assert list(split_shards(clash, {"b": 2})) == ["b.part0of2-2", "b.part1of2", "b.part0of2"]


def test_the_planned_parts_follow_the_size_and_what_is_not_split_is_one():
    assert planned_parts(1000, 300) == 4 and planned_parts(900, 300) == 3
    assert planned_parts(10, 300) == 1 and planned_parts(0, 300) == 1
    assert planned_parts(None, 300) == 1 and planned_parts(10**12, None) == 1


@pytest.mark.parametrize("max_mem_mb", [1000, 8000, 64000])
def test_auto_shards_keep_the_shard_dedup_job_within_max_mem_mb_and_no_larger_would(max_mem_mb):
    shard = largest_shard_bytes(max_mem_mb)

    def need(input_bytes: float) -> int:
        return partitioned_job_mb("shard", round(input_bytes * TOKENS_PER_INPUT_BYTE), 1)

    assert need(shard) <= max_mem_mb < need(shard * 1.01)


def test_a_common_crawl_warc_is_eight_shards_by_default():
    default = validate_config({})
    assert default["input"]["shard_mb"] == "auto"
    shard = largest_shard_bytes(default["resources"]["max_mem_mb"])
    assert 130e6 < shard < 140e6  # 128 MiB
    assert planned_parts(REMOTE_WARC_BYTES, shard) == 8


@pytest.mark.parametrize("value", [0, -1, "big", True])
def test_a_bad_shard_size_is_refused_naming_the_key(value):
    with pytest.raises(ConfigError, match=r"input\.shard_mb"):
        validate_config({"input": {"shard_mb": value}})


# --- the workflow ---------------------------------------------------------------------------------


def corpus_documents(workdir: Path) -> list[dict]:
    """Every exported document, in crawl order (the shards' names sort in it)."""
    shards = sorted((workdir / "results" / "corpus").glob("*.jsonl.gz"))
    return [json.loads(line) for path in shards for line in gzip.open(path, "rt")]


def joined(workdir: Path, kind: str) -> bytes:
    """A build's corpus files of one kind, decompressed, one after the other in crawl order."""
    return b"".join(data for name, data in corpus_bytes(workdir).items() if name.endswith(kind))


@pytest.mark.workflow
def test_split_warcs_build_the_corpus_of_whole_ones(tmp_path, first_two_build):
    """The first two sample WARCs (44-62 kB) at 20 kB a shard: three parts each, and the
    documents, their ids, text and offsets, and the funnel, of the session's build of them
    whole."""
    warcs = SAMPLE_WARCS[:2]
    config = write_config(
        tmp_path / "split.yaml", {"input": {"warcs": list(map(str, warcs)), "shard_mb": 0.02}}
    )
    output = ok(snakemake(tmp_path / "split", configfiles=[config]))
    assert "warc_parts" in output
    workdir = tmp_path / "split"
    names = sorted(p.name for p in (workdir / "results" / "corpus").glob("*.jsonl.gz"))
    assert names == [f"sample-0{w}.part{k}of3.jsonl.gz" for w in range(2) for k in range(3)]
    alone, split = corpus_documents(first_two_build), corpus_documents(workdir)
    assert len(alone) > 15 and split == alone
    for kind in (".jsonl.gz", ".prevert.gz", ".vert.gz"):
        assert joined(workdir, kind) == joined(first_two_build, kind)
    assert (workdir / "results/stats/funnel.tsv").read_text() == (
        first_two_build / "results/stats/funnel.tsv"
    ).read_text()
