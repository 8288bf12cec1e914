#!/usr/bin/env bash
# Install what the cluster and report tests need (Debian, as root): SLURM 22.05 + munge and the Snakemake SLURM
# executor plugin (tests/test_slurm.py), and headless Chromium to render the HTML report (tests/test_report.py).
# CI (.ci/run) calls it after `make setup`.
set -euo pipefail
pkgs=()
command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sinfo >/dev/null || pkgs+=(slurm-wlm slurmctld slurmd slurm-client)
command -v munged >/dev/null || pkgs+=(munge)
command -v chromium >/dev/null || pkgs+=(chromium)
if ((${#pkgs[@]})); then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
fi
"${VENV:-.venv}/bin/pip" install -q 'snakemake-executor-plugin-slurm>=1.0'
