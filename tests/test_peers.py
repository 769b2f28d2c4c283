"""`extract.peers`: the `best` preset reading resiliparse's, or also trafilatura's and
readability-lxml's, output as block features (extraction.peers)."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import BOILERPLATE, QUICK_BINS, REPO, SAMPLE_WARCS, ok, require_shared, snakemake

import corpusbuilder
from corpusbuilder.cli.main import main
from corpusbuilder.common.faults import JobFault
from corpusbuilder.common.package_data import SHIPPED_MODEL, shipped_peer_model
from corpusbuilder.common.scripts import unit_tokens
from corpusbuilder.config import ConfigError
from corpusbuilder.contracts.files import FILES
from corpusbuilder.contracts.tables import CLEANED, read_table
from corpusbuilder.evaluation.gold import GoldPage
from corpusbuilder.evaluation.scores import EvaluateConfig, evaluate
from corpusbuilder.evaluation.training import (
    TrainingTable,
    self_train,
    training_pages,
    weighted_table,
)
from corpusbuilder.extraction import peers
from corpusbuilder.extraction.adapt import UnlabelledBlocks, crawl_blocks, sample_pages
from corpusbuilder.extraction.classifier import FEATURE_NAMES
from corpusbuilder.extraction.extract import (
    ExtractParams,
    check_setup,
    clean_page,
    extract_shard,
)
from corpusbuilder.extraction.model import BlockModel, classify_learned, load_model
from corpusbuilder.extraction.segmentation import parse_html, segment_blocks

PAGE_WITH_COMMENTS = (
    Path(__file__).resolve().parent / "fixtures" / "scope" / "article_with_comments.html"
).read_bytes()
ARTICLE_STARTS = ("The town council", "Supporters of", "Opponents, most", "The work will")
COMMENT_STARTS = ("I have walked", "Two million pounds", "My children will")


def test_a_block_is_covered_by_the_share_of_its_words_in_the_texts_trigrams():
    text = "the quick brown fox jumps over the lazy dog\nSubscribe now"
    shares = peers.text_coverage(
        [
            "The quick brown fox jumps",  # all five words in a trigram of the text
            "brown fox jumps far away today",  # three of six
            "Subscribe now",  # short: its whole text appears
            "Log in",  # short, absent
            "",
        ],
        text,
    )
    assert shares.tolist() == [1.0, 0.5, 1.0, 0.0, 0.0]
    assert peers.peer_features([], ["", "", ""]).shape == (0, 3)


def test_scripts_without_spaces_are_covered_character_by_character():
    shares = peers.text_coverage(["东京的天气很好", "广告"], "今天东京的天气很好。")
    assert shares.tolist() == [1.0, 0.0]


def test_peers_need_the_learned_preset_and_a_known_choice():
    with pytest.raises(ConfigError, match="extract.peers"):
        ExtractParams.from_config({"peers": "all", "preset": "C"})
    with pytest.raises(ConfigError, match="extract.peers.*'boilerpipe' is not one of none"):
        ExtractParams(peers="boilerpipe")
    assert ExtractParams().model_file is None  # none by default: the shipped best.npz
    for choice in ("resiliparse", "all"):
        for comments in (True, False):
            path = ExtractParams(peers=choice, comments=comments).model_file
            assert path == shipped_peer_model(choice, comments) and path.is_file()


def test_a_missing_peer_stops_the_run_before_the_first_page(monkeypatch):
    monkeypatch.setitem(peers.PEER_PACKAGES, "in_resiliparse", ("no_such_peer", "no-such-peer"))
    with pytest.raises(ConfigError, match="extract.peers.*no-such-peer.*corpusbuilder\\[peers\\]"):
        check_setup(ExtractParams(peers="resiliparse"))
    check_setup(ExtractParams())  # the plain preset needs no peer


def test_a_model_that_reads_other_peers_than_chosen_is_refused():
    with pytest.raises(ConfigError, match="extract.peers.*reads in_trafilatura, in_readability"):
        check_setup(ExtractParams(peers="resiliparse", model=shipped_peer_model("all", True)))


def test_each_peer_model_reads_the_block_features_then_its_peers():
    for choice, names in peers.PEER_CHOICES.items():
        if choice == "none":
            continue
        for comments in (True, False):
            model = load_model(shipped_peer_model(choice, comments))
            assert model.feature_names == FEATURE_NAMES + names and model.peers == names
            assert model.highest_feature_column >= len(FEATURE_NAMES)  # a tree reads a peer
    assert load_model(SHIPPED_MODEL).peers == ()


def test_a_model_and_peer_features_that_do_not_match_are_an_error():
    blocks = segment_blocks(parse_html("<p>Some text of a page, long enough.</p>"), frozenset())
    with_resiliparse = load_model(shipped_peer_model("resiliparse", True))
    with pytest.raises(ValueError, match="in_resiliparse.*extract.peers"):
        classify_learned(blocks, "", with_resiliparse)
    with pytest.raises(ValueError, match="in_resiliparse.*extract.peers"):
        classify_learned(blocks, "", with_resiliparse, np.ones((len(blocks), 3)))
    with pytest.raises(ValueError, match="extract.peers: none"):
        classify_learned(blocks, "", load_model(SHIPPED_MODEL), np.ones((len(blocks), 1)))
    assert classify_learned(blocks, "", with_resiliparse, [[1.0]] * len(blocks))


def test_a_peer_that_fails_on_a_page_keeps_nothing_of_it(monkeypatch):
    def broken(html: str) -> str:
        raise ValueError("All strings must be XML compatible")

    monkeypatch.setattr(peers, "readability_text_nodes", broken)
    pytest.importorskip("trafilatura", reason="the peers extra is not installed")
    html = "<html><body><p>A paragraph of text here, long enough to be kept.</p></body></html>"
    texts = peers.peer_texts(html, True)
    assert texts[1] == "" and len(texts) == 3
    assert "paragraph of text" in texts[2]
    assert peers.peer_texts(html, True, ("in_resiliparse",)) == [texts[2]]


@pytest.mark.parametrize("fault", [MemoryError, OSError, ImportError])
def test_a_fault_of_the_environment_in_a_peer_fails_the_job(monkeypatch, fault):
    def broken(html: str) -> str:
        raise fault("the environment's fault")

    monkeypatch.setattr(peers, "resiliparse_text", broken)
    with pytest.raises(fault):
        clean_page(PAGE_WITH_COMMENTS, "utf-8", ExtractParams(peers="resiliparse"))


def test_the_pages_a_peer_fails_on_are_counted_with_its_first_error(monkeypatch):
    def broken(html: str) -> str:
        raise ValueError("All strings must be XML compatible")

    monkeypatch.setattr(peers, "readability_text_nodes", broken)
    pytest.importorskip("trafilatura", reason="the peers extra is not installed")
    runs = peers.PeerRuns()
    for _ in range(2):
        clean_page(PAGE_WITH_COMMENTS, "utf-8", ExtractParams(peers="all"), peer_runs=runs)
    assert runs.pages == 2
    assert runs.failed == {"in_readability": 2}
    assert "XML compatible" in runs.first_error["in_readability"]
    assert runs.always_failed() == []  # two pages prove nothing: a peer fails on some pages


def sample_extract(tmp_path: Path, params: ExtractParams):
    docs, blocks = tmp_path / "s.docs.parquet", tmp_path / "s.blocks.parquet"
    summary = extract_shard([(w.name, w) for w in SAMPLE_WARCS], "s", docs, blocks, params)
    return summary, docs


def test_a_peer_that_fails_on_some_pages_is_reported_and_the_pages_cleaned(
    tmp_path, monkeypatch, caplog
):
    pytest.importorskip("resiliparse", reason="the peers extra is not installed")
    real = peers.resiliparse_text
    calls = []

    def fails_first(html: str) -> str:
        calls.append(html)
        if len(calls) == 1:
            raise ValueError("a page it cannot read")
        return real(html)

    monkeypatch.setattr(peers, "resiliparse_text", fails_first)
    with caplog.at_level(logging.WARNING):
        summary, docs = sample_extract(tmp_path, ExtractParams(peers="resiliparse"))
    assert summary.peers.failed == {"in_resiliparse": 1}
    assert summary.peers.pages == len(calls) == summary.pages >= 5
    assert (read_table(docs, ["outcome"])["outcome"] == CLEANED).sum() == summary.pages
    assert f"in_resiliparse failed on 1 of {summary.pages} pages" in caplog.text
    assert "a page it cannot read" in caplog.text


def test_a_peer_that_fails_on_every_page_fails_the_job(tmp_path, monkeypatch):
    """A peer broken for every page (an incompatible release, say) would leave a model reading a
    column of zeros: the job fails naming the peer and its error, and writes no table."""

    def broken(html: str) -> str:
        raise AttributeError("module 'resiliparse' has no attribute 'extract'")

    monkeypatch.setattr(peers, "resiliparse_text", broken)
    pytest.importorskip("resiliparse", reason="the peers extra is not installed")
    with pytest.raises(JobFault, match="in_resiliparse failed on every one of .*no attribute"):
        sample_extract(tmp_path, ExtractParams(peers="resiliparse"))
    assert not (tmp_path / "s.docs.parquet").exists()


def test_a_peer_broken_for_every_page_stops_training_and_self_training(monkeypatch):
    """The same check where the peers' columns are learned from: the gold sets' training blocks
    and the self-training sample."""

    def broken(html: str) -> str:
        raise AttributeError("module 'resiliparse' has no attribute 'extract'")

    monkeypatch.setattr(peers, "resiliparse_text", broken)
    pytest.importorskip("resiliparse", reason="the peers extra is not installed")
    params = ExtractParams(peers="resiliparse")
    gold = [
        GoldPage("fixture-set", f"page-{n}", PAGE_WITH_COMMENTS, "utf-8", "The town council")
        for n in range(peers.ALWAYS_FAILED_PAGES)
    ]
    with pytest.raises(
        JobFault, match="fixture-set: extract.peers: in_resiliparse failed on every"
    ):
        training_pages(gold, params)
    drawn = sample_pages(SAMPLE_WARCS, 20, 0, params)
    with pytest.raises(JobFault, match="self-training sample: .*in_resiliparse failed on every"):
        crawl_blocks(drawn, params)


def kept(comments: bool, choice: str) -> tuple[list[str], list[str], list[str]]:
    page = clean_page(PAGE_WITH_COMMENTS, "utf-8", ExtractParams(comments=comments, peers=choice))
    good = [b.text for b in page.blocks if b.final_class == "good"]
    article = [t for t in good if t.startswith(ARTICLE_STARTS)]
    reader = [t for t in good if t.startswith(COMMENT_STARTS)]
    return article, reader, [t for t in good if t not in article and t not in reader]


@pytest.mark.parametrize("choice", ["resiliparse", "all"])
def test_each_choice_of_peers_keeps_each_scopes_content(choice):
    for module, _ in peers.PEER_PACKAGES.values():
        pytest.importorskip(module, reason="the peers extra is not installed")
    article, reader, other = kept(False, choice)
    assert (len(article), reader) == (4, [])
    article, reader, other_with_comments = kept(True, choice)
    assert (len(article), len(reader)) == (4, 3)
    for rest in (other, other_with_comments):
        assert not any(t in ("Home", "Contact us", "Post comment") or "©" in t for t in rest)


def test_the_peer_features_are_what_the_trees_read():
    for module, _ in peers.PEER_PACKAGES.values():
        pytest.importorskip(module, reason="the peers extra is not installed")
    html = PAGE_WITH_COMMENTS.decode()
    blocks = segment_blocks(parse_html(html), frozenset(), True)
    features = peers.peer_features([b.text for b in blocks], peers.peer_texts(html, False))
    article = [i for i, b in enumerate(blocks) if b.text.startswith(ARTICLE_STARTS)]
    assert features.shape == (len(blocks), 3) and features.dtype == np.float32
    assert (features[article, 0] == 1.0).all()  # trafilatura keeps the article


def test_the_api_and_the_command_line_take_the_peers(tmp_path, capsys):
    pytest.importorskip("resiliparse", reason="the peers extra is not installed")
    text = corpusbuilder.clean_html(PAGE_WITH_COMMENTS, comments=False, peers="resiliparse")
    assert all(start in text for start in ARTICLE_STARTS)
    assert not any(start in text for start in COMMENT_STARTS)
    page = tmp_path / "page.html"
    page.write_bytes(PAGE_WITH_COMMENTS)
    assert main(["clean-html", str(page), str(tmp_path / "r.txt"), "--peers", "resiliparse"]) == 0
    assert "The town council" in (tmp_path / "r.txt").read_text()
    capsys.readouterr()
    assert main(["clean-html", str(page), "--preset", "C", "--peers", "all"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "extract.peers" in error


def reference_coverage(block_texts: list[str], text: str) -> list[float]:
    """The alignment as training labels blocks with it (peers.coverage over peers.trigrams)."""
    words = unit_tokens(text.lower())
    grams, spaced = peers.trigrams(words), f" {' '.join(words)} "
    shares = []
    for block_text in block_texts:
        mine = unit_tokens(block_text.lower())
        if len(mine) >= 3:
            shares.append(peers.coverage(mine, grams))
        elif mine:
            shares.append(float(peers.contained(mine, spaced)))
        else:  # as training leaves an empty block: covered by nothing
            shares.append(0.0)
    return shares


def test_the_hashed_coverage_is_the_alignment_training_uses():
    html = PAGE_WITH_COMMENTS.decode()
    blocks = [b.text for b in segment_blocks(parse_html(html), frozenset(), True)]
    blocks += ["now", "subscribe now", "Now Subscribe", "x", "", "东京", "东京的天气", "now here"]
    texts = [
        "Subscribe now. The town council voted on Tuesday, and the work will start in May.",
        "东京的天气很好。 here now",
        "",
        html,
    ]
    for text in texts:
        assert peers.text_coverage(blocks, text).tolist() == pytest.approx(
            reference_coverage(blocks, text), abs=1e-6
        )


@pytest.mark.workflow
def test_the_workflow_extracts_with_the_peers_model(tmp_path):
    """The real Snakefile: extract.peers picks the extract rule's model (an input, so a new one
    re-extracts), and the extract job reads the peers' output with it."""
    for module, _ in peers.PEER_PACKAGES.values():
        pytest.importorskip(module, reason="the peers extra is not installed")
    warc = REPO / "resources" / "sample" / "sample-00.warc.gz"
    config = {"input": {"warcs": [str(warc)]}, "extract": {"peers": "resiliparse"}}
    built = snakemake(tmp_path, "work/extract/sample-00.docs.parquet", config=config)
    assert built.returncode == 0, built.stderr
    # the job's inputs, as Snakemake prints them before it runs it
    assert "models/best-peers-resiliparse.npz" in built.stdout + built.stderr
    docs = read_table(tmp_path / "work" / "extract" / "sample-00.docs.parquet", ["outcome"])
    assert (docs["outcome"] == CLEANED).sum() >= 5
    good = read_table(tmp_path / "work" / "extract" / "sample-00.blocks.parquet", good_only=True)
    assert len(good) >= 20


