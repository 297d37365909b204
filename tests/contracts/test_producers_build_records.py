"""The producers in ``certify/`` and the exporters in ``benchmark/`` build typed sections, not dicts (issue 41:
"producers build records; dicts exist only at a shard boundary and when writing"). The scan flags, in every module
of ``src/viewcert/certify`` and ``src/viewcert/benchmark`` (:data:`PRODUCERS`), a dict
built with the keys of a typed section (``formats.fields.Section``): a dict literal (``{"status": ...,
"n_points": ...}``) or a ``dict(status=..., n_points=...)`` call with two or more text keys, every one of them a
field of one section class (keys spread in with ``**`` are not seen). Build the section instead
(``OracleReport(status=..., n_points=...)``); the records still type a dict in ``__post_init__``, but that is the
read path (``from_dict``), not a producer's.

:data:`EXEMPT` names the dicts that are not a typed section though their keys fit one, per file, function and
class, each with its reason; nothing else in their functions is exempt. The planted violations are the scan's
self-test."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "viewcert"
#: the packages whose modules build certificates, their sections and export manifests
PRODUCERS = (SRC / "certify", SRC / "benchmark")

#: {(file, function): {section class: why the dict there is not that section}}
EXEMPT = {
    ("certify/config.py", "protocol_setting"): {
        "CertifyConfigRecord": "a part of the configuration's own serialiser (CertifyConfig.to_dict, also hashed "
                               "into the run's fingerprint); the certificate's producer types the whole "
                               "configuration's JSON once (certificate_of)",
        "ExportSettingsRecord": "the same part of CertifyConfig.to_dict: a ceiling configuration, not an export's "
                                "settings"},
    ("certify/certificate.py", "protocol_record"): {
        "ProtocolFile": "a ceiling certificate's protocol.file is a plain JSON object (ViewProtocol.file is not "
                        "typed); ProtocolFile is a task protocol's file record",
        "PublishedImage": "the same protocol.file object (a name and a SHA-256); PublishedImage is an image of an "
                          "as-published certificate"},
    ("benchmark/export.py", "_certify"): {
        "CertifyConfigRecord": "the keyword arguments of the CertifyConfig the export's two certifications run "
                               "with (the geometric one drops three of them), not a certificate section: the "
                               "certificate records the configuration through certify.certificate_of"},
}


def section_classes() -> dict[str, frozenset[str]]:
    """{class name: its field names} of every public typed section (``formats.fields.Section`` subclass)."""
    from viewcert.formats import records  # noqa: F401 - imports every module that defines a section
    from viewcert.formats.fields import Section

    out, todo = {}, list(Section.__subclasses__())
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if not cls.__name__.startswith("_"):
            out[cls.__name__] = frozenset(f.name for f in dataclasses.fields(cls) if f.name != "extra")
    return out


def _keys(node: ast.AST) -> list[str] | None:
    """The text keys of a dict literal or a ``dict(...)`` call (None for anything else)."""
    if isinstance(node, ast.Dict):
        return [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return [kw.arg for kw in node.keywords if kw.arg is not None]
    return None


def section_dicts(source: str, sections: dict[str, frozenset[str]]) -> list[tuple[int, str, str]]:
    """(line, enclosing function, section class) of every dict built in ``source`` with two or more text keys
    that are all fields of the section class (one entry per class that fits)."""
    tree = ast.parse(source)
    funcs = sorted(((f.lineno, f.end_lineno, f.name) for f in ast.walk(tree)
                    if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)), key=lambda t: t[1] - t[0])
    out = []
    for node in ast.walk(tree):
        keys = _keys(node)
        if not keys or len(set(keys)) < 2:
            continue
        where = next((name for a, b, name in funcs if a <= node.lineno <= b), "<module>")
        out += [(node.lineno, where, cls) for cls, names in sections.items() if set(keys) <= names]
    return sorted(out)


def _found() -> dict[str, list[tuple[int, str, str]]]:
    sections = section_classes()
    found = {}
    for p in sorted(f for package in PRODUCERS for f in package.rglob("*.py")):
        rel = p.relative_to(SRC).as_posix()
        if hits := section_dicts(p.read_text(), sections):
            found[rel] = hits
    return found


def test_the_scan_finds_planted_violations():
    sections = {"OracleReport": frozenset({"status", "n_points", "n_phantoms"}),
                "Kinds": frozenset({"crystals", "molecules"})}
    planted = ("def report(rec):\n"
               "    return {'status': rec.status, 'n_points': 3}\n"
               "\n"
               "def kinds(a, b):\n"
               "    x = dict(crystals=a, molecules=b)\n"
               "    return x, {**x, 'status': 1, 'n_phantoms': 0}\n")
    assert section_dicts(planted, sections) == [(2, "report", "OracleReport"), (5, "kinds", "Kinds"),
                                                (6, "kinds", "OracleReport")]
    clean = ("def f(rec, x):\n"
             "    a = OracleReport(status=rec.status, n_points=3)\n"  # the typed section: what a producer builds
             "    b = {'status': 1}\n"  # one key: too little to say which record
             "    c = {'status': 1, 'id': 2}\n"  # a key no section of that shape has
             "    return a, b, c, {**x, 'crystals': 1}, dict(x, crystals=1), {k: 1 for k in x}\n")
    assert section_dicts(clean, sections) == []
    sections_here = section_classes()  # the scan sees the real sections, nested ones included
    assert {"status", "n_points"} <= sections_here["OracleReport"]
    assert {"crystals", "molecules"} == sections_here["Kinds"] and "PointGroupCheck" in sections_here


def test_the_scan_reads_every_producer_package():
    rels = {p.relative_to(SRC).as_posix() for package in PRODUCERS for p in package.rglob("*.py")}
    assert {"certify/certificate.py", "benchmark/tasks_export.py", "benchmark/interaction_export.py",
            "benchmark/docking_export.py", "benchmark/export.py", "benchmark/molecule_export.py",
            "benchmark/settings.py"} <= rels


def test_no_producer_builds_a_section_as_a_dict():
    found = _found()
    bad = {rel: [h for h in hits if h[2] not in EXEMPT.get((rel, h[1]), {})] for rel, hits in found.items()}
    bad = {rel: hits for rel, hits in bad.items() if hits}
    assert not bad, f"build the typed section (formats.item_sections, summary_sections, settings_sections): {bad}"


def test_every_exemption_is_reasoned_and_still_needed():
    found = _found()
    used = {(rel, fn, cls) for rel, hits in found.items() for _, fn, cls in hits}
    for (rel, fn), classes in EXEMPT.items():
        for cls, why in classes.items():
            assert why.strip(), (rel, fn, cls)
            assert (rel, fn, cls) in used, f"no dict left to exempt: remove EXEMPT[{rel!r}, {fn!r}][{cls!r}]"
