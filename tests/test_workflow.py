"""The real Snakefile, run by Snakemake on the shared 4-shard crawl and on bad configs."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import CRAWL, REPO, copy_workdir, snakemake, truth_key
from test_incremental import job_stats

from corpusbuilder.cli.main import main

pytestmark = pytest.mark.workflow


@pytest.fixture(scope="module")
def crawl_run(dev_crawl_build):
    """The session's dev-crawl build, its truth and its documents (request records left out)."""
    truth = [json.loads(line) for line in (CRAWL / "truth.jsonl").read_text().splitlines()]
    docs = pd.concat(
        pd.read_parquet(p)
        for p in sorted((dev_crawl_build / "work" / "extract").glob("*.docs.parquet"))
    )
    return dev_crawl_build, truth, docs[docs["warc_type"] != "request"]


def read_shards(workdir: Path, pattern: str) -> pd.DataFrame:
    return pd.concat(pd.read_parquet(p) for p in sorted(workdir.glob(pattern)))


def truth_doc_ids(truth, docs) -> dict[int, str]:
    """truth.jsonl's original ids → our document ids (by shard and URI)."""
    doc_of = {(s, u): d for s, u, d in zip(docs["shard"], docs["uri"], docs["doc_id"])}
    return {r["id"]: doc_of[truth_key(r)] for r in truth if "id" in r}


def test_every_mirror_is_an_exact_duplicate_of_its_original(crawl_run):
    workdir, truth, docs = crawl_run
    exact = read_shards(workdir, "work/exact_dedup/*.parquet").set_index("doc_id")
    original_doc = truth_doc_ids(truth, docs)
    doc_of = {(s, u): d for s, u, d in zip(docs["shard"], docs["uri"], docs["doc_id"])}
    checked = 0
    for record in truth:
        if record["kind"] != "mirror":
            continue
        mirror = doc_of[truth_key(record)]
        original = original_doc[record["of"][0]]
        if mirror not in exact.index:  # no good text: nothing to de-duplicate
            assert original not in exact.index
            continue
        pair = {mirror, original}
        kept = [d for d in pair if exact.at[d, "kept"]]
        assert len(kept) == 1, f"{mirror} and {original} are the same page"
        dropped = (pair - set(kept)).pop()
        assert exact.at[dropped, "duplicate_of"] == kept[0]
        checked += 1
    assert checked >= 150


def test_no_two_kept_documents_have_the_same_clean_text(crawl_run):
    workdir, _, _ = crawl_run
    texts = []
    for path in (workdir / "results" / "corpus").glob("*.jsonl.gz"):
        texts += ["\n".join(json.loads(line)["paragraphs"]) for line in gzip.open(path, "rt")]
    assert len(texts) > 1500
    assert len(texts) == len(set(texts))


def test_block_dedup_removes_the_copies_and_keeps_originals(crawl_run):
    workdir, truth, docs = crawl_run
    dedup = read_shards(workdir, "work/dedup/shards/*.parquet")
    kinds = {}
    doc_of = {(s, u): d for s, u, d in zip(docs["shard"], docs["uri"], docs["doc_id"])}
    for record in truth:
        kinds[doc_of[truth_key(record)]] = record["kind"]
    dedup["kind"] = dedup["doc_id"].map(kinds)
    blocks = read_shards(workdir, "work/extract/*.blocks.parquet")[
        ["doc_id", "block_index", "n_words"]
    ]
    kept = dedup[dedup["final_class"] != "bad"].merge(blocks, on=["doc_id", "block_index"])
    # by words, as the thesis measures: a near copy's results table is hundreds of one-word cells
    # that no 10-gram covers, and counted as blocks they outweigh its copied paragraphs
    kept["duplicate_words"] = kept["n_words"].where(kept["final_class"] == "duplicate", 0)
    totals = kept.groupby("kind")[["duplicate_words", "n_words"]].sum()
    share = totals["duplicate_words"] / totals["n_words"]
    assert share["original"] < 0.05, share
    assert share["near"] > 0.5 and share["aggregate"] > 0.5, share
    assert dedup.loc[dedup["final_class"] == "duplicate", "duplicate_of"].notna().all()
    funnel = pd.read_csv(workdir / "results" / "stats" / "funnel.tsv", sep="\t")
    assert funnel["stage"].tolist()[:2] == ["records", "html_documents"]


