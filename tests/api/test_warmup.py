"""``viewcert warmup`` (viewcert.api.numba_cache over viewcert.kernels): generic discovery of the cached numba
kernels, and every one of them compiled by the workloads the kernel packages register (a kernel added by a
module split is found without a list of names; a workload added by a package without touching api or CLI)."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from viewcert.api.numba_cache import warm_kernels
from viewcert.cli import app
from viewcert.kernels import cached_dispatchers, numba_modules
from viewcert.oracle import jit

SRC = Path(__file__).resolve().parents[2] / "src"


def _decorated_kernels() -> set[str]:
    """Twin, from the decorators rather than the imports: ``module.function`` of every top-level function
    decorated ``@njit(...)``/``@numba.njit(...)`` with ``cache=True`` in the package's source."""
    out = set()
    for path in sorted((SRC / "viewcert").rglob("*.py")):
        mod = ".".join(path.relative_to(SRC).with_suffix("").parts)
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.FunctionDef):
                continue
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and ast.unparse(dec.func) in ("njit", "numba.njit", "jit", "numba.jit") \
                        and any(k.arg == "cache" and getattr(k.value, "value", False) is True for k in dec.keywords):
                    out.add(f"{mod}.{node.name}")
    return out


def test_discovery_finds_every_decorated_kernel_module():
    twin_modules = {k.rsplit(".", 1)[0] for k in _decorated_kernels()}
    assert twin_modules and twin_modules <= set(numba_modules())


def test_cached_dispatchers_are_exactly_the_decorated_kernels():
    for m in numba_modules():
        importlib.import_module(m)
    assert set(cached_dispatchers()) == _decorated_kernels()


def test_stamp_does_not_depend_on_which_kernel_modules_are_imported():
    """warmup imports every kernel module, a certify run some: both must read the same warm marker."""
    files = jit.kernel_module_files()
    assert {str(Path(f).resolve().relative_to(SRC).with_suffix("")).replace("/", ".") for f in files} \
        == set(numba_modules())
    assert jit._stamp_path() == jit._stamp_path()


@pytest.mark.slow
def _inlined(names: set[str]) -> set[str]:
    """The kernels of ``names`` (module.function) decorated with ``inline="always"``."""
    import importlib

    def inline(name: str) -> str | None:
        mod, fn = name.rsplit(".", 1)
        return getattr(importlib.import_module(mod), fn).targetoptions.get("inline")

    return {n for n in names if inline(n) == "always"}


def test_workloads_compile_every_cached_kernel():
    """Slow on an empty numba cache (it compiles everything); seconds on a warm one (make installs warm)."""
    rep = warm_kernels()
    assert rep.n_dispatchers == len(_decorated_kernels()) and len(rep.compiled) + len(rep.uncovered) == rep.n_dispatchers
    # a kernel no workload reached must be one the package never calls (kept for the tests' twins)
    text = "\n".join(p.read_text(encoding="utf-8") for p in (SRC / "viewcert").rglob("*.py"))
    called = {k for k in rep.uncovered if re.search(rf"(?<!def )\b{re.escape(k.rsplit('.', 1)[1])}\(", text)}
    # or one numba inlines into its callers (inline="always": its IR is compiled in theirs, never on its own)
    assert called - _inlined(called) == set()
    assert _inlined(called) <= {"viewcert.oracle._batch.reconstruct_one"}  # the one inlined kernel (oracle/_batch.py)
    assert not jit.cache_is_cold()


def test_warmup_is_a_command():
    r = CliRunner().invoke(app, ["--help"])
    assert r.exit_code == 0 and "warmup" in r.output


