"""Shards that group WARCs (input.warcs_per_shard): names, ids and documents that do not depend on
the grouping, a truncated WARC that costs its group nothing else, the key's bad values."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import write_warc
from corpusbuilder.config import ConfigError, validate_config
from corpusbuilder.download import fetch_shard, group_sources, resolve_sources, warc_file, warc_sidecar
from corpusbuilder.exact_dedup import earlier_shards_digests
from corpusbuilder.extract import ExtractParams, extract_shard
from test_extract import ARTICLE

WARCS = [f"/crawl/w{i}.warc.gz" for i in range(5)]


def test_consecutive_warcs_make_a_shard_named_after_its_first():
    sources = resolve_sources(WARCS)
    assert group_sources(sources, 2) == {
        "w0": {"w0": "/crawl/w0.warc.gz", "w1": "/crawl/w1.warc.gz"},
        "w2": {"w2": "/crawl/w2.warc.gz", "w3": "/crawl/w3.warc.gz"},
        "w4": {"w4": "/crawl/w4.warc.gz"},
    }


def test_one_warc_a_shard_keeps_the_names_of_today():
    sources = resolve_sources(WARCS)
    assert group_sources(sources, 1) == {name: {name: source} for name, source in sources.items()}
    # and the digests of the shards before each (exact_hashes' param) are those of the WARCs
    assert earlier_shards_digests(["\n".join(group.values()) for group in group_sources(sources, 1).values()]) == \
        earlier_shards_digests(list(sources.values()))


def test_warcs_added_at_the_end_change_only_the_last_shard():
    before = group_sources(resolve_sources(WARCS[:3]), 2)
    after = group_sources(resolve_sources(WARCS), 2)
    assert after["w0"] == before["w0"]  # full: untouched
    assert before["w2"] != after["w2"] and list(after) == ["w0", "w2", "w4"]
    # the digest of the shards before each: a full shard's followers see the same one
    digests = lambda groups: earlier_shards_digests(["\n".join(g.values()) for g in groups.values()])
    assert digests(after)[:2] == digests(before)[:2]


@pytest.mark.parametrize("value", [0, -3, "many", 1.5, True])
def test_a_bad_group_size_names_the_key(value):
    with pytest.raises(ConfigError, match=r"input\.warcs_per_shard"):
        validate_config({"input": {"warcs_per_shard": value}})
    with pytest.raises(ValueError, match=r"input\.warcs_per_shard"):
        group_sources(resolve_sources(WARCS), value)


def test_the_default_is_one_warc_a_shard():
    assert validate_config({})["input"]["warcs_per_shard"] == 1


def page(i: int) -> bytes:
    return ARTICLE.replace("A walk along the river", f"Walk number {i} along the river").encode()


@pytest.fixture
def three_warcs(tmp_path):
    return {
        name: write_warc(tmp_path / f"{name}.warc.gz",
                         [{"uri": f"http://{name}.example/{i}", "body": page(i)} for i in range(count)])
        for name, count in (("a", 2), ("b", 3), ("c", 1))
    }


def extract(tmp_path, groups: dict[str, list[tuple[str, object]]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every shard's docs and blocks tables, one after the other."""
    docs, blocks = [], []
    for shard, warcs in groups.items():
        paths = tmp_path / f"{shard}.docs.parquet", tmp_path / f"{shard}.blocks.parquet"
        extract_shard(warcs, shard, *paths, ExtractParams().with_preset("default"))
        docs.append(pd.read_parquet(paths[0]))
        blocks.append(pd.read_parquet(paths[1]))
    return pd.concat(docs, ignore_index=True), pd.concat(blocks, ignore_index=True)


def test_ids_and_text_do_not_depend_on_the_grouping(tmp_path, three_warcs):
    warcs = list(three_warcs.items())
    alone_docs, alone_blocks = extract(tmp_path, {name: [(name, path)] for name, path in warcs})
    grouped_docs, grouped_blocks = extract(tmp_path, {"a2": warcs[:2], "c2": warcs[2:]})
    assert alone_docs["doc_id"].tolist() == grouped_docs["doc_id"].tolist() == [
        "a:0", "a:1", "b:0", "b:1", "b:2", "c:0"]
    assert grouped_docs["shard"].tolist() == ["a2"] * 5 + ["c2"]
    assert grouped_docs["warc"].tolist() == ["a", "a", "b", "b", "b", "c"]
    # crawl order within the shard runs on across its WARCs; offsets are in each WARC
    assert grouped_docs["record_index"].tolist() == [0, 1, 2, 3, 4, 0]
    assert grouped_docs["offset"].tolist() == alone_docs["offset"].tolist()
    pd.testing.assert_frame_equal(alone_blocks, grouped_blocks)
    same = ["doc_id", "warc", "offset", "uri", "outcome", "reason", "n_good_words"]
    pd.testing.assert_frame_equal(alone_docs[same], grouped_docs[same])


def test_a_truncated_warc_costs_its_group_nothing_else(tmp_path, three_warcs):
    data = three_warcs["a"].read_bytes()
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(data[: len(data) - 200])
    docs, _ = extract(tmp_path, {"cut": [("cut", cut), ("b", three_warcs["b"]), ("c", three_warcs["c"])]})
    assert docs["doc_id"].tolist() == ["cut:0", "cut:1", "b:0", "b:1", "b:2", "c:0"]
    assert docs["reason"].str.startswith("truncated").tolist() == [False, True, False, False, False, False]
    assert (docs.loc[docs["warc"] != "cut", "outcome"] == "ok").all()


def test_a_shard_is_fetched_whole_or_not_at_all(tmp_path, three_warcs):
    """A group whose third WARC is missing fails, and keeps the two it had for the next run."""
    sources = {name: str(path) for name, path in three_warcs.items()}
    folder, staging = tmp_path / "data/warc/a", tmp_path / "data/warc/.partial"
    with pytest.raises(FileNotFoundError):
        fetch_shard({**sources, "d": str(tmp_path / "missing.warc.gz")}, folder, staging)
    assert not folder.exists() and sorted(p.name for p in staging.glob("*.warc.gz")) == [
        "a.warc.gz", "b.warc.gz", "c.warc.gz"]
    metas = fetch_shard(sources, folder, staging)
    assert [meta["source"] for meta in metas] == list(sources.values())
    for name, path in three_warcs.items():
        assert warc_file(folder, name).read_bytes() == path.read_bytes()
        assert json.loads(warc_sidecar(folder, name).read_text())["size"] == path.stat().st_size
    assert not list(staging.iterdir())
