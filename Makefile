# Quick start: `make demo` (runs the bundled example), `make test` (the full check CI runs). Needs only
# Python 3.11+: the dev dependencies bring a PostgreSQL server and a `dot` when the system has none.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
ACME := examples/acme
ACME_SOURCES := --catalog $(ACME)/catalog --deploys $(ACME)/deploys.jsonl --docs $(ACME)/runbooks \
	--triples $(ACME)/triples.json --aliases $(ACME)/aliases.yaml

.PHONY: install demo test lint typecheck imports unit bench clean

$(BIN)/oncall-graph: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "oncall-graph needs Python 3.11 or newer; $(PYTHON) is $$($(PYTHON) --version 2>&1) (make PYTHON=python3.12 ...)"; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

install: $(BIN)/oncall-graph

# Syncs examples/acme into the embedded default database (./oncall-graph.db), then answers from it.
demo: install
	$(BIN)/oncall-graph $(ACME_SOURCES) sync
	@echo
	$(BIN)/oncall-graph blast-radius redis
	@echo
	$(BIN)/oncall-graph --now 2026-11-29T15:00:00Z suspects payments --since 6h

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy

imports: install
	$(BIN)/lint-imports

# Three workers on two cores: most tests wait on a bot, a server or a subprocess (CI: 19 -> 9 min).
# Each worker takes databases of its own on the one PostgreSQL server. TEST_WORKERS=0 runs serially.
TEST_WORKERS ?= 3
unit: install
	$(BIN)/pytest -n $(TEST_WORKERS)

test: lint typecheck imports unit

# Speed and memory, reported as numbers (never asserted in tests). QUICK=1 for the small catalogs only.
bench: install
	$(BIN)/python -m bench.run $(if $(QUICK),--quick)
	$(BIN)/python -m bench.sync_bench $(if $(QUICK),--quick)
	$(BIN)/python -m bench.slack_bench $(if $(QUICK),--quick)
	$(BIN)/python -m bench.live_bench $(if $(QUICK),--quick)
	$(BIN)/python -m bench.typos_bench $(if $(QUICK),--quick)
	$(BIN)/python -m bench.webhook_bench $(if $(QUICK),--quick)
	$(BIN)/python -m bench.deploy_load_bench $(if $(QUICK),--quick)
	$(BIN)/python -m bench.deploy_load_bench --apart $(if $(QUICK),--quick)
	$(BIN)/python -m bench.restart_bench $(if $(QUICK),--quick)
	$(BIN)/python -m bench.background_bench $(if $(QUICK),--quick)
	$(BIN)/python -m bench.observed_bench $(if $(QUICK),--quick)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis bench/out
