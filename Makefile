# nodewright: the two commands are `make preview` and `make test`.
PY      ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
STACK   ?= dev

.PHONY: preview test lint typecheck pytest bench mutate system-deps clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

## The main job on the embedded default: the offline preview of the example stack.
preview: $(STAMP)
	$(BIN)/nodewright preview --stack $(STACK)

## Lint, types, tests. Installs the real validators (cloud-init, ignition) where apt can.
test: $(STAMP) system-deps lint typecheck pytest

system-deps:
	@bash .ci/system-deps.sh || echo "warning: system validators could not be installed; the tests that need them say so"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/ruff format --check nodewright components policies tests bench __main__.py
	$(BIN)/actionlint -shellcheck $(BIN)/shellcheck .github/workflows/*.yaml

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/scheduling.py

## The mutation check: plant each bug of tools/mutants.py and run the tests that must notice it.
mutate: $(STAMP)
	$(BIN)/python tools/mutate.py

clean:
	rm -rf $(VENV) build *.egg-info
