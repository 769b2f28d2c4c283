"""A one-node SLURM cluster on localhost for tests: munged, slurmctld and slurmd from Debian's
slurm-wlm and munge packages, each with its own key, sockets, ports and state in a temporary
directory, stopped by the pids they wrote."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
DEFAULT_CONF = Path("/etc/slurm/slurm.conf")


def missing_daemons() -> list[str]:
    return [name for name in (*DAEMONS, "sbatch", "squeue") if shutil.which(name) is None]


def foreign_config() -> bool:
    """A slurm.conf this module did not write: a real cluster's, which a test must not touch."""
    return DEFAULT_CONF.exists() and MARKER not in DEFAULT_CONF.read_text()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


MARKER = "# written by corpusbuilder's tests/slurm_cluster.py"
SLURM_CONF = (
    MARKER
    + """
ClusterName=corpusbuilder-test
SlurmctldHost=localhost
AuthType=auth/munge
AuthInfo=socket={dir}/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MinJobAge=600
NodeName=localhost CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""
)


class LocalSlurm:
    """Start with `start()`, stop with `stop()`; `env` holds SLURM_CONF for clients."""

    def __init__(self, directory: Path, cpus: int = 2, memory_mb: int = 8000):
        self.dir = directory
        self.cpus = cpus
        self.memory_mb = memory_mb
        # The config must sit at the default path: Snakemake's slurm-jobstep executor strips
        # SLURM_* variables (SLURM_CONF too) before its srun inside the job.
        self.conf = DEFAULT_CONF
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}

    def start(self, timeout: float = 30) -> None:
        for sub in ("state", "spool"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        key = self.dir / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        self._run(
            "munged",
            "--force",
            f"--socket={self.dir}/munge.socket",
            f"--key-file={key}",
            f"--pid-file={self.dir}/munged.pid",
            f"--log-file={self.dir}/munged.log",
            f"--seed-file={self.dir}/munge.seed",
        )
        self.conf.parent.mkdir(parents=True, exist_ok=True)
        self.conf.write_text(
            SLURM_CONF.format(
                dir=self.dir,
                ctld_port=_free_port(),
                slurmd_port=_free_port(),
                cpus=self.cpus,
                memory_mb=self.memory_mb,
            )
        )
        self._run("slurmctld", "-f", str(self.conf))
        self._run("slurmd", "-f", str(self.conf), "-N", "localhost")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = subprocess.run(
                ["sinfo", "-h", "-o", "%T"], env=self.env, capture_output=True, text=True
            ).stdout.strip()
            if state == "idle":
                return
            time.sleep(0.5)
        raise RuntimeError(f"the test SLURM node did not become idle: {self.logs()}")

    def _run(self, *command: str) -> None:
        subprocess.run(command, env=self.env, check=True, capture_output=True, text=True)

    def logs(self) -> str:
        return "\n".join(
            f"--- {log.name}\n{log.read_text()[-2000:]}" for log in sorted(self.dir.glob("*.log"))
        )

    def stop(self) -> None:
        for name in reversed(DAEMONS):
            pid_file = self.dir / f"{name}.pid"
            if not pid_file.is_file():
                continue
            # A daemon that already exited (or left a garbled pid file) needs no stopping.
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid_file.read_text().split()[0]), signal.SIGTERM)
        if not foreign_config():
            self.conf.unlink(missing_ok=True)