def test_language_targets_keep_or_drop_non_english_pages(crawl_run, tmp_path):
    workdir, _, _ = crawl_run
    language = read_shards(workdir, "work/language/*.parquet")
    german = language[(language["language"] == "de") & language["kept"]]
    assert len(german) > 100, "with targets [any] the German pages are kept"
    config = {
        "input": {"warcs": [str(p) for p in sorted(CRAWL.glob("crawl-0[01].warc.gz"))]},
        "language": {"targets": ["en"]},
        "dedup": {"enabled": False},
    }
    # the two shards as the session's build downloaded and extracted them, with Snakemake's
    # records of them: only the language stage runs, with the targets
    english = tmp_path / "english"
    shutil.copytree(workdir / ".snakemake", english / ".snakemake", symlinks=True)
    for shard in ("crawl-00", "crawl-01"):
        shutil.copytree(
            workdir / "data" / "warc" / shard, english / "data" / "warc" / shard, symlinks=True
        )
        for table in (workdir / "work" / "extract").glob(f"{shard}.*"):
            (english / "work" / "extract").mkdir(parents=True, exist_ok=True)
            shutil.copy2(table, english / "work" / "extract" / table.name)
    result = snakemake(english, "--until", "language", config=config)
    assert result.returncode == 0, result.stderr[-3000:]
    assert job_stats(result.stderr) == Counter(language=2)
    english_only = read_shards(english, "work/language/*.parquet")
    non_english = english_only[
        english_only["language"].notna() & (english_only["language"] != "en")
    ]
    assert len(non_english) > 50
    assert not non_english["kept"].any()
    # dropped for their language, or (a few short texts) for a confidence under the threshold
    for_language = non_english["reason"] == "language-" + non_english["language"]
    assert (for_language | (non_english["reason"] == "low-probability")).all()
    assert for_language.mean() > 0.9


def test_every_response_record_has_exactly_one_docs_row(crawl_run):
    _, truth, docs = crawl_run
    responses = docs[docs["warc_type"] == "response"]
    assert Counter(zip(responses["shard"], responses["uri"])) == Counter(map(truth_key, truth))


def test_junk_records_have_their_reasons(crawl_run):
    _, _, docs = crawl_run
    reason = dict(zip(docs["uri"], docs["reason"]))
    assert reason["http://junk.example/doc.pdf"] == "content-type-application/pdf"
    assert reason["http://junk.example/missing"] == "status-404"
    assert reason["http://junk.example/moved"] == "status-301"
    assert reason["http://junk.example/logo.png"] == "content-type-image/png"
    assert reason["http://junk.example/empty"] == "empty"
    assert reason["http://junk.example/garbage"] in {"binary", "undecodable"}
    assert reason["dns:junk.example"] == "dns"
    assert reason["http://junk.example/latin1"] == "ok"


def test_wrongly_declared_page_comes_out_readable(crawl_run):
    workdir, _, docs = crawl_run
    doc_id = docs.loc[docs["uri"] == "http://junk.example/latin1", "doc_id"].item()
    shard = doc_id.split(":")[0]
    blocks = pd.read_parquet(workdir / "work" / "extract" / f"{shard}.blocks.parquet")
    text = " ".join(blocks.loc[blocks["doc_id"] == doc_id, "text"])
    assert "Café crème brûlée à la française" in text


def test_truncated_shard_is_reported_not_fatal(crawl_run):
    workdir, _, docs = crawl_run
    errors = docs[docs["warc_type"] == "error"]
    assert errors["shard"].tolist() == ["crawl-03"]
    assert errors["reason"].str.startswith("truncated").all()
    log = (workdir / "logs" / "extract" / "crawl-03.log").read_text()
    assert "reading stopped" in log


