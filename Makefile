# The two commands of the README are `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint serve clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

## Set everything up, then run the demo: the embedded catalog, a client logging in and listing users.
demo: $(STAMP)
	$(VENV)/bin/catalog-nb demo $(DEMO_ARGS)

## Run the tests (SQLite, and PostgreSQL where its server is installed), then lint and type-check.
test: $(STAMP)
	scripts/test
	$(MAKE) lint

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

serve: $(STAMP)
	$(VENV)/bin/catalog-nb serve

clean:
	rm -rf $(VENV) .catalog-demo .pytest_cache .mypy_cache .ruff_cache
