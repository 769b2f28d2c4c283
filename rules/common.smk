import functools
import math
import os
import sys
from pathlib import Path

# The rule scripts import the library of this checkout, the one whose rules they run, also from a
# conda env that holds only their dependencies (envs/*.yaml) and on cluster nodes: the checkout
# goes first on the path of this process (for the imports below) and of every job.
sys.path.insert(0, workflow.basedir)
if workflow.basedir not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ.update(
        PYTHONPATH=os.pathsep.join(
            filter(None, [workflow.basedir, os.environ.get("PYTHONPATH")])
        )
    )

from corpusbuilder.config import TRAINED_MODEL, ConfigError, validate_config
from corpusbuilder.dedup.memory import (
    SPARE,
    TOKEN_FILE_BYTES_PER_TOKEN,
    auto_dedup_mode,
    auto_dedup_partitions,
    auto_state_partitions,
    dedup_memory_mb_by_sizes,
    largest_shard_bytes,
    partitioned_job_mb,
    planned_range_job_mb,
    planned_state_job_mb,
    state_part_memory_mb,
    state_run_rows,
)
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.download.inputs import check_input_paths, resolve_sources
from corpusbuilder.download.sources import group_sources, shard_name
from corpusbuilder.evaluation.gold import gold_source
from corpusbuilder.common.sizing import (
    AUTO,
    REMOTE_WARC_BYTES,
    crawl_bytes,
    fewest_partitions,
    planned_partitions,
    planned_parts,
    report_count_ranges,
)
from corpusbuilder.download.sources import local_path, parse_source, split_shards
from corpusbuilder.download.transfer import GZIP_MAGIC
from corpusbuilder.exact_dedup import AUTO_BYTES_PER_PARTITION as EXACT_AUTO_BYTES
from corpusbuilder.exact_dedup import AUTO_MAX_PARTITIONS as EXACT_AUTO_MAX
from corpusbuilder.exact_dedup import HASH_FILE_BYTES_PER_INPUT_BYTE
from corpusbuilder.exact_dedup import MAX_PARTITIONS as EXACT_MAX_PARTITIONS
from corpusbuilder.exact_dedup import partition_job_mb
from corpusbuilder.exact_dedup import earlier_shards_digests
from corpusbuilder.ngrams.stage import AUTO_BYTES_PER_PARTITION as NGRAM_AUTO_BYTES
from corpusbuilder.ngrams.stage import AUTO_MAX_PARTITIONS as NGRAM_AUTO_MAX
from corpusbuilder.common.package_data import SHIPPED_MODEL, shipped_peer_model
from corpusbuilder.common.provenance import file_sha256
from corpusbuilder.extraction.extract import READING_KEYS, check_planned_settings
from corpusbuilder.extraction.warc_parts import RECORD_LIMITS
from corpusbuilder.similarity.minhash import MinHashParams
from corpusbuilder.similarity.partitioned import band_job_count, job_memory_mb_by_files
from corpusbuilder.contracts.files import FILES, dedup_table
from corpusbuilder.contracts.tables import collected_files
from corpusbuilder.contracts.ngramfiles import dedup_state_parts

if not config:
    raise WorkflowError(
        f"no configuration: {Path.cwd()} has no config/config.yaml; give one with --configfile FILE"
    )
try:
    config.update(validate_config(config))
    check_input_paths(config, Path.cwd())
    EXTRACT_PARAMS = check_planned_settings(config["extract"], Path.cwd())
    # {shard: {warc: source}}, input.warcs_per_shard WARCs a shard
    SOURCES = group_sources(
        resolve_sources(
            config["input"]["warcs"],
            cc_listing=config["input"]["cc_paths"]["listing"],
            cc_base_url=config["input"]["cc_paths"]["base_url"],
            cc_limit=config["input"]["cc_paths"]["limit"],
            base_dir=Path.cwd(),
            s3=config["download"]["s3"],
        ),
        config["input"]["warcs_per_shard"],
    )
except (ConfigError, ValueError) as error:
    raise WorkflowError(f"bad configuration: {error}") from None

