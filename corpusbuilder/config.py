"""Configuration: load `config/config.yaml`, fill defaults from the schema, validate.

The schema (``config/schema.yaml``, shipped inside the package) is the one source of defaults:
a config that leaves a key out takes the schema's value.

The workflow (`rules/common.smk`) and the command line share this code, so a bad value stops
either of them with the same message, naming the key (``extract.max_bytes``), never a traceback.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from corpusbuilder.common.faults import JobFault
from corpusbuilder.common.language_codes import target_code
from corpusbuilder.common.package_data import SCHEMA_PATH

if TYPE_CHECKING:
    import jsonschema

# The workflow's config, relative to the directory snakemake (or a command) runs in.
WORKFLOW_CONFIG_PATH = Path("config") / "config.yaml"


class ConfigError(ValueError, JobFault):
    """A configuration value is missing, unknown or out of range; the message names the key (a
    fault of the setup: the job fails with this one line)."""


def dataclass_values(cls, section: dict, renamed: dict[str, str] | None = None) -> dict[str, Any]:
    """The values of a config section that set fields of the parameters dataclass ``cls`` (a
    section may hold other keys, the stage's own); ``renamed`` maps a field to its config key
    where the two differ. Missing fields keep the class defaults, which
    tests/test_config.py holds equal to the schema's."""
    renamed = renamed or {}
    return {
        name: section[renamed.get(name, name)]
        for name in cls.__dataclass_fields__
        if renamed.get(name, name) in section
    }


def _key_path(path) -> str:
    parts: list[str] = []
    for part in path:
        if isinstance(part, int):
            parts[-1] = f"{parts[-1]}[{part}]" if parts else f"[{part}]"
        else:
            parts.append(str(part))
    return ".".join(parts) or "(top level)"


def _describe(error: jsonschema.ValidationError) -> str:
    key = _key_path(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(allowed))
        where = f"under '{key}'" if error.absolute_path else "at the top level"
        return (
            f"unknown config key {where}: {', '.join(unknown)} (known keys: {', '.join(allowed)})"
        )
    return f"config key '{key}': {error.message}"


def _validator(schema: dict) -> type:
    """A Draft 7 validator that also fills in each property's schema default."""
    import jsonschema

    base = jsonschema.Draft7Validator
    validate_properties = base.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if "default" in subschema and name not in instance:
                    instance[name] = copy.deepcopy(subschema["default"])
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(base, {"properties": set_defaults})


def load_schema(path: Path = SCHEMA_PATH) -> dict:
    """The schema, read with libyaml's loader where PyYAML has it: every Snakemake start (a
    cluster job's too) and every command reads these 36 kB, 0.06 CPU-s in pure Python against
    0.01 (2026-12-03)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(Path(path).read_text(), Loader=loader)


def _coerce_scalars(value: Any, schema: dict) -> Any:
    """Scalars read as the schema's type where YAML read them as another.

    Snakemake's --config parses nested values with YAML's BaseLoader, so every scalar in
    extract='{justext: {length_low: 60}}' arrives as a string: a string is re-read as YAML where
    the schema wants no string (integer, number, boolean, null). And JSON Schema counts 2000.0 as
    an integer, which Python's slices and ranges refuse: an integral float becomes an int where
    the schema wants an integer."""
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        return {key: _coerce_scalars(item, properties.get(key, {})) for key, item in value.items()}
    if isinstance(value, list):
        return [_coerce_scalars(item, schema.get("items", {})) for item in value]
    types = schema.get("type", [])
    types = [types] if isinstance(types, str) else types
    if isinstance(value, str) and types and "string" not in types:
        try:
            parsed = yaml.safe_load(value)
        except yaml.YAMLError:
            return value
        if isinstance(parsed, (str, dict, list)):
            return value
        value = parsed
    if (
        isinstance(value, float)
        and value.is_integer()
        and "integer" in types
        and "number" not in types
    ):
        return int(value)
    return value


def validate_config(config: dict[str, Any], schema: dict | None = None) -> dict[str, Any]:
    """Return a copy of `config` with defaults filled in; raise ConfigError naming the bad key."""
    schema = load_schema() if schema is None else schema
    filled = _coerce_scalars(copy.deepcopy(config), schema)
    errors = sorted(
        _validator(schema)(schema).iter_errors(filled), key=lambda e: list(e.absolute_path)
    )
    if errors:
        raise ConfigError("; ".join(_describe(e) for e in errors))
    if "language" in filled:
        filled["language"]["targets"] = language_targets(filled["language"])
    return filled


def language_targets(section: dict[str, Any]) -> list[str]:
    """`language.targets` as the identifier's codes (``deu``, ``German`` -> ``de``): the filter
    compares them with its output, so a target it never outputs would keep nothing."""
    codes = []
    for index, target in enumerate(section["targets"]):
        try:
            codes.append(target_code(target, section["identifier"]))
        except ValueError as error:
            raise ConfigError(f"config key 'language.targets[{index}]': {error}") from None
    return codes


def load_config(path: Path | None = None) -> dict[str, Any]:
    """Read a YAML config file and validate it; with no `path`, the workflow's
    ``config/config.yaml`` when the working directory has one, else the schema's defaults."""
    if path is None:
        if not WORKFLOW_CONFIG_PATH.is_file():
            return validate_config({})
        path = WORKFLOW_CONFIG_PATH
    path = Path(path)
    try:
        text = path.read_text()
        if any(isinstance(event, yaml.AliasEvent) for event in yaml.parse(text)):
            # an alias repeats a whole subtree without its bytes: a few lines can stand for
            # billions of nodes ("billion laughs") that validation would then walk
            raise ConfigError(f"config file {path} uses YAML aliases (*name); write the values out")
        raw = yaml.safe_load(text) or {}
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except IsADirectoryError:
        raise ConfigError(f"config file {path} is a directory") from None
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise ConfigError(f"config file {path} is not YAML: {str(error).splitlines()[0]}") from None
    if not isinstance(raw, dict):
        raise ConfigError(
            f"config file {path} must hold a mapping of keys, not {type(raw).__name__}"
        )
    return validate_config(raw)


# the best preset's model as the train rule writes it: extract.model may name it before it exists
TRAINED_MODEL = "results/model/best.npz"


def written_by_the_workflow(model: str | Path, base_dir: Path) -> bool:
    """Whether ``model`` (relative to ``base_dir``, or absolute) is the train rule's output: the
    workflow writes it anew when its settings change, so it is checked when extract loads it."""
    return os.path.abspath(base_dir / model) == os.path.abspath(base_dir / TRAINED_MODEL)


COMMENTS_NEED_BEST = (
    "config key 'extract.comments': false (the article alone) needs preset best; the jusText "
    "presets keep all running text, reader comments too (thesis §2.7)"
)


def check_settings(config: dict[str, Any], base_dir: Path) -> None:
    """Stop early, naming the key, on settings that contradict each other or name a file that is
    not there (the inputs themselves: `download.inputs.check_input_paths`)."""
    from corpusbuilder.common.stoplists import PAGE, available_stoplists

    bands, k = config["similarity"]["bands"], config["similarity"]["k"]
    if bands and k % bands:
        raise ConfigError(
            f"config key 'similarity.bands': {bands} does not divide similarity.k = {k}"
        )
    against = config["dedup"]["against"]
    if against is not None and not (base_dir / against).exists():
        raise ConfigError(
            f"config key 'dedup.against': no such file or folder: {base_dir / against} (give the "
            "results/dedup_state folder of the corpus built before)"
        )
    if config["dedup"]["mode"] == "partitioned" and (
        config["dedup"]["hash_bits"] != 64 or config["dedup"]["backend"] != "sorted-array"
    ):
        raise ConfigError(
            "config key 'dedup.hash_bits': the partitioned mode keeps no G_out set to shrink; it "
            "compares full 64-bit hashes (leave dedup.hash_bits at 64 and dedup.backend at "
            "sorted-array, or set dedup.mode: sequential)"
        )
    if config["ngrams"]["mem_mb"] * 1.2 > config["resources"]["max_mem_mb"]:
        raise ConfigError(
            f"config key 'ngrams.mem_mb': its jobs ask for a fifth more, "
            f"{config['ngrams']['mem_mb'] * 1.2:.0f} MB, more than resources.max_mem_mb "
            f"({config['resources']['max_mem_mb']})"
        )
    if config["dedup"]["partial_low"] > config["dedup"]["partial_high"]:
        raise ConfigError(
            "config key 'dedup.partial_low': larger than dedup.partial_high, so the band of "
            "blocks judged by their sentences is empty"
        )
    if config["extract"]["min_bytes"] > config["extract"]["max_bytes"]:
        raise ConfigError(
            "config key 'extract.min_bytes': larger than extract.max_bytes, so every page would be "
            "skipped"
        )
    cc = config["input"]["cc_paths"]
    if cc["listing"] and cc["limit"] == 0:
        raise ConfigError(
            "config key 'input.cc_paths.limit': set how many listing entries to take (> 0)"
        )
    if cc["listing"] and not cc["base_url"]:
        raise ConfigError(
            "config key 'input.cc_paths.base_url': required with input.cc_paths.listing"
        )
    for index, directory in enumerate(config["input"]["text_dirs"]):
        if not (base_dir / directory).is_dir():
            raise ConfigError(
                f"config key 'input.text_dirs[{index}]': no such directory: {base_dir / directory}"
            )
    fallback = config["extract"]["stoplist_fallback"]
    if fallback != PAGE and fallback not in available_stoplists():
        raise ConfigError(
            f"config key 'extract.stoplist_fallback': no stop list {fallback!r}; "
            f"give {PAGE} or one of {', '.join(available_stoplists())}"
        )
    peers = config["extract"]["peers"]
    if peers != "none" and config["extract"]["preset"] != "best":
        raise ConfigError(
            f"config key 'extract.peers': {peers} needs extract.preset: best; the jusText presets "
            "read no other extractor's output"
        )
    if config["extract"]["model"] and config["extract"]["preset"] != "best":
        raise ConfigError(
            "config key 'extract.model': a model is read only with extract.preset: best"
        )
    if not config["extract"]["comments"] and config["extract"]["preset"] != "best":
        raise ConfigError(COMMENTS_NEED_BEST)
    model = config["extract"]["model"]
    if model and not written_by_the_workflow(model, base_dir) and not (base_dir / model).is_file():
        raise ConfigError(
            f"config key 'extract.model': no such file: {base_dir / model} (the train rule "
            f"writes {TRAINED_MODEL}; leave the key out for the shipped model)"
        )
    if not (config["input"]["warcs"] or cc["listing"] or config["input"]["text_dirs"]):
        raise ConfigError(
            "config key 'input.warcs': no input - give WARC paths/URLs, input.cc_paths or "
            "input.text_dirs"
        )
