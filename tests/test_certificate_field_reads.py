"""Outside the records module and the versions table, no code reads a certificate's fields by string key
(issue 26). The scan: every ``NAME["key"]`` / ``NAME.get("key")`` where NAME is a certificate variable
named as in :data:`CERT_NAMES`; a read through another name, e.g. a dict passed as ``d``, is not seen). Not every producer and reader is
converted yet: :data:`NOT_YET` pins the files that still read by key (a ratchet: a file may leave it, none may
join it, and a file that is clean must be removed from it). The planted violation is the scan's self-test."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "viewcert"
ALLOWED = {"certify/records.py", "certify/versions.py"}
CERT_NAMES = {"cert", "certificate", "stored_cert", "old_cert"}
#: files that still read certificate fields by key (issue 26, item 4 not finished): only ever shrinks
NOT_YET = {
    "attribution/ladder.py", "attribution/task_scores.py",
    "certify/certificate.py", "certify/plots.py", "certify/run.py", "certify/trust.py", "certify/verify.py",
    "cli/certify.py", "explore/outcomes.py", "explore/overlays.py", "explore/site.py",
    "explore/source.py",
}


def string_key_reads(source: str) -> list[tuple[int, str]]:
    """(line, key) of every string-key read of a certificate variable in ``source``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in CERT_NAMES \
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            out.append((node.lineno, node.slice.value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in CERT_NAMES and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            out.append((node.lineno, node.args[0].value))
    return out


def _offenders() -> dict[str, list]:
    found = {}
    for p in sorted(SRC.rglob("*.py")):
        rel = p.relative_to(SRC).as_posix()
        if rel not in ALLOWED and (hits := string_key_reads(p.read_text())):
            found[rel] = hits
    return found


def test_the_scan_finds_a_planted_violation():
    planted = "def f(path):\n    cert = read(path)\n    return cert['summary'], cert.get('items'), cert.summary\n"
    assert string_key_reads(planted) == [(3, "summary"), (3, "items")]
    assert string_key_reads("def f(c):\n    return c.summary.n, {'a': 1}['a']\n") == []


def test_no_new_file_reads_certificate_fields_by_key():
    found = _offenders()
    new = {k: v[:3] for k, v in found.items() if k not in NOT_YET}
    assert not new, f"read the typed record (certify.records) instead: {new}"
    cleaned = sorted(NOT_YET - set(found))
    assert not cleaned, f"no string-key reads left: remove from NOT_YET: {cleaned}"
