"""Job status for Snakemake's cluster-generic executor on SLURM: `corpusbuilder slurm-status JOBID`.

Prints `running`, `success` or `failed`. Asks squeue first (it works without slurmdbd, and keeps
finished jobs for MinJobAge seconds), then scontrol, then sacct for jobs older than that. A job
none of them knows any more counts as failed, so a run never waits forever on a lost job.
"""

from __future__ import annotations

import subprocess

RUNNING = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING"}


def _first_line(command: list[str]) -> str:
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.strip().splitlines()[0].strip() if out.strip() else ""


def job_state(job_id: str) -> str:
    """SLURM's state word for a job (COMPLETED, RUNNING, FAILED, …), or '' when nobody knows it."""
    state = _first_line(["squeue", "-h", "-j", job_id, "-o", "%T", "--states=all"])
    if not state:
        record = _first_line(["scontrol", "-o", "show", "job", job_id])
        state = next((f.split("=", 1)[1] for f in record.split() if f.startswith("JobState=")), "")
    if not state:
        state = _first_line(["sacct", "-n", "-X", "-j", job_id, "-o", "State"]).split(" ")[0]
    return state


def snakemake_status(state: str) -> str:
    if state == "COMPLETED":
        return "success"
    return "running" if state in RUNNING else "failed"
