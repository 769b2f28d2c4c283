"""Which versions wrote a file passed between stages (`common.versions`), whatever its format: the
one question the provenance record asks of every stage's files, answered here beside the formats'
own modules, so that the workflow names the files and never their readers.
"""

from __future__ import annotations

from pathlib import Path

from corpusbuilder.common.faults import names_the_file
from corpusbuilder.common.io import parts_writer, table_writer
from corpusbuilder.contracts.ngramfiles import duplicate_ngrams_writer
from corpusbuilder.contracts.tokenfile import token_file_writer

PARQUET_MAGIC = b"PAR1"
ARROW_MAGIC = b"ARROW1"  # a file of parts (common.io.write_parts)
ZIP_MAGIC = b"PK\x03\x04"  # a token file is an .npz


@names_the_file
def file_writer(path: Path | str) -> dict | None:
    """The versions that wrote a stage file, told by its first bytes: a table or an n-gram run
    (Parquet: its schema's stamp), a file of parts (Arrow IPC: its schema's stamp), a token file
    (its ``writer`` member) or the stats that a part of G₂₊'s job wrote beside the part (JSON: its
    ``written_by``). None for a file written before its format was stamped."""
    with open(path, "rb") as file:
        start = file.read(len(ARROW_MAGIC))
    if start.startswith(PARQUET_MAGIC):
        return table_writer(path)
    if start == ARROW_MAGIC:
        return parts_writer(path)
    if start.startswith(ZIP_MAGIC):
        return token_file_writer(path)
    if start.lstrip().startswith(b"{"):
        return duplicate_ngrams_writer(path)
    raise ValueError(
        "neither a Parquet table, a file of parts, a token file nor a part of G2+'s stats"
    )
