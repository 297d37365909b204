"""No hidden attributes (issue 41): a frozen value object normalises its *declared* fields in ``__post_init__``
(``object.__setattr__(self, "field", ...)``) and nothing else; derived state is a declared property
(``functools.cached_property``), visible in the class. A scan of the source's syntax trees, with planted
violations as its self-test."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "viewcert"


def _own(fn: ast.FunctionDef):
    """The nodes of ``fn``'s body, not those of functions nested in it."""
    todo = [c for c in fn.body if not isinstance(c, ast.FunctionDef)]
    while todo:
        n = todo.pop()
        yield n
        todo += [c for c in ast.iter_child_nodes(n) if not isinstance(c, (ast.FunctionDef, ast.Lambda))]


def hidden(tree: ast.AST, rel: str) -> list[str]:
    """(file:line class.name) of every ``object.__setattr__(self, "name", ...)`` naming no declared field."""
    found = []
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        declared = {s.target.id for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
        tables = {}  # NAMES = ("a", "b") in the class body: a declared table of field names
        for st in cls.body:
            target, value = ((st.targets[0], st.value) if isinstance(st, ast.Assign) else
                             (st.target, st.value) if isinstance(st, ast.AnnAssign) else (None, None))
            if isinstance(target, ast.Name) and isinstance(value, (ast.Tuple, ast.List)) \
                    and all(isinstance(e, ast.Constant) for e in value.elts):
                tables[target.id] = [e.value for e in value.elts]
        bound = {}  # id(setattr call) -> the names its loop variable takes: for name in ("a", "b") / self.NAMES
        for n in ast.walk(cls):
            if not (isinstance(n, ast.For) and isinstance(n.target, ast.Name)):
                continue
            if isinstance(n.iter, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Constant) for e in n.iter.elts):
                names = [e.value for e in n.iter.elts]
            elif isinstance(n.iter, ast.Attribute) and n.iter.attr in tables:
                names = tables[n.iter.attr]
            else:
                continue
            for c in ast.walk(n):
                if isinstance(c, ast.Call) and len(c.args) >= 2 and getattr(c.args[1], "id", None) == n.target.id:
                    bound[id(c)] = names
        for fn in (f for f in ast.walk(cls) if isinstance(f, ast.FunctionDef)):  # set after getattr(self, name):
            read = {c.args[1].id for c in _own(fn) if isinstance(c, ast.Call)  # the attribute existed already
                    and getattr(c.func, "id", "") == "getattr" and len(c.args) == 2
                    and getattr(c.args[0], "id", "") == "self" and isinstance(c.args[1], ast.Name)}
            for c in _own(fn):
                if isinstance(c, ast.Call) and len(c.args) >= 2 and getattr(c.args[1], "id", None) in read:
                    bound.setdefault(id(c), list(declared)[:1])
        for n in ast.walk(cls):
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__setattr__"
                    and getattr(n.func.value, "id", "") == "object" and len(n.args) >= 2):
                arg = n.args[1]
                names = [arg.value] if isinstance(arg, ast.Constant) else bound.get(id(n), [None])
                found += [f"{rel}:{n.lineno} {cls.name}.{name if name is not None else '<computed name>'}"
                          for name in names if name not in declared]
    return found


def test_no_frozen_value_sets_an_undeclared_attribute():
    found = []
    for path in sorted(SRC.rglob("*.py")):
        found += hidden(ast.parse(path.read_text()), path.relative_to(SRC).as_posix())
    assert found == []


def test_planted_hidden_attributes_are_found():
    planted = '''
from dataclasses import dataclass

@dataclass(frozen=True)
class A:
    x: int
    NAMES = ("x", "_w")
    def __post_init__(self):
        object.__setattr__(self, "x", int(self.x))      # declared: fine
        object.__setattr__(self, "_cache", {})           # hidden
        object.__setattr__(self, "x" + "y", 1)           # a computed name: cannot be checked, refused
        for name in ("x", "_z"):                         # a loop over names: each checked
            object.__setattr__(self, name, 0)
        for name in self.NAMES:                          # a declared table of names: each checked
            object.__setattr__(self, name, 0)
        def arr(name):                                   # read first: the attribute existed, fine
            object.__setattr__(self, name, tuple(getattr(self, name)))
        def put(name):                                   # not read first: a computed name
            object.__setattr__(self, name, 1)
'''
    assert hidden(ast.parse(planted), "p.py") == ["p.py:10 A._cache", "p.py:11 A.<computed name>", "p.py:13 A._z",
                                                  "p.py:15 A._w", "p.py:19 A.<computed name>"]
