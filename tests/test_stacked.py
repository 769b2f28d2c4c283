"""`extract.stacked`: the `best` preset reading trafilatura's, readability-lxml's and
resiliparse's output as block features (extraction.peers)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from corpusbuilder.common.package_data import (
    SHIPPED_MODEL,
    SHIPPED_STACKED_ARTICLE_MODEL,
    SHIPPED_STACKED_MODEL,
)
from corpusbuilder.config import ConfigError
from corpusbuilder.extraction import peers
from corpusbuilder.extraction.classifier import FEATURE_NAMES
from corpusbuilder.extraction.extract import ExtractParams, check_setup, clean_page
from corpusbuilder.extraction.model import STACKED_FEATURE_NAMES, classify_learned, load_model
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


def test_stacked_needs_the_learned_preset_and_names_the_key():
    with pytest.raises(ConfigError, match="extract.stacked"):
        ExtractParams.from_config({"stacked": True, "preset": "C"})
    assert ExtractParams().model_file is None  # off by default: the shipped best.npz
    assert ExtractParams(stacked=True).model_file == SHIPPED_STACKED_MODEL
    assert ExtractParams(stacked=True, comments=False).model_file == SHIPPED_STACKED_ARTICLE_MODEL


def test_a_missing_peer_stops_the_run_before_the_first_page(monkeypatch):
    monkeypatch.setitem(peers.PEER_PACKAGES, "no_such_peer_module", "no-such-peer")
    with pytest.raises(ConfigError, match="extract.stacked.*no-such-peer.*corpusbuilder\\[peers\\]"):
        check_setup(ExtractParams(stacked=True))
    check_setup(ExtractParams())  # the unstacked preset needs no peer


def test_the_stacked_models_read_the_block_features_then_the_peers():
    for path in (SHIPPED_STACKED_MODEL, SHIPPED_STACKED_ARTICLE_MODEL):
        model = load_model(path)
        assert model.stacked and model.feature_names == STACKED_FEATURE_NAMES
        assert model.feature_names[: len(FEATURE_NAMES)] == FEATURE_NAMES
        assert model.highest_feature_column >= len(FEATURE_NAMES)  # a tree reads a peer
    assert not load_model(SHIPPED_MODEL).stacked


def test_a_stacked_model_without_the_peers_features_is_an_error():
    blocks = segment_blocks(parse_html("<p>Some text of a page, long enough.</p>"), frozenset())
    with pytest.raises(ValueError, match="extract.stacked"):
        classify_learned(blocks, "", load_model(SHIPPED_STACKED_MODEL))


def test_a_peer_that_fails_on_a_page_keeps_nothing_of_it(monkeypatch):
    def broken(html: str) -> str:
        raise ValueError("All strings must be XML compatible")

    monkeypatch.setattr(peers, "readability_text", broken)
    pytest.importorskip("trafilatura", reason="the peers extra is not installed")
    texts = peers.peer_texts("<html><body><p>A paragraph of text here.</p></body></html>", True)
    assert texts[1] == ""


def kept(comments: bool) -> tuple[list[str], list[str], list[str]]:
    page = clean_page(
        PAGE_WITH_COMMENTS, "utf-8", ExtractParams(comments=comments, stacked=True)
    )
    good = [b.text for b in page.blocks if b.final_class == "good"]
    article = [t for t in good if t.startswith(ARTICLE_STARTS)]
    reader = [t for t in good if t.startswith(COMMENT_STARTS)]
    return article, reader, [t for t in good if t not in article and t not in reader]


def test_stacked_keeps_each_scopes_content():
    for module in peers.PEER_PACKAGES:
        pytest.importorskip(module, reason="the peers extra is not installed")
    article, reader, other = kept(comments=False)
    assert (len(article), reader) == (4, [])
    article, reader, other_with_comments = kept(comments=True)
    assert (len(article), len(reader)) == (4, 3)
    for rest in (other, other_with_comments):
        assert not any(t in ("Home", "Contact us", "Post comment") or "©" in t for t in rest)


def test_the_peer_features_are_what_the_trees_read():
    for module in peers.PEER_PACKAGES:
        pytest.importorskip(module, reason="the peers extra is not installed")
    html = PAGE_WITH_COMMENTS.decode()
    blocks = segment_blocks(parse_html(html), frozenset(), True)
    features = peers.peer_features([b.text for b in blocks], peers.peer_texts(html, False))
    article = [i for i, b in enumerate(blocks) if b.text.startswith(ARTICLE_STARTS)]
    assert features.shape == (len(blocks), 3) and features.dtype == np.float32
    assert (features[article, 0] == 1.0).all()  # trafilatura keeps the article
