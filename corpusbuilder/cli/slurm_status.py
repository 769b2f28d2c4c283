"""Job status for Snakemake's cluster-generic executor on SLURM: `corpusbuilder slurm-status JOBID`.

Prints `running`, `success` or `failed`. Asks squeue first (it works without slurmdbd, and keeps
finished jobs for MinJobAge seconds), then scontrol, then sacct for jobs older than that. A job
none of them knows any more counts as failed, so a run never waits forever on a lost job; a
scheduler that does not answer (a time-out, an error exit) says nothing about the job, which
then counts as running and is asked about again — as Snakemake's SLURM executor does — so a
busy controller never gets a running job resubmitted.

Snakemake reads one word on stdout and stops the whole run on a non-zero exit, so a job counted
as failed says why on stderr only (`unknown_job_reason`): an id that is no SLURM job id, a
command not installed, the scheduler's own error.
"""

from __future__ import annotations

import re
import subprocess

RUNNING = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING"}


# job_state's answer when a command got no answer from the scheduler: ask again later
UNANSWERED = "UNANSWERED"


class _NoAnswer(Exception):
    pass


# what SLURM's commands print when the controller or the database did not answer in time
_NO_ANSWER = ("timed out", "timeout", "socket", "connection", "unable to contact", "communication")


# what `sbatch --parsable` prints: a job id, an array task or a heterogeneous job component,
# then `;cluster` on a multi-cluster setup
_JOB_ID = re.compile(r"\d+(?:[_+]\d+)?(?:;\S+)?")


def _first_line(command: list[str], notes: dict[str, str] | None = None) -> str:
    """The command's first output line ('' when it printed none, or failed for another reason:
    an unknown job id, accounting not configured); _NoAnswer when the scheduler did not answer.
    Why it said nothing goes into ``notes`` under the command's name: not found, or the last
    line of its error output."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise _NoAnswer from None
    except OSError:
        if notes is not None:
            notes[command[0]] = "not found"
        return ""  # the command is not installed: it knows nothing
    if done.returncode != 0 and any(words in done.stderr.lower() for words in _NO_ANSWER):
        raise _NoAnswer
    out = done.stdout.strip()
    if not out and notes is not None and done.stderr.strip():
        notes[command[0]] = done.stderr.strip().splitlines()[-1].strip()
    return out.splitlines()[0].strip() if out else ""


# what job_state asks, in this order: each command (the job id where _JOB_ID_SLOT stands), and
# how its first output line gives the state word
_JOB_ID_SLOT = "{job}"
_QUERIES = (
    (("squeue", "-h", "-j", _JOB_ID_SLOT, "-o", "%T", "--states=all"), lambda line: line),
    (
        ("scontrol", "-o", "show", "job", _JOB_ID_SLOT),
        lambda line: next(
            (f.split("=", 1)[1] for f in line.split() if f.startswith("JobState=")), ""
        ),
    ),
    (("sacct", "-n", "-X", "-j", _JOB_ID_SLOT, "-o", "State"), lambda line: line.split(" ")[0]),
)
_COMMANDS = tuple(query[0] for query, _ in _QUERIES)


def job_state(job_id: str, notes: dict[str, str] | None = None) -> str:
    """SLURM's state word for a job (COMPLETED, RUNNING, FAILED, …); '' when every command
    answered and none knows it; UNANSWERED when a command got no answer and none knew it.
    ``notes`` collects why each command that knows nothing said nothing (see _first_line)."""
    unanswered = False
    for query, pick in _QUERIES:
        try:
            command = [job_id if arg == _JOB_ID_SLOT else arg for arg in query]
            state = pick(_first_line(command, notes))
        except _NoAnswer:
            unanswered = True
            continue
        if state:
            return state
    return UNANSWERED if unanswered else ""


def unknown_job_reason(job_id: str, notes: dict[str, str]) -> str:
    """One line saying why no SLURM command knew the job, from job_state's notes."""
    reasons = [] if _JOB_ID.fullmatch(job_id) else ["not a SLURM job id"]
    missing = [command for command, note in notes.items() if note == "not found"]
    if missing:
        # sacct alone is missing where SLURM runs without its accounting database
        hint = " (is SLURM installed here?)" if len(missing) == len(_COMMANDS) else ""
        reasons.append(f"{', '.join(missing)} not found{hint}")
    errors = [note for note in notes.values() if note != "not found"]
    if errors:
        reasons.append(errors[0])  # the scheduler's own words, usually the same for all three
    elif len(missing) < len(_COMMANDS):
        known = [command for command in _COMMANDS if command not in missing]
        reasons.append(f"unknown to {', '.join(known)}")
    return f"job {job_id}: {'; '.join(reasons)}; counted as failed"


def snakemake_status(state: str) -> str:
    if state == "COMPLETED":
        return "success"
    return "running" if state in RUNNING or state == UNANSWERED else "failed"
