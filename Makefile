# Two entry points: `make demo` (set up, run the main job) and `make test` (set up, run every check).
# `make docs` builds the documentation site into site/ (strict: a broken link or reference fails).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test setup lint typecheck layers pytest nojit docs slow bench clean

$(BIN)/ocsched: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	# The official Chakra schema (generated et_def_pb2) for the trace tests; --no-deps: its own
	# dependency tree (HTA, graphviz, ...) is not needed to read the schema.
	$(BIN)/python -m pip install -q --no-deps mlc-chakra
	# Compile every numba kernel once into the cache (src/ocsched/__pycache__/numba): no
	# later run waits for a compile.
	$(BIN)/ocsched warmup
	touch $@

setup: $(BIN)/ocsched

demo: setup
	$(BIN)/ocsched demo

test: setup lint typecheck layers pytest docs

lint: setup
	$(BIN)/ruff check src tests benchmarks docs/hooks
	$(BIN)/ruff format --check src tests benchmarks docs/hooks

typecheck: setup
	$(BIN)/mypy

layers: setup
	$(BIN)/lint-imports

pytest: setup
	$(BIN)/pytest -q -n 2

# The kernels' plain-Python path (numba off): the interpreted and compiled paths agree.
nojit: setup
	NUMBA_DISABLE_JIT=1 $(BIN)/pytest -q -n 0 -p no:randomly tests/test_kernels.py tests/test_assign.py

# NO_MKDOCS_2_WARNING: silence mkdocs-material's banner about its successor (not a build warning).
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

slow: setup
	$(BIN)/pytest -q -m slow

bench: setup
	$(BIN)/python benchmarks/run.py

# Also the compiled kernels (numba's cache lives in __pycache__, see ocsched._jit).
clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis site
	find src tests benchmarks -name __pycache__ -type d -prune -exec rm -rf {} +