def test_originals_have_good_blocks_and_reach_the_corpus(crawl_run):
    workdir, truth, docs = crawl_run
    originals = {truth_key(r) for r in truth if r["kind"] == "original"}
    rows = docs[[(s, u) in originals for s, u in zip(docs["shard"], docs["uri"])]]
    assert len(rows) == len(originals)
    # jusText with the reference thresholds finds no good block on ~8% of these pages; the
    # justext package, given its own stop lists, finds none on nearly all of the same pages.
    with_good = (rows["n_good_blocks"] > 0).mean()
    assert with_good >= 0.9, f"only {with_good:.1%} of originals have good blocks"
    exported = set()
    for path in (workdir / "results" / "corpus").glob("*.jsonl.gz"):
        exported |= {json.loads(line)["id"] for line in gzip.open(path, "rt")}
    exact = read_shards(workdir, "work/exact_dedup/*.parquet").set_index("doc_id")
    # An original reaches the corpus itself, or as the identical copy that came first in crawl
    # order; block dedup may also keep a near copy's text in its place (thesis §3.5 order).
    with_text = rows.loc[rows["n_good_blocks"] > 0, "doc_id"]
    reached = [
        doc in exported or (doc in exact.index and exact.at[doc, "duplicate_of"] in exported)
        for doc in with_text
    ]
    assert sum(reached) / len(reached) >= 0.95


SAMPLE_00 = str(REPO / "resources" / "sample" / "sample-00.warc.gz")


@pytest.mark.parametrize(
    "config, message",
    [
        ({"extract": {"max_bytes": -5}}, "extract.max_bytes"),
        ({"extract": {"justext": {"stopwords_low": 2}}}, "extract.justext.stopwords_low"),
        ({"extrct": {}}, "extrct"),
        ({"input": {"warcs": ["/no/such/file.warc.gz"]}}, "input.warcs[0]"),
        ({"input": {"warcs": ["s3://bucket-without-key"]}}, "input.warcs[0]"),
        ({"download": {"s3": {"endpoint_url": "127.0.0.1:9000"}}}, "download.s3.endpoint_url"),
        (
            {"input": {"warcs": [SAMPLE_00]}, "extract": {"preset": "C", "peers": "resiliparse"}},
            "config key 'extract.peers'",
        ),
        (
            {"input": {"warcs": [SAMPLE_00]}, "extract": {"peers": "trafilatura"}},
            "config key 'extract.peers'",
        ),
    ],
)
def test_bad_config_is_refused_with_a_message_naming_the_key(tmp_path, capsys, config, message):
    """`corpusbuilder check-config` refuses what the Snakefile refuses, through the same checks
    (`validate_config`, `check_input_paths`, `check_planned_settings`, which rules/common.smk
    calls in this order); that a refusal of each of them stops the workflow, with its one line,
    is shown by tests/test_config.py and tests/test_hostile_input.py."""
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    assert main(["check-config", "--config", str(path)]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "config",
    [
        {"input": {"warcs": [SAMPLE_00]}, "extract": {"preset": "C"}, "adapt": {"enabled": True}},
        {
            "input": {"warcs": [SAMPLE_00]},
            "adapt": {"enabled": True},
            "evaluate": {"gold_dir": "/no/gold"},
        },
    ],
    ids=["jusText preset", "no gold"],
)
def test_adapting_where_it_cannot_stops_the_workflow_naming_the_key(tmp_path, config):
    """What only the Snakefile checks (rules/common.smk, adapt_problem): adapting needs the
    `best` preset and the gold sets to start from."""
    result = snakemake(tmp_path, "--dry-run", config=config)
    assert result.returncode != 0
    assert "config key 'adapt.enabled'" in result.stderr + result.stdout


def test_evaluate_without_gold_sets_stops_naming_the_key_and_writes_nothing(tmp_path):
    config = {
        "input": {
            "warcs": [str(p) for p in sorted((REPO / "resources" / "sample").glob("*.warc.gz"))]
        },
        "evaluate": {"gold_dir": str(tmp_path / "no-gold")},
    }
    result = snakemake(tmp_path, "sweep", "evaluate_boilerplate", config=config)
    assert result.returncode != 0
    assert "config key 'evaluate.gold_dir'" in result.stderr + result.stdout
    assert not (tmp_path / "results").exists()


