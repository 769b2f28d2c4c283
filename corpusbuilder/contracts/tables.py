"""The tables passed between stages: where each lives, its schema, how it is read, and the one
join every consumer asks — which documents and blocks survive the stages that ran.

This is the library's contracts layer. A stage module computes over plain DataFrames and Arrow
tables; it takes another stage's table from here and never names that table's columns or file
layout itself. The workflow takes its per-shard paths from `FILES` (rules/common.smk), so a file
is spelled once. The token file (``work/tokens/{shard}.npz``) has its own module, `tokenfile`.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from corpusbuilder.common.faults import names_the_file
from corpusbuilder.common.io import atomic_path, part_count, read_part, read_parts, write_parts
from corpusbuilder.config import ConfigError
from corpusbuilder.contracts.files import FILES, dedup_table, dedup_tables_of

if TYPE_CHECKING:
    import pandas as pd

# --------------------------------------------------------------------------- what

# what a page says about itself (extraction.metadata; null where it says nothing, and for a text
# input), carried by a document into the corpus: title, author(s) "; "-separated, the date
# published (YYYY-MM-DD), site name, canonical URL
METADATA_COLUMNS = ("title", "author", "published", "sitename", "canonical_url")

# extract (and text_input): a row per WARC record, with why it was skipped
DOCS_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),  # "{warc}:{its index in that WARC}", whatever shard holds the WARC
        ("shard", pa.string()),
        ("record_index", pa.int64()),  # position in the shard (its WARCs in input order)
        ("warc", pa.string()),  # the WARC the record is in; null for a text input
        ("offset", pa.int64()),  # in that WARC
        ("warc_type", pa.string()),
        ("uri", pa.string()),
        ("warc_record_id", pa.string()),  # WARC-Record-ID, null for a text input
        ("date", pa.string()),  # WARC-Date: when the page was fetched
        ("status", pa.int32()),
        ("content_type", pa.string()),
        ("charset", pa.string()),
        ("charset_source", pa.string()),
        (
            "replaced_characters",
            pa.int32(),
        ),  # broken UTF-8 bytes replaced by U+FFFD (charset_source utf8-lenient)
        ("page_language", pa.string()),
        ("page_language_probability", pa.float32()),
        ("stoplist", pa.string()),
        ("outcome", pa.string()),
        ("reason", pa.string()),
        ("n_blocks", pa.int32()),
        ("n_good_blocks", pa.int32()),
        ("n_good_words", pa.int32()),
        *((name, pa.string()) for name in METADATA_COLUMNS),
    ]
)

# extract: a row per jusText block of a cleaned page, in page order
BLOCKS_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("block_index", pa.int32()),
        ("text", pa.string()),
        ("dom_path", pa.string()),
        ("xpath", pa.string()),
        ("heading", pa.bool_()),
        ("n_chars", pa.int32()),
        ("n_words", pa.int32()),
        ("n_stopwords", pa.int32()),
        ("link_density", pa.float32()),
        ("stopword_density", pa.float32()),
        ("cf_class", pa.string()),
        ("final_class", pa.string()),
        ("site_boilerplate", pa.bool_()),  # frequent across the host's pages (site_boilerplate.py)
    ]
)

# language: a row per cleaned document
LANGUAGE_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("language", pa.string()),  # null when not identified (no-text, too-short)
        ("probability", pa.float32()),  # of `language`; null when not identified
        ("kept", pa.bool_()),
        ("reason", pa.string()),  # ok | no-text | too-short | low-probability | language-<code>
        ("n_chars", pa.int32()),  # characters of the clean text
        ("n_words", pa.int32()),  # words of the good blocks that are not dropped
        ("share_in_language", pa.float32()),  # of the good characters; null when not identified
        ("dropped_blocks", pa.list_(pa.int32())),  # block_index of dropped blocks (block_level)
    ]
)

# exact_hashes: a row per document the language stage kept, sorted by md5, one part per hash
# partition (exact_dedup.partitions of them, empty ones too)
HASHES_SCHEMA = pa.schema(
    [
        ("md5", pa.binary(16)),
        ("shard_rank", pa.int32()),  # the shard's position in the configured input order
        ("record_index", pa.int64()),
        ("doc_id", pa.string()),
        ("n_words", pa.int32()),  # words of the hashed text
    ]
)

# exact_dedup: the decision on each hashed document of a shard
DECISIONS_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("md5", pa.string()),  # hex
        ("kept", pa.bool_()),
        ("duplicate_of", pa.string()),  # the kept copy's doc_id; null when kept
        ("n_words", pa.int32()),
    ]
)

# exact_partition: the decisions on one hash partition of every shard, sorted by (shard_rank, md5,
# record_index), so each shard's rows are one run in the order of its decisions file
PARTITION_DECISIONS_SCHEMA = pa.schema([("shard_rank", pa.int32()), *DECISIONS_SCHEMA])

# dedup: every block of every tokenised document after block de-duplication
DEDUP_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("block_index", pa.int32()),
        ("final_class", pa.string()),
        ("duplicate_of", pa.string()),  # a duplicate block: the document it copies most
        ("dup_share", pa.float32()),  # of the block's words, covered by n-grams already output
        # sentence and span modes, a block that lost some parts and kept the rest (null otherwise):
        # the lost parts as token ranges [start, end) counted from the block's first token in the
        # token file (`kept_tokens`), and the document each copies; and the same parts as ranges
        # of the block text's whitespace chunks (``text.split()``), which `survivors` hands on:
        # the block's text is the chunks left (corpus.kept_text), no tokeniser needed
        ("removed_starts", pa.list_(pa.int32())),
        ("removed_ends", pa.list_(pa.int32())),
        ("removed_duplicate_of", pa.list_(pa.string())),
        ("removed_chunk_starts", pa.list_(pa.int32())),
        ("removed_chunk_ends", pa.list_(pa.int32())),
    ]
)

# quality: the signals of each surviving document (corpusbuilder.quality says what each is), in
# the order of the JSONL's `quality` object; QUALITY_COUNTS are those that count (integers)
QUALITY_SIGNALS = (
    "words",
    "mean_word_length",
    "symbol_word_ratio",
    "bullet_lines",
    "ellipsis_lines",
    "alpha_words",
    "stop_words",
    "dup_line_frac",
    "dup_para_frac",
    "dup_line_char_frac",
    "dup_para_char_frac",
    *(f"top_{n}gram_char_frac" for n in (2, 3, 4)),
    *(f"dup_{n}gram_char_frac" for n in range(5, 11)),
    "c4_punct_lines",
    "c4_sentences",
    "c4_lorem_ipsum",
    "c4_curly_bracket",
    "c4_javascript_lines",
    "c4_policy_lines",
    "fineweb_line_punct_ratio",
    "fineweb_short_line_ratio",
    "fineweb_char_dup_ratio",
    "fineweb_newline_ratio",
)
QUALITY_COUNTS = {
    "words",
    "stop_words",
    "c4_sentences",
    "c4_lorem_ipsum",
    "c4_curly_bracket",
    "c4_javascript_lines",
    "c4_policy_lines",
}
QUALITY_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        *(
            (name, pa.int32() if name in QUALITY_COUNTS else pa.float64())
            for name in QUALITY_SIGNALS
        ),
        ("fails", pa.list_(pa.string())),  # every rule failed, "<set>.<rule>", of every set
        ("dropped_by", pa.string()),  # the first failed rule of a quality.filter set; else null
        ("kept", pa.bool_()),
    ]
)

# the dedup columns that say which whitespace chunks of a partly kept block's text are gone
REMOVED_PARTS = ("removed_chunk_starts", "removed_chunk_ends")

# --------------------------------------------------------------------------- what a row says

# a docs row's outcome (and reason) when extract cleaned the page — found blocks on it; any other
# page is SKIPPED, and its reason says why
CLEANED, SKIPPED = "ok", "skipped"
# A block's class, the words of jusText's classification (thesis §2.7.2): context-free SHORT,
# NEAR_GOOD, GOOD or BAD (the blocks table's cf_class); its final class (final_class) is GOOD,
# which keeps it, or BAD. Block de-duplication (thesis §3.5, Fig. 3.5) only demotes a block, to
# DUPLICATE (a copy, bad for its neighbours when the context-sensitive pass runs again) or to BAD
# (a block left among copies).
GOOD, BAD, SHORT, NEAR_GOOD, DUPLICATE = "good", "bad", "short", "near-good", "duplicate"


def is_cleaned_page(outcome: str) -> bool:
    """Did extract clean the page, by its docs row's ``outcome``."""
    return outcome == CLEANED