TEXT_SOURCES = {
    shard_name(directory): str(Path(directory).resolve())
    for directory in config["input"]["text_dirs"]
}
# A WARC larger than input.shard_mb is read as several shards (extraction.warc_parts): their
# number is planned from a local WARC's size, a Common Crawl listing's WARC's taken as
# sizing.REMOTE_WARC_BYTES (a listing's sizes are not known before download); a remote WARC named
# in input.warcs (of no known size: a small one would make empty parts), a plain WARC, or one of
# several a shard, is read whole. {shard: (download group, part, parts)}, in crawl order.
SHARD_BYTES = (
    largest_shard_bytes(config["resources"]["max_mem_mb"])
    if config["input"]["shard_mb"] == AUTO
    else config["input"]["shard_mb"] and round(config["input"]["shard_mb"] * 2**20)
)


NAMED_SOURCES = set(
    resolve_sources(
        config["input"]["warcs"], base_dir=Path.cwd(), s3=config["download"]["s3"]
    ).values()
)


def warc_bytes(warcs):
    """A group's WARC's size, when it is one WARC that may be split; None when it is not."""
    if len(warcs) > 1:
        return None
    source = next(iter(warcs.values()))
    kind, location = parse_source(source)
    if kind != "local":
        return None if source in NAMED_SOURCES else REMOTE_WARC_BYTES
    path = local_path(location, Path.cwd())
    with open(path, "rb") as file:
        return path.stat().st_size if file.read(2) == GZIP_MAGIC else None


WARC_SHARDS = split_shards(
    SOURCES,
    {
        group: planned_parts(warc_bytes(warcs), SHARD_BYTES)
        for group, warcs in SOURCES.items()
    },
)
# the split WARCs' groups: {group: parts}
SPLIT = {group: parts for group, _, parts in WARC_SHARDS.values() if parts > 1}
SHARDS = list(WARC_SHARDS) + list(TEXT_SOURCES)
# The n-gram runs: one a download group, of its shards' tokens in crawl order (a split WARC's
# parts make one run: G2+'s merge passes grow with the runs), and one a text_dirs shard.
RUN_SHARDS = {}
for shard, (group, _, _) in WARC_SHARDS.items():
    RUN_SHARDS.setdefault(group, []).append(shard)
RUN_SHARDS.update({shard: [shard] for shard in TEXT_SOURCES})
# a shard's position in crawl order (a dict: SHARDS.index per job would make planning quadratic)
SHARD_RANK = {shard: rank for rank, shard in enumerate(SHARDS)}


def shard_source(shard):
    """What a WARC shard reads, as the exact-dedup digests name it: its WARCs' sources, and
    which part of its one WARC it is."""
    group, part, parts = WARC_SHARDS[shard]
    sources = "\n".join(SOURCES[group].values())
    return sources if parts == 1 else f"{sources}#part {part} of {parts}"


# exact dedup: the sources of the shards before each (rules/exact_dedup.smk), and its partitions
EARLIER_SHARDS = dict(
    zip(
        SHARDS,
        earlier_shards_digests(
            [*map(shard_source, WARC_SHARDS), *TEXT_SOURCES.values()]
        ),
    )
)
# The crawl's size at planning: the partitions set to auto follow it (common.sizing); the
# number planned replaces auto in the config, so the jobs' params carry it.
WARC_INPUTS = [
    parse_source(source) for warcs in SOURCES.values() for source in warcs.values()
]
INPUT_BYTES = crawl_bytes(
    [
        *(
            local_path(location, Path.cwd())
            for kind, location in WARC_INPUTS
            if kind == "local"
        ),
        *map(Path, TEXT_SOURCES.values()),
    ],
    remote=sum(kind != "local" for kind, _ in WARC_INPUTS),
)
# resources.max_mem_mb: no job of a family set to auto needs more at the crawl's projected size
MAX_MEM_MB = config["resources"]["max_mem_mb"]
config["exact_dedup"]["partitions"] = planned_partitions(
    config["exact_dedup"]["partitions"],
    INPUT_BYTES,
    EXACT_AUTO_BYTES,
    EXACT_AUTO_MAX,
    fewest_partitions(
        lambda partitions: partition_job_mb(
            INPUT_BYTES * HASH_FILE_BYTES_PER_INPUT_BYTE / 2**20, partitions
        ),
        MAX_MEM_MB,
        EXACT_MAX_PARTITIONS,
    ),
)
# (a merge job holds ngrams.mem_mb whatever the crawl: validated against resources.max_mem_mb)
config["ngrams"]["partitions"] = planned_partitions(
    config["ngrams"]["partitions"], INPUT_BYTES, NGRAM_AUTO_BYTES, NGRAM_AUTO_MAX
)
# dedup.mode auto: sequential on a small crawl, partitioned on a large one (docs/dedup-scale.md)
DEDUP_MODE_CHOICE = (
    auto_dedup_mode(
        INPUT_BYTES, len(SHARDS), DedupParams.from_config(config["dedup"]), MAX_MEM_MB
    )
    if config["dedup"]["mode"] == AUTO
    else None
)
if DEDUP_MODE_CHOICE:
    config["dedup"]["mode"] = DEDUP_MODE_CHOICE[0]