def test_running_from_a_directory_of_ones_own(tmp_path):
    """`snakemake -s /path/to/Snakefile --configfile my.yaml` in a project directory: inputs are
    relative to it; without a config there, one line says what to give. A run over other WARCs
    leaves the earlier shards' corpus files, and says so."""

    def run(*args):
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "snakemake",
                "-s",
                str(REPO / "Snakefile"),
                "--cores",
                "1",
                *args,
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )

    missing = run("--dry-run")
    assert missing.returncode != 0
    assert (
        f"no configuration: {tmp_path} has no config/config.yaml; give one with --configfile FILE"
        in missing.stderr + missing.stdout
    )
    (tmp_path / "crawl.warc.gz").write_bytes(
        (REPO / "resources" / "sample" / "sample-00.warc.gz").read_bytes()
    )
    (tmp_path / "my.yaml").write_text(yaml.safe_dump({"input": {"warcs": ["crawl.warc.gz"]}}))
    # a corpus file of a shard no longer in the input (an earlier run's, over other WARCs)
    stale = tmp_path / "results" / "corpus" / "crawl-00.jsonl.gz"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"")
    # only download and extract read input.warcs; every later stage reads work/
    built = run(
        "work/extract/crawl.docs.parquet", "--configfile", "my.yaml"
    )  # --configfile takes several
    assert built.returncode == 0, built.stderr[-3000:]
    docs = pd.read_parquet(tmp_path / "work" / "extract" / "crawl.docs.parquet")
    responses = docs[docs["warc_type"] == "response"]
    assert len(responses) > 0 and (docs["shard"] == "crawl").all()
    assert responses["warc_record_id"].str.startswith("<urn:uuid:").all()
    # the run says which files are not part of this corpus, and leaves them: they are the user's
    assert (
        "results/corpus/crawl-00.jsonl.gz" in built.stderr
        and "not part of this corpus" in built.stderr
    )
    assert stale.exists()


def corpus_texts(workdir: Path, shard: str) -> dict[str, str]:
    with gzip.open(workdir / "results" / "corpus" / f"{shard}.jsonl.gz", "rt") as lines:
        return {doc["id"]: doc["text"] for doc in map(json.loads, lines)}


def test_a_crawl_built_against_an_earlier_corpus_equals_its_part_of_one_build_over_both(
    tmp_path, sample_build, first_two_build
):
    """Issue 19: build A (two shards), then B (the third) with dedup.against A's state: B's corpus
    is the B part of one build over A and B, in sentence mode and crawl order (where the order of
    one run is that of A then B); B's state holds A's, merged forward. A and the build over both
    are the session's builds with dedup's settings changed (dedup and what follows it rerun)."""
    sample = [str(REPO / "resources" / "sample" / f"sample-0{i}.warc.gz") for i in range(3)]
    dedup = {"order": "input", "level": "sentence"}
    runs = {}
    for name, warcs, earlier, against in (
        ("both", sample, sample_build, None),
        ("a", sample[:2], first_two_build, None),
        ("b", sample[2:], None, tmp_path / "a" / "results" / "dedup_state"),
    ):
        runs[name] = tmp_path / name
        if earlier:
            copy_workdir(earlier, runs[name])
        else:
            runs[name].mkdir()
        config = {
            "input": {"warcs": warcs},
            "dedup": {**dedup, **({"against": str(against)} if against else {})},
        }
        result = snakemake(runs[name], config=config)
        assert result.returncode == 0, result.stderr[-5000:]
    expected, got = corpus_texts(runs["both"], "sample-02"), corpus_texts(runs["b"], "sample-02")
    assert got == expected
    removed = read_shards(runs["b"], "work/dedup/shards/*.parquet")
    assert removed.duplicate_of.dropna().str.startswith(("sample-00", "sample-01")).any()
    states = {name: pd.read_parquet(runs[name] / "results" / "dedup_state") for name in runs}
    assert set(states["a"].hash) < set(states["b"].hash) == set(states["both"].hash)


