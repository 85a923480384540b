# Two commands set everything up on a fresh machine: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
DATA ?= .memactors-data

.PHONY: run demo test chaos install bench eval clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e '.[test]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

# The batch simulation on the embedded default (configs/sim-default.toml): memactors and, when the
# [bench] extra is installed (`make bench`), LangGraph's SqliteStore beside it; without the extra
# the baseline is skipped with a note. Report: sim-out/report.json (and plots with matplotlib).
run: $(STAMP)
	$(BIN)/memactors simulate --config configs/sim-default.toml --out sim-out

demo: $(STAMP)
	$(BIN)/memactors demo --data $(DATA) --fresh

test: $(STAMP)
	RAY_AUTH_MODE=disabled $(BIN)/python -m pytest

eval: $(STAMP)
	$(BIN)/memactors eval --set small

# The long fault-injection loops (crash, storage, concurrency, overload, fuzz); CHAOS_ROUNDS=20.
chaos: $(STAMP)
	RAY_AUTH_MODE=disabled $(BIN)/python -m pytest -m chaos tests/chaos

bench: $(STAMP)
	$(BIN)/pip install --quiet -e '.[test,bench]'

clean:
	rm -rf $(VENV) $(DATA) sim-out