if config["dedup"]["partitions"] == AUTO:
    config["dedup"]["partitions"] = auto_dedup_partitions(INPUT_BYTES, MAX_MEM_MB)
EXACT_PARTITIONS = config["exact_dedup"]["partitions"]
EXACT_HASHES = expand(FILES.exact_hashes, shard=SHARDS)
TOKENS = expand(FILES.tokens, shard=SHARDS)
# Under a default storage provider (docs/cluster.md, a cloud run) a job sees only the files it
# names.
STORAGE = workflow.storage_settings.default_storage_provider is not None
# {rule: (folder, {kind: files}, kept)}: what each rule of rules/collect.smk collects, for the
# jobs of a family that read every file of a kind the other family writes
COLLECT = {}


def collection(rule, folder, kept=False, **kinds):
    """Register the local rule `rule`, which collects the files of each kind into `folder`, a
    temp() one unless `kept`."""
    COLLECT[rule] = (folder, kinds, kept)


def collected(rule, kind):
    """An input of every file of `kind` that `rule` collects: its folder (one edge, where a job
    that named the N files would make N), or under a default storage provider the files.
    """
    folder, kinds, _ = COLLECT[rule]
    return kinds[kind] if STORAGE else folder


# The best preset's model is an input of extract, so a retrained model re-extracts the shards;
# with adapt.enabled, the model adapted to this crawl (rules/adapt.smk) from the configured one.
# Which model a config reads (extract.model, comments, peers) is ExtractParams.model_file's call.
BASE_MODEL = str(
    config["extract"]["preset"] == "best" and EXTRACT_PARAMS.model_file or SHIPPED_MODEL
)
ADAPTED_MODEL = FILES.adapted_model
# Under a default storage provider (docs/cluster.md, a cloud run) every input is looked for in
# the bucket, and a job with a local() one runs where Snakemake runs. A model of the
# installation (an absolute path: the package's shipped models, which the jobs' image carries)
# is then no input of extract but its param by digest, so that a new one still re-extracts.
INSTALLED_MODEL = (
    workflow.storage_settings.default_storage_provider is not None
    and config["extract"]["preset"] == "best"
    and not config["adapt"]["enabled"]
    and os.path.isabs(BASE_MODEL)
)


def adapt_problem():
    """Why adapt.enabled cannot run with this config, or None: self-training adapts the best
    preset's model to WARC pages, beside the gold sets it refits on."""
    if config["extract"]["preset"] != "best":
        return f"it adapts the learned classifier of extract.preset best, not preset {config['extract']['preset']}"
    if not SOURCES:
        return "there are no WARC inputs to adapt to (input.warcs); text_dirs shards are not extracted"
    gold_dir = Path(config["evaluate"]["gold_dir"])
    missing = [d for d in config["train"]["datasets"] if not (gold_dir / d).is_dir()]
    if missing:
        return (
            f"it refits beside the gold sets of train.datasets, and evaluate.gold_dir ({gold_dir}) "
            f"holds no {', '.join(missing)}"
        )
    return None


if config["adapt"]["enabled"] and (problem := adapt_problem()):
    raise WorkflowError(f"bad configuration: config key 'adapt.enabled': {problem}")


def distil_problem():
    """Why train.distil cannot run with this config, or None: the shipped stacked model labels
    pages drawn from this crawl for best alone, which reads no peer."""
    if config["extract"]["preset"] != "best" or config["extract"]["peers"] != "none":
        return "the student is best alone: it needs extract.preset best and extract.peers none"
    if not SOURCES:
        return "there are no WARC pages for the teacher to label (input.warcs)"
    return None


