#!/usr/bin/env bash
# Stops what start.sh started: the jobs of its partition (ci), and the daemons by the PIDs it
# recorded; daemons or jobs of anything else on the machine are left alone.
started=/run/arbiter-ci-slurm.pids
scancel --partition=ci 2>/dev/null || true
if [ -s "$started" ]; then
  # slurmd first, then the controller, then munge: each stops while what it serves is up.
  tac "$started" | while read -r pid; do
    kill "$pid" 2>/dev/null || true
  done
  rm -f "$started"
fi
exit 0
