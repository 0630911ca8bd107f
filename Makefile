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
## type-check (printed after the tests; both run whatever the other finds, so one run reports
## both); fails if either failed. The last line is the run's wall time against the suite's
## budget, 10 minutes on an idle 2-core machine: judged only when the machine was idle at the
## start (1-minute load average under 1), as on a busy one it measures the neighbours. Beside
## it, the CPU time its processes spent (PostgreSQL's server apart): the suite's cost whatever
## the wall time, and on a slow machine what tells it was slow.
test: $(STAMP)
	@started=$$(date +%s); load=$$(cut -d' ' -f1 /proc/loadavg); \
	  log=$$(mktemp); $(MAKE) --no-print-directory lint >$$log 2>&1 & lintpid=$$!; \
	  scripts/test; tests=$$?; wait $$lintpid; lint=$$?; \
	  echo "== lint and type-check =="; cat $$log; \
	  took=$$(( $$(date +%s) - started )); \
	  times >$$log; cpu=$$(awk 'NR == 2 { split($$1, u, /[ms]/); split($$2, s, /[ms]/); \
	    printf "%.0f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' $$log); rm -f $$log; \
	  if [ $$tests -ne 0 ] || [ $$lint -ne 0 ]; then verdict="not judged: the run failed"; \
	  elif [ $$took -lt 600 ]; then verdict="met"; \
	  elif awk "BEGIN { exit !($$load < 1) }"; then verdict="NOT met"; \
	  else verdict="not judged: the machine was busy at the start"; fi; \
	  echo "== make test took $$took s on $$(nproc) cores, $$cpu s of CPU in its processes (load average $$load at the start, $$(cut -d' ' -f1-3 /proc/loadavg) at the end); under 600 s when started idle: $$verdict =="; \
	  if [ $$tests -ne 0 ]; then echo "make test: the tests failed" >&2; fi; \
	  if [ $$lint -ne 0 ]; then echo "make test: lint or type-check failed" >&2; fi; \
	  [ $$tests -eq 0 ] && [ $$lint -eq 0 ]

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

serve: $(STAMP)
	$(VENV)/bin/catalog-nb serve

clean:
	rm -rf $(VENV) .catalog-demo .pytest_cache .mypy_cache .ruff_cache
