# Research Radar. `make demo` and `make test` set everything up from an empty machine.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# CPU build by default (fast to install, what CI uses). GPU users: make setup TORCH=torch
TORCH  ?= torch==2.13.0
STAMP  := $(VENV)/.installed
DEMO_WS ?= demo-workspace

.PHONY: setup demo test test-fast check lint typecheck bench clean

setup: $(STAMP)
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium) || \
		echo "== Chromium not installed (as root: apt-get install chromium); browser tests will be skipped =="

$(STAMP): pyproject.toml Makefile
	@echo "== setting up $(VENV) (first time takes a few minutes) =="
	@start=$$(date +%s); \
	$(PYTHON) -m venv $(VENV) && \
	$(PY) -m pip install --quiet --upgrade pip && \
	$(PY) -m pip install --quiet "$(TORCH)" && \
	$(PY) -m pip install --quiet -e '.[dev]' && \
	echo "== set-up took $$(( $$(date +%s) - start )) s ==" && touch $(STAMP)

demo: setup
	$(VENV)/bin/radar --workspace $(DEMO_WS) demo

test: setup
	$(PY) -m pytest -q

test-fast: setup
	$(PY) -m pytest -q -m "not slow"

lint: setup
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(VENV)/bin/lint-imports --no-cache

typecheck: setup
	$(PY) -m mypy

check: lint typecheck test

bench: setup
	$(PY) benchmarks/bench_ingest.py
	$(PY) benchmarks/bench_index.py
	$(PY) benchmarks/bench_repro.py
	$(PY) benchmarks/bench_dashboard.py
	$(PY) benchmarks/bench_report.py

clean:
	rm -rf $(VENV) $(DEMO_WS) *.egg-info .pytest_cache .ruff_cache .mypy_cache
