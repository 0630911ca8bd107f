# The two commands of the README are `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint serve clean

# The kernelspec install makes the venv's python3 kernel run the venv's Python (the one that
# ships with ipykernel says "python", whichever is first on PATH).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name 'Python 3 (catalog_nb)' >/dev/null
	touch $(STAMP)

## Set everything up, then run the demo: the embedded catalog built and profiled, the tour notebook
## executed against it (report and workbook in .catalog-demo/reports), then serving until Ctrl-C.
demo: $(STAMP)
	$(VENV)/bin/catalog-nb demo $(DEMO_ARGS)

## Run the tests (SQLite, and PostgreSQL where its server is installed) and, beside them, lint and
## type-check; the last line is the run's wall time against the suite's budget (scripts/make-test).
test: $(STAMP)
	@scripts/make-test

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

serve: $(STAMP)
	$(VENV)/bin/catalog-nb serve

clean:
	rm -rf $(VENV) .catalog-demo .pytest_cache .mypy_cache .ruff_cache
