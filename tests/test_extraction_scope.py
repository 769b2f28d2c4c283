"""What counts as content, said out loud: `extract.comments` (the article, or all running text)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from corpusbuilder.cli.main import main
from corpusbuilder.common.package_data import SHIPPED_ARTICLE_MODEL, SHIPPED_MODEL
from corpusbuilder.config import ConfigError
from corpusbuilder.evaluation.extractors import EXTRACTORS, SCOPE_PEERS
from corpusbuilder.evaluation.gold import (
    COMMENTS_IN_GOLD,
    READERS,
    fits_scope,
    iter_dataset,
    l3s_classes,
    l3s_gold_text,
)
from corpusbuilder.evaluation.training import FEATURE_NAMES, in_scope, weighted_table
from corpusbuilder.extraction.extract import ExtractParams, clean_page
from corpusbuilder.extraction.model import load_model

# L3S-GN1's classes (thesis §2.8.3): 0 not content, 1 headline, 2 full text, 3 supplemental,
# 4 related content, 5 comments; a text node has its innermost annotation's class.
ANNOTATED = (
    b"<html><body><div class='x-nc-sel0'>Menu</div>"
    b"<div class='x-nc-sel2'><h1><span class='x-nc-sel1'>Big news</span></h1>"
    b"<p>Body text <span class='x-nc-sel0'>Advertisement</span> goes on.</p></div>"
    b"<p class='x-nc-sel3'>A caption.</p>"
    b"<ul class='x-nc-sel4'><li>Related story</li></ul>"
    b"<div class='x-nc-sel5'><p>First! Great article.</p></div></body></html>"
)

PAGE_WITH_COMMENTS = (
    Path(__file__).resolve().parent / "fixtures" / "scope" / "article_with_comments.html"
).read_bytes()


@pytest.mark.parametrize(
    "comments, words",
    [
        (False, "Big news Body text goes on. A caption."),
        (True, "Big news Body text goes on. A caption. First! Great article."),
        (None, "Big news Body text goes on. A caption. Related story First! Great article."),
    ],
)
def test_each_scope_reads_its_classes_of_l3s_gn1(comments, words):
    assert l3s_gold_text(ANNOTATED, l3s_classes(comments)).split() == words.split()


def test_the_l3s_reader_gives_the_scopes_gold(tmp_path):
    for folder in ("original", "annotated"):
        (tmp_path / "l3s-gn1" / folder).mkdir(parents=True)
        (tmp_path / "l3s-gn1" / folder / "p.html").write_bytes(ANNOTATED)
    article = next(iter_dataset("l3s-gn1", tmp_path, comments=False)).gold_text
    with_comments = next(iter_dataset("l3s-gn1", tmp_path, comments=True)).gold_text
    assert "Great article" in with_comments and "Great article" not in article


def test_every_gold_set_says_how_it_annotates_comments():
    assert set(COMMENTS_IN_GOLD) == set(READERS)
    article = {d for d in READERS if fits_scope(d, False)}
    with_comments = {d for d in READERS if fits_scope(d, True)}
    assert article & with_comments == {"l3s-gn1"}
    assert {"cleaneval-dev", "cleaneval-final"} <= with_comments - article
    assert {"fundus", "msv-big9", "msv-chaos", "trafilatura-dev"} <= article - with_comments


def part(dataset: str) -> dict[str, np.ndarray]:
    """Four labelled blocks of a gold set, the last two in a comment container."""
    features = np.zeros((4, len(FEATURE_NAMES)), dtype=np.float32)
    features[2:, FEATURE_NAMES.index("hint_comment")] = 1
    return {
        "dataset": np.array(dataset),
        "features": features,
        "labels": np.array([1, 0, 1, 1], dtype=np.int8),
        "words": np.array([10.0, 5.0, 20.0, 30.0]),
        "feature_names": np.array(FEATURE_NAMES),
    }


def test_each_scope_reads_the_comment_blocks_a_set_labels_the_other_way():
    cleaneval, fundus = part("cleaneval-final"), part("fundus")
    # CleanEval's comments are content for the scope that keeps them, boilerplate for the article
    assert in_scope(cleaneval, True)["labels"].tolist() == [1, 0, 1, 1]
    assert in_scope(cleaneval, False)["labels"].tolist() == [1, 0, 0, 0]
    assert in_scope(cleaneval, False)["words"].tolist() == [10.0, 5.0, 20.0, 30.0]
    # fundus' boilerplate in a comment container may be a comment: unknown to the scope keeping them
    assert in_scope(fundus, True)["labels"].tolist() == [1, 0, -1, -1]
    assert in_scope(fundus, False)["labels"].tolist() == [1, 0, 1, 1]
    table = weighted_table([cleaneval, fundus], comments=False)
    assert table.labels.tolist() == [1, 0, 0, 0, 1, 0, 1, 1]
    # an unknown block stays in the table, a second stage reads it beside its neighbours, but
    # it weighs nothing
    with_comments = weighted_table([cleaneval, fundus], comments=True)
    assert with_comments.labels.tolist() == [1, 0, 1, 1, 1, 0, -1, -1]
    assert with_comments.weights[6:].tolist() == [0, 0] and with_comments.weights[:6].all()
    assert (weighted_table([cleaneval, fundus]).labels >= 0).sum() == 8


def test_a_comment_containers_short_boilerplate_is_kept_in_either_scope():
    """A "Reply" or "Name *" is boilerplate whatever the scope; a long block labelled boilerplate in
    a comment container is a comment to fundus, content to the scope that keeps comments."""
    fundus = part("fundus")
    fundus["labels"] = np.array([1, 0, 0, 0], dtype=np.int8)
    fundus["words"] = np.array([10.0, 5.0, 1.0, 30.0])
    kept = in_scope(fundus, True)
    assert kept["labels"].tolist() == [1, 0, 0, -1]
    cleaneval = part("cleaneval-final")
    cleaneval["labels"] = np.array([1, 0, 0, 1], dtype=np.int8)
    cleaneval["words"] = np.array([10.0, 5.0, 2.0, 3.0])
    # the short content block of a comment container is a short comment: not the article's
    assert in_scope(cleaneval, False)["labels"].tolist() == [1, 0, 0, 0]


def test_the_peers_of_each_scope_are_extractors():
    assert set(SCOPE_PEERS[False]) | set(SCOPE_PEERS[True]) <= set(EXTRACTORS)
    assert "trafilatura-article" in SCOPE_PEERS[False] and "trafilatura" in SCOPE_PEERS[True]


def test_the_default_keeps_all_running_text_as_the_thesis_corpora_do():
    params = ExtractParams()
    assert params.comments and params.model_file is None
    assert ExtractParams.from_config({}).comments
    article = ExtractParams.from_config({"comments": False})
    assert article.model_file == SHIPPED_ARTICLE_MODEL
    assert ExtractParams(comments=False, model=Path("m.npz")).model_file == Path("m.npz")


def test_the_article_scope_needs_the_learned_preset():
    with pytest.raises(ConfigError, match="extract.comments"):
        ExtractParams.from_config({"comments": False, "preset": "C"})
    with pytest.raises(ConfigError, match="extract.comments"):
        ExtractParams(comments=False).with_preset("default")


def test_each_scope_has_a_shipped_model():
    assert (
        load_model(SHIPPED_ARTICLE_MODEL).feature_names == load_model(SHIPPED_MODEL).feature_names
    )
    assert load_model(SHIPPED_ARTICLE_MODEL) is not load_model(SHIPPED_MODEL)


def kept_paragraphs(comments: bool) -> tuple[list[str], list[str], list[str]]:
    """The fixture's article paragraphs and reader comments the scope's model keeps, and what
    else it keeps."""
    page = clean_page(PAGE_WITH_COMMENTS, "utf-8", ExtractParams(comments=comments))
    kept = [b.text for b in page.blocks if b.final_class == "good"]
    article = [t for t in kept if t.startswith(ARTICLE_STARTS)]
    reader = [t for t in kept if t.startswith(COMMENT_STARTS)]
    return article, reader, [t for t in kept if t not in article and t not in reader]


ARTICLE_STARTS = ("The town council", "Supporters of", "Opponents, most", "The work will")
COMMENT_STARTS = ("I have walked", "Two million pounds", "My children will")


def test_the_article_scope_drops_reader_comments_and_the_other_keeps_them():
    article, reader, other = kept_paragraphs(comments=False)
    assert (len(article), reader) == (4, [])
    article, reader, other_with_comments = kept_paragraphs(comments=True)
    assert (len(article), len(reader)) == (4, 3)
    for kept in (other, other_with_comments):  # the template stays out of both
        assert not any(t in ("Home", "Contact us", "Post comment") or "©" in t for t in kept)


def test_the_python_api_takes_the_scope_as_the_docs_say():
    """docs/extraction-scope.md said the API's clean_html "is written in another branch"; it
    takes comments= and runs that scope's model."""
    import corpusbuilder

    article = corpusbuilder.clean_html(PAGE_WITH_COMMENTS, comments=False)
    everything = corpusbuilder.clean_html(PAGE_WITH_COMMENTS, comments=True)
    assert all(start in article for start in ARTICLE_STARTS)
    assert not any(start in article for start in COMMENT_STARTS)
    assert all(start in everything for start in (*ARTICLE_STARTS, *COMMENT_STARTS))
    assert corpusbuilder.clean_html(PAGE_WITH_COMMENTS) == everything  # extract.comments: true


def test_clean_html_takes_the_scope_on_the_command_line(tmp_path, capsys):
    page = tmp_path / "page.html"
    page.write_bytes(PAGE_WITH_COMMENTS)
    assert main(["clean-html", str(page), str(tmp_path / "a.txt"), "--no-comments"]) == 0
    assert main(["clean-html", str(page), str(tmp_path / "c.txt"), "--comments"]) == 0
    assert (tmp_path / "a.txt").read_text() and (tmp_path / "c.txt").read_text()
    capsys.readouterr()
    assert main(["clean-html", str(page), "--preset", "C", "--no-comments"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "extract.comments" in error
