"""The compiled walks (corpusbuilder.extraction._walk, _trees, _features and _classes, built by
setup.py) give what the Python walks give: the same blocks, field for field, the same features
and classes, and the same leaves of every tree."""

from __future__ import annotations

from dataclasses import astuple

import numpy as np
import pytest
from conftest import BOILERPLATE, require_shared, unavailable
from lxml import etree

from corpusbuilder.common.stoplists import load_stoplist
from corpusbuilder.extraction import (
    COMPILED_MODULES,
    classifier,
    compiled_module_users,
    hints,
    justext,
    segmentation,
)
from corpusbuilder.extraction import model as tree_model
from corpusbuilder.extraction.classifier import block_features, page_title
from corpusbuilder.extraction.model import BlockModel, load_model
from corpusbuilder.extraction.segmentation import _segment_blocks_python, parse_html, segment_blocks

STOPLIST = load_stoplist("English")


def compiled(module, name):
    if module is None:
        unavailable(
            f"corpusbuilder.extraction.{name} is not built (no C compiler at install time, or "
            "built for another lxml or an older checkout): the package runs its Python walk"
        )
    return module


@pytest.fixture(scope="module")
def walk_module():
    return compiled(segmentation._walk, "_walk")


@pytest.fixture(scope="module")
def trees_module():
    return compiled(tree_model._trees, "_trees")


@pytest.fixture(scope="module")
def features_module():
    return compiled(classifier._features, "_features")


@pytest.fixture(scope="module")
def classes_module():
    return compiled(justext._classes, "_classes")


def compiled_blocks(walk_module, root, structure_hints=True):
    return walk_module.segment_walk(
        root,
        segmentation._block_maker(),
        segmentation._stop_words(STOPLIST),
        structure_hints,
        segmentation._tags(structure_hints),
    )


# Each page holds a case where the two walks could part: text pieces merged across comments and
# removed elements, blank pieces (ASCII or not), unwrapped elements and root, links, <br> runs.
QUIRKS = {
    "comment and script between pieces": "<html><body><p>one <!-- c --> two<script>x</script> "
    "three</p></body></html>",
    "killed element's tail in a link": "<html><body><p><a href=x>link <style>s</style> text</a> "
    "after</p></body></html>",
    "unwrapped elements": "<html><body><form>form text<p>para</p>tail of p</form><iframe>"
    "frame</iframe>x</body></html>",
    "unwrapped root": "<form><p>inside a form root</p>after</form>",
    "stylesheet link": "<html><body><p>a<link rel='Alternate StyleSheet' href=s>b<link rel=next>"
    "c</p></body></html>",
    "double br": "<html><body><p>one<br>two<br><br>three<br> <br>four</p></body></html>",
    "non-ASCII blank piece": "<html><body><div>\u00a0<span>\u2003</span>\u00a0<p>x\u00a0y</p>"
    "\u3000</div></body></html>",
    "non-ASCII text": "<html><body><p>Größe — 東京 <b>ünïcödé</b></p></body></html>",
    # words counted in script units: each block holds one character of a script without
    # spaces, at the scripts' first and last code points in three- and four-byte UTF-8, between
    # letters (3 units, 1 word) and as a block's last character (2 units, 1 word)
    "scripts without spaces": "<html><body><p>ภาษาไทย คำ</p>"
    + "".join(f"<p>é{c}x</p>" for c in "\u0e00\u9fff\u3005\uff66\uff9f\U00020000\U000323af")
    + "<p>é東</p><p>é\U00020000</p>"
    + "<p>\u0dff \ua000 \U000323b0 \uff65</p></body></html>",
    "line breaks of every kind": "<html><body><p>a\r\n b \u2028c\x85 d\x0b\x1c "
    "e</p><p><a>\u3000in\u2003a\r link </a>\u200bzero-width</p></body></html>",
    "image and positions": "<html><body><div><image src=a>i</image><img src=b><p>1</p><p>2</p><div>"
    "<p>3</p></div></div></body></html>",
    "classes with entities": "<html><body><div class='nav &amp; menu' id=side><p>menu</p></div>"
    "<div class><p>no class</p></div></body></html>",
    "nested links": "<html><body><p><a>out <a>in</a> still</a> plain</p></body></html>",
    "text after the root": "<html><body><p>body</p></body></html> trailing words",
    "fragment": "<p>just a fragment</p> with a tail",
    "headings and tables": "<html><body><h2>Title</h2><table><tr><td>a</td><td>b <i>c</i></td></tr>"
    "</table></body></html>",
    "HTML5 block elements": "<html><body><article>lead<header>head</header><figure><img src=a>"
    "<figcaption>cap"
    "</figcaption></figure>text<section>s<hr>t</section><ol><li>i</li></ol></article></body></html>",
}


