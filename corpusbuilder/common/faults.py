"""Faults of the setup or of the machine as one line that names what to fix.

A rule script's `setup_logging` and the command line both report these the same way: one line
in the rule's log and on the console, and a non-zero exit; any other exception keeps its
traceback, in the log as well. A file between stages that cannot be read (cut off by a killed
job, overwritten by hand) is named by `names_the_file` where it is read.
"""

from __future__ import annotations

import codecs
import errno
import functools
import inspect
import re
import zipfile
import zlib
from collections.abc import Callable
from typing import Any, TypeVar


class JobFault(RuntimeError):
    """A fault of the job, not of one page, already said in one line that names what to fix."""


class CorruptFileError(JobFault):
    """A file that cannot be read: the message names it and the cause."""


# what a cut-off or overwritten Parquet or .npz file raises when it is read (numpy: ValueError
# for an array header it cannot read; pyarrow's ArrowInvalid is one too)
DAMAGED = (zipfile.BadZipFile, EOFError, zlib.error, ValueError)

# errno -> what it means for the person running the workflow
MACHINE = {
    errno.ENOSPC: "no space left on the device: free some, or run where there is room",
    errno.EDQUOT: "disk quota exceeded: free some, or run where there is room",
    errno.EROFS: "the file system is read-only: run where outputs can be written",
    errno.EFBIG: "file too large for the file-size limit (ulimit -f): raise it",
    errno.EMFILE: "too many open files (ulimit -n): raise the limit",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EIO: "input/output error of the device",
}

Reader = TypeVar("Reader", bound=Callable[..., Any])


def names_the_file(read: Reader) -> Reader:
    """Wrap a reader whose first argument is a path: a damaged file becomes a CorruptFileError
    naming it."""

    if inspect.isgeneratorfunction(read):

        @functools.wraps(read)
        def reading_pieces(path, *args, **kwargs):
            try:
                yield from read(path, *args, **kwargs)
            except JobFault:
                raise  # it already says what to fix (a ConfigError is a ValueError too)
            except DAMAGED as error:
                raise CorruptFileError(damaged_file_line(path, error)) from error

        return reading_pieces  # type: ignore[return-value]

    @functools.wraps(read)
    def reading(path, *args, **kwargs):
        try:
            return read(path, *args, **kwargs)
        except JobFault:
            raise  # it already says what to fix (a ConfigError is a ValueError too)
        except DAMAGED as error:
            raise CorruptFileError(damaged_file_line(path, error)) from error

    return reading  # type: ignore[return-value]


def damaged_file_line(path, error: BaseException) -> str:
    cause = str(error).splitlines()[0] if str(error) else ""
    return (
        f"{path}: cut off or damaged, cannot be read ({type(error).__name__}: {cause}); "
        "delete it and run again to write it anew"
    )


def not_utf8_line(path, error: UnicodeDecodeError, compressed: bool = False) -> str:
    """`path: not UTF-8 text (invalid start byte at byte N)` for a text input that is not UTF-8,
    N counted from the file's start (the error's own offset is into the chunk being decoded);
    no N for a `compressed` file, whose decoded offsets are not the file's."""
    at = None if compressed else utf8_error_offset(path)
    where = "" if at is None else f" at byte {at}"
    what = "its gzip content is not UTF-8 text" if compressed else "not UTF-8 text"
    return f"{path}: {what} ({error.reason}{where})"


def utf8_error_offset(path) -> int | None:
    """The offset of a file's first byte that is not UTF-8; None when every byte is (or the file
    cannot be read again)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    done = pending = 0
    try:
        with open(path, "rb") as data:
            while chunk := data.read(1 << 20):
                pending = len(decoder.getstate()[0])  # a sequence the last chunk cut in two
                decoder.decode(chunk)
                done += len(chunk)
            pending = len(decoder.getstate()[0])
            decoder.decode(b"", final=True)
    except UnicodeDecodeError as error:
        return done - pending + error.start
    except OSError:
        return None
    return None


def _errno_of(error: OSError) -> int | None:
    if error.errno is not None:
        return error.errno
    found = re.search(r"\[errno (\d+)\]", str(error), re.IGNORECASE)  # pyarrow's OSError
    return int(found[1]) if found else None


def fault_line(error: BaseException) -> str | None:
    """One line for a fault of the setup or of the machine; None for any other exception (a bug,
    whose traceback is wanted)."""
    if isinstance(error, JobFault):  # config.ConfigError is one
        return str(error)
    if isinstance(error, MemoryError):
        return (
            "out of memory: give the job more (resources mem_mb, or a machine with more), "
            "or lower the setting that sizes it"
        )
    if isinstance(error, OSError):
        number = _errno_of(error)
        if number in MACHINE:
            where = f"{error.filename}: " if error.filename else ""
            return f"{where}{MACHINE[number]} ({errno.errorcode[number]})"
    return None
