"""Scripts written without spaces (Chinese, Japanese, Thai) keep their text under every preset.

A block's length is counted in units that mean about the same across scripts: a character of
such a script is one (`common.scripts`), where a whitespace count made a paragraph one "word"
and the thesis presets, which measure words, dropped it as a short block."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from corpusbuilder.common.scripts import script_units, unit_tokens
from corpusbuilder.evaluation.metrics import bag_of_words_counts
from corpusbuilder.extraction.extract import ExtractParams, clean_page
from corpusbuilder.extraction.justext import PRESETS
from corpusbuilder.extraction.segmentation import parse_html, segment_blocks

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "scripts"
PAGES = sorted(FIXTURES.glob("*.html"))
PRESET_NAMES = [*PRESETS, "best"]


def paragraphs(path: Path) -> list[str]:
    return re.findall(r"<p>(.*?)</p>", path.read_text(encoding="utf-8"))


def test_the_fixtures_are_one_and_four_paragraph_pages_in_each_script():
    assert sorted(p.stem for p in PAGES) == [
        f"{language}-{kind}" for language in ("ja", "th", "zh") for kind in ("four", "one")
    ]
    for path in PAGES:
        assert len(paragraphs(path)) == (1 if path.stem.endswith("one") else 4)


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("path", PAGES, ids=[p.stem for p in PAGES])
def test_every_paragraph_is_kept_and_the_menu_and_footer_are_not(path, preset):
    page = clean_page(path.read_bytes(), "utf-8", ExtractParams().with_preset(preset))
    assert page.language == path.stem.split("-")[0]
    good = [b.text for b in page.blocks if b.final_class == "good"]
    assert [p for p in paragraphs(path) if p not in good] == []
    menu_and_footer = re.findall(r"<(?:a href=\"/\d\"|footer)>(.*?)</", path.read_text("utf-8"))
    assert len(menu_and_footer) == 6
    assert [text for text in menu_and_footer if text in good] == []


def test_a_character_of_a_script_without_spaces_is_one_unit():
    assert script_units("The quick brown fox") == 4
    assert script_units("長江是中国第一大河") == 9
    assert script_units("ข้าว") == 4  # code points: a vowel sign and a tone mark count too
    assert script_units("寿司 sushi は、おいしい。") == 2 + 1 + 1 + 1 + 4 + 1
    assert unit_tokens("a 東京 b") == ["a", "東", "京", "b"]
    assert unit_tokens("plain  words\nonly") == ["plain", "words", "only"]


def test_blocks_count_length_in_units_and_stop_words_over_whitespace_words():
    path = FIXTURES / "zh-one.html"
    blocks = segment_blocks(parse_html(path.read_bytes()), frozenset({"长江是中国第一大河"}))
    [paragraph] = [b for b in blocks if b.text == paragraphs(path)[0]]
    assert paragraph.n_words == len(paragraph.text) > 200
    # the package's density, over whitespace words: the `default` preset's parity holds
    assert paragraph.stopword_density == 0.0
    menu = [b for b in blocks if b.text == "首页"]
    assert menu and menu[0].n_words == 2


def test_the_scorer_counts_a_character_of_such_a_script_as_a_token():
    counts = bag_of_words_counts("长江是中国", "长江是中国第一大河")
    assert (counts.matched, counts.output, counts.gold) == (5, 5, 9)