# every character str.isspace calls whitespace (what the compiled walk must tell apart in UTF-8),
# and some that it does not but look alike
SPACES = [chr(c) for c in range(0x110000) if chr(c).isspace()]
NOT_SPACES = ["\u200b", "\u2060", "\ufeff", "\u180e", "\u00ad", "\u2800", "\u3164", "\u1160"]


def random_page(rng) -> str:
    """Words, whitespace of every kind, links, <br>s and comments, in random order."""

    def text() -> str:
        pieces = []
        for _ in range(rng.integers(1, 8)):
            kind = rng.integers(0, 4)
            if kind == 0:
                pieces.append("".join(rng.choice(SPACES, size=rng.integers(1, 4))))
            elif kind == 1:
                pieces.append(rng.choice(NOT_SPACES))
            else:
                pieces.append(rng.choice(["word", "Wörter", "東京", "a", "the", "x.y"]))
        return "".join(pieces)

    parts = []
    for _ in range(rng.integers(1, 12)):
        kind = rng.integers(0, 6)
        parts.append(
            [
                f"<p>{text()}</p>",
                f"<a href=x>{text()}</a>",
                "<br>",
                f"<!-- {text()} -->",
                f"<span>{text()}</span>",
                text(),
            ][kind]
        )
    return "<html><body><div>" + "".join(parts) + "</div></body></html>"


@pytest.mark.parametrize("seed", range(20))
def test_compiled_walk_on_random_whitespace(walk_module, seed):
    rng = np.random.default_rng(seed)
    for _ in range(25):
        html = random_page(rng)
        root = parse_html(html)
        assert compiled_blocks(walk_module, root) == _segment_blocks_python(root, STOPLIST, True), (
            repr(html)
        )


@pytest.mark.parametrize("name", sorted(QUIRKS))
@pytest.mark.parametrize("structure_hints", [True, False])
def test_compiled_walk_gives_the_python_walks_blocks(walk_module, name, structure_hints):
    root = parse_html(QUIRKS[name])
    expected = _segment_blocks_python(root, STOPLIST, structure_hints)
    assert expected, "a case without blocks tests nothing"
    assert compiled_blocks(walk_module, root, structure_hints) == expected


def test_compiled_walk_past_the_element_names_it_remembers(walk_module, monkeypatch):
    # more made-up element names than the walk's table of names keeps: the rest are read anew;
    # one of them killed and one unwrapped, for both walks
    monkeypatch.setattr(segmentation, "_KILLED_TAGS", frozenset({"x-3"}))
    monkeypatch.setattr(segmentation, "_UNWRAPPED_TAGS", frozenset({"x-600"}))
    names = [f"x-{i}" for i in range(700)]
    root = parse_html(
        "<html><body>" + "".join(f"<{n}>{n} <p>p{i}</p></{n}>" for i, n in enumerate(names))
    )
    tags = walk_module.Tags(
        segmentation.paragraph_tags(True), segmentation._KILLED_TAGS, segmentation._UNWRAPPED_TAGS
    )
    expected = _segment_blocks_python(root, STOPLIST, True)
    assert "x-3" not in [b.text for b in expected]
    for _ in range(2):  # the second time, the first names are known
        blocks = walk_module.segment_walk(
            root, segmentation._block_maker(), segmentation._stop_words(STOPLIST), True, tags
        )
        assert blocks == expected


def test_compiled_walk_on_a_page_spelled_out(walk_module):
    # pinned, not only compared: the merged pieces, the link characters and the path; the link
    # holds "link " and the style's tail " text", one piece "link  text", 9 characters collapsed
    root = parse_html(QUIRKS["killed element's tail in a link"])
    (block,) = compiled_blocks(walk_module, root)
    assert (block.text, block.chars_in_links, block.tags_count, block.xpath) == (
        "link text after",
        9,
        1,
        "/html[1]/body[1]/p[1]",
    )
    first, second = compiled_blocks(walk_module, parse_html(QUIRKS["classes with entities"]))
    assert first.near_hints & hints.HINT_BITS["nav"] and first.near_hints & hints.HINT_BITS["aside"]
    assert not second.near_hints & hints.HINT_BITS["nav"]


