"""No signature takes or returns "a certificate or a dict" (issue 41): a function that holds a certificate holds the
typed value (``formats.records``, ``formats.table``); a dict becomes one at the boundary, by the record's own
``from_dict`` (or ``formats.reader.receive`` for a file), never inside a function that accepts both.

The scan reads every function's parameter and return annotations in ``src/viewcert`` (the AST, so a union split
over lines or written ``Union[...]``/``Optional[...]`` is seen) and fails on a union in which a certificate type
(a name ending in ``Certificate``) or a parameter named as a certificate (``cert``, ``certificate``, ...) meets
``dict``/``Mapping``/``MutableMapping`` (bare or subscripted). The planted violations are its self-test.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "viewcert"
#: parameter names that hold a certificate
CERT_PARAMS = {"cert", "certificate", "stored_cert", "old_cert"}
MAPPINGS = {"dict", "Dict", "Mapping", "MutableMapping"}


def _members(node: ast.AST | None) -> list[str]:
    """The type names of a union annotation's members (``A | B``, ``Union[A, B]``, ``Optional[A]``; a
    subscripted member by its base: ``dict[str, Any]`` is ``dict``); one name for a non-union."""
    if node is None:
        return []
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _members(node.left) + _members(node.right)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a quoted annotation
        try:
            return _members(ast.parse(node.value, mode="eval").body)
        except SyntaxError:
            return []
    if isinstance(node, ast.Subscript):
        base = _members(node.value)
        if base and base[0] in ("Union", "Optional"):
            inner = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return [m for e in inner for m in _members(e)]
        return base
    if isinstance(node, ast.Attribute):  # typing.Mapping, records.CeilingCertificate
        return [node.attr]
    if isinstance(node, ast.Name):
        return [node.id]
    return []


def certificate_or_dict(source: str) -> list[tuple[int, str, str]]:
    """(line, function, parameter or 'return') of every annotation in ``source`` that is a union of a certificate
    with a dict/Mapping."""
    out = []
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        a = fn.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x is not None)]
        for name, ann in [*((p.arg, p.annotation) for p in params), ("return", fn.returns)]:
            members = _members(ann)
            if len(members) < 2 or not MAPPINGS & set(members):
                continue
            if any(m.endswith("Certificate") for m in members) or name in CERT_PARAMS:
                out.append((ann.lineno, fn.name, name))
    return sorted(out)


def test_the_scan_finds_planted_violations():
    planted = ("def a(cert: CeilingCertificate | dict) -> None: ...\n"
               "def b(x: Union[TaskCertificate, Mapping[str, Any]]) -> None: ...\n"
               "def c(x) -> Optional[Union[records.Certificate, dict]]: ...\n"
               "def d(certificate: Path | dict[str, Any] | None = None) -> None: ...\n"
               "def e(*, old_cert: 'InteractionCertificate | typing.Mapping') -> None: ...\n"
               "class K:\n"
               "    def f(self, y: StreamedCertificate\n"
               "          | MutableMapping) -> None: ...\n")
    assert certificate_or_dict(planted) == [(1, "a", "cert"), (2, "b", "x"), (3, "c", "return"),
                                           (4, "d", "certificate"), (5, "e", "old_cert"), (7, "f", "y")]
    clean = ("def a(cert: CeilingCertificate, d: dict | None = None) -> Certificate | StreamedCertificate: ...\n"
             "def b(data: Mapping | list, cert: Certificate | None) -> dict: ...\n"
             "def c(cls, d: Mapping) -> CeilingCertificate: ...\n")
    assert certificate_or_dict(clean) == []


def test_no_signature_takes_a_certificate_or_a_dict():
    found = {p.relative_to(SRC).as_posix(): hits for p in sorted(SRC.rglob("*.py"))
             if (hits := certificate_or_dict(p.read_text()))}
    assert not found, ("a signature takes a certificate or a dict: type the dict at the boundary "
                       f"(Record.from_dict, formats.reader.receive) and pass the typed value: {found}")
