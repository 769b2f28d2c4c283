"""Logging for stage scripts and the command line: timestamped lines to a log file and stderr."""

from __future__ import annotations

import logging
import sys
from pathlib import Path


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
    return logger
