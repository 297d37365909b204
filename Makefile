# viewcert: two quick-start targets (run, test) plus bench and lint.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: run test bench lint clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,molecules]"
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/viewcert run --out out

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

test: $(STAMP) lint
	$(BIN)/python -m pytest -q
	NUMBA_DISABLE_JIT=1 $(BIN)/python -m pytest -q -m nojit -p no:cacheprovider

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache
