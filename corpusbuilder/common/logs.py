"""Logging for stage scripts and the command line: timestamped lines to a log file and stderr.

A rule script ends, on an exception, with the exception in its log too: a fault of the setup or
of the machine as one line (`faults.fault_line`), anything else with its traceback."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from corpusbuilder.common.faults import fault_line


def setup_logging(log_path: str | Path | None = None, level: int = logging.INFO) -> logging.Logger:
    """Send `corpusbuilder.*` log records to stderr and, when given, to `log_path`."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_path, mode="w", encoding="utf-8"))
    logger = logging.getLogger("corpusbuilder")
    logger.handlers.clear()
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S")
    for handler in handlers:
        handler.setFormatter(formatter)
        logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    sys.excepthook = _log_uncaught
    return logger


def _log_uncaught(kind, error, traceback) -> None:
    """The last word of a script that failed: to the log file as well as the console; the exit
    status stays non-zero."""
    if not issubclass(kind, Exception):
        sys.__excepthook__(kind, error, traceback)  # Ctrl-C, SystemExit: as Python reports them
        return
    line = fault_line(error)
    if line is None:
        logging.getLogger("corpusbuilder").critical(
            "failed: %s", error, exc_info=(kind, error, traceback)
        )
    else:
        logging.getLogger("corpusbuilder").error("%s", line)
