# viewcert: two quick-start targets (run, test) plus bench, lint and docs.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: run test bench lint docs clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,molecules,docs]"
	# compile every numba kernel once into the cache now, so `make run` and `make test` start warm
	$(BIN)/viewcert warmup
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/viewcert run --out out

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

# the documentation site (mkdocs.yml) into site/ (git-ignored); --strict fails on bad links and cross-refs
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet -d site

test: $(STAMP) lint docs
	$(BIN)/python -m pytest -q
	NUMBA_DISABLE_JIT=1 $(BIN)/python -m pytest -q -m nojit -p no:cacheprovider

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) out site .cache/mkdocs-jupyter .pytest_cache .ruff_cache
