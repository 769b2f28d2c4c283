"""Logging for stage scripts and the command line: timestamped lines to a log file and stderr.

A rule script ends, on an exception, with the exception in its log too: a fault of the setup or
of the machine as one line (`faults.fault_line`), anything else with its traceback. Its last
line is what the job cost (`JOB_COST`, read back by `job_cost`): Snakemake's benchmark files
sample a job's CPU time every 30 s after its first 15, so they miss up to 30 s of each longer
job, and bench/scale.py reads these lines instead."""

from __future__ import annotations

import atexit
import gc
import logging
import resource
import sys
import time
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
    if log_path:
        atexit.register(_log_resources, logger, time.monotonic())
    return logger


JOB_COST = "resources:"  # starts the line that says what a job cost


def job_cost(line: str) -> dict[str, str] | None:
    """The fields of a log's `JOB_COST` line (rule, cpu_s, max_rss_mb, wall_s); None for
    another line."""
    if JOB_COST not in line:
        return None
    return dict(field.split("=", 1) for field in line.split(JOB_COST, 1)[1].split())


def _log_resources(logger: logging.Logger, started: float) -> None:
    """What the process (and the processes it waited for) cost: CPU seconds, peak RSS, wall
    seconds since logging was set up, and the rule it ran for when Snakemake started it. Not
    after an uncaught exception, whose line stays the log's last word."""
    if _failed:
        return
    own, children = (
        resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    cpu = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    job = getattr(sys.modules.get("__main__"), "snakemake", None)  # a rule script's job
    logger.info(
        "%s rule=%s cpu_s=%.2f max_rss_mb=%.0f wall_s=%.1f",
        JOB_COST,
        getattr(job, "rule", "-"),
        cpu,
        max(own.ru_maxrss, children.ru_maxrss) / 1024,  # kB on Linux
        time.monotonic() - started,
    )
    # The interpreter's last collection would visit every object the job made: 0.15-0.2 s of a
    # tokenise job's 2.5 s. They are freed all the same, by reference count; what only a cycle
    # holds is not finalised, and the files a job writes are closed before it ends.
    gc.freeze()


_failed: list[BaseException] = []  # the uncaught exception that ends the script, if one does


def _log_uncaught(kind, error, traceback) -> None:
    """The last word of a script that failed: to the log file as well as the console; the exit
    status stays non-zero."""
    _failed.append(error)
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
