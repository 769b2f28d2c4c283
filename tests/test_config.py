"""Config validation names the bad key; the bundled config is valid; the CLI reports errors."""

from __future__ import annotations

import pytest

from corpusbuilder.cli import main
from corpusbuilder.config import ConfigError, load_config, validate_config


def test_bundled_config_is_valid_and_defaults_are_filled():
    config = load_config()
    assert config["extract"]["max_bytes"] == 5_000_000
    assert config["download"]["retries"] == 5


@pytest.mark.parametrize(
    "config, message",
    [
        ({"extract": {"min_bytes": -1}}, "config key 'extract.min_bytes'"),
        ({"extract": {"justext": {"length_hgh": 3}}}, "under 'extract.justext': length_hgh"),
        ({"input": {"warcs": [""]}}, "config key 'input.warcs[0]'"),
        ({"download": {"timeout": 0}}, "config key 'download.timeout'"),
        ({"nonsense": 1}, "at the top level: nonsense"),
        ({"train": {"threshold_good": 1.5}}, "config key 'train.threshold_good'"),
    ],
)
def test_bad_values_name_the_key(config, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        validate_config(config)


def test_cli_check_config_reports_the_key(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("extract:\n  preset: Z\n")
    assert main(["check-config", "--config", str(bad)]) == 2
    assert "extract.preset" in capsys.readouterr().err


def test_a_model_without_the_best_preset_is_refused(tmp_path):
    from corpusbuilder.config import check_input_paths

    (tmp_path / "a.warc.gz").write_bytes(b"")
    config = validate_config({"input": {"warcs": ["a.warc.gz"]}, "extract": {"preset": "C", "model": "m.npz"}})
    with pytest.raises(ConfigError, match="config key 'extract.model'"):
        check_input_paths(config, tmp_path)
    assert validate_config({})["extract"]["preset"] == "best"