def _cache_events(env: dict, *args: str, cwd: Path) -> tuple[set[str], set[str]]:
    """(kernels loaded from, kernels saved to numba's cache) by ``viewcert ARGS`` in a subprocess, from numba's
    own cache log (``NUMBA_DEBUG_CACHE``): ``[cache] data loaded from '…/DIR_HASH/module.function-LINE.pyXY.K.nbc'``."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", "from viewcert.cli import app; app()", *args], cwd=cwd,
                       env={**env, "NUMBA_DEBUG_CACHE": "1"}, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    pat = re.compile(r"^\[cache\] data (loaded from|saved to) '(.+?)'", re.MULTILINE)
    loaded, saved = set(), set()
    for verb, path in pat.findall(r.stdout + r.stderr):
        name = f"{Path(path).parent.name.rsplit('_', 1)[0]}/{Path(path).name.split('.py')[0].rsplit('-', 1)[0]}"
        (loaded if verb.startswith("loaded") else saved).add(name)
    return loaded, saved


def test_main_job_warmup_covers_exactly_what_viewcert_run_calls(tmp_path):
    """``viewcert warmup --main-job`` and then ``viewcert run``, each in a fresh process: the run compiles
    nothing (every kernel it calls is in the cache) and the kernels it loads from Python are the ones the
    warm-up reached (equal sets when the warm-up itself found the cache warm, as after ``make``)."""
    import os

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    w_loaded, w_saved = _cache_events(env, "warmup", "--main-job", cwd=tmp_path)
    r_loaded, r_saved = _cache_events(env, "run", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert r_saved == set(), f"viewcert run compiled kernels the main-job warm-up missed: {sorted(r_saved)}"
    assert r_loaded and r_loaded <= w_loaded | w_saved
    if not w_saved:
        assert r_loaded == w_loaded
    # the run reached the oracle's batch reconstruction and the renderer (the main job's two halves)
    assert any(k.endswith("reconstruct_many") for k in r_loaded) and any("_render_" in k for k in r_loaded)


def test_selections_are_workloads():
    from viewcert.api.numba_cache import PRESTAGE, workloads
    from viewcert.kernels import selection

    labels = [w.label for w in workloads()]
    lanes = {label for lanes in PRESTAGE.values() for lane in lanes for label in lane}
    # every workload is in "all" but the oracle's two halves and the renderer's main-job half, which only the
    # side-by-side lanes run
    assert set(selection("all")) == set(labels) - {"oracle seeding", "oracle rest", "render main"}
    assert selection("main-job") == ("main job",) and lanes <= set(labels)
    assert selection("all")[0] == "main job"  # the main job first: its kernels are what `make run` needs
    with pytest.raises(ValueError, match="not one of"):
        warm_kernels(selection="some")


def test_each_kernel_package_registers_its_own_workloads():
    """The workloads live with the kernels they warm (``viewcert.<package>.workloads``), found by name; the api
    registers only the main job, and neither api nor CLI source names a kernel package's workload."""
    from viewcert.api.numba_cache import workloads
    from viewcert.kernels import workload_modules

    assert workload_modules() == ("viewcert.certify.workloads", "viewcert.render.workloads",
                                  "viewcert.tasks.workloads")
    home = {w.label: w.run.__module__ for w in workloads()}
    assert home == {"main job": "viewcert.api.numba_cache", "certify": "viewcert.certify.workloads",
                    "certify main": "viewcert.certify.workloads", "oracle seeding": "viewcert.certify.workloads",
                    "oracle rest": "viewcert.certify.workloads", "render": "viewcert.render.workloads",
                    "render main": "viewcert.render.workloads", "tasks": "viewcert.tasks.workloads"}
    for face in ("api/numba_cache.py", "cli/warmup.py", "api/prestage.py"):
        text = (SRC / "viewcert" / face).read_text(encoding="utf-8")
        assert not re.search(r"viewcert\.(certify|render|tasks)\.workloads|certify_item|run_task", text), face


def test_register_refuses_an_unknown_selection():
    from viewcert.kernels import register

    with pytest.raises(ValueError, match="not one of"):
        register("x", selections=("everything",))


def test_interpreted_kernel_runs_its_python_body_with_the_named_callees_compiled():
    """oracle.jit.interpreted (the side-by-side halves of the oracle): the same results as the kernel, here on
    a hand-worked lattice, with the named callee compiled and the others run as Python."""
    import numpy as np

    from viewcert.oracle._geometry import lattice_inverse, solve3_into
    from viewcert.oracle._grids import collapse_sites

    assert set(jit.callees(lattice_inverse)) == {"solve3_into"}
    assert set(jit.callees(collapse_sites)) == {"lexsort_rows"}
    lat = np.diag([2.0, 4.0, 5.0])
    inv, ok = jit.interpreted(lattice_inverse, frozenset({"solve3_into"}))(lat)
    assert ok and np.array_equal(inv, np.diag([0.5, 0.25, 0.2]))
    inv2, _ = jit.interpreted(lattice_inverse, frozenset())(lat)  # solve3_into interpreted too
    assert np.array_equal(inv2, inv)
    assert jit.interpreted(lattice_inverse, frozenset()).__globals__["solve3_into"] is not solve3_into
    w = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    keep = jit.interpreted(collapse_sites, frozenset())(w, np.zeros(3, dtype=np.int64), 0.1)
    assert keep.tolist() == [True, False, True]  # the second coincides with the first


def test_compiling_stages_restores_the_batch_kernel():
    from viewcert.oracle import _kernels as K

    kernel = K.reconstruct_many
    with jit.compiling_stages("seeding"):
        assert K.reconstruct_many is not kernel
    assert K.reconstruct_many is kernel
    with pytest.raises(ValueError, match="half"), jit.compiling_stages("other"):
        pass
    assert K.reconstruct_many is kernel
