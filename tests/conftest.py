"""Shared fixtures. Tests that need the study's data skip with a clear reason when it is absent."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data" / "render-ceiling"
E3 = SHARED_DATA / "data" / "e3"

settings.register_profile(
    "ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("ci")


def _require_shared() -> Path:
    if not (E3 / "structures.json").is_file():
        pytest.skip(f"shared data absent: {SHARED_DATA} (the render-ceiling study data) is not beside the repo")
    return SHARED_DATA


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path to ../shared/data/render-ceiling; skips the test when it is absent."""
    return _require_shared()


@pytest.fixture(scope="session")
def e3_cifs() -> dict[str, str]:
    """{material_id: CIF text} for all 1,820 e3 structures."""
    _require_shared()
    data = json.loads((E3 / "structures.json").read_text())
    return {k: v["cif"] for k, v in data.items()}


@pytest.fixture(scope="session")
def e3_one_per_space_group(e3_cifs) -> dict[str, str]:
    """{material_id: CIF text}: the first e3 structure (in id order) of each space group spglib finds at
    0.01 Å / 5° — the in-suite cover of the whole-set checks (marker ``bench``) that `make bench` runs on all
    1,820. The groups are found by spglib directly, not by the code under test."""
    import spglib

    from viewcert.io.cif import read_cif_text

    first: dict[int, str] = {}
    for mid in sorted(e3_cifs):
        s = read_cif_text(e3_cifs[mid], source=mid)
        cell = (s.lattice, s.positions @ np.linalg.inv(s.lattice), s.numbers)
        group = spglib.get_symmetry_dataset(cell, symprec=0.01, angle_tolerance=5.0).number
        first.setdefault(group, mid)
    return {mid: e3_cifs[mid] for mid in sorted(first.values())}


@pytest.fixture(scope="session")
def e3_eval_ids() -> list[str]:
    """The 210 eval ids in file order (ordered by crystal system)."""
    _require_shared()
    return [json.loads(line)["material_id"] for line in (E3 / "eval.jsonl").read_text().splitlines() if line.strip()]


from tests.support.browser import browser_page, chromium_browser  # noqa: E402,F401  (headless Chromium fixtures)
from tests.support.explore_fixtures import (  # noqa: E402,F401
    e3_phantom_certify,
    e3_phantom_site,
    hostile_certify,
    hostile_site,
    phantom_export,
    phantom_site,
    pocket_ligand_export,
    pocket_ligand_site,
    residue_ligand_export,
    residue_ligand_site,
    zoom_export,
    zoom_site,
)
from tests.support.ladder_links import study_site  # noqa: E402,F401  (the study's ladder linked to the explorer)
from tests.support.pyxtal_recipes import pyxtal_space_groups  # noqa: E402,F401  (the 230 space groups)


def _determinism(item) -> bool:
    """Whether the item is one of tests/contracts/test_determinism_cpu.py's (its module is
    ``tests.contracts.test_determinism_cpu``)."""
    return item.path.name == "test_determinism_cpu.py"


#: seconds of the files whose tests were among the 30 slowest of the last fresh-clone `make test` (2 cores,
#: 2026-12-04; a file's slow tests summed): handed out first, longest first, so that the end of the run is many
#: short files spread over the workers rather than one worker finishing a long file while the others idle
LONG_FILES = {
    "test_determinism_cpu.py": 193, "test_readme_walkthrough.py": 81, "test_explore_browser.py": 66,
    "test_harness_dry_run_inspect.py": 60, "test_interrupt.py": 60, "test_design_legibility.py": 44,
    "test_attribution_notebook.py": 42, "test_interactions_notebook.py": 40, "test_learn_ladder.py": 40,
    "test_interaction_export.py": 40, "test_trust_open_audit.py": 36, "test_tasks_export.py": 34,
    "test_explore_ladder_links.py": 34, "test_export_arms_ladder.py": 31, "test_warmup.py": 31,
    "test_harness_notebook.py": 27, "test_oracle_e3.py": 22, "test_interactions_criteria_plip.py": 22,
    "test_interactions_ceiling.py": 22, "test_design_perspective.py": 22, "test_tasks_protocol_file.py": 20,
    "test_interaction_export_renders_once.py": 20, "test_learn_cnn.py": 19, "test_attribution_study.py": 18,
    "test_certify_notebook.py": 16, "test_table_cells.py": 16,
}


def pytest_collection_modifyitems(session, config, items):
    """On an xdist worker (`make test`: `--dist loadfile --no-loadscope-reorder`, files handed out in this
    order): the long files first, longest first (:data:`LONG_FILES`; the CPU-determinism module, the longest
    single piece of the suite, leads, so one worker starts on it while the others take the rest), then the files
    with the most tests first (xdist's own order without the flag, which put that two-test module at the very
    end)."""
    if not hasattr(config, "workerinput"):
        return
    n_tests = collections.Counter(item.path for item in items)
    # stable: a file stays together
    items.sort(key=lambda item: (-LONG_FILES.get(item.path.name, 0), -n_tests[item.path]))


def pytest_ignore_collect(collection_path, config):
    """`make test`'s second pass (``-m nojit``: the kernels' Python bodies under ``NUMBA_DISABLE_JIT=1``) collects
    only the test files that name the marker: importing the others (the whole suite, about 25 s) would only
    deselect every test they hold."""
    if config.option.markexpr == "nojit" and collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
        return "nojit" not in collection_path.read_text(encoding="utf-8")
    return None


def pytest_collection_finish(session):
    """The CPU-determinism runs (tests/contracts/test_determinism_cpu.py: subprocesses, minutes of CPU) start in the
    background as soon as they are collected, on the core the one-process suite leaves idle. Not under
    pytest-xdist (`make test` runs `-n`): every worker collects every test and no core is idle; the worker
    given the module runs them in its fixture while the others run the rest."""
    if hasattr(session.config, "workerinput") or session.config.option.collectonly:  # an xdist worker; --co
        return
    modules = {item.module for item in session.items if _determinism(item)}  # the module object its tests use
    if modules:
        import atexit
        import shutil
        import tempfile

        tmp = Path(tempfile.mkdtemp(prefix="viewcert-cpu-"))
        atexit.register(shutil.rmtree, tmp, True)
        modules.pop().start_in_background(tmp)



@pytest.fixture(autouse=True)
def _signal_dispositions_restored(request):
    """A test that leaves SIGINT/SIGTERM handled otherwise than it found them (for example ignored) would pass
    that disposition to every subprocess a later test of the same worker starts: restore it, and name the test
    in the run's warnings summary so the leak is found and fixed."""
    import signal

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for s, handler in before.items():
        now = signal.getsignal(s)
        if now != handler and handler is not None:
            signal.signal(s, handler)
            request.node.warn(pytest.PytestWarning(
                f"signal disposition leaked and restored: {signal.Signals(s).name} was {now!r}"))
