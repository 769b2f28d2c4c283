"""The compiled quality signals (corpusbuilder.quality._cut, _lines and _ngrams, built by
setup.py) give what the Python versions give: every signal of every document of the dev crawl,
of hand-made texts with each rare case, and the words of random chunks, to the bit."""

from __future__ import annotations

import random

import pandas as pd
import pytest
from conftest import unavailable

from corpusbuilder.contracts.corpus import EXPORT_COLUMNS, kept_documents
from corpusbuilder.contracts.files import FILES
from corpusbuilder.contracts.survivors import read_survivors
from corpusbuilder.contracts.tables import ShardTables
from corpusbuilder.quality import QualityParams, TokenTypes, signals, words
from corpusbuilder.quality.words import ABBREVIATIONS, WordVocabulary

EDGE_CASES = [
    "",
    "\n",
    "\n\n\n",
    "  \n lone words\n\n",
    "Don't stop. It's the U.S. economy, e.g. the \u201cbig\u201d one\u2026 isn\u2019t it? "
    "Mr. Smith's.",
    "- a bullet\n\u2022 another bullet\n  - indented one\nnot one",
    "It ends here...\nAnd here\u2026   \nand... not here",
    "Repeated line.\nRepeated line.\n\nRepeated line.\nRepeated line.\n\nother\n\n\nother",
    "A line with javascript enabled, and more words here.\nLorem ipsum dolor sit amet, a b.",
    "We use cookies on this site, as you know.\nCurly { brackets } are here, too, ok.",
    "Enable JavaScript for the Privacy Policy here, ok.\n"
    "Caf\u00e9 Uses Cookies on this page, you know.\nLOREM IPSUM in capitals, and a {brace} too.",
    "A cited claim [1] holds here. Another [edit] one [citation needed] too.\n[2] Short.",
    "Windows\r\nline\r\nbreaks here.\rOld Mac.\u2028Separator\x0bvertical\x0cfeed\x1cend\x85.",
    "Tabs\tand\u00a0no-break\u2003spaces, soft\u00adhyphen and zero\u200bwidth.",
    "\u5927\u5bb6\u597d\u3002\u4eca\u5929\u5929\u6c14\u5f88\u597d\uff01 mixed "
    "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35",
    "Gr\u00fc\u00dfe aus K\u00f6ln! \u00c9t\u00e9 \u00e0 Paris\u00bb, "
    "\u00abl\u2019\u00e9t\u00e9\u00bb\u2014fin.",
    "long s: the bo\u017f'\u017f and \u017fun, \u00b2 squared, \u00bd half, snake_case_word.",
    "x" * 1200 + " a very long word line ends.\nshort.",
    "http://example.com/a-b www.site.org me@mail.com 18:14 1,000 $5.99 (see) [sic] a--b -x",
    " ".join(["the same five words"] * 30) + ".\n" + "one two three four five six. " * 20,
]


@pytest.fixture(scope="module")
def compiled():
    if None in (signals._cut, signals._lines, signals._ngrams):
        unavailable(
            "corpusbuilder.quality's compiled modules are not built (no C compiler at install "
            "time): the quality stage runs its Python versions"
        )
    return signals._cut


def both(documents, monkeypatch):
    """The signals of (language, text) documents by the compiled loops and by Python."""
    params = QualityParams()
    fast = signals.shard_signals(documents, TokenTypes(), params)
    with monkeypatch.context() as python_only:
        for module in (signals, words):
            python_only.setattr(module, "_cut", None)
        python_only.setattr(signals, "_lines", None)
        python_only.setattr(signals, "_ngrams", None)
        reference = signals.shard_signals(documents, TokenTypes(), params)
    return fast.to_pandas(), reference.to_pandas()


def test_hand_made_texts_get_the_same_signals(compiled, monkeypatch):
    fast, reference = both([("en", text) for text in EDGE_CASES], monkeypatch)
    pd.testing.assert_frame_equal(fast, reference)
    assert fast["c4_javascript_lines"].sum() and fast["c4_policy_lines"].sum()
    assert fast["bullet_lines"].sum() and fast["ellipsis_lines"].sum()


def test_each_text_alone_gets_what_it_gets_in_a_shard(compiled, monkeypatch):
    shard, _ = both([("de", text) for text in EDGE_CASES], monkeypatch)
    for number, text in enumerate(EDGE_CASES):
        alone, _ = both([("de", text)], monkeypatch)
        pd.testing.assert_series_equal(
            alone.iloc[0], shard.iloc[number], check_names=False, check_exact=True
        )


def test_random_chunks_are_cut_as_python_cuts_them(compiled):
    rng = random.Random(7)
    alphabet = (
        "aAnNtTsSlLrReEvVdDmM09'.-,()\"!?:;@/#$%&*_[]{}"
        "\u00ab\u00bb\u00e4\u00df\u2019\u201c\u201d\u2014\u2026\u017f\u00b2\u00ad\u0131\u0300\u4e00"
    )
    pieces = ["don", "'", "t", "s", "U", ".", "S", "..", "-", "a", "Mr", "www", "@", "://", "ll"]
    chunks = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))) for _ in range(20000)]
    chunks += ["".join(rng.choices(pieces, k=rng.randint(1, 5))) for _ in range(20000)]
    for chunk in chunks:
        python, fast = WordVocabulary(), WordVocabulary()
        expected = [list(python.types)[i] for i in python.cut_new(chunk)]
        ids, *_ = compiled.cut_texts([chunk], fast.types, fast.cut_new, ABBREVIATIONS)
        assert [list(fast.types)[i] for i in ids] == expected, chunk


@pytest.mark.shared
@pytest.mark.slow
def test_every_dev_crawl_document_gets_the_same_signals(compiled, monkeypatch, dev_crawl_build):
    """Every page extract cleaned, of every shard of the session's dev-crawl build (its extract
    tables: the crawl is not extracted again here)."""
    prefix, suffix = FILES.docs.split("{shard}")
    shards = sorted(
        str(path.relative_to(dev_crawl_build)).removeprefix(prefix).removesuffix(suffix)
        for path in dev_crawl_build.glob(FILES.docs.format(shard="*"))
    )
    assert len(shards) == 4
    for shard in shards:
        built = ShardTables.of(shard, dev_crawl_build, dedup=False)
        documents = [
            (doc.language, doc.text)
            for doc in kept_documents(
                read_survivors(ShardTables(built.docs, built.blocks), EXPORT_COLUMNS)
            )
        ]
        assert len(documents) > 500
        fast, reference = both(documents, monkeypatch)
        pd.testing.assert_frame_equal(fast, reference, check_exact=True)
