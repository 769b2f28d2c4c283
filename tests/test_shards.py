"""Shards that group WARCs (input.warcs_per_shard): names, ids and documents that do not depend on
the grouping, a truncated WARC that costs its group nothing else, the key's bad values."""

from __future__ import annotations

import gzip
import json
import shutil
from collections import Counter

import pandas as pd
import pytest
from conftest import (
    SAMPLE_WARCS,
    copy_workdir,
    corpus_bytes,
    ok,
    snakemake,
    write_config,
    write_warc,
)
from test_extract import ARTICLE
from test_incremental import job_stats, mtimes, planned_jobs

from corpusbuilder.config import ConfigError, validate_config
from corpusbuilder.download.fetch import fetch_shard
from corpusbuilder.download.inputs import resolve_sources
from corpusbuilder.download.sources import group_sources, warc_file, warc_sidecar
from corpusbuilder.exact_dedup import earlier_shards_digests
from corpusbuilder.extraction.extract import ExtractParams, extract_shard

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
    assert earlier_shards_digests(
        ["\n".join(group.values()) for group in group_sources(sources, 1).values()]
    ) == earlier_shards_digests(list(sources.values()))


def test_warcs_added_at_the_end_change_only_the_last_shard():
    before = group_sources(resolve_sources(WARCS[:3]), 2)
    after = group_sources(resolve_sources(WARCS), 2)
    assert after["w0"] == before["w0"]  # full: untouched
    assert before["w2"] != after["w2"] and list(after) == ["w0", "w2", "w4"]

    # the digest of the shards before each: a full shard's followers see the same one
    def digests(groups):
        return earlier_shards_digests(["\n".join(g.values()) for g in groups.values()])

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
        name: write_warc(
            tmp_path / f"{name}.warc.gz",
            [{"uri": f"http://{name}.example/{i}", "body": page(i)} for i in range(count)],
        )
        for name, count in (("a", 2), ("b", 3), ("c", 1))
    }


