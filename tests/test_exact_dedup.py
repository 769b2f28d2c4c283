"""Exact de-duplication: MD5 groups, first copy in crawl order, streaming merge, the shared crawl."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from conftest import truth_key
from corpusbuilder.exact_dedup import ExactDedupParams, exact_dedup, exact_hashes
from corpusbuilder.io import write_table
from corpusbuilder.tables import DECISIONS_SCHEMA, HASHES_SCHEMA, survivors


def hashes_of(blocks: pd.DataFrame, language: pd.DataFrame, rank: int, params=ExactDedupParams()):
    """exact_hashes over what survives the language stage (every document a cleaned page)."""
    ids = blocks["doc_id"].drop_duplicates()
    docs = pd.DataFrame({"doc_id": ids, "record_index": [int(i.rsplit(":", 1)[1]) for i in ids],
                         "uri": "http://a/", "outcome": "ok", "page_language": None})
    return exact_hashes(survivors(docs, blocks, language.assign(language=None)), rank, params)


def shard_tables(shard: str, pages: dict[int, list[str]], dropped_by_language=(), dropped_blocks=None):
    """blocks + language tables for {record_index: [good block texts]} of one shard."""
    blocks, language = [], []
    for record_index, texts in pages.items():
        doc_id = f"{shard}:{record_index}"
        for block_index, text in enumerate(texts):
            blocks.append({"doc_id": doc_id, "block_index": block_index, "text": text,
                           "final_class": "good", "n_words": len(text.split())})
        blocks.append({"doc_id": doc_id, "block_index": len(texts), "text": "Home | About",
                       "final_class": "bad", "n_words": 3})
        language.append({"doc_id": doc_id, "kept": record_index not in dropped_by_language,
                         "dropped_blocks": (dropped_blocks or {}).get(record_index, [])})
    return pd.DataFrame(blocks), pd.DataFrame(language)


def run_dedup(tmp_path: Path, shards: dict[str, dict[int, list[str]]], params=ExactDedupParams(), batch_size=65536, **kw):
    hash_paths, decision_paths = [], []
    for rank, (shard, pages) in enumerate(shards.items()):
        blocks, language = shard_tables(shard, pages, **kw.get(shard, {}))
        path = tmp_path / f"{shard}.hashes.parquet"
        write_table(hashes_of(blocks, language, rank, params), path)
        hash_paths.append(path)
        decision_paths.append(tmp_path / f"{shard}.exact.parquet")
    counts = exact_dedup(hash_paths, decision_paths, list(shards), batch_size=batch_size)
    decisions = pd.concat(pq.read_table(p).to_pandas() for p in decision_paths)
    return decisions.set_index("doc_id"), counts


def test_first_copy_in_crawl_order_is_kept_across_shards(tmp_path):
    shards = {
        "b": {0: ["shared text"], 3: ["unique b"], 4: ["within b"], 7: ["within b"]},
        "a": {5: ["shared text"], 9: ["unique a"]},
        "c": {1: ["shared text"]},
    }
    decisions, counts = run_dedup(tmp_path, shards)
    # "b" is first in crawl order although "a:5" sorts first by name.
    assert decisions["duplicate_of"].dropna().to_dict() == {"a:5": "b:0", "c:1": "b:0", "b:7": "b:4"}
    assert decisions.loc[["b:0", "b:3", "b:4", "a:9"], "kept"].all()
    assert counts == {"documents": 7, "kept": 4, "duplicates": 3}
    assert decisions.loc["a:5", "md5"] == hashlib.md5(b"shared text").hexdigest()
    assert pq.read_schema(tmp_path / "a.exact.parquet").equals(DECISIONS_SCHEMA)
    assert set(pq.read_table(tmp_path / "a.exact.parquet")["doc_id"].to_pylist()) == {"a:5", "a:9"}


def test_a_shard_without_a_decisions_path_is_merged_through_but_not_written(tmp_path):
    """The per-shard rule: earlier shards decide the last one's copies, only its file is written."""
    shards = {"b": {0: ["shared text"], 3: ["unique b"]}, "a": {5: ["shared text"], 9: ["unique a"]}}
    full, _ = run_dedup(tmp_path, shards)
    hash_paths = [tmp_path / f"{shard}.hashes.parquet" for shard in shards]
    (tmp_path / "b.exact.parquet").unlink()
    counts = exact_dedup(hash_paths, [None, tmp_path / "last.parquet"], list(shards))
    last = pq.read_table(tmp_path / "last.parquet").to_pandas().set_index("doc_id")
    assert not (tmp_path / "b.exact.parquet").exists()
    assert last.equals(full.loc[["a:5", "a:9"]])
    assert counts == {"documents": 4, "kept": 3, "duplicates": 1}


