# corpusbuilder: WARC crawls → clean, de-duplicated text corpus (Pomikálek 2011: jusText + onion).
# Stages and their files are listed in docs/stages.md; every threshold lives in config/config.yaml.
from pathlib import Path

from snakemake.utils import min_version

min_version("9.0")


# The working directory's config/config.yaml, when it has one; from a directory of your own,
# give yours with --configfile (rules/common.smk says so when neither is there).
if Path("config/config.yaml").is_file():

    configfile: "config/config.yaml"


include: "rules/common.smk"
include: "rules/download.smk"
include: "rules/extract.smk"
include: "rules/text_input.smk"
include: "rules/language.smk"
include: "rules/exact_dedup.smk"
include: "rules/tokenise.smk"
include: "rules/ngrams.smk"
include: "rules/dedup.smk"
include: "rules/quality.smk"
include: "rules/export.smk"
include: "rules/similarity.smk"
include: "rules/report.smk"
include: "rules/evaluate.smk"
include: "rules/train.smk"
include: "rules/adapt.smk"
include: "rules/collect.smk"


rule all:
    default_target: True
    input:
        corpus_outputs(),