def extract(
    tmp_path, groups: dict[str, list[tuple[str, object]]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
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
    assert (
        alone_docs["doc_id"].tolist()
        == grouped_docs["doc_id"].tolist()
        == ["a:0", "a:1", "b:0", "b:1", "b:2", "c:0"]
    )
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
    docs, _ = extract(
        tmp_path, {"cut": [("cut", cut), ("b", three_warcs["b"]), ("c", three_warcs["c"])]}
    )
    assert docs["doc_id"].tolist() == ["cut:0", "cut:1", "b:0", "b:1", "b:2", "c:0"]
    assert docs["reason"].str.startswith("truncated").tolist() == [
        False,
        True,
        False,
        False,
        False,
        False,
    ]
    assert (docs.loc[docs["warc"] != "cut", "outcome"] == "ok").all()


def test_a_shard_is_fetched_whole_or_not_at_all(tmp_path, three_warcs):
    """A group whose third WARC is missing fails, and keeps the two it had for the next run."""
    sources = {name: str(path) for name, path in three_warcs.items()}
    folder, staging = tmp_path / "data/warc/a", tmp_path / "data/warc/.partial"
    with pytest.raises(FileNotFoundError):
        fetch_shard({**sources, "d": str(tmp_path / "missing.warc.gz")}, folder, staging)
    assert not folder.exists() and sorted(p.name for p in staging.glob("*.warc.gz")) == [
        "a.warc.gz",
        "b.warc.gz",
        "c.warc.gz",
    ]
    metas = fetch_shard(sources, folder, staging)
    assert [meta["source"] for meta in metas] == list(sources.values())
    for name, path in three_warcs.items():
        assert warc_file(folder, name).read_bytes() == path.read_bytes()
        assert json.loads(warc_sidecar(folder, name).read_text())["size"] == path.stat().st_size
    assert not list(staging.iterdir())


# --- the workflow ---------------------------------------------------------------------------------

SAMPLES = list(map(str, SAMPLE_WARCS))


def corpus_documents(workdir) -> list[dict]:
    """Every exported document, in crawl order (shards in input order)."""
    shards = sorted((workdir / "results" / "corpus").glob("*.jsonl.gz"))
    return [json.loads(line) for path in shards for line in gzip.open(path, "rt")]


@pytest.fixture(scope="module")
def built_in_groups(tmp_path_factory, sample_build):
    """The three sample WARCs built one a shard (the session's sample build) and two a shard
    (shards sample-00 and sample-02)."""
    root = tmp_path_factory.mktemp("shards")
    workdirs = {1: sample_build, 2: root / "per-2"}
    config = write_config(root / "per-2.yaml", {"input": {"warcs": SAMPLES, "warcs_per_shard": 2}})
    ok(snakemake(workdirs[2], configfiles=[config]))
    return root, workdirs


@pytest.mark.workflow
def test_two_warcs_a_shard_build_the_same_documents(built_in_groups):
    _, workdirs = built_in_groups
    assert sorted(p.name for p in (workdirs[2] / "results" / "corpus").glob("*.jsonl.gz")) == [
        "sample-00.jsonl.gz",
        "sample-02.jsonl.gz",
    ]
    assert sorted(
        p.name for p in (workdirs[2] / "data" / "warc" / "sample-00").glob("sample-*")
    ) == ["sample-00.json", "sample-00.warc.gz", "sample-01.json", "sample-01.warc.gz"]
    alone, grouped = corpus_documents(workdirs[1]), corpus_documents(workdirs[2])
    assert len(alone) > 20 and {doc["source"] for doc in grouped} == {
        "sample-00",
        "sample-01",
        "sample-02",
    }
    assert grouped == alone  # same ids, text, sources and offsets
    assert (workdirs[1] / "results/stats/funnel.tsv").read_text() == (
        workdirs[2] / "results/stats/funnel.tsv"
    ).read_text()


@pytest.mark.workflow
def test_a_warc_added_at_the_end_changes_only_the_last_shard(built_in_groups):
    """Two a shard: a fourth WARC joins the last shard (sample-02). The full shard sample-00 is
    neither fetched, extracted, filtered, hashed, decided nor tokenised again; the global stages
    and every export run again (block dedup is one job), and sample-00's decisions and corpus stand.
    The last shard's folder is fetched again whole: Snakemake deletes a job's output before it
    reruns the job (here links, as the inputs are local)."""
    root, workdirs = built_in_groups
    copy = copy_workdir(workdirs[2], root / "added")
    late = root / "late-03.warc.gz"
    shutil.copyfile(
        SAMPLES[0], late
    )  # every page a copy of an earlier one: exact dedup drops them all
    four = write_config(
        root / "four.yaml", {"input": {"warcs": [*SAMPLES, str(late)], "warcs_per_shard": 2}}
    )
    old = (
        "work/extract/sample-00*",
        "work/language/sample-00*",
        "work/exact/sample-00*",
        "work/exact_dedup/sample-00*",
        "work/tokens/sample-00*",
        "work/ngrams/runs/sample-00*",
    )
    before = {pattern: mtimes(copy, pattern) for pattern in old} | {
        "data/warc/sample-00": mtimes(copy, "data/warc/sample-00/*")
    }
    decisions = pd.read_parquet(copy / "work/exact_dedup/sample-00.parquet")
    corpus = {
        name: data for name, data in corpus_bytes(copy).items() if name.startswith("sample-00.")
    }
    output = ok(snakemake(copy, configfiles=[four]))
    stats, jobs = job_stats(output), planned_jobs(output)
    assert stats == Counter(
        download=1,
        extract=1,
        language=1,
        exact_hashes=1,
        exact_manifest=1,
        exact_partition=1,
        exact_collect_partitions=1,
        exact_dedup=1,
        tokenise=1,
        ngram_runs=1,
        ngram_collect_runs=1,
        dup_ngram_part=1,
        dedup=1,
        quality=2,
        export=2,
        funnel=1,
        all=1,
    )
    # block dedup is one job over every shard: what reads its tables (quality, export, the
    # funnel's counts) reruns
    assert {shard for (rule, shard) in jobs if rule not in {"export", "quality"}} == {
        "sample-02",
        None,
    }
    after = {pattern: mtimes(copy, pattern) for pattern in old} | {
        "data/warc/sample-00": mtimes(copy, "data/warc/sample-00/*")
    }
    assert after == before and all(before.values())
    pd.testing.assert_frame_equal(
        pd.read_parquet(copy / "work/exact_dedup/sample-00.parquet"), decisions
    )
    # exported again (block dedup is one job), to the same bytes
    assert {
        name: data for name, data in corpus_bytes(copy).items() if name.startswith("sample-00.")
    } == corpus
    late_decisions = pd.read_parquet(copy / "work/exact_dedup/sample-02.parquet").set_index(
        "doc_id"
    )
    late_ids = late_decisions.index[late_decisions.index.str.startswith("late-03:")]
    assert len(late_ids) > 5 and not late_decisions.loc[late_ids, "kept"].any()
    assert set(late_decisions.loc[late_ids, "duplicate_of"].str.split(":").str[0]) == {"sample-00"}
    # and the new WARC is in the last shard's folder, beside the one it had
    assert sorted(p.name for p in (copy / "data/warc/sample-02").glob("*.warc.gz")) == [
        "late-03.warc.gz",
        "sample-02.warc.gz",
    ]
