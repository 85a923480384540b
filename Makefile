# Two commands set everything up on a fresh machine: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
# its own folder: `make demo` deletes it first, never the CLI's default data folder (.memactors-data)
DEMO_DATA ?= .memactors-demo

.PHONY: run demo test chaos install compile bench eval clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e '.[test,sim]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

# Bytecode for the package, as a non-editable install would have it: every process that imports
# memactors (each Ray worker, each CLI call) then reads it instead of compiling ~200 modules, also
# where PYTHONDONTWRITEBYTECODE is set. Only changed modules are recompiled (a fraction of a second).
compile: $(STAMP)
	$(BIN)/python -m compileall -q memactors > /dev/null

# The batch simulation on the embedded default (configs/sim-default.toml): memactors and LangGraph's
# SqliteStore beside it (the [sim] extra, installed with the rest). Report: sim-out/report.json and plots.
run: compile
	$(BIN)/memactors simulate --config configs/sim-default.toml --out sim-out

demo: compile
	$(BIN)/memactors demo --data $(DEMO_DATA) --fresh

# Two workers, one test file each at a time (a file shares one runtime): 8-10 min on the 2-core machine
# of December 2026, CPU-bound over both cores (benchmarks/RESULTS.md says what takes the time).
test: compile
	RAY_AUTH_MODE=disabled $(BIN)/python -m pytest -n 2 --dist loadfile

eval: $(STAMP)
	$(BIN)/memactors eval --set small

# The long fault-injection loops (crash, storage, concurrency, overload, fuzz) and the models'
# many seeded sequences (governance, lifecycle); CHAOS_ROUNDS=20.
chaos: $(STAMP)
	RAY_AUTH_MODE=disabled $(BIN)/python -m pytest -m chaos tests

bench: $(STAMP)
	$(BIN)/pip install --quiet -e '.[test,bench]'

clean:
	rm -rf $(VENV) $(DEMO_DATA) sim-out
