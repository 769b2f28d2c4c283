"""Job status for Snakemake's cluster-generic executor on SLURM: `corpusbuilder slurm-status JOBID`.

Prints `running`, `success` or `failed`. Asks squeue first (it works without slurmdbd, and keeps
finished jobs for MinJobAge seconds), then scontrol, then sacct for jobs older than that. A job
none of them knows any more counts as failed, so a run never waits forever on a lost job; a
scheduler that does not answer (a time-out, an error exit) says nothing about the job, which
then counts as running and is asked about again — as Snakemake's SLURM executor does — so a
busy controller never gets a running job resubmitted.
"""

from __future__ import annotations

import subprocess

RUNNING = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING"}


# job_state's answer when a command got no answer from the scheduler: ask again later
UNANSWERED = "UNANSWERED"


class _NoAnswer(Exception):
    pass


# what SLURM's commands print when the controller or the database did not answer in time
_NO_ANSWER = ("timed out", "timeout", "socket", "connection", "unable to contact", "communication")


def _first_line(command: list[str]) -> str:
    """The command's first output line ('' when it printed none, or failed for another reason:
    an unknown job id, accounting not configured); _NoAnswer when the scheduler did not answer."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise _NoAnswer from None
    except OSError:
        return ""  # the command is not installed: it knows nothing
    if done.returncode != 0 and any(words in done.stderr.lower() for words in _NO_ANSWER):
        raise _NoAnswer
    out = done.stdout.strip()
    return out.splitlines()[0].strip() if out else ""


def job_state(job_id: str) -> str:
    """SLURM's state word for a job (COMPLETED, RUNNING, FAILED, …); '' when every command
    answered and none knows it; UNANSWERED when a command got no answer and none knew it."""
    unanswered = False
    for command, pick in (
        (["squeue", "-h", "-j", job_id, "-o", "%T", "--states=all"], lambda line: line),
        (
            ["scontrol", "-o", "show", "job", job_id],
            lambda line: next(
                (f.split("=", 1)[1] for f in line.split() if f.startswith("JobState=")), ""
            ),
        ),
        (["sacct", "-n", "-X", "-j", job_id, "-o", "State"], lambda line: line.split(" ")[0]),
    ):
        try:
            state = pick(_first_line(command))
        except _NoAnswer:
            unanswered = True
            continue
        if state:
            return state
    return UNANSWERED if unanswered else ""


def snakemake_status(state: str) -> str:
    if state == "COMPLETED":
        return "success"
    return "running" if state in RUNNING or state == UNANSWERED else "failed"