def cleaned_page_mask(docs: pd.DataFrame | pa.Table):
    """`is_cleaned_page` of each docs row (a Series of a DataFrame, an array of an Arrow table)."""
    return _equal(docs["outcome"], CLEANED)


def is_kept_block(final_class: str) -> bool:
    """Is the block kept, by its ``final_class`` (in the blocks or the dedup table)."""
    return final_class == GOOD


def kept_block_mask(blocks: pd.DataFrame | pa.Table):
    """`is_kept_block` of each row of a blocks or dedup table (a Series of a DataFrame, an array
    of an Arrow table)."""
    return _equal(blocks["final_class"], GOOD)


def _equal(column, value: str):
    """``column == value``: of an Arrow column in Arrow (whose ``==`` compares whole arrays)."""
    if isinstance(column, (pa.Array, pa.ChunkedArray)):
        import pyarrow.compute as pc

        return np.asarray(pc.equal(column, value).fill_null(False))
    return column == value


# --------------------------------------------------------------------------- how it is written


def stage_table(frame: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    """A stage's rows as a table of its schema, in the schema's column order. The schema is the
    contract, never inferred from the rows: a shard a stage emptied is `schema.empty_table()`,
    whatever dtypes pandas gave the columns of no rows (a list column of none is float64)."""
    if not len(frame):
        return schema.empty_table()
    return pa.Table.from_pandas(frame[schema.names], schema=schema, preserve_index=False)


# --------------------------------------------------------------------------- how it is read


@names_the_file
def read_table(
    path: Path | str,
    columns: list[str] | None = None,
    good_only: bool = False,
    doc_ids: Collection[str] | None = None,
    optional: Sequence[str] = (),
) -> pd.DataFrame:
    """A stage table (all columns unless named), filtered while reading: ``good_only`` keeps the
    blocks whose final class is good, ``doc_ids`` the rows of those documents. ``optional``
    columns are read where the file has them (a table an earlier version wrote may not)."""
    import pandas as pd

    if optional:
        present = set(pq.read_schema(path).names)
        columns = [*(columns or []), *(name for name in optional if name in present)]
    return pd.read_parquet(path, columns=columns, filters=_filters(good_only, doc_ids))


def _filters(
    good_only: bool = False, doc_ids: Collection[str] | None = None
) -> list[tuple[str, str, object]] | None:
    """Row filters: ``good_only`` keeps the blocks whose final class is good, ``doc_ids`` the
    rows of those documents."""
    filters: list[tuple[str, str, object]] = [("final_class", "==", GOOD)] if good_only else []
    if doc_ids is not None:
        filters.append(("doc_id", "in", sorted(doc_ids)))
    return filters or None


@names_the_file
def read_columns(
    path: Path | str,
    columns: list[str] | None = None,
    optional: Sequence[str] = (),
    good_only: bool = False,
) -> pa.Table:
    """`read_table`'s ``columns`` (all unless named; ``optional`` ones where the file has them)
    and filter, as an Arrow table: a job that reads its tables so needs no pandas."""
    if optional:
        present = set(pq.read_schema(path).names)
        columns = [*(columns or []), *(name for name in optional if name in present)]
    return pq.read_table(path, columns=columns, filters=_filters(good_only))


def write_manifest(paths: Sequence[Path | str], path: Path | str) -> None:
    """A list of files, one a line, in order (written atomically)."""
    with atomic_path(path) as tmp:
        tmp.write_text("".join(f"{name}\n" for name in paths))


def read_manifest(path: Path | str) -> list[str]:
    return Path(path).read_text().splitlines()


def collect_files(kinds: Mapping[str, Sequence[Path | str]], folder: Path | str) -> None:
    """Each kind's files, in order, hard-linked into ``folder``/{kind}/ and listed in
    ``folder``/{kind}.txt: the files stay while the folder does, whatever becomes of the names
    they were written under (a temp() file is deleted once the jobs that name it are done, and
    the jobs that read the folder do not name it). A file system that refuses hard links gets
    copies."""
    folder = Path(folder)
    for kind, paths in kinds.items():
        (folder / kind).mkdir(parents=True, exist_ok=True)
        linked = [folder / kind / Path(path).name for path in paths]
        for path, link in zip(paths, linked):
            try:
                os.link(path, link)
            except OSError as error:
                if error.errno not in (errno.EPERM, errno.EXDEV, errno.ENOTSUP):
                    raise
                shutil.copyfile(path, link)
        write_manifest(linked, folder / f"{kind}.txt")


def collected_files(given: Sequence[str] | str, kind: str) -> list[str]:
    """A kind's files as a job was given them, in order: a folder of collect_files (its list of
    that kind), or the files named one by one (under a default storage provider, where a job
    sees only the files it names)."""
    given = [given] if isinstance(given, str) else list(given)
    if len(given) == 1 and Path(given[0]).is_dir():
        return read_manifest(Path(given[0]) / f"{kind}.txt")
    return [str(path) for path in given]


def write_hash_partitions(parts: Sequence[pa.Table], path: Path | str) -> None:
    """A shard's exact_hashes file: its HASHES_SCHEMA tables, a part per hash partition
    (`common.io.write_parts`: a partition's job reads its part of every shard's file)."""
    write_parts(parts, path)


@names_the_file
def read_hash_partition(path: Path | str, partition: int, partitions: int) -> pa.Table:
    """Hash partition ``partition`` of an exact_hashes file: its part of that number."""
    if (written := part_count(path)) != partitions:  # the config's mismatch, not a damaged file
        raise ConfigError(
            f"{path}: {written} hash partitions, but exact_dedup.partitions is {partitions}; hash "
            "the shard again"
        )
    return pa.Table.from_batches([read_part(path, partition, HASHES_SCHEMA.names)])


@names_the_file
def read_hashed_documents(path: Path | str) -> list[str]:
    """The ids of the documents an exact_hashes file holds, in its order."""
    return [doc for part in read_parts(path, ["doc_id"]) for doc in part["doc_id"].to_pylist()]


@names_the_file
def read_shard_decisions(path: Path | str, shard_rank: int) -> pa.Table:
    """One shard's rows of an exact_partition file (DECISIONS_SCHEMA); the file is sorted by
    shard, so the row group statistics skip the other shards' rows unread."""
    table = pq.read_table(
        path, columns=DECISIONS_SCHEMA.names, filters=[("shard_rank", "==", shard_rank)]
    )
    return table.cast(DECISIONS_SCHEMA)


@dataclass(frozen=True)
class ShardTables:
    """One shard's stage tables: extract's two, and the verdicts of the stages that ran (None
    for a stage that did not); ``name`` is the shard's."""

    docs: Path | str
    blocks: Path | str
    language: Path | str | None = None
    exact: Path | str | None = None
    dedup: Path | str | None = None
    name: str = ""
    quality: Path | str | None = None  # its filter's verdicts, read by `read_survivors`

    # the per-shard inputs a rule over every shard hands over, each a list in shard order
    PER_SHARD_INPUTS = ("docs", "blocks", "language", "exact", "quality")

    @classmethod
    def from_inputs(cls, inputs: Mapping[str, Any], shard: str) -> ShardTables:
        """One shard's tables as its rule hands them over (snakemake.input): ``docs``,
        ``blocks`` and those of ``language``, ``exact``, ``dedup`` and ``quality`` that ran."""
        inputs = dict(inputs.items())
        (dedup,) = dedup_tables_of(inputs, [shard])
        return cls(
            inputs["docs"],
            inputs["blocks"],
            inputs.get("language"),
            inputs.get("exact"),
            dedup,
            shard,
            inputs.get("quality"),
        )

    @classmethod
    def every_shard(cls, inputs: Mapping[str, Any], shards: Sequence[str]) -> list[ShardTables]:
        """Every shard's tables from a rule over the whole corpus: its inputs are lists in
        ``shards`` order (block dedup's as `dedup_tables_of` reads it)."""
        inputs = dict(inputs.items())
        count = len(shards)
        column = {name: list(inputs.get(name) or [None] * count) for name in cls.PER_SHARD_INPUTS}
        dedup = dedup_tables_of(inputs, shards)
        return [
            cls(
                column["docs"][i],
                column["blocks"][i],
                column["language"][i],
                column["exact"][i],
                dedup[i],
                shard,
                column["quality"][i],
            )
            for i, shard in enumerate(shards)
        ]

    @classmethod
    def of(cls, shard: str, root: Path | str = ".", dedup: bool = True) -> ShardTables:
        """The workflow's files of ``shard`` under its working directory ``root``."""
        root = Path(root)
        return cls(
            root / FILES.docs.format(shard=shard),
            root / FILES.blocks.format(shard=shard),
            root / FILES.language.format(shard=shard),
            root / FILES.exact.format(shard=shard),
            root / dedup_table(shard) if dedup else None,
            shard,
        )