DISTIL = config["train"]["distil"]
if DISTIL["teacher"] != "none" and (problem := distil_problem()):
    raise WorkflowError(
        f"bad configuration: config key 'train.distil.teacher': {problem}"
    )
# rule train's teacher and the pages it labels (none without a teacher)
DISTIL_TEACHER = (
    [str(shipped_peer_model("all", config["extract"]["comments"]))]
    if DISTIL["teacher"] == "peers-all"
    else []
)
DISTIL_SAMPLES = (
    expand(FILES.distil_sample, shard=list(SOURCES)) if DISTIL_TEACHER else []
)

# How the extract stage reads a page, which the readings of the gold pages follow (a param of
# training_blocks, sweep and evaluate_boilerplate: a change re-reads the gold pages).
READING_CFG = {key: config["extract"][key] for key in READING_KEYS}

EXTRACT_MODEL = (
    [ADAPTED_MODEL if config["adapt"]["enabled"] else BASE_MODEL]
    if config["extract"]["preset"] == "best" and not INSTALLED_MODEL
    else []
)
# ... and when it is no input, its digest, a param of extract (see INSTALLED_MODEL)
INSTALLED_MODEL_DIGEST = (
    {"model_sha256": file_sha256(BASE_MODEL)} if INSTALLED_MODEL else {}
)
# The extract rule's parameters name the adapted model only when there is one: a path of this
# checkout in them would re-extract every shard whenever the checkout moves.
EXTRACT_CFG = (
    {**config["extract"], "model": ADAPTED_MODEL}
    if config["adapt"]["enabled"]
    else config["extract"]
)


# An earlier corpus's dedup state, its parts in hash order: one more run of G2+, and G_out's
# start (dedup.against); each range job reads its range of them, whatever ranges they hold.
try:
    AGAINST = (
        dedup_state_parts(config["dedup"]["against"])
        if config["dedup"]["against"]
        else []
    )
except ConfigError as error:
    raise WorkflowError(f"bad configuration: {error}") from None
# dedup.mode partitioned: jobs per shard and per hash range (rules/dedup.smk)
DEDUP_PARTITIONED = config["dedup"]["mode"] == "partitioned"
DEDUP_PARTITIONS = config["dedup"]["partitions"]
# ... and this corpus's state, for the next (dedup.write_state): a part per hash range of its own
# (dedup.state_partitions; auto: enough that a job's share of this corpus's output n-grams fits
# resources.max_mem_mb), each written by its job, or one part by the sequential job. The number
# is a param of the two rules it shapes alone (dedup_shard's runs, dedup_state), not written into
# the config every dedup job carries: a change reruns only them.
DEDUP_STATE_PARTS = (
    (
        auto_state_partitions(INPUT_BYTES, MAX_MEM_MB, DEDUP_PARTITIONS)
        if config["dedup"]["state_partitions"] == AUTO
        else config["dedup"]["state_partitions"]
    )
    if DEDUP_PARTITIONED
    else 1
)
DEDUP_STATE = (
    expand(
        FILES.dedup_state,
        partition=range(DEDUP_STATE_PARTS),
        partitions=DEDUP_STATE_PARTS,
    )
    if config["dedup"]["write_state"]
    else []
)
# block dedup's verdicts on every shard: the sequential job's folder, or a table a shard (a list
# either way, as the scripts read it: contracts.files.dedup_tables_of)
DEDUP_TABLES = (
    (expand(FILES.dedup, shard=SHARDS) if DEDUP_PARTITIONED else [FILES.dedup_tables])
    if config["dedup"]["enabled"]
    else []
)

# The n-gram list G2+ and the dedup pass must agree on n and on the token kind.
NGRAM_CFG = {
    "n": config["dedup"]["ngram"],
    "kind": config["dedup"]["kind"],
    "mem_mb": config["ngrams"]["mem_mb"],
    "min_count": 2,
}
# G2+ in hash ranges, one merge job each, in partition order
NGRAM_PARTITIONS = config["ngrams"]["partitions"]
DUPLICATE_NGRAMS = expand(
    FILES.duplicate_ngrams, n=NGRAM_CFG["n"], partition=range(NGRAM_PARTITIONS)
)
DUPLICATE_NGRAMS_STATS = expand(
    FILES.duplicate_ngrams_part_stats,
    n=NGRAM_CFG["n"],
    partition=range(NGRAM_PARTITIONS),
)