@pytest.mark.workflow
def test_the_workflow_trains_adapts_and_evaluates_with_the_peers(tmp_path):
    """extract.peers reaches every model the workflow fits: the gold sets' training blocks carry
    the peer's coverage, so the held-out models, their adapted twins and the crawl's adapted model
    read it, and the evaluation runs the peer on each gold page it scores them on."""
    pytest.importorskip("resiliparse", reason="the peers extra is not installed")
    require_shared(BOILERPLATE)
    config = {
        "input": {"warcs": [str(SAMPLE_WARCS[0])]},
        "extract": {"peers": "resiliparse"},
        "evaluate": {
            "gold_dir": str(BOILERPLATE),
            "max_pages": 6,
            "datasets": ["cleaneval-dev"],
            "extractors": ["best", "best-adapted"],
        },
        "train": {
            "max_pages": 5,
            "max_iter": 5,
            "max_bins": QUICK_BINS,
            "datasets": ["cleaneval-dev", "l3s-gn1"],
        },
        "adapt": {"enabled": True, "rounds": 1, "pages": 6, "confidence": 0.51},
    }
    ok(
        snakemake(
            tmp_path,
            "results/stats/boilerplate.tsv",
            FILES.docs.format(shard="sample-00"),
            config=config,
        )
    )
    with np.load(tmp_path / "results" / "train" / "blocks" / "l3s-gn1.npz") as blocks:
        assert tuple(blocks["feature_names"]) == (*FEATURE_NAMES, "in_resiliparse")
        assert 0 < blocks["features"][:, -1].mean() < 1
    models = {
        name: BlockModel.load(tmp_path / "results" / "model" / name)
        for name in ("held_out/cleaneval.npz", "adapted_held_out/cleaneval.npz", "adapted.npz")
    }
    assert {model.peers for model in models.values()} == {("in_resiliparse",)}
    assert models["adapted.npz"].trained_on == ("cleaneval", "l3s-gn1", "self-labelled:crawl")
    scores = pd.read_csv(tmp_path / "results" / "stats" / "boilerplate.tsv", sep="\t")
    assert set(scores["extractor"]) == {"best", "best-adapted"}
    assert (scores["pages"] == 6).all() and (scores["bow_f1"] > 0.3).all()
    docs = read_table(tmp_path / FILES.docs.format(shard="sample-00"), ["outcome"])
    assert (docs["outcome"] == CLEANED).sum() >= 5


