"""The min-hash pairing in the real Snakefile, on the bundled sample: band jobs and pair
partitions write the pairs one job pairing every signature finds (`corpus_similar_pairs` in one
process; tests/test_similarity.py splits the same functions in other counts of either)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from conftest import SAMPLE_WARCS, copy_workdir, ok, snakemake, write_config
from test_incremental import job_stats

from corpusbuilder.contracts.corpus import read_corpus
from corpusbuilder.similarity.minhash import MinHashParams, corpus_similar_pairs

pytestmark = pytest.mark.workflow

PAIRS = Path("results") / "stats" / "similar_pairs.parquet"


def similarity_config(folder: Path, name: str, **section) -> Path:
    # the sample's copies are gone by then: pairs of single words (shingles of one) sharing a
    # twentieth of their vocabulary, 146 pairs by collision counting and 97 in 50 bands of 2 rows
    section = {"enabled": True, "threshold": 0.05, "shingle_words": 1, **section}
    return write_config(
        folder / f"{name}.yaml",
        {"input": {"warcs": [str(p) for p in SAMPLE_WARCS]}, "similarity": section},
    )


@pytest.mark.parametrize("bands", [None, 50])
def test_band_jobs_and_partitions_write_the_pairs_of_one_job(sample_build, tmp_path, bands):
    workdir = copy_workdir(sample_build, tmp_path / "build")
    split = similarity_config(tmp_path, "split", bands=bands, band_jobs=3, partitions=2)
    output = ok(snakemake(workdir, configfiles=[split]))
    # the corpus was built: only the stage runs, three band jobs and two partitions of it
    assert job_stats(output) == {
        "similarity_signatures": 3,
        "similarity_candidates": 3,
        "similarity_score": 2,
        "similarity": 1,
        "funnel": 1,  # its provenance record holds the config
        "all": 1,
    }
    pairs = pd.read_parquet(workdir / PAIRS)
    documents = [
        doc
        for warc in SAMPLE_WARCS
        for doc in read_corpus(
            workdir / "results" / "corpus" / f"{warc.name.split('.')[0]}.jsonl.gz"
        )
    ]
    params = MinHashParams(shingle_words=1, bands=bands)
    expected = corpus_similar_pairs(documents, 0.05, params)
    assert len(expected) > 90
    pd.testing.assert_frame_equal(pairs, expected, check_dtype=False)
    assert not list((workdir / "work" / "similarity").rglob("*.parquet"))  # temp(), all of them
