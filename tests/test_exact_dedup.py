"""Exact de-duplication: MD5 groups, first copy in crawl order, decided by hash partition, the
sample WARCs and the shared crawl against the rule spelled plainly."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import REPO, truth_key

from corpusbuilder.common.io import part_count, write_table
from corpusbuilder.config import ConfigError
from corpusbuilder.contracts.survivors import survivors
from corpusbuilder.contracts.tables import (
    DECISIONS_SCHEMA,
    HASHES_SCHEMA,
    read_hash_partition,
    read_hashed_documents,
    read_manifest,
    write_hash_partitions,
    write_manifest,
)
from corpusbuilder.exact_dedup import (
    ExactDedupParams,
    decide_partition,
    earlier_shards_digests,
    exact_hashes,
    hash_partitions,
    md5_bytes,
    md5_hex,
    md5_partitions,
    shard_decisions,
)

SAMPLE = REPO / "resources" / "sample"


def hashes_of(blocks: pd.DataFrame, language: pd.DataFrame, rank: int, params=ExactDedupParams()):
    """exact_hashes over what survives the language stage (every document a cleaned page)."""
    ids = blocks["doc_id"].drop_duplicates()
    docs = pd.DataFrame(
        {
            "doc_id": ids,
            "record_index": [int(i.rsplit(":", 1)[1]) for i in ids],
            "uri": "http://a/",
            "outcome": "ok",
            "page_language": None,
        }
    )
    return exact_hashes(survivors(docs, blocks, language.assign(language=None)), rank, params)


def shard_tables(
    shard: str, pages: dict[int, list[str]], dropped_by_language=(), dropped_blocks=None
):
    """blocks + language tables for {record_index: [good block texts]} of one shard."""
    blocks, language = [], []
    for record_index, texts in pages.items():
        doc_id = f"{shard}:{record_index}"
        for block_index, text in enumerate(texts):
            blocks.append(
                {
                    "doc_id": doc_id,
                    "block_index": block_index,
                    "text": text,
                    "final_class": "good",
                    "n_words": len(text.split()),
                }
            )
        blocks.append(
            {
                "doc_id": doc_id,
                "block_index": len(texts),
                "text": "Home | About",
                "final_class": "bad",
                "n_words": 3,
            }
        )
        language.append(
            {
                "doc_id": doc_id,
                "kept": record_index not in dropped_by_language,
                "dropped_blocks": (dropped_blocks or {}).get(record_index, []),
            }
        )
    return pd.DataFrame(blocks), pd.DataFrame(language)


def write_hashes(tmp_path: Path, tables: dict[str, pa.Table], partitions: int) -> list[Path]:
    """The exact_hashes files of {shard: hashes table}, as the rule writes them."""
    paths = []
    for shard, table in tables.items():
        paths.append(tmp_path / f"{shard}.hashes.arrow")
        write_hash_partitions(hash_partitions(table, partitions), paths[-1])
    return paths


def decide(
    tmp_path: Path, tables: dict[str, pa.Table], partitions: int = 16
) -> dict[str, pd.DataFrame]:
    """The three rules on {shard: hashes table} in crawl order: hashes files, one decisions file per
    partition, one per shard (read back as written)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    hash_paths = write_hashes(tmp_path, tables, partitions)
    write_manifest(hash_paths, tmp_path / "hashes.txt")
    partition_paths = [tmp_path / f"partition-{p}.parquet" for p in range(partitions)]
    for partition, path in enumerate(partition_paths):
        decisions = decide_partition(read_manifest(tmp_path / "hashes.txt"), partition, partitions)
        write_table(decisions, path, row_group_size=3)
    decisions = {}
    for rank, (shard, hashes_path) in enumerate(zip(tables, hash_paths)):
        write_table(
            shard_decisions(partition_paths, hashes_path, rank), tmp_path / f"{shard}.exact.parquet"
        )
        decisions[shard] = pq.read_table(tmp_path / f"{shard}.exact.parquet").to_pandas()
    return decisions


def reference_decisions(tables: dict[str, pa.Table]) -> dict[str, pd.DataFrame]:
    """The rule spelled plainly, row by row: documents in crawl order (shard, record index), the
    first of each hash kept; each shard's rows in (md5, record index) order, as before the
    partitions."""
    first: dict[bytes, str] = {}
    decisions = {}
    for shard, table in tables.items():
        rows = []
        for row in sorted(table.to_pylist(), key=lambda row: row["record_index"]):
            original = first.setdefault(row["md5"], row["doc_id"])
            rows.append(
                {
                    "doc_id": row["doc_id"],
                    "md5": row["md5"].hex(),
                    "kept": original == row["doc_id"],
                    "duplicate_of": None if original == row["doc_id"] else original,
                    "n_words": row["n_words"],
                    "record_index": row["record_index"],
                }
            )
        frame = pd.DataFrame(rows, columns=[*DECISIONS_SCHEMA.names, "record_index"])
        frame = frame.sort_values(["md5", "record_index"], kind="stable").drop(
            columns="record_index"
        )
        decisions[shard] = pa.Table.from_pandas(
            frame, schema=DECISIONS_SCHEMA, preserve_index=False
        ).to_pandas()
    return decisions


