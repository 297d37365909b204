"""The import contract (docs/architecture.md, the layer table): every module of ``viewcert`` is parsed and
its imports checked against the layer table below. It fails on

- an upward import (a module importing a layer above its own, or a sibling package of its own layer);
- a cycle between modules (module-level and function-level imports alike, so a lazy import cannot dodge one);
- a private name (``_x``) or a private module (``pkg._mod``) imported from outside the package that owns it;
- a function-level import of a viewcert module outside ``viewcert.cli`` without a comment saying why it is
  lazy (start-up time is the only accepted reason: ``# lazy: ...``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "viewcert"

#: layer of each top-level unit of the package, bottom (0) to top; a unit may import only lower layers.
LAYERS: dict[str, int] = {
    "__init__": 0, "errors": 0, "numeric": 0, "sanitize": 0, "defaults": 0,
    "kernels": 0,  # where the numba kernels are and the registry of each kernel package's warm-up workloads
    "elements": 1, "limits": 1, "resolution": 1,
    "structures": 2, "constraints": 2,
    "symmetry": 3, "stats": 3,
    "io": 4,
    "cameras": 5, "parallel": 5,
    "observe": 6,
    "render": 7, "oracle": 7,
    "certify": 8, "tasks": 8, "interactions": 8,
    "design": 9,
    "harness": 5,
    "benchmark": 10, "attribution": 10,
    "learn": 11,  # learned readers: their predictions are rungs named by attribution.table
    "explore": 11,  # shows every export: a task export's questions are rebuilt by benchmark.tasks_export
    "api": 12,  # the jobs a person runs (a notebook or a command): each composes the library, returns a report
    "cli": 13,  # a shell over api: parses options, calls one api function, prints its report
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _package(module: str, is_pkg: bool) -> str:
    return module if is_pkg else module.rsplit(".", 1)[0]


class Import:
    def __init__(self, target: str, names: list[str], line: int, lazy: bool, comment: str):
        self.target, self.names, self.line, self.lazy, self.comment = target, names, line, lazy, comment


def _imports(path: Path, module: str) -> list[Import]:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    tree = ast.parse(text)
    out: list[Import] = []
    is_pkg = path.name == "__init__.py"

    def visit(node: ast.AST, depth: int) -> None:
        for child in ast.iter_child_nodes(node):
            d = depth + isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.ImportFrom):
                if child.level:  # relative import: resolve against the package
                    base = _package(module, is_pkg).split(".")
                    base = base[: len(base) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if target.startswith("viewcert"):
                    comment = lines[child.lineno - 1] + " " + (lines[child.lineno - 2] if child.lineno > 1 else "")
                    out.append(Import(target, [a.name for a in child.names], child.lineno, d > 0, comment))
            elif isinstance(child, ast.Import):
                for a in child.names:
                    if a.name.startswith("viewcert"):
                        out.append(Import(a.name, [], child.lineno, d > 0, lines[child.lineno - 1]))
            visit(child, d)

    visit(tree, 0)
    return out


MODULES = {(_module_name(p)): p for p in sorted(SRC.rglob("*.py"))}
ALL_NAMES = set(MODULES)


def _resolve(imp: Import) -> list[str]:
    """The modules an import statement loads (``from pkg import mod`` loads ``pkg.mod``)."""
    subs = [f"{imp.target}.{n}" for n in imp.names if f"{imp.target}.{n}" in ALL_NAMES]
    if imp.names and len(subs) == len(imp.names):
        return subs  # only submodules: the package's __init__ runs first in any case, it is not an edge
    return [imp.target] + subs


GRAPH = {m: [(imp, _resolve(imp)) for imp in _imports(p, m)] for m, p in MODULES.items()}


def test_every_unit_has_a_layer():
    units = {_unit(m) for m in MODULES}
    assert units <= set(LAYERS), f"modules without a layer: {sorted(units - set(LAYERS))}"


def test_no_upward_import():
    bad = []
    for m, imps in GRAPH.items():
        here = _unit(m)
        for imp, _ in imps:
            there = _unit(imp.target)
            if there != here and there != "__init__" and LAYERS[there] >= LAYERS[here]:
                bad.append(f"{m}:{imp.line} imports {imp.target} (layer {there}={LAYERS[there]} ≥ {here}={LAYERS[here]})")
    assert not bad, "\n".join(bad)


def test_no_private_name_across_packages():
    bad = []
    for m, imps in GRAPH.items():
        own_pkg = _package(m, MODULES[m].name == "__init__.py")
        for imp, _ in imps:
            target_pkg = imp.target.rsplit(".", 1)[0] if imp.target in ALL_NAMES and not MODULES[imp.target].name == "__init__.py" else imp.target
            private_module = any(part.startswith("_") for part in imp.target.split(".")[1:])
            if private_module and not own_pkg.startswith(imp.target.rsplit(".", 1)[0]):
                bad.append(f"{m}:{imp.line} imports private module {imp.target}")
            for n in imp.names:
                if n.startswith("_") and not n.startswith("__") and imp.target != m and not (
                        imp.target.rsplit(".", 1)[0] == own_pkg or target_pkg == own_pkg):
                    bad.append(f"{m}:{imp.line} imports private name {n} from {imp.target}")
    assert not bad, "\n".join(bad)


def test_no_import_cycle():
    edges = {m: sorted({t for _, ts in imps for t in ts if t in ALL_NAMES and t != m}) for m, imps in GRAPH.items()}
    # a package's __init__ re-exports its modules; an edge *into* an __init__ from its own package is a cycle
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def dfs(u: str) -> None:
        state[u] = 1
        stack.append(u)
        for v in edges[u]:
            if state.get(v) == 1:
                cycles.append(stack[stack.index(v):] + [v])
            elif v not in state:
                dfs(v)
        stack.pop()
        state[u] = 2

    for m in sorted(edges):
        if m not in state:
            dfs(m)
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles[:10])


def test_lazy_imports_say_why():
    bad = []
    for m, imps in GRAPH.items():
        if _unit(m) == "cli":
            continue  # command functions import lazily so that `viewcert --help` starts fast (cli/__init__)
        for imp, _ in imps:
            if imp.lazy and "lazy" not in imp.comment:
                bad.append(f"{m}:{imp.line} imports {imp.target} inside a function without a '# lazy: why' comment")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("source, expected", [
    ("from viewcert.certify import CertifyConfig\n", "certify"),
    ("from viewcert.symmetry._spglib import VERSION\n", "symmetry"),
])
def test_contract_parser_sees_imports(tmp_path, source, expected):
    """The checker itself: a planted import is found with its unit (so the contract cannot pass vacuously)."""
    p = tmp_path / "x.py"
    p.write_text(source)
    imps = _imports(p, "viewcert.render.x")
    assert [_unit(i.target) for i in imps] == [expected]
