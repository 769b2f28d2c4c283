from pathlib import Path

from corpusbuilder.config import ConfigError, check_input_paths, validate_config
from corpusbuilder.download import resolve_sources

try:
    config.update(validate_config(config))
    check_input_paths(config, Path.cwd())
    SOURCES = resolve_sources(
        config["input"]["warcs"],
        cc_listing=config["input"]["cc_paths"]["listing"],
        cc_base_url=config["input"]["cc_paths"]["base_url"],
        cc_limit=config["input"]["cc_paths"]["limit"],
        base_dir=Path.cwd(),
    )
except (ConfigError, ValueError) as error:
    raise WorkflowError(f"bad configuration: {error}") from None

SHARDS = list(SOURCES)


wildcard_constraints:
    shard="[A-Za-z0-9][A-Za-z0-9._-]*",


def corpus_outputs():
    return expand(
        "results/corpus/{shard}.{ext}", shard=SHARDS, ext=["jsonl.gz", "prevert.gz"]
    )