def _block_table(feature_names: tuple[str, ...]) -> TrainingTable:
    rows = np.random.default_rng(0).random((40, len(feature_names)), dtype=np.float32)
    return TrainingTable(
        rows,
        (np.arange(40) % 2).astype(np.int8),
        np.ones(40),
        np.full(40, "cleaneval", dtype=object),
        feature_names,
    )


def test_self_training_refuses_a_model_or_pages_of_other_peers_than_the_gold_blocks():
    with_all = FEATURE_NAMES + peers.PEER_CHOICES["all"]
    table = _block_table(with_all)
    target = UnlabelledBlocks.of_pages([(table.features[:10], np.ones(10))], with_all)
    with pytest.raises(ConfigError, match="config key 'extract.peers'.*in_resiliparse"):
        self_train(table, target, load_model(shipped_peer_model("resiliparse", True)))
    plain = UnlabelledBlocks.of_pages([(table.features[:10, :84], np.ones(10))])
    with pytest.raises(ConfigError, match="target pages no peer"):
        self_train(table, plain, load_model(shipped_peer_model("all", True)))


def test_blocks_made_with_other_peers_are_not_joined_into_one_table():
    part = {"dataset": np.array("cleaneval-dev"), "labels": np.zeros(2, np.int8)}
    with pytest.raises(ValueError, match="extract.peers"):
        weighted_table(
            [
                {**part, "features": np.zeros((2, 84)), "words": np.ones(2)},
                {
                    **part,
                    "features": np.zeros((2, 85)),
                    "words": np.ones(2),
                    "feature_names": np.array(FEATURE_NAMES + ("in_resiliparse",)),
                },
            ]
        )


