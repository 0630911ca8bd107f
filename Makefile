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
## it, the CPU time the machine was busy meanwhile (idle, that is the suite's cost) and the time
## a virtual machine's host gave to others ("stolen").
test: $(STAMP)
	@started=$$(date +%s); load=$$(cut -d' ' -f1 /proc/loadavg); cpu0=$$(grep '^cpu ' /proc/stat); \
	  log=$$(mktemp); $(MAKE) --no-print-directory lint >$$log 2>&1 & lintpid=$$!; \
	  scripts/test; tests=$$?; wait $$lintpid; lint=$$?; \
	  echo "== lint and type-check =="; cat $$log; \
	  took=$$(( $$(date +%s) - started )); \
	  rm -f $$log; cpu=$$( (echo "$$cpu0"; grep '^cpu ' /proc/stat) | awk -v hz=$$(getconf CLK_TCK) \
	    '{ busy[NR] = $$2 + $$3 + $$4 + $$7 + $$8; stolen[NR] = $$9 } \
	     END { printf "%.0f s, %.0f s stolen", (busy[2] - busy[1]) / hz, (stolen[2] - stolen[1]) / hz }'); \
	  if [ $$tests -ne 0 ] || [ $$lint -ne 0 ]; then verdict="not judged: the run failed"; \
	  elif [ $$took -lt 600 ]; then verdict="met"; \
	  elif awk "BEGIN { exit !($$load < 1) }"; then verdict="NOT met"; \
	  else verdict="not judged: the machine was busy at the start"; fi; \
	  echo "== make test took $$took s on $$(nproc) cores: $$(( took * $$(nproc) )) s of CPU, busy $$cpu (load average $$load at the start, $$(cut -d' ' -f1-3 /proc/loadavg) at the end); under 600 s when started idle: $$verdict =="; \
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
