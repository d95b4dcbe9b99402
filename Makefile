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

# uv installs the same versions as pip in about a third of the time (42 s instead of ~120 s from empty caches on
# 2 cores); pip is the fallback wherever uv cannot be installed or fails. Both byte-compile what they install:
# without that every process compiles what it imports (nothing is cached where PYTHONDONTWRITEBYTECODE=1, as on
# the CI machine), and importing torch + transformers + trl + ray took 19 CPU-s instead of 9 in each of the
# suite's dozens of subprocesses. uv does not read pip's configuration: pip's find-links (PIP_FIND_LINKS, else
# pip.conf; where the CPU torch lies on this lab's machines) are passed on. A missing Chromium (for the browser
# tests) installs in the background meanwhile (~30 s of a fresh machine's set-up; `setup` retries in the open).
$(STAMP): pyproject.toml Makefile
	@echo "== setting up $(VENV) (first time takes a few minutes) =="
	@start=$$(date +%s); \
	command -v chromium >/dev/null || { (apt-get update -qq && apt-get install -y -qq chromium) >/dev/null 2>&1 & }; \
	$(PYTHON) -m venv $(VENV) && \
	links="$${PIP_FIND_LINKS:-$$($(PY) -m pip config get global.find-links 2>/dev/null)}"; \
	flags=""; for d in $$links; do flags="$$flags --find-links $$d"; done; \
	if $(PY) -m pip install --quiet uv 2>/dev/null && \
		$(VENV)/bin/uv pip install --quiet --python $(PY) --compile-bytecode $$flags "$(TORCH)" -e '.[dev]'; then :; \
	else \
		echo "== uv unavailable or failed: installing with pip =="; \
		$(PY) -m pip install --quiet "$(TORCH)" -e '.[dev]'; \
	fi; rc=$$?; wait; \
	[ $$rc -eq 0 ] && echo "== set-up took $$(( $$(date +%s) - start )) s ==" && touch $(STAMP)

# The demo reuses the shipped vectors of the snapshot (data/snapshot_vectors.npz, data/build_embeddings.py)
# and ends with a one-screen summary and the dashboard; `make demo DEMO_ARGS=--no-app` stops at the summary.
demo: setup
	$(VENV)/bin/radar --workspace $(DEMO_WS) demo $(DEMO_ARGS)

# Both cores: pytest-xdist workers share the exported model, the indexed workspace, the embedded labeled
# papers and the repro warm starts (tests/conftest.py); `--dist loadfile` hands each test module whole to the
# next free worker (its module-scoped fixtures are built once, not once per worker), longest modules first
# (conftest's ordering, kept by --no-loadscope-reorder). TEST_WORKERS=0 runs in one process; the slowest tests
# are listed at the end.
TEST_WORKERS ?= 2
test: setup
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25

test-fast: setup
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder -m "not slow"

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
	$(PY) benchmarks/bench_frameworks.py

clean:
	rm -rf $(VENV) $(DEMO_WS) *.egg-info .pytest_cache .ruff_cache .mypy_cache
