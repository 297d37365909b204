"""Consumers ask a certificate instead of switching on its kind (issue 55, step 2): outside ``formats/`` the
isinstance checks on certificate types plus the string switches on certificate kinds number at most
:data:`MOST` (48 on main before issue 55: 15 isinstance checks and 33 string switches).

The scan reads every module of ``src/viewcert`` but ``formats/`` (the AST) and counts

- an ``isinstance(x, T)`` whose type ``T`` (a name, a dotted name, a tuple or a ``|`` union of them) names a
  certificate type: a name ending in ``Certificate`` (``CeilingCertificate``, ``records.TaskCertificate``,
  ``StreamedCertificate``, ...);
- a comparison (``==``, ``!=``, ``in``, ``not in``) of a certificate kind's name (:data:`KIND_WORDS`: ``"ceiling"``,
  ``"crystal"``, ``"task"``, ...) with an expression that names a kind (its source holds ``kind`` or ``KIND``:
  ``folder.kind == "crystal"``, ``cert.KIND != "ceiling"``);
- a table keyed by kind: a dict literal with two or more of those names as keys (``{"crystal": ..., "task":
  ...}``), whether it is indexed at once or named and looked up later.

Run as a script it prints every site found (``python tests/contracts/test_certificate_switches.py [SRC]``). The
planted cases are the scan's self-test."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "viewcert"
#: the most switches allowed outside formats/ (issue 55's acceptance: at most 8, from 48)
MOST = 8
#: the names of the certificate kinds as consumers spelled them
KIND_WORDS = {"ceiling", "crystal", "task", "interaction", "streamed", "table"}


def _names(node: ast.AST) -> list[str]:
    """The type names an isinstance's second argument holds (``A``, ``m.A``, ``(A, B)``, ``A | B``)."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.Tuple):
        return [n for e in node.elts for n in _names(e)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _names(node.left) + _names(node.right)
    return []


def _kind_word(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value in KIND_WORDS
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_kind_word(e) for e in node.elts)
    return False


def _names_kind(node: ast.AST, text: str) -> bool:
    src = ast.get_source_segment(text, node) or ""
    return "kind" in src.lower()


def switches(text: str) -> list[tuple[int, str]]:
    """(line, what) of every switch on a certificate's type or kind in the module source ``text``."""
    tree = ast.parse(text)
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
                and len(node.args) == 2 and any(n.endswith("Certificate") for n in _names(node.args[1]))):
            out.append((node.lineno, "isinstance on a certificate type"))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(
                node.ops[0], ast.Eq | ast.NotEq | ast.In | ast.NotIn):
            left, right = node.left, node.comparators[0]
            if (_kind_word(right) and _names_kind(left, text)) or (_kind_word(left) and _names_kind(right, text)):
                out.append((node.lineno, "string switch on a kind"))
        elif isinstance(node, ast.Dict):
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            if len([k for k in keys if k in KIND_WORDS]) >= 2:
                out.append((node.lineno, "table keyed by kind"))
    return sorted(out)


def scan(src: Path = SRC) -> dict[str, list[tuple[int, str]]]:
    """Every module outside ``formats/`` with its switches."""
    found = {}
    for p in sorted(src.rglob("*.py")):
        rel = p.relative_to(src).as_posix()
        if rel.startswith("formats/"):
            continue
        got = switches(p.read_text())
        if got:
            found[rel] = got
    return found


def test_the_scan_finds_each_planted_switch():
    planted = '''
if isinstance(cert, records.CeilingCertificate): pass
if isinstance(c, TaskCertificate | InteractionCertificate): pass
if isinstance(c, (Ceiling, StreamedCertificate)): pass
if folder.kind == "crystal": pass
if "task" != got.certificate.KIND: pass
if kind in ("task", "interaction"): pass
LEGEND = {"crystal": 1, "task": 2}
x = {"ceiling": "a", "interaction": "b"}[kind]
'''
    assert [w for _, w in switches(planted)] == ["isinstance on a certificate type"] * 3 + [
        "string switch on a kind"] * 3 + ["table keyed by kind"] * 2
    quiet = '''
if isinstance(x, dict): pass
if task == "rotation": pass
if name == "crystal": pass
if mode in ("ideal", "rendered"): pass
d = {"crystal": 1, "rotation": 2}
'''
    assert switches(quiet) == []


def test_consumers_switch_on_a_certificate_kind_at_most_most_times():
    found = scan()
    n = sum(len(v) for v in found.values())
    listing = "; ".join(f"{f}:{line} {w}" for f, sites in found.items() for line, w in sites)
    assert n <= MOST, f"{n} switches on a certificate's type or kind outside formats/ (at most {MOST}): {listing}"


if __name__ == "__main__":  # pragma: no cover - a maintenance aid: every site, then the count
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else SRC
    total = 0
    for f, sites in scan(root).items():
        for line, what in sites:
            print(f"{f}:{line}: {what}")
        total += len(sites)
    print(f"{total} switches")