wildcard_constraints:
    shard="[A-Za-z0-9][A-Za-z0-9._-]*",
    band_job="[0-9]+",
    dataset="[a-z0-9-]+",
    source="[a-z0-9-]+",
    partition="[0-9]+",


def corpus_files():
    return expand(
        [FILES.corpus_jsonl, FILES.corpus_prevert, FILES.corpus_vert], shard=SHARDS
    )


def stage_files():
    """{rule: {shard: file}}: each shard's file of each stage whose output decides the text,
    under the rule that writes it, so that `-R rule` rewrites it (extract's docs table, or
    text_input's, stands for its blocks; a part of G2+ by its stats, keyed by hash range); the
    provenance record reads the versions that wrote them."""
    files = {}
    for shard in SHARDS:
        extract = "text_input" if shard in TEXT_SOURCES else "extract"
        for writer, pattern in [
            (extract, FILES.docs),
            ("language", FILES.language),
            ("exact_dedup", FILES.exact),
            ("quality", FILES.quality),
            # the vertical file's tokens, whether or not block dedup reads them too
            ("tokenise", FILES.tokens),
        ]:
            files.setdefault(writer, {})[shard] = pattern.format(shard=shard)
    if config["dedup"]["enabled"]:
        files["ngram_runs"] = {
            run: FILES.ngram_runs.format(shard=run) for run in RUN_SHARDS
        }
        files["dup_ngram_part"] = {
            str(partition): FILES.duplicate_ngrams_part_stats.format(
                n=NGRAM_CFG["n"], partition=partition
            )
            for partition in range(NGRAM_PARTITIONS)
        }
        writer = "dedup_shard" if DEDUP_PARTITIONED else "dedup"
        files[writer] = {shard: dedup_table(shard) for shard in SHARDS}
    return files


def stage_file_inputs():
    """stage_files() as inputs: block dedup's, from the sequential job, as its one folder."""
    files = stage_files()
    if config["dedup"]["enabled"] and not DEDUP_PARTITIONED:
        files["dedup"] = {"": FILES.dedup_tables}
    return [path for found in files.values() for path in found.values()]


def corpus_outputs():
    outputs = corpus_files()
    outputs += [FILES.funnel, FILES.provenance]
    if config["dedup"]["enabled"]:
        # the state in either mode: where a build of the other mode left its tables, the state
        # missing in this mode's ranges reruns its writer (the tables with it); the partitioned
        # mode's stats have a job of their own, the sequential job writes them beside its tables
        outputs += [*DEDUP_STATE, *([FILES.dedup_stats] if DEDUP_PARTITIONED else [])]
    if config["similarity"]["enabled"]:
        outputs.append(FILES.similar_pairs)
    return outputs


def files_bytes(paths):
    """The size of those of `paths` there are (a job's memory scaled by files that are not its
    inputs, or not all of them, or collected in a folder)."""
    return sum(os.path.getsize(path) for path in paths if os.path.exists(path))


def collected_bytes(given, kind):
    """The bytes of a kind's files as a job was given them (`collected_files`). A collected
    folder's are summed once per folder as written: every range job of a family reads the same
    folder, and summed per job that is N sizes P times (5 x 10^8 at 10^12 words)."""
    given = [given] if isinstance(given, str) else list(given)
    manifest = Path(given[0]) / f"{kind}.txt"
    if len(given) == 1 and manifest.exists():
        return _folder_bytes(str(manifest.parent), kind, manifest.stat().st_mtime_ns)
    return files_bytes(collected_files(given, kind))


@functools.cache
def _folder_bytes(folder, kind, written_ns):
    return files_bytes(collected_files(folder, kind))


def files_mb(paths):
    return files_bytes(paths) >> 20


def dedup_mem_mb(wildcards, input):
    """The dedup job's memory with a fifth to spare (its peak on the dev crawl varied from 317 to
    355 MB against 336 stated), from the sizes of G2+'s parts and of the token files there are:
    before they exist only the modules count, and Snakemake evaluates it again once the job is
    ready to run.
    """
    need = dedup_memory_mb_by_sizes(
        [p for p in input.duplicates if os.path.exists(p)],
        [p for p in input.tokens if os.path.exists(p)],
        DedupParams.from_config(config["dedup"]),
    )
    return math.ceil(need["total"] * 1.2)


