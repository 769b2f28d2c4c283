"""A crawl whose every shard some stage empties (tests/degenerate_crawl.py) builds in every mode:
each run ends with rc 0, an emptied shard's outputs are valid and empty (corpus files with no
document, stage tables of their schema with no row), and the funnel ends at the corpus."""

from __future__ import annotations

import gzip
import json
import shutil

import pandas as pd
import pyarrow.parquet as pq
import pytest
from conftest import copy_workdir, ok, snakemake
from degenerate_crawl import (
    DEGENERATE_CONFIG,
    DEGENERATE_SHARDS,
    EMPTIED_BY_DEFAULT,
    write_degenerate_crawl,
)

from corpusbuilder.contracts.files import FILES
from corpusbuilder.contracts.tables import (
    DEDUP_SCHEMA,
    DOCS_SCHEMA,
    LANGUAGE_SCHEMA,
    QUALITY_SCHEMA,
)

pytestmark = [pytest.mark.workflow, pytest.mark.slow]

SHARDS = list(DEGENERATE_SHARDS)
ALL_FILTERS = {"quality": {"filter": ["gopher", "c4", "fineweb"]}}


def config_of(warcs, *overrides: dict, similarity: bool = False) -> dict:
    """The crawl's config with ``overrides`` merged in, section by section; ``similarity``: the
    similar pairs too (the defaults' build proves them over the emptied shards; the copies in
    other modes leave them out, which they would run again for nothing that they check)."""
    config = {"input": {"warcs": list(map(str, warcs))}, "similarity": {"enabled": similarity}}
    for override in (DEGENERATE_CONFIG, *overrides):
        for section, values in override.items():
            config[section] = {**config.get(section, {}), **values}
    return config


@pytest.fixture(scope="module")
def degenerate_build(tmp_path_factory):
    """The crawl built to the corpus, the report and the similar pairs, with the defaults."""
    workdir = tmp_path_factory.mktemp("degenerate")
    warcs = write_degenerate_crawl(workdir / "crawl")
    ok(snakemake(workdir, "all", "results/report.html", config=config_of(warcs, similarity=True)))
    return workdir, warcs


def corpus_lines(workdir, shard: str) -> list[dict]:
    path = workdir / FILES.corpus_jsonl.format(shard=shard)
    return [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]


def check_build(workdir, emptied: set[str]) -> None:
    """Every shard's corpus files and stage tables are there and valid; those of ``emptied``
    hold no document; the funnel's last row counts the corpus's documents."""
    total = 0
    for shard in SHARDS:
        documents = corpus_lines(workdir, shard)
        total += len(documents)
        assert (len(documents) == 0) == (shard in emptied), (shard, len(documents))
        for pattern in (FILES.corpus_vert, FILES.corpus_prevert):
            text = gzip.decompress((workdir / pattern.format(shard=shard)).read_bytes())
            assert text.count(b"<doc ") == len(documents), (pattern, shard)
        for pattern, schema in (
            (FILES.docs, DOCS_SCHEMA),
            (FILES.language, LANGUAGE_SCHEMA),
            (FILES.quality, QUALITY_SCHEMA),
            (FILES.dedup, DEDUP_SCHEMA),
        ):
            found = pq.read_schema(workdir / pattern.format(shard=shard))
            assert found.remove_metadata().equals(schema.remove_metadata()), (pattern, shard)
    funnel = pd.read_csv(workdir / "results/stats/funnel.tsv", sep="\t").set_index("stage")
    assert funnel["documents"].iloc[-1] == total
    # every WARC record is a row of the first stage: warcinfo too, none of the empty file's
    assert funnel.at["records", "documents"] == 21


def test_the_crawl_builds_with_the_defaults_the_report_and_similar_pairs(degenerate_build):
    workdir, _ = degenerate_build
    check_build(workdir, EMPTIED_BY_DEFAULT)
    summary = json.loads((workdir / "results/stats/summary.json").read_text())
    assert "<html" in (workdir / "results/report.html").read_text()[:200].lower()
    # the report counts the emptied shards' records, and ends at the corpus too
    assert summary["records"] == 21
    assert summary["documents_final"] == sum(len(corpus_lines(workdir, s)) for s in SHARDS)
    pairs = pd.read_parquet(workdir / "results/stats/similar_pairs.parquet")
    assert list(pairs.columns) == ["id_a", "id_b", "resemblance", "cluster"]


@pytest.mark.parametrize(
    "mode, emptied",
    [
        # three hash ranges, and every rule set filtering: the braced articles go too
        (
            {"dedup": {"mode": "partitioned", "partitions": 3}, **ALL_FILTERS},
            EMPTIED_BY_DEFAULT | {"h-junky", "j-one-token"},
        ),
        ({"dedup": {"level": "span", "write_state": False}}, EMPTIED_BY_DEFAULT),
    ],
    ids=["partitioned-filtered", "span-no-state"],
)
def test_every_mode_builds_the_emptied_shards(degenerate_build, tmp_path, mode, emptied):
    workdir, warcs = degenerate_build
    copy = copy_workdir(workdir, tmp_path / "build")
    ok(snakemake(copy, config=config_of(warcs, mode)))
    check_build(copy, emptied)


def test_against_its_own_state_the_crawl_empties_every_shard(degenerate_build, tmp_path):
    """De-duplicated against the state of its own first build, every block of the crawl has been
    output already: every shard is empty but the one-word page's (no n-gram is that short),
    and the build still ends well."""
    workdir, warcs = degenerate_build
    earlier = shutil.copytree(workdir / FILES.dedup_state_folder, tmp_path / "earlier_state")
    copy = copy_workdir(workdir, tmp_path / "build")
    ok(snakemake(copy, config=config_of(warcs, {"dedup": {"against": str(earlier)}})))
    check_build(copy, set(SHARDS) - {"j-one-token"})
