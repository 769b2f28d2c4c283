"""Where a command's output goes: ``-`` is stdout, for every command whose output is one file.

The data is written to a temporary file by the same library function that writes a named one,
then copied to stdout, so a command that fails writes nothing there; its summary line names
"stdout" and goes to stderr as always.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from corpusbuilder.config import ConfigError

STDOUT = "-"


@contextmanager
def output_file(target: str) -> Iterator[Path]:
    """The path a command writes its output file to: ``target``, or for ``-`` a temporary file
    whose content goes to stdout once the command is done (nothing, if it fails)."""
    if target != STDOUT:
        yield Path(target)
        return
    with tempfile.TemporaryDirectory(prefix="corpusbuilder-") as work:
        path = Path(work) / "stdout"
        yield path
        sys.stdout.flush()
        with open(path, "rb") as written:
            shutil.copyfileobj(written, sys.stdout.buffer)
        sys.stdout.buffer.flush()


def shown(target: str) -> str:
    """An output as a summary line names it (the line goes to stderr, stdout holding the data)."""
    return "stdout" if target == STDOUT else target


def no_stdout(target: str, what: str) -> None:
    if target == STDOUT:
        raise ConfigError(f"{what} cannot go to stdout (-): give a path")
