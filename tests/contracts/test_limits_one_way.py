"""Limits travel one way (``viewcert.limits``): the limits in force are a context. Only a public function of
``viewcert.api`` takes a ``limits`` parameter, and it enters it (``using_limits(limits)``) for the call;
``parallel.run_chunk`` receives the submitter's limits to enter them in a worker. Nothing else in the package takes
``limits`` as a parameter or sets the context another way (no ``set_active_limits``, no ``_ACTIVE.set`` outside
``limits.py``). A scan of the source's syntax trees, with planted violations as its self-test."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "viewcert"
#: the functions allowed a ``limits`` parameter outside viewcert.api's public functions, and why
ALLOWED = {
    "parallel.py:run_chunk": "what a worker runs: enters the limits in force where the chunk was submitted",
    "limits.py:using_limits": "the one way limits are entered",
}


def _public_api() -> set[str]:
    import viewcert.api as api

    return set(api.__all__)


def violations(tree: ast.AST, rel: str, public: set[str]) -> list[str]:
    """(file:function: what is wrong) for every function taking ``limits`` that may not, every public api
    function taking it without entering it, and every other way of setting the limits in force."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
            if "limits" not in names:
                continue
            key = f"{rel}:{node.name}"
            if key in ALLOWED:
                continue
            if not (rel.startswith("api/") and node.name in public):
                found.append(f"{key}: takes a limits parameter (only viewcert.api's public functions do)")
                continue
            enters = any(isinstance(w, ast.With) and any(
                isinstance(i.context_expr, ast.Call) and getattr(i.context_expr.func, "id", "") == "using_limits"
                and [getattr(a, "id", None) for a in i.context_expr.args] == ["limits"] for i in w.items)
                for w in ast.walk(node))
            if not enters:
                found.append(f"{key}: takes limits but does not enter them (with using_limits(limits))")
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name == "set_active_limits":
                found.append(f"{rel}:{node.lineno}: set_active_limits (enter the limits with using_limits)")
            if (name == "set" and isinstance(node.func, ast.Attribute)
                    and getattr(node.func.value, "id", None) == "_ACTIVE" and rel != "limits.py"):
                found.append(f"{rel}:{node.lineno}: sets the limits context directly")
    return found


def test_limits_travel_one_way():
    public = _public_api()
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        found += violations(ast.parse(path.read_text(), str(path)), rel, public)
    assert found == []


def test_the_public_functions_that_take_limits_exist():
    """The scan is not vacuous: the public entry points that take limits (hand-listed) are seen as such."""
    seen = set()
    for path in sorted((SRC / "api").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and "limits" in [a.arg for a in node.args.kwonlyargs]:
                seen.add(node.name)
    assert {"certify", "verify", "render", "gallery", "build_benchmark", "observe", "learn"} <= seen


PLANTED = {
    "an internal reader taking limits": ("io/x.py", "def read(path, *, limits=None):\n    return path\n",
                                         "takes a limits parameter"),
    "a public api function that ignores them": ("api/x.py", "def certify(spec, *, limits=None):\n    return spec\n",
                                                "does not enter them"),
    "a public api function entering other limits": (
        "api/x.py", "def certify(spec, *, limits=None):\n    with using_limits(DEFAULT):\n        return spec\n",
        "does not enter them"),
    "a private api helper taking limits": ("api/x.py", "def _helper(spec, limits):\n    return spec\n",
                                           "takes a limits parameter"),
    "the CLI setting a global": ("cli/main.py", "def _main(o):\n    set_active_limits(o.limits)\n",
                                 "set_active_limits"),
    "a module setting the context variable": ("io/y.py", "from viewcert.limits import _ACTIVE\n_ACTIVE.set(L)\n",
                                              "sets the limits context directly"),
}


def test_planted_violations_are_found():
    for what, (rel, text, message) in PLANTED.items():
        got = violations(ast.parse(text), rel, {"certify"})
        assert len(got) == 1 and message in got[0], what
    ok = "def certify(spec, *, limits=None):\n    with using_limits(limits):\n        return spec\n"
    assert violations(ast.parse(ok), "api/x.py", {"certify"}) == []
