# The two commands: `make up` runs the whole service on embedded defaults, `make test` runs the tests
# (`make test-fast` only the fast tier, below).
# Both create the virtual environment on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: up test test-fast test-integration lint bench contract lock clean docs

# The runtime dependencies come from requirements.lock (pinned, with hashes: what the image installs), so
# the tests run on what deploys; then the client library (client/, which the service depends on and no
# public index has), the project itself and its dev tools.
# After changing the dependencies in pyproject.toml: `make lock`.
# setuptools warns of every editable install that folders named like a package may shadow it: this
# checkout is such a tree on purpose, and the warning filled a newcomer's first screen
QUIET_BUILD := PYTHONWARNINGS=ignore::UserWarning
$(STAMP): pyproject.toml client/pyproject.toml requirements.lock requirements-before-3.11.3.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements.lock -r requirements-before-3.11.3.lock
	$(QUIET_BUILD) $(BIN)/python -m pip install --quiet --no-deps -e ./client
	$(QUIET_BUILD) $(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# `make up PORT=8123 DATA_DIR=/srv/zolve` (defaults: 8000, ./zolve-data or ZOLVE_DATA_DIR)
PORT ?= 8000
DATA_DIR ?= $(or $(ZOLVE_DATA_DIR),zolve-data)
up: $(STAMP)
	$(BIN)/zolve up --port $(PORT) --data-dir $(DATA_DIR)

# Tests come in tiers, marked at collection by tests/tiers.py (markers registered in pyproject.toml):
#   integration  needs PostgreSQL, Redis, a Celery worker, a browser or a `zolve up` of its own; marked
#                automatically for every test that uses a server fixture of tests/conftest.py
#   slow         needs no server but takes seconds (heavy Z3 cases, CLI subprocesses): @pytest.mark.slow
# `make test-fast` runs the rest in 2 processes (pure unit tests: under a minute, no server started or
# reached);
# `make test` runs everything and is what CI runs (.ci/run).
# `make test` and `make test-integration` run pytest in TEST_PROCESSES processes (pytest-xdist), each with
# servers of its own (the session fixtures of tests/conftest.py), each module whole on one of them, the
# longest first (tests/order.py): 3 on a 2-core machine, where 4 ran its CPU at 99% and timed-out waits
# failed (test_pipeline's solve under way in 30 s).
# `make test TEST_PROCESSES=0` runs them in one.
TEST_PROCESSES ?= 3
test: $(STAMP)
	@bash scripts/test-tools.sh
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -n $(TEST_PROCESSES)

test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not integration and not slow" -n 2

test-integration: $(STAMP)
	@bash scripts/test-tools.sh
	$(BIN)/python -m pytest -n $(TEST_PROCESSES) -m integration

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python bench/dice_latency.py
	$(BIN)/python bench/pipeline_throughput.py

# schemathesis with every check, longer than the bounded run in `make test` (bench/contract.py)
contract: $(STAMP)
	$(BIN)/python bench/contract.py --max-examples 100

# re-pin the runtime dependencies (newest versions that satisfy pyproject.toml) with their hashes. The
# client library is resolved from a wheel of client/ and then left out: it is built from this checkout,
# never fetched (an index's `zolve-client` is not ours).
lock: $(STAMP)
	$(BIN)/python -m pip install --quiet pip-tools
	rm -rf build/lock-wheels && $(BIN)/python -m pip wheel --quiet --no-deps -w build/lock-wheels ./client
	$(BIN)/pip-compile --quiet --allow-unsafe --generate-hashes --strip-extras --no-header --no-annotate \
		--no-emit-index-url --no-emit-find-links --upgrade --find-links build/lock-wheels \
		-o requirements.lock pyproject.toml
	$(BIN)/python scripts/unlock_local.py requirements.lock zolve-client

clean:
	rm -rf $(VENV) zolve-data .pytest_cache site

# The docs site (mkdocs.yml, pages under docs/; the home page is README.md): the OpenAPI document the API
# serves, written with no server (`zolve openapi`), then `mkdocs build --strict` into site/. Its own
# dependencies (pyproject's `docs` extra) are installed on first use.
DOCS_STAMP := $(VENV)/.docs-installed
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(BIN)/zolve openapi -o docs/openapi.json
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The container image and the deployment run from it (podman; scripts/image/ installs what it needs).
# `make image` builds localhost/zolve:latest on a base made from Debian's packages (docs/operating/deployment.md);
# `make test-image` runs docker-compose.yml's services and deploy/k8s from it; `make test` runs it too, as
# root with podman (tests/test_image.py), and skips it elsewhere with the reason.
.PHONY: image test-image
image:
	bash scripts/image/build.sh

# as root; under a minute with the image built, about 3½ minutes on a fresh machine
# (scripts/image/test_image.py says what it runs and checks; docs/operating/deployment.md)
test-image: $(STAMP) image
	$(BIN)/python scripts/image/test_image.py
