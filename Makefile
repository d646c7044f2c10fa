# Two commands a newcomer needs: `make demo` and `make test` (what CI runs; `make test-all`: everything).
# Both create/refresh the local virtual environment (.venv) from pyproject.toml when needed.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
DEMO_OP ?= workspace/sdpa

.PHONY: venv test test-all lint demo clean bench

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

# mypy: the files listed under [tool.mypy] in pyproject.toml (the consolidated contracts; see docs/architecture.md)
# test: the fast tier (every package, without the tests marked `slow`: full replays, CLI processes, the red-team
# corpus, the wheel build ...); test-all: everything (pre-release). tests/conftest.py names any unmarked test over 3 s CPU.
test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(PY) -m pytest -n 2 --dist worksteal -m "not slow"

test-all: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(PY) -m pytest -n 2 --dist worksteal

demo: $(STAMP)
	$(PY) -m orchestrator demo $(DEMO_OP)

bench: $(STAMP)
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache
