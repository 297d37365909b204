# viewcert: two quick-start targets (run, test) plus bench, lint and docs.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
# the lock files (locks/, docs/install.md): exact versions of every installed distribution, one folder per
# platform; `make lock` refreshes them from pyproject.toml (a test fails when the two disagree)
LOCKS   := locks/linux-$(shell uname -m)-py311
BASE_LOCK := $(LOCKS)/base.txt
DEV_LOCK  := $(wildcard $(LOCKS)/dev.txt)
UV_VERSION := 0.13.9
# torch's CPU build: a local file on these machines (/opt/wheels), else the PyTorch CPU index
TORCH_SRC := $(if $(wildcard /opt/wheels),--find-links /opt/wheels,--extra-index-url https://download.pytorch.org/whl/cpu --index-strategy unsafe-best-match)
SUM     := $(shell cat pyproject.toml $(BASE_LOCK) $(DEV_LOCK) | cksum | cut -d' ' -f1)
# two stamps on the one .venv: the base package from the base lock (`make run`), and every extra the tests,
# docs and lint need from the dev lock with every kernel warm (`make test`, which installs into the same venv;
# its stamp also stands for the base one). A change of pyproject.toml or of a lock invalidates both.
STAMP_RUN  := $(VENV)/.installed-run-$(SUM)
STAMP      := $(VENV)/.installed-test-$(SUM)

.PHONY: run install-run inspect test bench lint types docs layers clean harness harness-venv harness-vlmevalkit chromium foreign-debs lock check-latest

# install the lock $(1) into the venv, exactly (--no-deps: the lock is complete; `pip check` confirms it):
# uv (a fast installer from PyPI) when it installs, else pip
define install_lock
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	test -x $(BIN)/uv || $(BIN)/python -m pip install --quiet "uv==$(UV_VERSION)" || true
	if [ -x $(BIN)/uv ]; then \
	  $(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps $(TORCH_SRC) -r $(1) && \
	  $(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -e . ; \
	else \
	  $(BIN)/python -m pip install --quiet --no-deps -r $(1) && $(BIN)/python -m pip install --quiet --no-deps -e . ; \
	fi
	$(BIN)/python -m pip check >/dev/null || $(BIN)/python -m pip check
endef

$(STAMP_RUN): pyproject.toml $(BASE_LOCK)
	$(call install_lock,$(BASE_LOCK))
	rm -f $(VENV)/.installed-run-*
	touch $(STAMP_RUN)

$(STAMP): pyproject.toml $(BASE_LOCK) $(DEV_LOCK)
ifneq ($(DEV_LOCK),)
	$(call install_lock,$(DEV_LOCK))
else
	@echo "no dev lock for $(LOCKS) (docs/install.md): installing the extras unlocked"
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c $(BASE_LOCK) -e ".[test,molecules,docs,foreign,images]"
endif
	# compile every numba kernel once into the cache now, so the tests start warm
	$(BIN)/viewcert warmup
	rm -f $(VENV)/.installed-*
	touch $(STAMP) $(STAMP_RUN)

# refresh the lock files from pyproject.toml (needs uv; docs/install.md)
lock:
	command -v uv >/dev/null || $(PY) -m pip install --quiet "uv==$(UV_VERSION)"
	bash locks/refresh.sh

# by hand, now and then: install the newest releases into a scratch venv and report which certificates' bytes
# change and why (benchmarks/check_latest.py)
check-latest: $(STAMP_RUN)
	$(BIN)/python benchmarks/check_latest.py

# the base install alone (benchmarks/first_run.sh times it apart from the job)
install-run: $(STAMP_RUN)

# the base install is enough for the main job; after `make test` its stamp is already there. Its kernels
# compile at their first call (cached for later runs): the job itself is the warm-up
run: $(STAMP_RUN)
	$(BIN)/viewcert run --out out --force

# Inspect AI, the harness of the README walkthrough's dry run (step 5, `inspect eval ...`), into the same .venv:
# inspect-ai and its requirements only, each at the dev lock's version (`-c`: the dev lock holds inspect-ai and
# everything it needs, pinned as the base lock pins what they share; tests/contracts/test_lock.py checks both).
# `make test` installs it too, with every other extra.
# Where there is no dev lock (arm64, docs/install.md), the base lock constrains what it pins.
INSPECT_REQ := $(shell grep -o '"inspect-ai[^"]*"' pyproject.toml | head -1)
INSPECT_LOCK := $(or $(DEV_LOCK),$(BASE_LOCK))
inspect: $(STAMP_RUN)
	if [ -x $(BIN)/uv ]; then \
	  $(BIN)/uv pip install --quiet --python $(BIN)/python -c $(INSPECT_LOCK) $(INSPECT_REQ) ; \
	else \
	  $(BIN)/python -m pip install --quiet -c $(INSPECT_LOCK) $(INSPECT_REQ) ; \
	fi
	$(BIN)/python -m pip check >/dev/null || $(BIN)/python -m pip check
	$(BIN)/inspect --version

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

# the type checker: mypy with pydantic's plugin over src/viewcert, strict on formats/ and api/ ([tool.mypy] in
# pyproject.toml); 0 errors
types: $(STAMP)
	$(BIN)/mypy

# the documentation site (mkdocs.yml) into site/ (git-ignored); --strict fails on bad links and cross-refs
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet -d site

# the layer table of docs/architecture.md, rendered from tests/contracts/test_layers.py (a test fails when they differ)
layers: $(STAMP)
	$(BIN)/python -m tests.contracts.test_layers --write

# Debian's Chromium for the browser tests (Playwright drives it; Playwright never downloads a browser here)
chromium:
	command -v chromium >/dev/null || (apt-get install -y -q --no-install-recommends chromium \
		|| (apt-get update -q && apt-get install -y -q --no-install-recommends chromium))

# Debian's packages the foreign-renderer tests need (issue 53, docs/tool-cameras.md): OVITO's renderers need a
# Vulkan driver (mesa-vulkan-drivers: lavapipe, on the CPU), ASE's POV-Ray writer needs povray, the Jmol tests
# need jmol (its headless JmolData.jar on Debian's Java); without them those tests skip saying so
FOREIGN_DEBS := mesa-vulkan-drivers povray povray-includes jmol
foreign-debs:
	test -f /usr/share/povray-3.7/include/colors.inc && ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1 \
		&& test -f /usr/share/jmol/JmolData.jar \
		|| apt-get install -y -q --no-install-recommends $(FOREIGN_DEBS) \
		|| (apt-get update -q && apt-get install -y -q --no-install-recommends $(FOREIGN_DEBS))

# the suite on every core (pytest-xdist; at most 4 workers, each holds its own imports and kernels), a test file
# per worker at a time (--dist loadfile: a module's fixtures computed once), in tests/conftest.py's order (the
# long files first, the determinism runs leading); docs/install.md#running-the-tests
test: $(STAMP) lint types docs chromium foreign-debs
	$(BIN)/python -m pytest -q -n auto --maxprocesses=4 --dist loadfile --no-loadscope-reorder --durations=30 -m "not bench"
	NUMBA_DISABLE_JIT=1 $(BIN)/python -m pytest -q -m nojit -p no:cacheprovider

# harness round trips (docs/harnesses.md), not part of `make test`: lmms-eval and VLMEvalKit (ModelScope's
# packaging ms-vlmeval, without its CUDA-heavy dependency list: only the modules its import of a custom dataset
# asks for) in their own venv with viewcert itself (its replay models and `viewcert ladder`), which the tests
# drive as a subprocess. Installed from its lock (locks/refresh.sh): left free, lmms-eval's torchvision
# requirement upgrades torch to a CUDA build (2.14.1 and 17 nvidia-* packages, 7.0 GB).
HVENV := .venv-harness
HPIP := $(HVENV)/bin/python -m pip install --quiet
HARNESS_LOCK := locks/linux-x86_64-py311/harness.txt
# the modules VLMEvalKit's import of a custom dataset asks for (locks/harness.in holds them for the lock too)
VLMEVAL_DEPS := openpyxl xlsxwriter json_repair validators sty tabulate timeout-decorator portalocker openai \
	rouge jieba Levenshtein rapidfuzz qwen-vl-utils decord opencv-python-headless imageio nltk math-verify \
	latex2sympy2_extended pylatexenc num2words docopt python-dotenv sympy termcolor
# locked (x86_64): every distribution at the lock's version, installed with --no-deps by uv (pip if uv cannot
# be installed), torch's CPU build, no torchvision (PyPI's is a CUDA build that cannot import beside it; without
# one, VLMEvalKit's dataset module cannot import and its tests skip saying so)
harness-venv:
	test -x $(HVENV)/bin/python || $(PY) -m venv $(HVENV)
	test -x $(HVENV)/bin/uv || $(HPIP) "uv==$(UV_VERSION)" || true
	if [ -x $(HVENV)/bin/uv ]; then \
	  $(HVENV)/bin/uv pip install --quiet --python $(HVENV)/bin/python --no-deps $(TORCH_SRC) -r $(HARNESS_LOCK) && \
	  $(HVENV)/bin/uv pip install --quiet --python $(HVENV)/bin/python --no-deps -e . ; \
	else \
	  $(HPIP) --no-deps $(TORCH_SRC) -r $(HARNESS_LOCK) && $(HPIP) --no-deps -e . ; \
	fi
	# no CUDA package: the CPU build held
	! $(HVENV)/bin/python -m pip list 2>/dev/null | grep -i -E 'nvidia|cuda'

harness: $(STAMP) harness-venv
	VIEWCERT_HARNESS_PYTHON=$(HVENV)/bin/python $(BIN)/python -m pytest -q -m harness \
		tests/harness/test_harness_roundtrip_lmms.py tests/harness/test_harness_roundtrip_vlmevalkit.py \
		tests/harness/test_harness_dry_run_lmms_vlmevalkit.py tests/contracts/test_readme_walkthrough_harness.py

# VLMEvalKit on x86_64, opt-in and NOT CUDA-free: ms-vlmeval imports torchvision, and the only torchvision that
# imports on this machine is the CUDA pair on disk (torch 2.14.1 + torchvision 0.29.1, ~5.6 GB with its nvidia
# packages; PyPI has no CPU torchvision for x86_64 and download.pytorch.org is not reachable). Runs on the CPU.
# Its own venv, so `make harness` stays free of CUDA packages (docs/harnesses.md).
VVENV := .venv-vlmevalkit
VPIP := $(VVENV)/bin/python -m pip install --quiet
# what lmms-eval brings into the CUDA-free venv and vlmeval's import needs here
VLMEVAL_HUB_DEPS := huggingface_hub datasets transformers accelerate scikit-learn
harness-vlmevalkit: $(STAMP)
	test -x $(VVENV)/bin/python || $(PY) -m venv $(VVENV)
	$(VPIP) "torch==2.14.1" "torchvision==0.29.1"
	$(VPIP) --no-deps "ms-vlmeval==0.0.20"
	$(VPIP) "torch==2.14.1" "torchvision==0.29.1" $(VLMEVAL_DEPS) $(VLMEVAL_HUB_DEPS) "filelock<4"
	$(VPIP) "torch==2.14.1" "torchvision==0.29.1" "filelock<4" -e .
	$(VVENV)/bin/python -c "import torchvision, vlmeval.run"
	VIEWCERT_HARNESS_PYTHON=$(VVENV)/bin/python $(BIN)/python -m pytest -q -m harness \
		tests/harness/test_harness_roundtrip_vlmevalkit.py tests/harness/test_harness_dry_run_lmms_vlmevalkit.py \
		tests/contracts/test_readme_walkthrough_harness.py

# the benchmarks, then the whole-set checks the suite covers one item per class of (marker bench)
bench: $(STAMP)
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done
	$(BIN)/python -m pytest -q -n auto --maxprocesses=4 --dist loadfile -m bench

clean:
	rm -rf $(VENV) $(HVENV) $(VVENV) out site .cache/mkdocs-jupyter .pytest_cache .ruff_cache .mypy_cache
