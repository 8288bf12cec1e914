#!/usr/bin/env bash
# Run by Snakemake once the lucene.yaml environment is created: the Anserini jar inside pyserini 0.25.0 (Java 11+),
# without pyserini's dependencies (torch, faiss, ...), which the jar does not need.
set -euo pipefail
"${CONDA_PREFIX}/bin/pip" install --no-deps "pyserini==0.25.0"
