"""``viewcert warmup`` (viewcert.cli.warmup): generic discovery of the cached numba kernels, and every one of
them compiled by the workloads (a kernel added by a module split is found without a list of names)."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from viewcert.cli import app
from viewcert.cli.warmup import cached_dispatchers, numba_modules, warm_kernels
from viewcert.oracle import jit

SRC = Path(__file__).resolve().parents[1] / "src"


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
def test_workloads_compile_every_cached_kernel():
    """Slow on an empty numba cache (it compiles everything); seconds on a warm one (make installs warm)."""
    rep = warm_kernels()
    assert rep.n_dispatchers == len(_decorated_kernels()) and len(rep.compiled) + len(rep.uncovered) == rep.n_dispatchers
    # a kernel no workload reached must be one the package never calls (kept for the tests' twins)
    text = "\n".join(p.read_text(encoding="utf-8") for p in (SRC / "viewcert").rglob("*.py"))
    called = {k for k in rep.uncovered if re.search(rf"(?<!def )\b{re.escape(k.rsplit('.', 1)[1])}\(", text)}
    assert called == set()
    assert not jit.cache_is_cold()


def test_warmup_is_a_command():
    r = CliRunner().invoke(app, ["--help"])
    assert r.exit_code == 0 and "warmup" in r.output
