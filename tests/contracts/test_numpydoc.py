"""Every public function of a unit's face has a numpydoc docstring (issue 41, "Findable").

The faces are the units of ``tests/contracts/test_layers.py``'s layer table except ``cli`` and the package root; a face's
public names are its ``__all__``. For every *function* among them (classes are documented by their own
docstrings and fields), ``numpydoc.docscrape.FunctionDoc`` must parse the docstring and find

- a ``Parameters`` section naming every parameter of the signature (``self``/``cls`` aside; ``*args`` and
  ``**kwargs`` by their names), each with a description, and no name the signature lacks;
- a ``Returns`` (or ``Yields``) section when the function returns a value: its return annotation is not
  ``None`` or, unannotated, its body returns a value or yields.

Descriptions state units (Å, degrees, pixels, CPU-s) and frames (world/Cartesian, camera, fractional,
pixel) where they apply; that part is for the reader and the reviewer, not checked here.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import textwrap
import warnings

import pytest
from numpydoc.docscrape import FunctionDoc

from tests.contracts.test_layers import LAYERS

UNITS = sorted(set(LAYERS) - {"__init__", "cli"})


def _face_functions(unit: str) -> list[tuple[str, object]]:
    """(name, function) for every function ``viewcert.<unit>.__all__`` names."""
    face = importlib.import_module(f"viewcert.{unit}")
    out = []
    for name in face.__all__:
        obj = getattr(face, name)
        if inspect.isfunction(inspect.unwrap(obj)):
            out.append((name, obj))
    return out


def _returns_a_value(func) -> bool:
    """Whether ``func`` returns a value: its return annotation when it has one, else its body (a ``return``
    with a value or a ``yield``, nested functions and classes aside)."""
    annotation = inspect.signature(func).return_annotation
    if annotation is not inspect.Signature.empty:
        return annotation not in (None, "None")
    tree = ast.parse(textwrap.dedent(inspect.getsource(inspect.unwrap(func))))
    fn = tree.body[0]

    def visit(node) -> bool:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
                continue
            if isinstance(child, ast.Yield | ast.YieldFrom) or (isinstance(child, ast.Return) and child.value):
                return True
            if visit(child):
                return True
        return False

    return visit(fn)


def _documented_names(params) -> list[str]:
    """Parameter names of a numpydoc ``Parameters`` section (``a, b : int`` names two; ``*args`` is ``args``)."""
    return [n.strip().lstrip("\\*").lstrip("*") for p in params for n in p.name.split(",") if n.strip()]


def docstring_problems(func) -> list[str]:
    """What ``func``'s docstring lacks under the spec above (empty when it complies)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpydoc warns on an unknown section; the checks below judge the rest
        try:
            doc = FunctionDoc(func)
        except Exception as exc:  # noqa: BLE001 - any parse failure is the finding
            return [f"numpydoc cannot parse the docstring ({type(exc).__name__}: {exc})"]
    problems = []
    wanted = [p.name for p in inspect.signature(func).parameters.values() if p.name not in ("self", "cls")]
    documented = _documented_names(doc["Parameters"])
    if missing := [n for n in wanted if n not in documented]:
        problems.append(f"Parameters lacks {', '.join(missing)}")
    if extra := [n for n in documented if n not in wanted]:
        problems.append(f"Parameters names {', '.join(extra)}, not in the signature")
    if empty := [p.name for p in doc["Parameters"] if not "".join(p.desc).strip()]:
        problems.append(f"no description of {', '.join(empty)}")
    if _returns_a_value(func) and not (doc["Returns"] or doc["Yields"]):
        problems.append("no Returns section")
    return problems


@pytest.mark.parametrize("unit", UNITS)
def test_every_face_function_has_numpydoc_sections(unit):
    bad = [f"viewcert.{unit}.{name}: {'; '.join(p)}"
           for name, func in _face_functions(unit) if (p := docstring_problems(func))]
    assert not bad, f"{len(bad)} face functions of viewcert.{unit} lack numpydoc sections:\n" + "\n".join(bad)


def _good(structure, delta: float = 0.01, *views) -> float:
    """A margin.

    Parameters
    ----------
    structure : Structure
        The structure (Cartesian Å).
    delta : float
        Oracle tolerance δ (Å).
    *views : str
        View names.

    Returns
    -------
    float
        δ* (Å).
    """
    return delta


def _bad(structure, delta: float = 0.01):
    """A margin of ``structure`` at ``delta`` (Å): the one-line style the faces replace.

    Parameters
    ----------
    structre : Structure
        Misspelt.
    """
    if structure:
        return delta


def _writer(path) -> None:
    """Write.

    Parameters
    ----------
    path : Path
    """


def test_the_check_itself():
    """Hand-made docstrings: one complying, one with each fault the check names (so it cannot pass vacuously)."""
    assert docstring_problems(_good) == []
    assert docstring_problems(_bad) == ["Parameters lacks structure, delta", "Parameters names structre, not in the signature",
                                        "no Returns section"]
    assert docstring_problems(_writer) == ["no description of path"]
