"""The package faces load their names at first use (``viewcert.lazy_face``, PEP 562; issue 37: a ``viewcert``
command in a subprocess pays only for the modules it runs), and still give every public name.

Expected values come from each face's source, read with ``ast`` (its ``if TYPE_CHECKING:`` imports: name ->
the submodule that defines it), not from the face's own table."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from tests.contracts.test_layers import LAYERS

SRC = Path(__file__).resolve().parents[2] / "src"
LAZY = ["attribution", "benchmark", "cameras", "certify", "design", "detect", "formats", "harness", "interactions", "io",
        "learn", "observe", "oracle", "recover", "render", "symmetry", "tasks"]


def _declared(package: str) -> dict[str, str]:
    """{public name: defining module} from the face's ``if TYPE_CHECKING:`` imports."""
    tree = ast.parse((SRC / "viewcert" / package / "__init__.py").read_text(encoding="utf-8"))
    (block,) = [n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING"]
    return {a.asname or a.name: imp.module for imp in block.body for a in imp.names}


def _face_table(package: str) -> dict[str, str]:
    """{public name: defining module} from the face's ``_FACE`` literal, read from the source."""
    tree = ast.parse((SRC / "viewcert" / package / "__init__.py").read_text(encoding="utf-8"))
    (node,) = [n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "_FACE"]
    return {name: f"viewcert.{package}.{module}" for name, module in ast.literal_eval(node.value).items()}


def _fresh(code: str) -> str:
    """What ``code`` prints in a fresh interpreter (nothing imported before it)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(SRC), "PATH": ""})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("package", LAZY)
def test_every_public_name_is_its_modules_object(package):
    face = importlib.import_module(f"viewcert.{package}")
    declared = _declared(package)
    assert sorted(declared) == sorted(face.__all__)
    assert _face_table(package) == declared  # the run-time table names the module the type checker reads
    for name, module in declared.items():
        assert getattr(face, name) is getattr(importlib.import_module(module), name), name
    assert set(face.__all__) <= set(dir(face))
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        face.not_a_name  # noqa: B018


def test_star_import_gives_every_name():
    ns: dict = {}
    exec("from viewcert.certify import *", ns)  # noqa: S102
    assert set(_declared("certify")) <= set(ns)


def test_importing_a_face_imports_none_of_its_modules():
    code = ("import sys; import viewcert.certify, viewcert.oracle, viewcert.benchmark, viewcert.render, "
            "viewcert.attribution, viewcert.design, viewcert.harness, viewcert.learn, viewcert.tasks; "
            "print(sorted(m for m in sys.modules if m.count('.') == 2 and m.startswith('viewcert.')))")
    assert _fresh(code) == "[]"


def test_a_function_named_like_its_module_keeps_the_name():
    # importing the submodule first binds it to the package's attribute; the face's function keeps the name
    code = ("import viewcert.cameras.resolve, viewcert.certify.evaluate, viewcert.cameras as c, viewcert.certify as v;"
            "from viewcert.cameras import resolve; from viewcert.certify import evaluate; "
            "print(type(c.resolve).__name__, type(resolve).__name__, type(v.evaluate).__name__, evaluate.__module__)")
    assert _fresh(code) == "function function function viewcert.certify.evaluate"


UNITS = sorted(set(LAYERS) - {"__init__", "cli"})


@pytest.mark.parametrize("unit", UNITS)
def test_every_unit_states_its_face(unit):
    """Every unit of the layer table has ``__all__``: names it defines or loads (no name twice, none missing)."""
    face = importlib.import_module(f"viewcert.{unit}")
    names = face.__all__
    assert isinstance(names, list) and names and len(set(names)) == len(names)
    missing = [n for n in names if not hasattr(face, n)]
    assert not missing, f"viewcert.{unit}.__all__ names what it does not have: {missing}"


def test_every_unit_with_a_loading_table_is_checked_as_lazy():
    lazy = [u for u in UNITS if (SRC / "viewcert" / u / "__init__.py").exists()
            and "lazy_face(__name__" in (SRC / "viewcert" / u / "__init__.py").read_text(encoding="utf-8")]
    assert sorted(lazy) == sorted(LAZY)