def test_hashes_file_is_sorted_by_hash_and_holds_the_clean_text_words(tmp_path):
    blocks, language = shard_tables("s", {i: [f"text number {i}", "more"] for i in range(20)})
    table = hashes_of(blocks, language, 3)
    assert table.schema.equals(HASHES_SCHEMA)
    md5s = table["md5"].to_pylist()
    assert md5s == sorted(md5s) and len(md5s) == 20
    assert set(table["n_words"].to_pylist()) == {4} and set(table["shard_rank"].to_pylist()) == {3}
    row = table.to_pandas().set_index("doc_id").loc["s:7"]
    assert row["record_index"] == 7
    assert row["md5"] == hashlib.md5(b"text number 7 more").digest()  # blocks joined, whitespace normalised


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
    decisions, _ = run_dedup(tmp_path, {"s": pages}, params=params)
    group = {names[d] for d, row in decisions.iterrows() if row["duplicate_of"] == "s:0" or d == "s:0"}
    assert group - {"joined"} == same - {"joined"}


def test_documents_dropped_by_language_are_not_hashed_and_dropped_blocks_do_not_count(tmp_path):
    shards = {"s": {0: ["keep me", "Guten Tag"], 1: ["keep me"], 2: ["keep me"]}}
    options = {"s": {"dropped_by_language": {2}, "dropped_blocks": {0: [1]}}}
    decisions, _ = run_dedup(tmp_path, shards, **options)
    assert set(decisions.index) == {"s:0", "s:1"}
    assert decisions.loc["s:1", "duplicate_of"] == "s:0"  # "Guten Tag" was dropped from s:0


def test_merge_streams_row_by_row(tmp_path):
    shards = {
        f"s{k}": {i: [f"text {(i * 7 + k) % 13}"] for i in range(30)} for k in range(4)
    }
    (tmp_path / "row-by-row").mkdir()
    streamed, _ = run_dedup(tmp_path / "row-by-row", shards, batch_size=1)
    whole, _ = run_dedup(tmp_path, shards)
    pd.testing.assert_frame_equal(streamed.sort_index(), whole.sort_index())
    assert whole["kept"].sum() == 13


def test_hashes_out_of_crawl_order_are_refused(tmp_path):
    blocks, language = shard_tables("s", {0: ["text"]})
    write_table(hashes_of(blocks, language, 1), tmp_path / "s.parquet")
    with pytest.raises(ValueError, match="crawl order"):
        exact_dedup([tmp_path / "s.parquet"], [tmp_path / "s.exact.parquet"])
    assert not (tmp_path / "s.exact.parquet").exists()  # nothing half-written


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
            if record.rec_type != "response" or not headers or "html" not in (headers.get_header("Content-Type") or ""):
                continue
            try:
                text = " ".join(lxml.html.document_fromstring(record.content_stream().read()).body.text_content().split())
            except Exception:  # noqa: BLE001 - empty or undecodable bodies have no text
                text = ""
            if text:
                texts[(record.rec_headers.get_header("WARC-Target-URI"), index)] = text
    return texts


@pytest.mark.shared
@pytest.mark.slow
def test_every_mirror_in_the_shared_crawl_is_grouped_with_its_original(tmp_path, shared_crawl):
    truth = [json.loads(line) for line in (shared_crawl / "truth.jsonl").read_text().splitlines()]
    hash_paths, decision_paths, doc_of = [], [], {}
    for rank, warc in enumerate(sorted(shared_crawl.glob("crawl-*.warc.gz"))):
        shard = warc.name.removesuffix(".warc.gz")
        pages = body_texts(warc)
        doc_of.update({(shard, uri): f"{shard}:{index}" for uri, index in pages})
        blocks = pd.DataFrame(
            {"doc_id": [f"{shard}:{i}" for _, i in pages], "block_index": 0, "text": list(pages.values()),
             "final_class": "good", "n_words": [len(t.split()) for t in pages.values()]}
        )
        language = pd.DataFrame({"doc_id": blocks["doc_id"], "kept": True, "dropped_blocks": [[]] * len(blocks)})
        hash_paths.append(tmp_path / f"{shard}.hashes.parquet")
        write_table(hashes_of(blocks, language, rank), hash_paths[-1])
        decision_paths.append(tmp_path / f"{shard}.exact.parquet")
    exact_dedup(hash_paths, decision_paths)
    decisions = pd.concat(pq.read_table(p).to_pandas() for p in decision_paths).set_index("doc_id")
    group = decisions["duplicate_of"].fillna(pd.Series(decisions.index, index=decisions.index))

    def doc(record):
        return doc_of.get(truth_key(record))

    original = {r["id"]: doc(r) for r in truth if r["kind"] == "original"}
    mirrors = [r for r in truth if r["kind"] == "mirror"]
    # Pairs without text here are records without HTTP headers, which extract skips too.
    pairs = [(doc(m), original[m["of"][0]]) for m in mirrors if doc(m) and original[m["of"][0]]]
    assert len(pairs) >= len(mirrors) - 5
    missed = [(m, o) for m, o in pairs if group[m] != group[o]]
    assert not missed, f"{len(missed)} of {len(pairs)} mirrors not grouped with their original: {missed[:5]}"
    # And nothing else is merged: a group's records have the same body bytes (the truth's sha1;
    # the crawl holds a few originals twice, byte for byte).
    sha1 = {doc(r): r["sha1"] for r in truth if doc(r)}
    bodies_per_group = pd.Series([sha1[d] for d in group.index], index=group.index).groupby(group).nunique()
    assert (bodies_per_group == 1).all(), bodies_per_group[bodies_per_group > 1].index.tolist()[:5]
    assert (decisions["kept"] == decisions["duplicate_of"].isna()).all()
