"""Where a command's output goes: ``-`` is stdout, for every command whose output is one file.

The library writes it as it writes any output (`common.io.atomic_path`), which fills a stream
only once the output is complete: a command that fails writes nothing there. Its summary line
names "stdout" and goes to stderr as always.
"""

from __future__ import annotations

import sys
from pathlib import Path

from corpusbuilder.config import ConfigError

STDIO = "-"  # as a path: stdin for an input, stdout for an output


def output_path(target: str) -> Path:
    """The path a command writes its output file to: ``target``, or stdout for ``-``."""
    if target != STDIO:
        return Path(target)
    sys.stdout.flush()  # what this process printed comes before what the writer copies in
    return Path("/dev/stdout")


def shown(target: str) -> str:
    """An output as a summary line names it (the line goes to stderr, stdout holding the data)."""
    return "stdout" if target == STDIO else target


def no_stdout(target: str, what: str) -> None:
    if target == STDIO:
        raise ConfigError(f"{what} cannot go to stdout (-): give a path")