def test_nodes_the_compiled_walk_does_not_model_take_the_python_walk(walk_module):
    # a processing instruction and an element in a namespace: lxml can build them, libxml2's HTML
    # parser does not
    root = parse_html("<html><body><p>before</p><div>text</div></body></html>")
    root.find(".//div").append(etree.ProcessingInstruction("php", "echo 1"))
    with pytest.raises(walk_module.Unsupported):
        compiled_blocks(walk_module, root)
    assert segment_blocks(root, STOPLIST) == _segment_blocks_python(root, STOPLIST, True)
    root = parse_html("<html><body><p>before</p></body></html>")
    etree.SubElement(root.find("body"), "{http://example.org/ns}note").text = "namespaced"
    with pytest.raises(walk_module.Unsupported):
        compiled_blocks(walk_module, root)
    assert [b.text for b in segment_blocks(root, STOPLIST)] == ["before", "namespaced"]


@pytest.mark.shared
@pytest.mark.slow
def test_compiled_walks_give_the_python_walks_blocks_features_and_sums_on_every_gold_page(
    walk_module, features_module, trees_module, classes_module, monkeypatch
):
    require_shared(BOILERPLATE)
    paths = sorted(BOILERPLATE.glob("*/input/*.html")) + sorted(
        BOILERPLATE.glob("*/original/*.html")
    )
    assert len(paths) > 2000
    model = load_model()
    compared = 0
    for path in paths:
        root = parse_html(path.read_bytes())
        if root is None or not isinstance(root.tag, str) or root.tag in segmentation._KILLED_TAGS:
            continue
        for structure_hints in (False, True):
            blocks = compiled_blocks(walk_module, root, structure_hints)
            assert blocks == _segment_blocks_python(root, STOPLIST, structure_hints), path
        if blocks:
            title = page_title(root)
            features = block_features(blocks, title)
            with monkeypatch.context() as numpy_only:
                numpy_only.setattr(classifier, "_features", None)
                assert np.array_equal(features, block_features(blocks, title), equal_nan=True), path
            assert np.array_equal(
                model._leaf_sums(features), model.value[model._leaves(features)].sum(axis=1)
            ), path
            for params in justext.PRESETS.values():
                assert compiled_classes(classes_module, blocks, params) == python_classes(
                    blocks, params
                ), path
        compared += 1
    assert compared > 2000


def make_block(
    text,
    xpath="/html[1]/body[1]/p[1]",
    heading=False,
    hints=0,
    near_hints=0,
    tags_count=0,
    chars_in_links=0,
    n_words=None,
    n_chars=None,
):
    """A block as segmentation makes one, its words and stop words
    counted as the walks count them."""
    words, stop_words = segmentation._word_counts(text, STOPLIST)
    n_words = words if n_words is None else n_words
    n_chars = len(text) if n_chars is None else n_chars
    return segmentation.Block(
        text,
        "",
        xpath,
        heading,
        chars_in_links,
        tags_count,
        n_chars,
        n_words,
        stop_words,
        chars_in_links / len(text),
        stop_words / n_words if n_words else 0.0,
        hints,
        near_hints,
    )


def assert_compiled_features_are_numpys(blocks, title, monkeypatch):
    features = block_features(blocks, title)
    with monkeypatch.context() as numpy_only:
        numpy_only.setattr(classifier, "_features", None)
        expected = block_features(blocks, title)
    assert features.dtype == expected.dtype == np.float32 and features.shape == expected.shape
    differ = ~((features == expected) | (np.isnan(features) & np.isnan(expected)))
    assert not differ.any(), {
        classifier.FEATURE_NAMES[c] for c in np.flatnonzero(differ.any(axis=0))
    }
    return features


def feature(features, name):
    return features[:, classifier.FEATURE_NAMES.index(name)].tolist()


