#!/usr/bin/env bash
# Install what the cluster and report tests need (Debian, as root): SLURM 22.05 + munge and the Snakemake SLURM
# executor plugin (tests/test_slurm.py), and headless Chromium to render the HTML report (tests/test_report.py).
# `install.sh system`: the Debian packages only; `install.sh plugin`: the plugin only (into the venv of `make setup`);
# no argument: both. CI (.ci/run) installs the packages while `make setup` runs, the plugin after it.
set -euo pipefail
part="${1:-all}"
case "$part" in all|system|plugin) ;; *) echo "usage: $0 [system|plugin]" >&2; exit 2 ;; esac
pkgs=()
command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sinfo >/dev/null || pkgs+=(slurm-wlm slurmctld slurmd slurm-client)
command -v munged >/dev/null || pkgs+=(munge)
command -v chromium >/dev/null || pkgs+=(chromium)
if [[ $part != plugin ]] && ((${#pkgs[@]})); then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
fi
[[ $part == system ]] || "${VENV:-.venv}/bin/pip" install -q 'snakemake-executor-plugin-slurm>=1.0'