def assert_same_decisions(got: dict[str, pd.DataFrame], expected: dict[str, pd.DataFrame]):
    assert list(got) == list(expected)
    for shard in expected:
        pd.testing.assert_frame_equal(
            got[shard].reset_index(drop=True), expected[shard].reset_index(drop=True)
        )


def run_dedup(
    tmp_path: Path,
    shards: dict[str, dict[int, list[str]]],
    params=ExactDedupParams(),
    partitions=16,
    **kw,
):
    tables = {}
    for rank, (shard, pages) in enumerate(shards.items()):
        blocks, language = shard_tables(shard, pages, **kw.get(shard, {}))
        tables[shard] = hashes_of(blocks, language, rank, params)
    return pd.concat(decide(tmp_path, tables, partitions).values()).set_index("doc_id")


def test_first_copy_in_crawl_order_is_kept_across_shards(tmp_path):
    shards = {
        "b": {0: ["shared text"], 3: ["unique b"], 4: ["within b"], 7: ["within b"]},
        "a": {5: ["shared text"], 9: ["unique a"]},
        "c": {1: ["shared text"]},
    }
    decisions = run_dedup(tmp_path, shards)
    # "b" is first in crawl order although "a:5" sorts first by name.
    assert decisions["duplicate_of"].dropna().to_dict() == {
        "a:5": "b:0",
        "c:1": "b:0",
        "b:7": "b:4",
    }
    assert decisions.loc[["b:0", "b:3", "b:4", "a:9"], "kept"].all()
    assert (decisions["kept"].sum(), len(decisions)) == (4, 7)
    assert decisions.loc["a:5", "md5"] == hashlib.md5(b"shared text").hexdigest()
    assert pq.read_schema(tmp_path / "a.exact.parquet").equals(DECISIONS_SCHEMA)
    assert set(pq.read_table(tmp_path / "a.exact.parquet")["doc_id"].to_pylist()) == {"a:5", "a:9"}


def test_adding_a_shard_at_the_end_leaves_the_old_shards_decisions(tmp_path):
    shards = {
        "b": {0: ["shared text"], 3: ["unique b"]},
        "a": {5: ["shared text"], 9: ["unique a"]},
    }
    before = run_dedup(tmp_path / "two", shards)
    after = run_dedup(tmp_path / "three", {**shards, "c": {0: ["unique a"], 1: ["new"]}})
    pd.testing.assert_frame_equal(after.loc[before.index], before)
    assert after.loc["c:0", "duplicate_of"] == "a:9" and after.loc["c:1", "kept"]


def test_hashes_file_is_sorted_by_hash_and_holds_the_clean_text_words(tmp_path):
    blocks, language = shard_tables("s", {i: [f"text number {i}", "more"] for i in range(20)})
    table = hashes_of(blocks, language, 3)
    assert table.schema.equals(HASHES_SCHEMA)
    md5s = table["md5"].to_pylist()
    assert md5s == sorted(md5s) and len(md5s) == 20
    assert set(table["n_words"].to_pylist()) == {4} and set(table["shard_rank"].to_pylist()) == {3}
    row = table.to_pandas().set_index("doc_id").loc["s:7"]
    assert row["record_index"] == 7
    assert (
        row["md5"] == hashlib.md5(b"text number 7 more").digest()
    )  # blocks joined, whitespace normalised


def test_hash_partitions_are_equal_ranges_of_the_hash_in_hash_order(tmp_path):
    md5 = np.array(
        [
            [0] * 16,
            [0x3F] + [0xFF] * 15,
            [0x40] + [0] * 15,
            [0xBF] + [0] * 15,
            [0xC0] + [0] * 15,
            [0xFF] * 16,
        ],
        dtype=np.uint8,
    )
    assert md5_partitions(md5, 4).tolist() == [0, 0, 1, 2, 3, 3]
    assert md5_partitions(md5, 1).tolist() == [0] * 6
    blocks, language = shard_tables("s", {i: [f"text {i}"] for i in range(200)})
    table = hashes_of(blocks, language, 0)
    parts = hash_partitions(table, 7)
    assert len(parts) == 7 and pa.concat_tables(parts).equals(table)
    for partition, part in enumerate(parts):
        assert set(md5_partitions(md5_bytes(part["md5"]), 7).tolist()) == {partition}
    write_hash_partitions(parts, tmp_path / "h.arrow")
    assert part_count(tmp_path / "h.arrow") == 7
    for partition, part in enumerate(parts):
        assert read_hash_partition(tmp_path / "h.arrow", partition, 7).equals(part)
    assert read_hashed_documents(tmp_path / "h.arrow") == table["doc_id"].to_pylist()
    with pytest.raises(ConfigError, match="7 hash partitions, but exact_dedup.partitions is 8"):
        read_hash_partition(tmp_path / "h.arrow", 0, 8)


