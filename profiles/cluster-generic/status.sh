#!/usr/bin/env bash
# Job status for snakemake-executor-plugin-cluster-generic: print running, success or failed.
# Asks squeue first (works without slurmdbd), then scontrol, then sacct for old jobs; a job
# none of them knows any more (older than MinJobAge, no accounting) counts as failed.
set -u
job="$1"
state=$(squeue -h -j "$job" -o %T --states=all 2>/dev/null | head -n1)
[ -n "$state" ] || state=$(scontrol show job "$job" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n1)
[ -n "$state" ] || state=$(sacct -n -X -j "$job" -o State 2>/dev/null | awk 'NR==1{print $1}')
case "$state" in
  COMPLETED) echo success ;;
  PENDING|RUNNING|CONFIGURING|COMPLETING|SUSPENDED|REQUEUED|RESIZING) echo running ;;
  *) echo failed ;;
esac
