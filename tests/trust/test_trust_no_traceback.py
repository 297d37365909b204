"""No traceback, hang or raw control byte on any input in ``tests/`` (issue 23's acceptance).

Every file under ``tests/data/`` and ``tests/support/hostile/`` goes through the command that reads its kind (a
structure file: ``certify``; a certificate: ``verify`` trusting its own folder; a harness log: ``ladder``
with a manifest naming it; a manifest: ``ladder --manifest``; a protocol file: ``certify --protocol``; an
item list: a manifest's ``items``; a certificate also as ``ladder --certificate``) and, as the wrong kind, through the certificate, structure and
harness-log readers too (a CIF given as a certificate, a certificate as a harness log, ...). Then every
case of the hostile corpus (``tests/support/hostile/corpus.py``) runs again. Each run must:

- exit 0, 1 or 2 (never an unexpected exception: typer's runner records one as ``res.exception``);
- print no ``Traceback``;
- write no raw control byte to stdout or stderr: C0 except newline and tab (so no ESC either), DEL, C1.

The commands run in this process (typer's runner) inside a thread with a timeout, so a reader that would
block (on a FIFO, say) fails the test instead of hanging it. The files of ``tests/`` hold no FIFO or device
(git cannot store one); those are ``tests/trust/test_trust_special_files.py``'s subprocess cases.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.hostile.corpus import BROKEN, CASES, GOOD_CIF, write_case_files
from viewcert.cli import app

TESTS = Path(__file__).resolve().parents[1]
FILES = sorted(p for root in (TESTS / "data", TESTS / "support" / "hostile") for p in root.rglob("*")
               if p.is_file() and "__pycache__" not in p.parts)
STRUCTURE = {".cif", ".mmcif", ".pdb", ".ent", ".vasp", ".poscar", ".xyz", ".sdf", ".mol", ".gz"}
HARNESS_LOG = {".jsonl", ".json", ".csv", ".tsv", ".xlsx", ".eval"}
#: C0 controls except \t (09) and \n (0a), DEL and the C1 block: none may reach a terminal raw
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")
TIMEOUT = 120.0  # seconds per command (the slowest here takes about 2 s)


def run(argv: list[str]):
    """The CLI's result for ``argv``, run in a thread; fails the test if it does not return in time."""
    box: dict = {}

    def target() -> None:
        box["res"] = CliRunner(env={"FORCE_COLOR": None, "NO_COLOR": "1"}).invoke(app, argv)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(TIMEOUT)
    if t.is_alive():
        pytest.fail(f"viewcert {' '.join(argv)} did not return within {TIMEOUT:g} s (a hang)")
    return box["res"]


def assert_clean(res, argv: list[str]) -> None:
    """Exit 0/1/2, no traceback, no raw control byte on stdout or stderr."""
    what = f"viewcert {' '.join(argv)}"
    assert res.exception is None or isinstance(res.exception, SystemExit), f"{what}: {res.exception!r}"
    assert res.exit_code in (0, 1, 2), f"{what}: exit {res.exit_code}\n{res.output}"
    for name, text in (("stdout", res.stdout), ("stderr", res.stderr)):
        assert "Traceback" not in text, f"{what}: {name}\n{text}"
        bad = RAW_CONTROL.search(text)
        assert bad is None, f"{what}: raw control byte {bad.group()!r} on {name}: {text[:2000]!r}"


def _is_certificate(p: Path) -> bool:
    if p.suffix != ".json":
        return False
    try:
        head = json.loads(p.read_text(encoding="utf-8"))
    except (ValueError, UnicodeError):
        return False
    return isinstance(head, dict) and str(head.get("format", "")).startswith("viewcert-certificate")


def _manifest(d: Path, log: Path | None = None, items: Path | None = None, name: str = "walk") -> Path:
    """The manifest ``d/NAME.toml`` naming ``log`` as a harness log (harness detected; default: a checked-in
    native log) and/or ``items`` as the item list."""
    study = '[study]\nname = "walk"\ntask = "crystal_system"\nr1 = "1"\n'
    if items is not None:
        study += f'items = {json.dumps(str(items))}\n'
    log = log if log is not None else TESTS / "data" / "harness" / "native" / "beta_lab-13b_noimage.jsonl"
    body = f'\n[[input]]\npath = {json.dumps(str(log))}\nmodel = "m"\nrung = "R4"\n'
    p = d / f"{name}.toml"
    p.write_text(study + body)
    return p