def test_g2_merged_in_hash_ranges_and_dedup_over_its_parts_are_those_of_one_merge(
    crawl_run, tmp_path
):
    """Issue 20: the parallel merge jobs' parts of G₂₊, in partition order, are the one-job
    merge of every run, and block dedup reading the parts decides as it does over the one file."""
    import numpy as np

    from corpusbuilder.config import validate_config
    from corpusbuilder.contracts.files import FILES
    from corpusbuilder.dedup.corpus import Shard, dedup_corpus
    from corpusbuilder.dedup.params import DedupParams
    from corpusbuilder.extraction.extract import ExtractParams
    from corpusbuilder.extraction.justext import reclassifier
    from corpusbuilder.ngrams.stage import duplicate_ngrams_stats, write_duplicate_ngrams

    workdir, _, _ = crawl_run
    config = validate_config({})
    # the workflow's parts (as many as `auto` planned for the dev crawl), and three made here
    built = sorted(
        (workdir / "work" / "ngrams" / "dup10").glob("*.npy"), key=lambda path: int(path.stem)
    )
    runs = sorted((workdir / "work" / "ngrams" / "runs").glob("*.parquet"))
    for p in range(3):
        write_duplicate_ngrams(
            runs, tmp_path / f"part{p}.npy", tmp_path / f"part{p}.json", 1024, 2, p, 3
        )
    parts = [tmp_path / f"part{p}.npy" for p in range(3)]
    one = write_duplicate_ngrams(runs, tmp_path / "dup10.npy", tmp_path / "dup10.json", 1024)
    whole = np.load(tmp_path / "dup10.npy")
    assert len(whole) > 10_000 and all(len(np.load(part)) for part in parts)
    for pieces in (parts, built):
        assert np.array_equal(np.concatenate([np.load(part) for part in pieces]), whole)
    summed = duplicate_ngrams_stats([tmp_path / f"part{p}.json" for p in range(3)])
    for key in ("distinct_ngrams", "duplicate_types", "duplicate_instances", "tokens"):
        assert summed[key] == one[key], key

    names = [path.stem for path in runs]
    shards = [
        Shard(
            name,
            workdir / "work" / "tokens" / f"{name}.npz",
            workdir / "work" / "extract" / f"{name}.blocks.parquet",
            tmp_path / "dedup" / f"{name}.parquet",
        )
        for name in names
    ]
    dedup_corpus(
        shards,
        tmp_path / "dup10.npy",
        None,
        DedupParams.from_config(config["dedup"]),
        reclassifier(ExtractParams.from_config(config["extract"]).justext),
    )
    for shard in shards:
        expected = pd.read_parquet(workdir / FILES.dedup.format(shard=shard.name))
        pd.testing.assert_frame_equal(pd.read_parquet(shard.output), expected)
    assert (
        sum((pd.read_parquet(shard.output).final_class == "duplicate").sum() for shard in shards)
        > 100
    )


def test_dedup_states_its_memory_and_stops_naming_resources_mem_mb_when_it_is_too_small(
    crawl_run, tmp_path
):
    """Issue 20: the dedup job logs what it needs before the pass, its default mem_mb (computed
    from its inputs) holds that, and a smaller one stops the job with one line naming the key."""
    import re
    import shutil

    workdir, _, _ = crawl_run
    stated = re.search(
        r"dedup needs (\d+) MB .*; resources.mem_mb is (\d+)",
        (workdir / "logs" / "dedup.log").read_text(),
    )
    assert stated and int(stated[2]) >= int(stated[1]) > 100, stated
    copy = tmp_path / "copy"
    shutil.copytree(workdir, copy, symlinks=True, ignore=shutil.ignore_patterns(".snakemake"))
    result = snakemake(
        copy,
        "--forcerun",
        "dedup",
        "--set-resources",
        "dedup:mem_mb=100",
        "--until",
        "dedup",
        configfiles=[copy / "test-config.yaml"],
    )
    assert result.returncode != 0
    line = (
        "more than its resources.mem_mb of 100: give it more with --set-resources "
        f"dedup:mem_mb={stated[1]}"
    )
    errors = [
        text for text in (copy / "logs" / "dedup.log").read_text().splitlines() if "ERROR" in text
    ]
    assert len(errors) == 1 and errors[0].endswith(line), errors
    assert "Traceback" not in (copy / "logs" / "dedup.log").read_text()