def extract_inputs(wildcards):
    """The shard's WARCs (its download group's folder), the model, and for a part of a split WARC
    where the parts begin."""
    group, _, parts = WARC_SHARDS[wildcards.shard]
    inputs = {"warcs": FILES.warcs.format(shard=group), "model": EXTRACT_MODEL}
    if parts > 1:
        inputs["starts"] = FILES.warc_parts.format(shard=group)
    return inputs


def survivor_inputs(wildcards):
    """Extract's tables, the document filters, and block dedup's verdicts when it runs (its
    folder of every shard's tables: the dedup job's one output)."""
    inputs = {
        stage: getattr(FILES, stage).format(**wildcards)
        for stage in ["docs", "blocks", "language", "exact"]
    }
    if config["dedup"]["enabled"]:
        # the sequential job's one folder, or the partitioned mode's table of this shard
        inputs["dedup"] = (
            dedup_table(wildcards.shard) if DEDUP_PARTITIONED else FILES.dedup_tables
        )
    return inputs


def shard_table_inputs(wildcards):
    """What survives (survivor_inputs) and the quality stage's signals and verdicts: every table
    of a shard (what the funnel counts and the report shows of it)."""
    return {**survivor_inputs(wildcards), "quality": FILES.quality.format(**wildcards)}


def export_inputs(wildcards):
    """A shard's tables (shard_table_inputs) and its token file, whose tokens the vertical file
    takes."""
    return {**shard_table_inputs(wildcards), "tokens": FILES.tokens.format(**wildcards)}


def gold_sets(datasets):
    """An input function: the gold set folders a rule reads. Evaluated only when the rule is
    wanted, so the corpus build runs without them; a missing one stops the run naming the key.
    """

    def folders(wildcards):
        gold_dir = Path(config["evaluate"]["gold_dir"])
        missing = [name for name in datasets if not (gold_dir / name).is_dir()]
        if missing:
            raise WorkflowError(
                f"config key 'evaluate.gold_dir': {gold_dir} holds no gold set "
                f"{', '.join(missing)} (set evaluate.gold_dir, or evaluate.datasets)"
            )
        return [str(gold_dir / name) for name in datasets]

    return folders


def training_blocks(datasets=None):
    """The stored training blocks of the train.datasets gold sets (all of them by default)."""
    datasets = config["train"]["datasets"] if datasets is None else datasets
    return expand(FILES.train_blocks, dataset=datasets)


def training_blocks_without(wildcards):
    """An input function: the training blocks of every gold set outside source {source}."""
    return training_blocks(
        [d for d in config["train"]["datasets"] if gold_source(d) != wildcards.source]
    )


def held_out_models(extractor="best"):
    """The models an extractor is scored with: per gold source evaluated, one trained without
    it (`best`), and that one adapted to the source's pages by self-training (`best-adapted`).
    """
    if extractor not in config["evaluate"]["extractors"]:
        return []
    pattern = {
        "best": FILES.held_out_model,
        "best-adapted": FILES.adapted_held_out_model,
    }
    sources = sorted({gold_source(d) for d in config["evaluate"]["datasets"]})
    return expand(pattern[extractor], source=sources)


def source_pages(wildcards):
    """An input function: every block of the evaluated gold sets of source {source}, as
    training_blocks reads them (train.max_pages): what the held-out model adapts to before it is
    scored on those sets (evaluate.max_pages of their pages)."""
    return [
        FILES.train_pages.format(dataset=dataset)
        for dataset in config["evaluate"]["datasets"]
        if gold_source(dataset) == wildcards.source
    ]


def stale_corpus_files():
    """Files in the corpus folder that this config does not build: shards of an earlier run over
    other inputs. They are not part of this corpus, yet sit beside it."""
    wanted = {str(Path(path)) for path in corpus_outputs()}
    return sorted(
        str(path)
        for path in Path(FILES.corpus_jsonl).parent.glob("*")
        if path.is_file() and str(path) not in wanted
    )