def test_compiled_features_count_characters_as_numpy_does(features_module, monkeypatch):
    texts = [
        "One. Two! Three?",
        "a - b | c » d",
        "-dash at the start and end -",
        "Ölçü 12 ДОМ Ωmega",
        "astral 𝔘𝔫𝔦 ends here.",
        "“Quoted.”",
        "x",
        "No stop",
        "U.S. and e.g. inside",
        "9",
    ]
    features = assert_compiled_features_are_numpys(
        [make_block(text) for text in texts], "", monkeypatch
    )
    # pinned: sentence ends before a space or the text's end, capitals at word starts, dashes
    # between spaces, where a text's edges count as spaces (the final " -", not the first "-d");
    # "“Quoted.”" ends with a closing quote, which may end a sentence
    words = np.array([block.n_words for block in map(make_block, texts)])

    def counts(name):
        return np.rint(np.array(feature(features, name)) * words)[:4].tolist()

    assert counts("sentence_ends_per_word") == [3, 0, 0, 0] and counts("capitalised_per_word") == [
        3,
        0,
        0,
        3,
    ]
    assert counts("separators_per_word") == [0, 3, 1, 0] and counts("digits_per_word") == [
        0,
        0,
        0,
        2,
    ]
    assert feature(features, "ends_with_stop") == [1, 0, 0, 0, 1, 1, 0, 0, 0, 0]


def test_compiled_features_find_legal_phrases_and_title_words_as_numpy_does(
    features_module, monkeypatch
):
    long_word = "x" * 70  # one title word, and a text word that only starts with it
    texts = [
        "copyrights reserved",
        "(c) 199 (c) 2024 (c) ٢٠٢٤ ©© Privacy cookie-policy",
        "powered by\n(c) 20",
        "Nutzungsbedingungenutzungsbedingungen impressum datenschutz",
        "the ferry\u3000東京\u2028ferry",
        "a\u00a0b a",
        f"{long_word} {long_word}y ferryman",
        "©",
        "(c) 2024",
        "ends in (c) 202",
        "İstanbul privacy",
    ]
    blocks = [make_block(text) for text in texts]
    features = assert_compiled_features_are_numpys(
        blocks, f"The FERRY 東京 {long_word} a İstanbul", monkeypatch
    )
    assert feature(features, "legal_phrases") == [
        1,
        6,
        1,
        3,
        0,
        0,
        0,
        1,
        1,
        0,
        1,
    ]  # none inside another
    title_words = [
        round(share * block.n_words)
        for share, block in zip(feature(features, "title_overlap"), blocks)
    ]
    assert title_words == [0, 0, 0, 0, 4, 2, 1, 0, 0, 0, 1]  # "the" is a title word too
    assert_compiled_features_are_numpys(blocks, "", monkeypatch)


def random_blocks(rng, count):
    """Blocks in containers that repeat (non-ASCII tags among them), with legal phrases, capitals,
    sentence ends, hints and headings, in random measure."""
    tags = ["div", "p", "li", "td", "section", "größe", "ünï", "x"]
    vocabulary = [
        "the",
        "Ferry",
        "of",
        "privacy",
        "(c) 2024",
        "©",
        "cookie",
        "a.",
        "Ölçü",
        "9",
        "-",
        "|",
        "東京",
        "İ",
        "end!",
        "terms of use",
        "rights reserved",
    ]
    paths, blocks = ["/html[1]/body[1]"], []
    for _ in range(count):
        base = paths[rng.integers(len(paths))]
        xpath = f"{base}/{tags[rng.integers(len(tags))]}[{rng.integers(1, 4)}]"
        paths.append(xpath)
        text = " ".join(rng.choice(vocabulary, size=rng.integers(1, 40)))
        blocks.append(
            make_block(
                text,
                xpath,
                heading=bool(rng.random() < 0.1),
                hints=int(rng.integers(0, 2048)),
                near_hints=int(rng.integers(0, 2048)),
                tags_count=int(rng.integers(0, 5)),
                chars_in_links=int(rng.integers(0, len(text) + 1)),
            )
        )
    return blocks


