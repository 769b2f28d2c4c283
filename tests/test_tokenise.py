"""Tokeniser: each token class, Unicode and scripts without spaces, the shard's token arrays."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from corpusbuilder.contracts.survivors import survivors
from corpusbuilder.contracts.tokenfile import read_tokens, write_token_stream
from corpusbuilder.tokenise import (
    TokeniseParams,
    Vocabulary,
    block_sentences,
    prepare_text,
    punctuation_types,
    sentence_starts,
    stoplist_for_language,
    token_hashes,
    token_places,
    tokenise,
    tokenise_blocks,
    tokenise_shard,
)


@pytest.mark.parametrize(
    "text, tokens",
    [
        # words, with inner hyphens and apostrophes; outer ones are punctuation
        ("Don't re-use it", ["Don't", "re-use", "it"]),
        ("rock'n'roll l’homme", ["rock'n'roll", "l’homme"]),
        ("'quoted' well- -ish", ["'", "quoted", "'", "well", "-", "-", "ish"]),
        ("mp3 snake_case", ["mp3", "snake_case"]),
        # numbers
        (
            "It costs 1,000.50 or 3.14, in 2024.",
            ["It", "costs", "1,000.50", "or", "3.14", ",", "in", "2024", "."],
        ),
        ("4th 1990s", ["4", "th", "1990", "s"]),
        # URLs, without the punctuation that ends the sentence
        ("See https://example.com/a?b=1&c=2.", ["See", "https://example.com/a?b=1&c=2", "."]),
        ("(at www.example.org/path).", ["(", "at", "www.example.org/path", ")", "."]),
        ("ftp://files.example.net/x.tar.gz", ["ftp://files.example.net/x.tar.gz"]),
        # e-mail addresses
        (
            "Mail john.doe+news@mail.example.co.uk!",
            ["Mail", "john.doe+news@mail.example.co.uk", "!"],
        ),
        ("a@b is no address", ["a", "@", "b", "is", "no", "address"]),
        # punctuation and symbols: one token per character
        (
            "Wait...?! $5 «yes» — ok",
            ["Wait", ".", ".", ".", "?", "!", "$", "5", "«", "yes", "»", "—", "ok"],
        ),
    ],
)
def test_token_classes(text, tokens):
    assert tokenise(text) == tokens


def test_letters_and_marks_of_any_script_make_words():
    assert tokenise("naïve Straße Ελληνικά Русский हिन्दी தமிழ்") == [
        "naïve",
        "Straße",
        "Ελληνικά",
        "Русский",
        "हिन्दी",
        "தமிழ்",
    ]
    assert tokenise("می\u200cخواهم") == ["می\u200cخواهم"]  # Persian: ZWNJ inside a word
    assert tokenise("cafe\u0301") == ["café"]  # NFC: the combining accent is composed


def test_invisible_characters():
    assert tokenise("Ver\u00adsion") == ["Version"]  # soft hyphen removed
    assert tokenise("one\u200btwo\ufeffthree") == ["one", "two", "three"]  # zero-width space splits


def test_scripts_without_spaces_give_one_token_per_character():
    assert tokenise("日本語のテキスト。") == ["日", "本", "語", "の", "テ", "キ", "ス", "ト", "。"]
    assert tokenise("我爱北京天安门") == list("我爱北京天安门")
    assert tokenise("iPhone用のケース") == ["iPhone", "用", "の", "ケ", "ー", "ス"]
    assert tokenise("ภาษาไทย") == list("ภาษาไทย")
    assert tokenise("한국어 문장") == ["한국어", "문장"]  # Korean is written with spaces


def test_scripts_without_spaces_as_runs_when_cjk_chars_is_off():
    assert tokenise("日本語のテキスト。", cjk_chars=False) == ["日本語のテキスト", "。"]
    assert tokenise("iPhone用", cjk_chars=False) == ["iPhone用"]


SAMPLES = [
    "The committee met on Tuesday (10:30 a.m.) to discuss the $1,200,000 budget — see http://city.gov/budget.",
    "E-Mail: info@example.de; Öffnungszeiten: Mo.–Fr. 9–17 Uhr! «Ja», sagte er…",
    "日本語と English が混ざった文章です。価格は1,000円！",
    "Ceci n'est pas une pipe – c’est l’art. ¿Qué pasa? 3×4=12 ±0.5 % ∑",
    "\u0915\u094d\u0937\u0924\u094d\u0930\u093f\u092f e\u0301te\u0301 ﬁne ½ x² __init__ :-) <3",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_every_visible_character_is_in_exactly_one_token_in_order(text):
    for cjk_chars in (True, False):
        assert "".join(tokenise(text, cjk_chars)) == "".join(prepare_text(text, cjk_chars).split())


def test_vocabulary_memo_gives_the_tokenisers_tokens():
    texts = SAMPLES * 3 + ["the the the, the."] * 2
    for max_memo in (10**6, 3):  # a memo cleared again and again changes nothing
        vocabulary = Vocabulary(max_memo=max_memo)
        ids, offsets, _, _ = tokenise_blocks(texts, vocabulary)
        types = np.array(vocabulary.type_list(), dtype=object)
        for b, text in enumerate(texts):
            assert types[ids[offsets[b] : offsets[b + 1]]].tolist() == tokenise(text)


def test_batches_of_any_size_give_the_same_tokens():
    """A batch's chunks are cut and numbered on their own (tokenise_blocks): the shard's tokens,
    block offsets, chunk openers and ends, and its types' order do not depend on the batch size,
    blocks without a token (empty, white space, a lone soft hyphen) among them."""
    texts = ["", *SAMPLES, "   ", "\u00ad", "the the the, the.", "", *SAMPLES[::-1], "\n"]
    results = []
    for batch_blocks in (1, 2, 5, len(texts), 25_000):
        vocabulary = Vocabulary()
        arrays = tokenise_blocks(texts, vocabulary, batch_blocks=batch_blocks)
        results.append(([a.tolist() for a in arrays], vocabulary.type_list()))
    assert all(result == results[0] for result in results[1:])
    ids, offsets, chunk_first, chunk_end = tokenise_blocks([], Vocabulary())
    assert offsets.tolist() == [0] and len(ids) == len(chunk_first) == len(chunk_end) == 0


def test_token_places_spread_each_chunks_first_place_over_its_tokens():
    rng = np.random.default_rng(7)
    lengths = rng.integers(0, 4, 1000)  # chunks without a token too
    first = rng.integers(0, 10**6, 1000)
    expected = np.concatenate([np.arange(f, f + n) for f, n in zip(first, lengths, strict=True)])
    assert token_places(first, lengths).tolist() == expected.tolist()
    assert len(token_places(first[:0], lengths[:0])) == 0
    assert len(token_places(first[:3], np.zeros(3, np.int64))) == 0


def test_token_hashes_are_stable_and_case_folds_only_when_asked():
    assert token_hashes(["the"])[0] == np.uint64(3331141520948189790)  # BLAKE2b-64, little-endian
    hashes = token_hashes(["The", "the", "THE"])
    assert len(set(hashes.tolist())) == 3
    assert len(set(token_hashes(["The", "the", "THE"], lowercase=True).tolist())) == 1
    assert token_hashes([]).dtype == np.uint64


def test_punctuation_is_a_token_starting_with_punctuation_or_a_symbol():
    types = [",", "«", "$", "_", "—", "don't", "1,000", "https://x.org", "日", "a@b.cz"]
    assert punctuation_types(types).tolist() == [
        True,
        True,
        True,
        True,
        True,
        False,
        False,
        False,
        False,
        False,
    ]


def test_stop_lists_come_from_the_language_code():
    assert "the" in stoplist_for_language("en")
    assert stoplist_for_language("xx") == frozenset() == stoplist_for_language(None)


# --------------------------------------------------------------------------- a shard


def shard_tables():
    docs = pd.DataFrame(
        {
            "doc_id": ["s:4", "s:1", "s:2", "s:3", "s:0"],
            "record_index": [4, 1, 2, 3, 0],
            "uri": "http://a/",
            "outcome": "ok",
            "page_language": None,
        }
    )
    rows = [
        ("s:0", 0, "The cat sat.", "good"),
        ("s:0", 1, "Menu", "bad"),
        ("s:0", 2, "Die Katze!", "good"),
        ("s:1", 0, "A dog and the cat.", "good"),
        ("s:2", 0, "Dropped by language.", "good"),
        ("s:3", 0, "An exact duplicate.", "good"),
        ("s:4", 1, "Le chat et le chien.", "good"),
        ("s:4", 0, "Qui?", "good"),
    ]
    blocks = pd.DataFrame(rows, columns=["doc_id", "block_index", "text", "final_class"]).astype(
        {"block_index": "int32"}
    )
    language = pd.DataFrame(
        {
            "doc_id": ["s:0", "s:1", "s:2", "s:3", "s:4"],
            "language": ["en", "en", "en", "en", "fr"],
            "kept": [True, True, False, True, True],
            "dropped_blocks": [[2], [], [], [], []],
        }
    )
    exact = pd.DataFrame(
        {"doc_id": ["s:0", "s:1", "s:3", "s:4"], "kept": [True, True, False, True]}
    )
    return docs, blocks, language, exact


def test_shard_tokens_cover_the_kept_blocks_of_the_kept_documents_in_crawl_order(tmp_path):
    stop = {"en": frozenset({"the", "a", "and"}), "fr": frozenset()}
    stream = tokenise_shard(
        survivors(*shard_tables()), TokeniseParams(), stoplist_for=lambda code: stop[code]
    )
    assert stream.doc_ids.tolist() == ["s:0", "s:1", "s:4"]
    assert stream.block_doc.tolist() == [0, 1, 2, 2]
    assert stream.block_index.tolist() == [0, 0, 0, 1]  # page order; "Die Katze!" was dropped
    assert stream.block_offsets.tolist() == [0, 4, 10, 12, 18]
    expected = [
        "The",
        "cat",
        "sat",
        ".",
        "A",
        "dog",
        "and",
        "the",
        "cat",
        ".",
        "Qui",
        "?",
        "Le",
        "chat",
        "et",
        "le",
        "chien",
        ".",
    ]
    assert stream.token_hash.tolist() == token_hashes(expected).tolist()
    assert stream.is_punct.tolist() == [t in ".?" for t in expected]
    # English stop words in English documents only: "le"/"et" are not stop words of "fr" here.
    assert [t for t, s in zip(expected, stream.is_stop) if s] == ["The", "A", "and", "the"]

    path = tmp_path / "s.npz"
    write_token_stream(stream, path)
    back = read_tokens(path)
    for name, array in vars(stream).items():
        np.testing.assert_array_equal(getattr(back, name), array)
    with np.load(path) as members:  # the layout the n-gram stage reads
        assert (
            members["token_hash"].dtype == np.uint64 and members["block_offsets"].dtype == np.int64
        )
        assert members["is_punct"].dtype == bool and members["is_stop"].dtype == bool


def test_lowercase_hashes(tmp_path):
    docs, blocks, language, exact = shard_tables()
    stream = tokenise_shard(
        survivors(docs, blocks, language, exact),
        TokeniseParams(lowercase=True),
        lambda code: frozenset(),
    )
    assert stream.token_hash[0] == stream.token_hash[7]  # "The" == "the"


def test_a_shard_with_nothing_kept():
    docs, blocks, language, exact = shard_tables()
    stream = tokenise_shard(
        survivors(docs, blocks, language, exact.assign(kept=False)),
        TokeniseParams(),
        lambda c: frozenset(),
    )
    assert (
        len(stream.token_hash) == 0
        and stream.block_offsets.tolist() == [0]
        and len(stream.doc_ids) == 0
    )


def test_sentences_start_after_a_final_mark_at_a_chunk_boundary_before_no_lower_case_letter():
    """The rule of `sentence_starts`, and `block_sentences` cuts a block's text where the token
    file's flags do (the two are how dedup's sentence mode and export agree on a sentence)."""
    text = (
        'He said "Stop." Then he left. e.g. not here. Mr. Smith came! Did he? 3.14 is pi. '
        "中文。下面"
    )
    expected = [
        'He said "Stop."',
        "Then he left. e.g. not here.",
        "Mr.",
        "Smith came!",
        "Did he?",
        "3.14 is pi.",
        "中文。下面",
    ]
    assert block_sentences(text) == expected
    assert block_sentences("") == [] and block_sentences("  one  ") == ["one"]
    texts = [text, "", "no end here", "A. B.\u00ad \u00ad C."]
    vocabulary = Vocabulary()
    ids, offsets, chunk_first, _ = tokenise_blocks(texts, vocabulary)
    starts = sentence_starts(ids, chunk_first, offsets, vocabulary.type_list())
    for b, block in enumerate(texts):
        flags = starts[offsets[b] : offsets[b + 1]]
        sentences = block_sentences(block)
        assert flags.sum() == len(sentences)
        # each sentence tokenised alone is the run of tokens between two flags
        cuts = np.flatnonzero(flags).tolist() + [len(flags)]
        types = np.array(vocabulary.type_list(), dtype=object)[ids[offsets[b] : offsets[b + 1]]]
        assert [types[a:z].tolist() for a, z in itertools.pairwise(cuts)] == [
            tokenise(s) for s in sentences
        ]


def test_chunk_ends_are_the_same_whatever_cjk_chars_says():
    """Block dedup's removed parts are cut in whitespace chunks (`tokenise.chunk_ends`), which do
    not depend on how a chunk splits into tokens: export needs no tokeniser, and cjk_chars works
    with the sentence and span levels (issue 37)."""
    from corpusbuilder.tokenise import Vocabulary

    texts = ["日本語のテキスト。 foo \u00ad bar", "\u00ad 東京 x"]
    ends = {}
    for cjk_chars in (True, False):
        ids, offsets, chunk_first, chunk_end = tokenise_blocks(texts, Vocabulary(cjk_chars))
        ends[cjk_chars] = chunk_end[chunk_first].tolist()
        assert len(chunk_end) == len(ids)
    # per chunk holding a token, in each block: past itself and a soft hyphen after it
    assert ends[True] == ends[False] == [1, 3, 4, 2, 3]