def test_md5_hex_is_bytes_hex_across_chunks(monkeypatch):
    md5 = np.array([list(hashlib.md5(str(i).encode()).digest()) for i in range(50)], dtype=np.uint8)
    assert md5_hex(md5).to_pylist() == [bytes(row).hex() for row in md5]
    assert md5_hex(md5[:0]).to_pylist() == []
    monkeypatch.setattr("corpusbuilder.exact_dedup._HEX_CHUNK_ROWS", 7)
    chunked = md5_hex(md5)
    assert chunked.num_chunks == 8 and chunked.to_pylist() == [bytes(row).hex() for row in md5]


@pytest.mark.parametrize(
    "params, same",
    [
        (ExactDedupParams(), {"spaced", "joined"}),
        (ExactDedupParams(normalise_whitespace=False), set()),
        (ExactDedupParams(lowercase=True), {"spaced", "joined", "upper"}),
    ],
)
def test_whitespace_and_case_normalisation(tmp_path, params, same):
    pages = {0: ["One two", "three"], 1: ["One  two three"], 2: ["ONE two three"]}
    names = {"s:0": "joined", "s:1": "spaced", "s:2": "upper"}
    decisions = run_dedup(tmp_path, {"s": pages}, params=params)
    group = {
        names[d] for d, row in decisions.iterrows() if row["duplicate_of"] == "s:0" or d == "s:0"
    }
    assert group - {"joined"} == same - {"joined"}


def test_documents_dropped_by_language_are_not_hashed_and_dropped_blocks_do_not_count(tmp_path):
    shards = {"s": {0: ["keep me", "Guten Tag"], 1: ["keep me"], 2: ["keep me"]}}
    options = {"s": {"dropped_by_language": {2}, "dropped_blocks": {0: [1]}}}
    decisions = run_dedup(tmp_path, shards, **options)
    assert set(decisions.index) == {"s:0", "s:1"}
    assert decisions.loc["s:1", "duplicate_of"] == "s:0"  # "Guten Tag" was dropped from s:0


@pytest.mark.parametrize("partitions", [1, 3, 64])
def test_any_number_of_partitions_makes_the_rules_decisions(tmp_path, partitions):
    tables = {}
    for k in range(4):
        blocks, language = shard_tables(
            f"s{k}", {i: [f"text {(i * 7 + k) % 13}"] for i in range(30)}
        )
        tables[f"s{k}"] = hashes_of(blocks, language, k)
    decisions = decide(tmp_path, tables, partitions)
    assert_same_decisions(decisions, reference_decisions(tables))
    assert sum(d["kept"].sum() for d in decisions.values()) == 13


def test_hashes_out_of_crawl_order_are_refused(tmp_path):
    blocks, language = shard_tables("s", {0: ["text"]})
    [path] = write_hashes(tmp_path, {"s": hashes_of(blocks, language, 1)}, 1)
    with pytest.raises(ValueError, match="crawl order"):
        decide_partition([path], 0, 1)


def test_hashes_of_another_partition_count_are_refused(tmp_path):
    blocks, language = shard_tables("s", {0: ["text"]})
    [path] = write_hashes(tmp_path, {"s": hashes_of(blocks, language, 0)}, 4)
    with pytest.raises(ValueError, match="exact_dedup.partitions is 8"):
        decide_partition([path], 0, 8)


def test_earlier_shards_digests_change_for_the_shards_after_a_change_only():
    digests = earlier_shards_digests(["a", "b", "c"])
    assert len(set(digests)) == 3
    assert earlier_shards_digests(["a", "b", "c", "d"])[:3] == digests  # a shard added at the end
    replaced = earlier_shards_digests(["a", "x", "c"])
    assert replaced[:2] == digests[:2] and replaced[2] != digests[2]
    swapped = earlier_shards_digests(["b", "a", "c"])
    assert swapped[2] != digests[2]


# --------------------------------------------------------------------------- the shared crawl


