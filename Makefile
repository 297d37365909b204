# viewcert: two quick-start targets (run, test) plus bench, lint and docs.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: run test bench lint docs clean harness chromium

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

# Debian's Chromium for the browser tests (Playwright drives it; Playwright never downloads a browser here)
chromium:
	command -v chromium >/dev/null || (apt-get install -y -q --no-install-recommends chromium \
		|| (apt-get update -q && apt-get install -y -q --no-install-recommends chromium))

test: $(STAMP) lint docs chromium
	$(BIN)/python -m pytest -q
	NUMBA_DISABLE_JIT=1 $(BIN)/python -m pytest -q -m nojit -p no:cacheprovider

# harness round trips (docs/harnesses.md), not part of `make test`: lmms-eval (the `harness` extra) and
# VLMEvalKit (ModelScope's packaging ms-vlmeval, without its CUDA-heavy dependency list: only the modules its
# import of a custom dataset asks for) in their own venv, which the tests drive as a subprocess
HVENV := .venv-harness
VLMEVAL_DEPS := openpyxl xlsxwriter json_repair validators sty tabulate timeout-decorator portalocker openai \
	rouge jieba Levenshtein rapidfuzz qwen-vl-utils decord opencv-python-headless imageio nltk math-verify \
	latex2sympy2_extended pylatexenc num2words docopt python-dotenv sympy termcolor
harness: $(STAMP)
	test -x $(HVENV)/bin/python || $(PY) -m venv $(HVENV)
	$(HVENV)/bin/python -m pip install --quiet "lmms-eval>=0.7.3,<0.8" "filelock<4"
	$(HVENV)/bin/python -m pip install --quiet --no-deps "ms-vlmeval==0.0.20"
	$(HVENV)/bin/python -m pip install --quiet $(VLMEVAL_DEPS) "filelock<4"
	VIEWCERT_HARNESS_PYTHON=$(HVENV)/bin/python $(BIN)/python -m pytest -q -m harness \
		tests/test_harness_roundtrip_lmms.py tests/test_harness_roundtrip_vlmevalkit.py

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) $(HVENV) out site .cache/mkdocs-jupyter .pytest_cache .ruff_cache