onstart:
    if DEDUP_MODE_CHOICE and config["dedup"]["enabled"]:
        logger.info(
            f"dedup.mode auto: {DEDUP_MODE_CHOICE[0]} ({DEDUP_MODE_CHOICE[1]}), "
            f"{DEDUP_PARTITIONS} hash range(s)"
        )
    if (
        DEDUP_PARTITIONED
        and (need := planned_range_job_mb(INPUT_BYTES, DEDUP_PARTITIONS))
        > MAX_MEM_MB
    ):
        logger.warning(
            f"dedup.partitions: each of {DEDUP_PARTITIONS} range jobs needs about {need} MB at this "
            f"crawl's projected size, more than resources.max_mem_mb ({MAX_MEM_MB}): more "
            "ranges, or (at 4096) the counts job's two counts a document are past it "
            "(docs/dedup-scale.md)"
        )
    if (
        DEDUP_PARTITIONED
        and DEDUP_STATE
        and (need := planned_state_job_mb(INPUT_BYTES, DEDUP_STATE_PARTS))
        > MAX_MEM_MB
    ):
        logger.warning(
            f"dedup.state_partitions: each of {DEDUP_STATE_PARTS} state jobs needs about {need} MB "
            f"at this crawl's projected size, more than resources.max_mem_mb ({MAX_MEM_MB}): more "
            "ranges (auto plans them)"
        )
    if stale := stale_corpus_files():
        logger.warning(
            f"{Path(FILES.corpus_jsonl).parent}/ holds {len(stale)} file(s) of shards not in "
            "this config's input (an earlier run over other WARCs); they are not part of this "
            "corpus. Remove them with: rm " + " ".join(stale)
        )


def partitioned_mem_mb(job):
    """A partitioned dedup job's memory with a fifth to spare, from its token files' sizes
    (corpusbuilder.dedup.memory.partitioned_job_mb, as dedup.partitions auto plans them).
    """

    def mem_mb(wildcards, input):
        tokens = collected_bytes(input.tokens, "tokens") // TOKEN_FILE_BYTES_PER_TOKEN
        return partitioned_job_mb(job, tokens, DEDUP_PARTITIONS)

    return mem_mb


def state_part_mem_mb(wildcards, input):
    """A state part's job: its range of every shard's run, merged with the earlier state's rows
    in it (memory.state_part_memory_mb), with a fifth to spare."""
    rows = state_run_rows(collected_bytes(input.state_runs, "state_runs"))
    return math.ceil(SPARE * state_part_memory_mb(rows, DEDUP_STATE_PARTS))


def similarity_mem_mb(job):
    """A similarity pairing job's memory with a fifth to spare, from the footers of its input
    files (corpusbuilder.similarity.partitioned.job_memory_mb)."""

    def mem_mb(wildcards, input):
        return math.ceil(
            1.2
            * job_memory_mb_by_files(
                job,
                input.signatures,
                MinHashParams.from_config(config["similarity"]),
                config["similarity"]["key_passes"],
                config["similarity"]["partitions"],
                candidate_paths=input.get("candidates", []),
                pair_paths=input.get("pairs", []),
            )
        )

    return mem_mb


def corpus_stats_shard_inputs(wildcards):
    """A shard's token file and blocks, block dedup's verdicts on it when it ran (the sequential
    job's folder, or the partitioned mode's table of this shard), and the funnel, whose words
    set the resemblance sample's rate."""
    inputs = {
        "funnel": FILES.funnel,
        "tokens": FILES.tokens.format(**wildcards),
        "blocks": FILES.blocks.format(**wildcards),
    }
    if config["dedup"]["enabled"]:
        inputs["dedup"] = (
            dedup_table(wildcards.shard) if DEDUP_PARTITIONED else FILES.dedup_tables
        )
    return inputs


# The page summaries' merge tree (rules/report.smk: report_summary_group, report_summary).
from corpusbuilder.report.summary import merge_group, merge_tree

# the files of each level of the tree, the shards' first
REPORT_SUMMARY_FILES = merge_tree(len(SHARDS))


def summary_files(level, members):
    """Files `members` of level `level` of the merge tree, in shard order."""
    if level == 0:
        return expand(FILES.report_shard_summary, shard=[SHARDS[i] for i in members])
    return expand(FILES.report_summary_group, level=level, group=members)


def summary_group_inputs(wildcards):
    """Merge job `group` of level `level`: its group of the level below."""
    level = int(wildcards.level)
    members = merge_group(int(wildcards.group), REPORT_SUMMARY_FILES[level - 1])
    return summary_files(level - 1, members)