def natural(p: Path, d: Path) -> list[list[str]]:
    """The command(s) that read ``p`` as what it is."""
    out = ["--out", str(d / "o")]
    certify = ["--workers", "1", "--no-plots", *out]
    suffix = p.suffix.lower()
    if _is_certificate(p) or "certificate" in p.stem:  # the ceiling of a ladder, too
        runs = [["ladder", "--manifest", str(_manifest(d, name="ceiling")), "--certificate", str(p), *out]]
        trusted = p.parent / "inputs" if (p.parent / "inputs").is_dir() else p.parent
        return runs + ([["verify", str(p), "--workers", "1", "--inputs", str(trusted)]] if _is_certificate(p) else [])
    if suffix in STRUCTURE or p.name.upper().startswith("POSCAR") or p.parent.name == "broken":
        return [["certify", str(p), *certify]]
    if suffix == ".toml":
        if "[study]" in p.read_text(encoding="utf-8", errors="replace"):
            return [["ladder", "--manifest", str(p), *out]]
        (d / "a.cif").write_text(GOOD_CIF)
        return [["certify", str(d / "a.cif"), "--protocol", str(p), *certify]]
    if p.name == "items.jsonl":
        return [["ladder", "--manifest", str(_manifest(d, items=p, name="items")), *out]]
    if suffix in HARNESS_LOG:
        return [["ladder", "--manifest", str(_manifest(d, log=p, name="log")), *out]]
    return []  # scripts, READMEs, freeze lists: no command reads them (the wrong-kind runs below still do)


def wrong_kinds(p: Path, d: Path) -> list[list[str]]:
    """``p`` given to the readers of the other kinds: as a certificate, a structure and a harness log."""
    runs = [["verify", str(p), "--workers", "1", "--inputs", str(d)],
            ["certify", str(p), "--workers", "1", "--no-plots", "--out", str(d / "w")],
            ["ladder", "--manifest", str(_manifest(d, log=p, name="wrong-log")), "--out", str(d / "l")]]
    mine = [a[:2] for a in natural(p, d) if "--certificate" not in a]
    return [r for r in runs if r[:2] not in mine]


def test_the_walk_covers_every_kind():
    """The walk is not empty and meets every kind of input the commands read."""
    rel = {p.relative_to(TESTS).as_posix() for p in FILES}
    assert len(rel) >= 60 and "support/hostile/corpus.py" in rel
    kinds = {p.suffix.lower() for p in FILES}
    assert {".cif", ".pdb", ".xyz", ".sdf", ".json", ".jsonl", ".csv", ".tsv", ".xlsx", ".eval", ".toml"} <= kinds
    assert any((BROKEN / n).exists() for n in ("POSCAR_wrong_count",))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(TESTS).as_posix())
def test_every_file_in_tests_is_read_without_traceback_hang_or_control_byte(path, tmp_path):
    argvs = natural(path, tmp_path) + wrong_kinds(path, tmp_path)
    assert argvs
    for argv in argvs:
        assert_clean(run(argv), argv)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_hostile_case_is_clean(case, tmp_path):
    """The corpus again, with the control-byte check on each stream (its own test checks code and message)."""
    write_case_files(tmp_path, case.files)
    argv = [a.replace("{d}", str(tmp_path)).replace("{broken}", str(BROKEN)) for a in case.argv]
    assert_clean(run(argv), argv)


def test_the_checks_can_fail(tmp_path):
    """The control-byte pattern by hand (ESC, BEL, CR, DEL, CSI as C1 are caught; newline, tab, é, ∑ are not),
    and a file whose name carries an OSC sequence comes out escaped, never raw."""
    for raw in ("\x1b", "\x07", "\r", "\x7f", "\x9b", "\x00"):
        assert RAW_CONTROL.search(f"a{raw}b"), repr(raw)
    assert RAW_CONTROL.search("line\n\tindented é ∑ \u00a0") is None
    evil = tmp_path / "evil\x1b]0;owned\x07.cif"
    evil.write_text(GOOD_CIF)
    argv = ["certify", str(evil), "--workers", "1", "--no-plots", "--out", str(tmp_path / "o")]
    res = run(argv)
    assert_clean(res, argv)
    assert res.exit_code == 0 and "\\x1b]0;owned\\x07" in res.output, res.output
