#!/usr/bin/env bash
# Install what the SLURM integration test needs (Debian): SLURM 22.05, munge, and the Snakemake SLURM plugin.
set -euo pipefail
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    slurm-wlm slurmctld slurmd slurm-client munge >/dev/null
fi
"${VENV:-.venv}/bin/pip" install -q 'snakemake-executor-plugin-slurm>=1.0'
