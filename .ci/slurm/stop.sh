#!/usr/bin/env bash
# Stops what start.sh started.
scancel --user=root 2>/dev/null || true
pkill -x slurmd 2>/dev/null || true
pkill -x slurmctld 2>/dev/null || true
pkill -x munged 2>/dev/null || true
exit 0