def test_a_model_whose_trees_read_beyond_its_named_features_does_not_load(tmp_path):
    model = load_model(shipped_peer_model("all", False))
    replace(model, feature_names=FEATURE_NAMES).save(tmp_path / "renamed.npz")
    with pytest.raises(ValueError, match="the trees read column 8[4-6]"):
        BlockModel.load(tmp_path / "renamed.npz")


def test_the_evaluation_stops_naming_the_key_when_a_held_out_models_peer_is_missing(
    monkeypatch,
):
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    held_out = {"best": {"cleaneval": load_model(shipped_peer_model("all", True))}}
    with pytest.raises(ConfigError, match="config key 'extract.peers'.*trafilatura"):
        evaluate(EvaluateConfig(datasets=("cleaneval-dev",), extractors=("best",)), held_out, True)


def test_readabilitys_article_keeps_the_words_its_inline_tags_split():
    pytest.importorskip("readability", reason="readability-lxml: pip install '.[peers]'")
    story = "".join(
        f"<p>Paragraph {n} of the story: the <a href='/r'>Radon</a>-Situation, an "
        f"e<i>x</i>ample of <b>long</b> running text that readability keeps as the article.</p>"
        for n in range(1, 6)
    )
    html = (
        "<html><head><title>A story</title></head><body><div id='nav'><a href='/'>Home</a>"
        f"</div><div class='article'>{story}</div></body></html>"
    )
    lines = peers.readability_text(html).splitlines()
    assert len(lines) == 5
    assert all("the Radon-Situation, an example of long running text" in line for line in lines)
    # the in_readability feature reads its text nodes, a line each: measured better as a feature
    nodes = peers.readability_text_nodes(html).splitlines()
    assert nodes[:4] == ["Paragraph 1 of the story: the", "Radon", "-Situation, an e", "x"]