@pytest.mark.parametrize("seed", range(10))
def test_compiled_features_on_random_pages(features_module, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    for count in (
        1,
        2,
        3,
        7,
        8,
        9,
        129,
        400,
    ):  # pairwise sums of a few, of one block of 128 and of halves
        blocks = random_blocks(rng, count)
        assert_compiled_features_are_numpys(blocks, "Ferry privacy the", monkeypatch)


def test_compiled_features_of_counts_beyond_the_log1p_table(features_module, monkeypatch):
    # numpy's log1p, not libm's, for counts the table does not hold: a block of 70,000 characters
    # and a page of 70,000 blocks
    big = make_block("word " * 14_000 + "end.")
    features = assert_compiled_features_are_numpys([big, make_block("short")], "", monkeypatch)
    assert feature(features, "log_chars")[0] == np.float32(np.log1p(len(big.text)))
    many = [make_block(f"w{i}", f"/html[1]/body[1]/div[{i // 100}]/p[1]") for i in range(70_000)]
    assert_compiled_features_are_numpys(many, "", monkeypatch)


def test_compiled_features_of_hand_made_counts_are_numpys(features_module, monkeypatch):
    # segmentation never makes these; a hand-made block with no, negative or fractional words,
    # or odd character counts, gets numpy's infinities, NaNs and logarithms in both versions alike
    # (where numpy itself fails — words summing to 0 on the page, a lone surrogate — the
    # compiled version still gives rows: no test holds it to an exception)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for n_words in (0, -1, -3, 2.5, float("nan")):
            blocks = [make_block("text", n_words=n_words), make_block("more words")]
            assert_compiled_features_are_numpys(blocks, "", monkeypatch)
        for n_chars in (
            float("nan"),
            -0.0,
            0,
            -5,
            1e300,
        ):  # the text density keeps numpy's NaN, log1p its -0.0
            blocks = [make_block("text", n_chars=n_chars), make_block("more words")]
            assert_compiled_features_are_numpys(blocks, "", monkeypatch)


def compiled_classes(classes_module, blocks, params):
    return classes_module.justext_classes(
        blocks, params, (justext.BAD, justext.SHORT, justext.NEAR_GOOD, justext.GOOD)
    )


def python_classes(blocks, params):
    cf_classes = justext.classify_context_free(blocks, params)
    return cf_classes, justext.classify_context_sensitive(cf_classes, blocks, params)


@pytest.mark.parametrize("seed", range(5))
def test_compiled_justext_classes_on_random_pages(classes_module, seed):
    # Algorithm 2.3's corners: runs of short and near-good blocks between good and bad ones,
    # headings near good text, the © and <select> rules, densities on the thresholds
    rng = np.random.default_rng(seed)
    params_of = [
        *justext.PRESETS.values(),
        justext.JustextParams(no_headings=True),
        justext.JustextParams(
            max_heading_distance=0, length_unit="words", length_low=3, length_high=6
        ),
    ]
    for count in (1, 2, 5, 40, 300):
        blocks = []
        for _ in range(count):
            text = " ".join(rng.choice(["the", "word", "a"], size=rng.integers(1, 30)))
            text += str(rng.choice(["", "", "", "", "", "", " ©", " &copy;"]))
            block = make_block(
                text, heading=bool(rng.random() < 0.2), chars_in_links=int(rng.random() < 0.3)
            )
            block.dom_path = str(
                rng.choice(["html.body.p"] * 8 + ["html.body.form.select.option", "html.body.h2"])
            )
            block.stopword_density = float(
                rng.choice([0.0, 0.2, 0.25, 0.3, 0.32, 0.5, rng.random()])
            )
            block.link_density = float(rng.choice([0.0, 0.0, 0.0, 0.2, 0.21, rng.random() / 2]))
            block.n_chars = int(rng.choice([5, 69, 70, 71, 199, 200, 201, rng.integers(0, 500)]))
            blocks.append(block)
        for params in params_of:
            assert compiled_classes(classes_module, blocks, params) == python_classes(
                blocks, params
            )
        if count == 300:  # every class arises, before and after Algorithm 2.3
            cf_classes, final_classes = python_classes(blocks, justext.PRESETS["default"])
            assert set(cf_classes) == {justext.BAD, justext.SHORT, justext.NEAR_GOOD, justext.GOOD}
            assert set(final_classes) == {justext.BAD, justext.GOOD}
    assert compiled_classes(classes_module, [], justext.PRESETS["default"]) == ([], [])


def test_compiled_features_refuse_a_classifier_they_do_not_know(features_module):
    # a feature the classifier lists that the compiled module does not compute
    tables = classifier._feature_tables.__wrapped__
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(classifier, "FEATURE_NAMES", (*classifier.FEATURE_NAMES, "a_new_feature"))
        with pytest.raises(ValueError, match="a_new_feature"):
            tables()


def test_compiled_tree_walk_sums_the_numpy_walks_leaves_bit_for_bit(trees_module):
    model = load_model()
    rng = np.random.default_rng(7)
    # rows of real pages' features and random ones, which reach leaves the pages do not; row
    # counts on both sides of the 8 walked side by side
    root = parse_html(QUIRKS["headings and tables"] + QUIRKS["image and positions"])
    real = block_features(segment_blocks(root, STOPLIST), page_title(root))
    noise = rng.normal(0.0, 2.0, size=(397, real.shape[1])).astype(np.float32)
    noise[::5, ::3] = np.nan  # NaN goes right, as numpy's `<=` says
    for features in (real, noise, noise[:1], noise[:8], noise[:9]):
        sums = model._leaf_sums(features)
        assert sums.shape == (len(features),) and sums.dtype == np.float64
        # numpy's pairwise sum of the leaves' values, in its rounding
        assert np.array_equal(sums, model.value[model._leaves(features)].sum(axis=1))


def random_trees(rng, trees: int, depth: int, columns: int) -> BlockModel:
    """Trees of at most ``depth`` levels whose branches end at random depths, leaves pointing to
    themselves as the trained models' do."""
    feature, threshold, left, right = [], [], [], []

    def node(level: int) -> int:
        index = len(feature)
        feature.append(0)
        threshold.append(0.0)
        left.append(index)
        right.append(index)
        if level < depth and (level == 0 or rng.random() < 0.8):
            feature[index] = int(rng.integers(columns))
            threshold[index] = float(rng.normal())
            left[index] = node(level + 1)
            right[index] = node(level + 1)
        return index

    roots = [node(0) for _ in range(trees)]
    return BlockModel(
        feature=np.array(feature, dtype=np.int32),
        threshold=np.array(threshold),
        left=np.array(left, dtype=np.int32),
        right=np.array(right, dtype=np.int32),
        value=rng.normal(size=len(feature)),
        roots=np.array(roots, dtype=np.int32),
        depth=depth,
        baseline=0.0,
        threshold_good=0.5,
        feature_names=tuple(f"x{i}" for i in range(columns)),
    )


@pytest.mark.parametrize(
    "depth", [0, 1, 3, tree_model.COMPLETE_DEPTH, tree_model.COMPLETE_DEPTH + 1]
)
def test_compiled_tree_walks_of_every_depth_sum_the_numpy_walks_leaves(trees_module, depth):
    # both compiled walks (the complete layout up to COMPLETE_DEPTH, called directly; the one
    # _leaf_sums picks by size); leaves above the last level
    rng = np.random.default_rng(depth)
    model = random_trees(rng, 13, depth, 5)
    features = rng.normal(size=(37, 5)).astype(np.float32)
    features[::4, ::2] = np.nan
    expected = model.value[model._leaves(features)].sum(axis=1)
    assert np.array_equal(model._leaf_sums(features), expected)
    rows = np.ascontiguousarray(features)
    if depth <= tree_model.COMPLETE_DEPTH:  # the complete layout, whichever _leaf_sums reads
        assert np.array_equal(
            trees_module.complete_tree_sums(rows, *model.complete_trees, depth), expected
        )


def test_trees_are_laid_out_complete_where_that_reads_less():
    rng = np.random.default_rng(0)
    assert load_model().walks_complete  # the shipped model: 6 levels, trees half full
    # branches that end at random depths: a few hundred nodes where 1,024 leaves would be
    assert not random_trees(rng, 13, tree_model.COMPLETE_DEPTH, 5).walks_complete
    assert not random_trees(rng, 2, tree_model.COMPLETE_DEPTH + 1, 5).walks_complete


def test_the_compiled_walk_refuses_scripts_it_cannot_decode(walk_module):
    with pytest.raises(ValueError, match="U\\+0700 is below U\\+0800"):
        walk_module.BlockMaker(
            segmentation.Block,
            None,
            None,
            None,
            4,
            np.array([[0x0700, 0x074F]], dtype=np.uintc),
            None,
        )


@pytest.mark.parametrize(
    "missing", [tuple(COMPILED_MODULES), *((name,) for name in COMPILED_MODULES)], ids="+".join
)
def test_without_compiled_modules_the_python_walks_give_the_same_classes(monkeypatch, missing):
    """What a package built without a C compiler runs (all four missing), or one with a module
    not built (another lxml steps the walk aside), against what this one runs."""
    from corpusbuilder.extraction.model import classify_learned

    pages = [parse_html(html) for html in QUIRKS.values()]

    def classes():  # the `best` preset's and jusText's `default`, from the same blocks
        found = []
        for root in pages:
            blocks = segment_blocks(root, STOPLIST)
            found.append(classify_learned(blocks, page_title(root)))
            found.append(justext.classify(blocks, justext.PRESETS["default"]))
        return found

    with_compiled = classes()
    for user, name in compiled_module_users():
        if name in missing:
            monkeypatch.setattr(user, name, None)
    assert classes() == with_compiled


@pytest.mark.parametrize("language", ["German", "Greek", "Turkish", "Polish"])
def test_compiled_walk_counts_stop_words_as_python_does(walk_module, language):
    # words on a list with letters beyond ASCII, capitals of every kind, and the Kelvin sign,
    # which lower-cases to an ASCII "k"
    stoplist = load_stoplist(language)
    words = sorted(stoplist)[::7]
    text = " ".join(
        words
        + [w.upper() for w in words]
        + [w.title() for w in words]
        + ["\u212a", "ΣΑΣ", "İSTANBUL"]
    )
    root = parse_html(
        f"<html><body><p>{text}</p><div>{' '.join(words[:5])}<br>x</div></body></html>"
    )
    compiled = walk_module.segment_walk(
        root,
        segmentation._block_maker(),
        segmentation._stop_words(stoplist),
        True,
        segmentation._tags(True),
    )
    expected = _segment_blocks_python(root, stoplist, True)
    assert compiled == expected
    # each word as listed; upper-cased and back not always (Turkish "altı" comes back "alti")
    assert expected[0].n_stopwords >= len(words)


def test_each_whitespace_character_alone_between_words(walk_module):
    # the compiled walk knows str.isspace's characters by their UTF-8: every one of this
    # interpreter's, each inside a text, around a link and as a piece on its own
    for space in SPACES + NOT_SPACES:
        html = (
            f"<html><body><p>a{space}b<a>{space}link{space}</a>{space}<b>c</b></p><div>"
            f"{space}</div></body></html>"
        )
        root = parse_html(html)
        assert compiled_blocks(walk_module, root) == _segment_blocks_python(root, STOPLIST, True), (
            hex(ord(space))
        )


def test_cdata_after_the_root_takes_the_python_walk(walk_module):
    # lxml's tail reads CDATA too; the compiled walk says it does not model it
    root = parse_html("<html><body><p>para</p></body></html>")
    root.tail = etree.CDATA("tail words")
    with pytest.raises(walk_module.Unsupported):
        compiled_blocks(walk_module, root)
    assert [b.text for b in segment_blocks(root, STOPLIST)] == ["para", "tail words"]


def test_compiled_functions_refuse_what_they_cannot_read(walk_module, features_module):
    with pytest.raises(TypeError):
        walk_module.segment_walk(
            None,
            segmentation._block_maker(),
            segmentation._stop_words(STOPLIST),
            True,
            segmentation._tags(True),
        )
    tables = classifier._feature_tables()
    block = make_block("text")
    with pytest.raises(TypeError):
        features_module.feature_rows(
            tables,
            [make_block("text"), segmentation.Block(None, *astuple(block)[1:])],
            ["good"] * 2,
            ["good"] * 2,
            set(),
        )
    with pytest.raises(ValueError, match="one each"):
        features_module.feature_rows(tables, [block], [], [], set())
    with pytest.raises(TypeError):
        features_module.feature_rows(tables, [block], ["good"], ["good"], {None})
    model = load_model()
    with pytest.raises(ValueError, match="reads column"):
        model.probabilities(
            np.zeros((2, 3), dtype=np.float32)
        )  # narrower than the model's features


def test_compiled_sum_of_negative_zeros_is_numpys_positive_zero(trees_module):
    # numpy adds the pairwise sum to 0.0, so trees whose leaves all hold -0.0 sum to +0.0
    trees = 9
    zeros = np.zeros(trees, dtype=np.int32)
    model = BlockModel(
        feature=zeros,
        threshold=np.zeros(trees),
        left=np.arange(trees, dtype=np.int32),
        right=np.arange(trees, dtype=np.int32),
        value=np.full(trees, -0.0),
        roots=np.arange(trees, dtype=np.int32),
        depth=1,
        baseline=0.0,
        threshold_good=0.5,
        feature_names=("x",),
    )
    features = np.ones((3, 1), dtype=np.float32)
    expected = model.value[model._leaves(features)].sum(axis=1)
    sums = model._leaf_sums(features)
    assert np.array_equal(np.signbit(sums), np.signbit(expected)) and not np.signbit(sums).any()