def body_texts(warc: Path) -> dict[tuple[str, int], str]:
    """(uri, record index) -> lxml text of <body> for each HTML response (a quick extraction)."""
    import lxml.html
    from warcio.archiveiterator import ArchiveIterator

    texts = {}
    with open(warc, "rb") as stream:
        records = ArchiveIterator(stream)
        index = -1
        while True:
            try:
                record = next(records)
            except StopIteration:
                break
            except Exception:  # noqa: BLE001 - crawl-03 ends in a truncated member
                break
            index += 1
            headers = record.http_headers
            if (
                record.rec_type != "response"
                or not headers
                or "html" not in (headers.get_header("Content-Type") or "")
            ):
                continue
            try:
                text = " ".join(
                    lxml.html.document_fromstring(record.content_stream().read())
                    .body.text_content()
                    .split()
                )
            except Exception:  # noqa: BLE001 - empty or undecodable bodies have no text
                text = ""
            if text:
                texts[(record.rec_headers.get_header("WARC-Target-URI"), index)] = text
    return texts


def crawl_hashes(warcs: list[Path]) -> tuple[dict[str, pa.Table], dict[tuple[str, str], str]]:
    """The hashes of each WARC's pages ({shard: table}, in the order given) over a quick
    extraction (`body_texts`), and the doc id of each (shard, uri)."""
    tables, doc_of = {}, {}
    for rank, warc in enumerate(warcs):
        shard = warc.name.removesuffix(".warc.gz")
        pages = body_texts(warc)
        doc_of.update({(shard, uri): f"{shard}:{index}" for uri, index in pages})
        blocks = pd.DataFrame(
            {
                "doc_id": [f"{shard}:{i}" for _, i in pages],
                "block_index": 0,
                "text": list(pages.values()),
                "final_class": "good",
                "n_words": [len(t.split()) for t in pages.values()],
            }
        )
        language = pd.DataFrame(
            {"doc_id": blocks["doc_id"], "kept": True, "dropped_blocks": [[]] * len(blocks)}
        )
        tables[shard] = hashes_of(blocks, language, rank)
    return tables, doc_of


def test_the_sample_warcs_are_decided_as_the_rule_says_in_any_crawl_order(tmp_path):
    warcs = sorted(SAMPLE.glob("sample-*.warc.gz"))
    for name, order in {"forward": warcs, "backward": warcs[::-1]}.items():
        tables, _ = crawl_hashes(order)
        decisions = decide(tmp_path / name, tables, partitions=5)
        assert_same_decisions(decisions, reference_decisions(tables))
        assert sum(len(d) for d in decisions.values()) > 30
        assert sum((~d["kept"]).sum() for d in decisions.values()) >= 1, (
            "the samples hold no copy to decide"
        )


@pytest.mark.shared
@pytest.mark.slow
def test_every_mirror_in_the_shared_crawl_is_grouped_with_its_original(tmp_path, shared_crawl):
    truth = [json.loads(line) for line in (shared_crawl / "truth.jsonl").read_text().splitlines()]
    tables, doc_of = crawl_hashes(sorted(shared_crawl.glob("crawl-*.warc.gz")))
    by_shard = decide(tmp_path, tables)
    assert_same_decisions(by_shard, reference_decisions(tables))
    decisions = pd.concat(by_shard.values()).set_index("doc_id")
    group = decisions["duplicate_of"].fillna(pd.Series(decisions.index, index=decisions.index))

    def doc(record):
        return doc_of.get(truth_key(record))

    original = {r["id"]: doc(r) for r in truth if r["kind"] == "original"}
    mirrors = [r for r in truth if r["kind"] == "mirror"]
    # Pairs without text here are records without HTTP headers, which extract skips too.
    pairs = [(doc(m), original[m["of"][0]]) for m in mirrors if doc(m) and original[m["of"][0]]]
    assert len(pairs) >= len(mirrors) - 5
    missed = [(m, o) for m, o in pairs if group[m] != group[o]]
    assert not missed, (
        f"{len(missed)} of {len(pairs)} mirrors not grouped with their original: {missed[:5]}"
    )
    # And nothing else is merged: a group's records have the same body bytes (the truth's sha1;
    # the crawl holds a few originals twice, byte for byte).
    sha1 = {doc(r): r["sha1"] for r in truth if doc(r)}
    bodies_per_group = (
        pd.Series([sha1[d] for d in group.index], index=group.index).groupby(group).nunique()
    )
    assert (bodies_per_group == 1).all(), bodies_per_group[bodies_per_group > 1].index.tolist()[:5]
    assert (decisions["kept"] == decisions["duplicate_of"].isna()).all()
