# The two commands: `make up` runs the whole service on embedded defaults, `make test` runs the tests.
# Both create the virtual environment on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: up test lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

up: $(STAMP)
	$(BIN)/zolve up

test: $(STAMP)
	@bash scripts/test-tools.sh
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	$(BIN)/python bench/dice_latency.py
	$(BIN)/python bench/pipeline_throughput.py

clean:
	rm -rf $(VENV) zolve-data .pytest_cache
