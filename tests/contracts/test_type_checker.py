"""The type checker's configuration (issue 55, step 3): ``make test`` runs mypy with pydantic's plugin (the
Makefile's ``types`` target, before the suite); strict on the formats and the Python API; a baseline of modules
whose errors are not reported yet, which only shrinks; ``py.typed`` shipped. The check itself is ``make types``
(0 errors): a test does not run mypy (it takes minutes)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
MYPY = PYPROJECT["tool"]["mypy"]
#: the baseline when the checker came in: 96 modules (478 errors in mypy's default mode)
BASELINE_MOST = 96
#: mypy's --strict, as per-module flags (its switch is global only)
STRICT_FLAGS = ("disallow_any_generics", "disallow_subclassing_any", "disallow_untyped_calls", "disallow_untyped_defs",
                "disallow_incomplete_defs", "check_untyped_defs", "disallow_untyped_decorators", "warn_unused_ignores",
                "warn_return_any", "no_implicit_reexport", "strict_equality", "extra_checks")


def _overrides(key: str) -> list[dict]:
    return [o for o in MYPY.get("overrides", []) if o.get(key)]


def test_make_test_runs_mypy_with_pydantics_plugin_over_the_package():
    make = (ROOT / "Makefile").read_text()
    test_target = next(line for line in make.splitlines() if line.startswith("test:"))
    assert " types " in f" {test_target.split(':', 1)[1]} "
    assert "\ntypes: $(STAMP)\n\t$(BIN)/mypy\n" in make
    assert MYPY["plugins"] == ["pydantic.mypy"] and MYPY["files"] == ["src/viewcert"]
    deps = PYPROJECT["project"]["optional-dependencies"]["test"]
    assert any(d.startswith("mypy") for d in deps)
    assert any(d.startswith("pydantic") for d in PYPROJECT["project"]["dependencies"])


def test_formats_and_api_are_strict_and_never_in_the_baseline():
    strict = _overrides("disallow_untyped_defs")
    assert len(strict) == 1 and set(strict[0]["module"]) == {"viewcert.formats.*", "viewcert.api.*"}
    assert all(strict[0].get(flag) is True for flag in STRICT_FLAGS)
    baseline = [m for o in _overrides("ignore_errors") for m in o["module"]]
    assert not [m for m in baseline if m.startswith(("viewcert.formats", "viewcert.api"))]


def test_the_baseline_only_shrinks_and_names_real_modules():
    baseline = [m for o in _overrides("ignore_errors") for m in o["module"]]
    assert len(baseline) == len(set(baseline)) <= BASELINE_MOST
    for m in baseline:
        path = ROOT / "src" / Path(*m.split("."))
        assert path.with_suffix(".py").is_file() or (path / "__init__.py").is_file(), m


def test_py_typed_is_shipped():
    assert (ROOT / "src" / "viewcert" / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["viewcert"]
