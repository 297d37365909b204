"""Outside the format modules (records, versions, the streamed table), no code reads a certificate's fields by string key
(issue 26). The scan counts, per file, every

- ``NAME["key"]`` / ``NAME.get("key")`` where NAME is a certificate variable named as in :data:`CERT_NAMES`
  (or an attribute so named: ``folder.certificate.get("key")``), or in a package that names its certificates
  and items otherwise, as in :data:`SCOPED_NAMES` (the explorer's items are ``rec``/``record``),
- a path probe: a call of a function named as in :data:`PROBES`, or a call whose first argument is such a
  variable and whose other arguments hold two or more text constants or a dotted one
  (``_dig(cert, "summary.correct", "correct")``: each text constant is one read);

a read through another name, e.g. a dict passed as ``d``, is not seen. Not every producer and reader is
converted yet: :data:`NOT_YET` pins the files that still read by key with their counts (a ratchet: a file may
lower its count, none may raise it, no file may join, and a file with no read left must be removed).
:data:`GENERIC_DIFFS` names the functions whose key reads are not field reads, each with its reason; nothing
else in their files is exempt. The planted violations are the scan's self-test.

The typed scan (issue 41 item 1) looks past names: every string-key read of a record's section (a field of a
``formats.records`` record typed as a JSON object: oracle, molecule, tolerances, bound, kinds, ...) reached by an
attribute chain (``it.oracle["n_phantoms"]``) or held under any variable name in the same function (``orc =
it.oracle or {}; orc.get("n_phantoms")``), outside ``formats`` itself. A section name is matched by name, so a value
of another type that shares one (a ladder's ``settings``) counts too. :data:`NOT_YET_TYPED` pins what is left, a
ratchet like :data:`NOT_YET`; its planted violations, under arbitrary names, are its self-test."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "viewcert"
#: the format modules, where a certificate dict is parsed into its typed record (and written back)
ALLOWED = {"formats/records.py", "formats/versions.py", "formats/table.py"}
CERT_NAMES = {"cert", "certificate", "stored_cert", "old_cert"}
#: names that hold a certificate (dict) or one of its items only inside a package (elsewhere ``rec`` is any record)
SCOPED_NAMES = {"explore/": {"rec", "record", "head"}}
PROBES = {"_dig", "dig", "_probe", "probe"}
#: files that still read certificate fields by key, with how many reads (issue 26): counts only ever fall
NOT_YET: dict[str, int] = {}
#: {file: {function: why its string-key reads of a certificate are not field reads}}
GENERIC_DIFFS = {"certify/verify.py": {
    "compare": "a key-by-key diff of the stored certificate's JSON against the recomputed one, whatever the kind: "
               "every key is compared, none is interpreted (verify's typed reads happen before, in receive)"}}


def _text(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def string_key_reads(source: str, names: set[str] = CERT_NAMES, exempt: frozenset[str] = frozenset()) \
        -> list[tuple[int, str]]:
    """(line, key) of every string-key read and path probe of a certificate variable (a name or attribute in
    ``names``) in ``source``, outside the functions named in ``exempt``."""

    def _cert(node: ast.AST) -> bool:
        return (isinstance(node, ast.Name) and node.id in names) or (
            isinstance(node, ast.Attribute) and node.attr in names)

    out = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _cert(node.value) and _text(node.slice) is not None:
            out.append((node.lineno, _text(node.slice)))
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "get" and _cert(f.value) and node.args \
                    and _text(node.args[0]) is not None:
                out.append((node.lineno, _text(node.args[0])))
                continue
            name = f.id if isinstance(f, ast.Name) else (f.attr if isinstance(f, ast.Attribute) else "")
            texts = [t for a in node.args[1:] if (t := _text(a)) is not None]
            if name in PROBES or (node.args and _cert(node.args[0])
                                  and (len(texts) > 1 or any("." in t for t in texts))):
                out += [(node.lineno, t) for t in texts]
    skipped = [(f.lineno, f.end_lineno) for f in ast.walk(tree)
               if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef) and f.name in exempt]
    return sorted(hit for hit in out if not any(a <= hit[0] <= b for a, b in skipped))


def _offenders() -> dict[str, list]:
    found = {}
    for p in sorted(SRC.rglob("*.py")):
        rel = p.relative_to(SRC).as_posix()
        names = CERT_NAMES.union(*(n for pkg, n in SCOPED_NAMES.items() if rel.startswith(pkg)))
        exempt = frozenset(GENERIC_DIFFS.get(rel, {}))
        if rel not in ALLOWED and (hits := string_key_reads(p.read_text(), names, exempt)):
            found[rel] = hits
    return found


def test_the_scan_finds_planted_violations():
    planted = "def f(path):\n    cert = read(path)\n    return cert['summary'], cert.get('items'), cert.summary\n"
    assert string_key_reads(planted) == [(3, "items"), (3, "summary")]
    probe = "def f(cert, d):\n    return _dig(cert, 'summary.correct', 'correct'), _dig(d, 'n'), g(cert, k)\n"
    assert string_key_reads(probe) == [(2, "correct"), (2, "n"), (2, "summary.correct")]
    assert string_key_reads("def f(c):\n    return c.summary.n, {'a': 1}['a'], g(c, 'x')\n") == []
    assert string_key_reads("def f(cert):\n    return ceilings(cert, src, 'rendered')\n") == []  # a mode
    attr = "def f(folder, it):\n    return folder.certificate.get('ground_truth'), it.record['id'], it.id\n"
    assert string_key_reads(attr) == [(2, "ground_truth")]
    assert string_key_reads(attr, CERT_NAMES | SCOPED_NAMES["explore/"]) == [(2, "ground_truth"), (2, "id")]
    assert string_key_reads("def f(rec):\n    return rec.get('oracle')\n") == []  # ``rec`` outside the explorer
    two = "def compare(cert):\n    return cert['a']\n\ndef other(cert):\n    return cert['b']\n"
    assert string_key_reads(two, exempt=frozenset({"compare"})) == [(5, "b")]  # only the named function is exempt


def test_verify_compare_is_seen_without_its_exemption():
    """``verify.compare`` names its input a certificate, so the scan sees its reads; only the reasoned
    exemption keeps them out (a renamed parameter would not hide them)."""
    source = (SRC / "certify" / "verify.py").read_text()
    assert string_key_reads(source) and not string_key_reads(source, exempt=frozenset(GENERIC_DIFFS["certify/verify.py"]))
    assert all(why.strip() for reasons in GENERIC_DIFFS.values() for why in reasons.values())


def test_no_file_reads_more_certificate_fields_by_key():
    found = {k: len(v) for k, v in _offenders().items()}
    new = {k: _offenders()[k][:3] for k in found if k not in NOT_YET}
    assert not new, f"read the typed record (formats.records) instead: {new}"
    grown = {k: (n, NOT_YET[k]) for k, n in found.items() if k in NOT_YET and n > NOT_YET[k]}
    assert not grown, f"more string-key reads than pinned (now, pinned): {grown}"
    cleaned = sorted(set(NOT_YET) - set(found))
    assert not cleaned, f"no string-key reads left: remove from NOT_YET: {cleaned}"


# ---------------------------------------------------------------------- the typed scan (issue 41 item 1)
def _section_classes() -> list[type]:
    """Every typed section (``formats.fields.Section`` subclass), after the records that use them are imported."""
    from viewcert.formats import records  # noqa: F401 - imports every module that defines a section
    from viewcert.formats.fields import Section

    out, todo = [], list(Section.__subclasses__())
    while todo:
        cls = todo.pop()
        out.append(cls)
        todo += cls.__subclasses__()
    return out


def section_fields() -> frozenset[str]:
    """Every field of a record of ``formats.records`` or of a typed section (``formats.fields.Section``) that is
    a JSON object, typed as a plain ``dict``/``Mapping`` or as a section: the sections code must read through a
    typed value (``it.oracle.n_phantoms``), never by string key."""
    import dataclasses

    from viewcert.formats import records

    sections = _section_classes()
    names = {c.__name__ for c in sections}
    out = set()
    for cls in (records.ItemOutcome, records.Summary, records.CeilingCertificate, records.TaskItemRecord,
                records.TaskCertificate, records.InteractionItemRecord, records.InteractionCertificate, *sections):
        out |= {f.name for f in dataclasses.fields(cls) if f.name != "extra"
                and (any(t in str(f.type) for t in ("dict", "Mapping"))
                     or any(n in str(f.type).replace("|", " ").split() for n in names))}
    return frozenset(out)


def _section_chain(node: ast.AST, sections: frozenset[str], held: set[str]) -> bool:
    """Whether ``node`` is a section of a record: ``anything.<section>`` (an attribute chain ending in a section
    field), a name that holds one (``held``), or either with a default (``x.oracle or {}``)."""
    if isinstance(node, ast.BoolOp):
        return any(_section_chain(v, sections, held) for v in node.values)
    if isinstance(node, ast.IfExp):
        return _section_chain(node.body, sections, held) or _section_chain(node.orelse, sections, held)
    return (isinstance(node, ast.Attribute) and node.attr in sections) or (isinstance(node, ast.Name)
                                                                          and node.id in held)


def typed_key_reads(source: str, sections: frozenset[str]) -> list[tuple[int, str]]:
    """(line, key) of every string-key read (``x["k"]``, ``x.get("k")``) of a record's section in ``source``,
    whatever the variable holding it: an attribute chain ending in a section field (``it.oracle["n"]``), or a
    name assigned one in the same function (``orc = it.oracle or {}; orc.get("n")``), one level of aliasing."""
    out = []
    tree = ast.parse(source)
    scopes = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)]
    for scope in [tree, *scopes]:
        held: set[str] = set()
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign) and _section_chain(node.value, sections, set()):
                held |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.NamedExpr) and _section_chain(node.value, sections, set()):
                held.add(node.target.id)
        for node in ast.walk(scope):
            if isinstance(node, ast.Subscript) and _text(node.slice) is not None \
                    and _section_chain(node.value, sections, held):
                out.append((node.lineno, _text(node.slice)))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                    and node.args and _text(node.args[0]) is not None \
                    and _section_chain(node.func.value, sections, held):
                out.append((node.lineno, _text(node.args[0])))
    return sorted(set(out))


#: files that still read a record's sections by string key, with how many reads (issue 41 item 1, the typed
#: scan): counts only ever fall; the formats package itself (where a section is parsed and written) is exempt
NOT_YET_TYPED: dict[str, int] = {}


def _typed_offenders() -> dict[str, list]:
    sections = section_fields()
    found = {}
    for p in sorted(SRC.rglob("*.py")):
        rel = p.relative_to(SRC).as_posix()
        if not rel.startswith("formats/") and (hits := typed_key_reads(p.read_text(), sections)):
            found[rel] = hits
    return found


def test_the_typed_scan_finds_planted_violations_under_any_name():
    s = frozenset({"oracle", "summary", "molecule", "tolerances"})
    planted = ("def f(zz):\n"
               "    orc = zz.items[0].oracle or {}\n"
               "    q = zz.summary\n"
               "    return orc.get('n_phantoms'), q['n'], zz.tolerances['delta'], zz.items[0].molecule.get('pg')\n")
    assert typed_key_reads(planted, s) == [(4, "delta"), (4, "n"), (4, "n_phantoms"), (4, "pg")]
    walrus = "def g(a):\n    return (m := a.molecule) and m['point_group']\n"
    assert typed_key_reads(walrus, s) == [(2, "point_group")]
    clean = ("def h(a, d):\n    orc = a.oracle\n    return orc.n_phantoms, d['n'], a.summary.n, {'x': 1}['x'],"
             " a.other['k']\n")
    assert typed_key_reads(clean, s) == []
    assert {"oracle", "molecule", "tolerances", "kinds", "bound"} <= section_fields()


def test_no_file_reads_more_record_sections_by_key():
    found = _typed_offenders()
    counts = {k: len(v) for k, v in found.items()}
    new = {k: found[k][:3] for k in counts if k not in NOT_YET_TYPED}
    assert not new, f"read the typed section (formats.records) instead: {new}"
    grown = {k: (n, NOT_YET_TYPED[k]) for k, n in counts.items() if n > NOT_YET_TYPED[k]}
    assert not grown, f"more string-key reads of sections than pinned (now, pinned): {grown}"
    cleaned = sorted(set(NOT_YET_TYPED) - set(counts))
    assert not cleaned, f"no string-key reads of sections left: remove from NOT_YET_TYPED: {cleaned}"
