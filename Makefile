# nodewright: the two commands are `make preview` and `make test`.
PY      ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
RUNTIME := $(VENV)/.installed-runtime
STACK   ?= dev
LOCK    := requirements-lock.txt

.PHONY: preview test lint typecheck pytest bench mutate system-deps dist lock clean

$(BIN)/python:
	@echo "make: creating the virtualenv $(VENV) ($(PY))"
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

## What running nodewright needs (runtime dependencies + the `live` extra), nothing more.
$(RUNTIME): pyproject.toml $(LOCK) | $(BIN)/python
	@echo "make: installing nodewright and its runtime dependencies into $(VENV) (first time: a minute or two)"
	$(BIN)/python -m pip install -q -c $(LOCK) -e '.[live]'
	touch $(RUNTIME)

## Everything `make test` needs on top: the dev extra (pytest, mypy, ruff, linters...).
$(STAMP): $(RUNTIME) pyproject.toml $(LOCK)
	@echo "make: installing the development tools (the dev extra) into $(VENV)"
	$(BIN)/python -m pip install -q -c $(LOCK) -e '.[dev,live]'
	touch $(STAMP)

## The main job on the embedded default: the offline preview of the example stack.
preview: $(RUNTIME)
	$(BIN)/nodewright preview --stack $(STACK)

## Lint, types, the mutation check, tests (pytest last: its summary closes the run). Installs the real validators (cloud-init, ignition) where apt can.
test: $(STAMP) system-deps lint typecheck mutate pytest

system-deps:
	@bash .ci/system-deps.sh || echo "warning: system validators could not be installed; the tests that need them say so"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/ruff format --check nodewright nodewright_pulumi policies tests bench __main__.py
	$(BIN)/actionlint -shellcheck $(BIN)/shellcheck .github/workflows/*.yaml
	$(BIN)/zizmor --offline --min-severity high .github/workflows action.yml

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/scheduling.py

## The mutation check: plant each bug of tools/mutants.py and run the tests that must notice it.
mutate: $(STAMP)
	$(BIN)/python tools/mutate.py

## Re-resolve every dependency (runtime, live and dev extras) into the lock file the installs follow.
lock:
	$(PY) -m venv $(VENV)-lock
	$(VENV)-lock/bin/python -m pip install -q pip-tools
	$(VENV)-lock/bin/pip-compile -q --strip-extras --extra dev --extra live --no-emit-index-url \
		--no-emit-find-links -o $(LOCK) pyproject.toml
	rm -rf $(VENV)-lock

## The wheel (and sdist) into dist/: what `pip install` and the Dockerfile install.
dist: $(STAMP)
	$(BIN)/python -m build --outdir dist .

clean:
	rm -rf $(VENV) build dist *.egg-info
