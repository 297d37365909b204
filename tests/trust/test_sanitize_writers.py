"""Every writer sanitises received text (issue 23), checked by reading the files back: a ladder whose model name
is ``# =cmd|' /C calc'!A0`` + an OSC sequence and whose item ids carry an escape and formula starts, and a
certify run over files with such names. Expected forms are written out from the rules (OWASP's CSV-injection
rule, CommonMark, ``html.escape``), never copied from a run."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pandas as pd
import pytest

from tests.support.hostile.corpus import GOOD_CIF
from viewcert.io.tables import csv_text, dict_csv_text, frame_csv_text

REPO = Path(__file__).resolve().parents[2]
OSC = "\x1b]0;pwned\x07"
MODEL = "# =cmd|' /C calc'!A0 " + OSC
MODEL_SHOWN = r"# =cmd|' /C calc'!A0 \x1b]0;pwned\x07"  # the control bytes escaped visibly
ITEMS = [("a\x1b[31mred", "cubic"), ("-2+3", "triclinic"), ("@SUM(1)", "cubic"), ("d", "hexagonal"),
         ("e", "cubic"), ("f", "tetragonal")]
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _raw_controls(text: str) -> list[str]:
    """Control bytes (C0 but newline and tab, DEL, C1), bidi controls and lone surrogates present raw."""
    return [c for c in text if c not in "\n\t" and (unicodedata.category(c) in ("Cc", "Cs")
                                                     or 0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069)]


def _viewcert(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """The real command in a subprocess; a matplotlib missing-glyph warning is an error there."""
    return subprocess.run([sys.executable, "-W", "error:Glyph", "-c", "from viewcert.cli import app; app()", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=str(REPO / "src"), COLUMNS="200"))


def _check_csv_cells(path: Path) -> list[list[str]]:
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    for row in rows:
        for cell in row:
            assert not cell.startswith(FORMULA_START) or NUMBER.fullmatch(cell), (path.name, cell)
    return rows


@pytest.fixture(scope="module")
def ladder_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile_ladder")
    answers = {"R4": ["cubic", "cubic", "hexagonal", "cubic", "cubic", "cubic"],
               "R3": ["cubic", "triclinic", "cubic", "hexagonal", "cubic", "tetragonal"]}
    for rung, given in answers.items():
        lines = ["run,model,rung,item_id,sample_k,raw_output,target,category"]
        lines += [f'r,m,{rung},"{iid}",0,{a},{t},{t}' for (iid, t), a in zip(ITEMS, given, strict=True)]
        (d / f"{rung}.csv").write_text("\n".join(lines) + "\n")
    model_toml = MODEL.replace("\x1b", "\\u001b").replace("\x07", "\\u0007")
    (d / "m.toml").write_text(
        '[study]\nname = "=HYPERLINK(\\"http://x\\") <b>study</b>"\ntask = "crystal_system"\nr1 = "1"\n\n'
        + "".join(f'[[input]]\npath = "{r}.csv"\nmodel = "{model_toml}"\nrung = "{r}"\n\n' for r in answers))
    proc = _viewcert(["ladder", "--manifest", "m.toml", "--out", "o", "--n-boot", "100"], d)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return d / "o", proc


def test_ladder_console_has_no_raw_escape(ladder_run):
    _, proc = ladder_run
    assert not _raw_controls(proc.stdout + proc.stderr)
    assert MODEL_SHOWN in proc.stdout  # shown, visibly escaped, in the rich tables


def test_ladder_files_have_no_raw_control_byte(ladder_run):
    out, _ = ladder_run
    texts = [p for p in out.iterdir() if p.suffix in (".csv", ".md", ".html", ".json")]
    assert {"decomposition.csv", "summary.md", "report.html", "results_table.csv"} <= {p.name for p in texts}
    for p in texts:
        assert not _raw_controls(p.read_text(encoding="utf-8")), p.name


def test_ladder_csv_cells_are_neutralised(ladder_run):
    out, _ = ladder_run
    for p in sorted(out.glob("*.csv")):
        _check_csv_cells(p)
    table = pd.read_csv(out / "results_table.csv", dtype=str, keep_default_na=False)
    assert set(table["item_id"]) == {r"a\x1b[31mred", "'-2+3", "'@SUM(1)", "d", "e", "f"}
    dec = pd.read_csv(out / "decomposition.csv", dtype=str, keep_default_na=False)
    assert set(dec["model"]) == {MODEL_SHOWN}  # starts with '#': text already, only the controls escaped
    nums = pd.read_csv(out / "decomposition.csv")
    assert pd.api.types.is_float_dtype(nums["share"])  # numbers stay numbers


def test_ladder_markdown_has_no_heading_or_html_from_names(ladder_run):
    markdown_it = pytest.importorskip("markdown_it")
    out, _ = ladder_run
    tokens = markdown_it.MarkdownIt("commonmark").enable("table").parse((out / "summary.md").read_text())
    inlines = [t for t in tokens if t.type == "inline"]
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert not any("cmd" in h for h in headings), headings
    assert headings[0].startswith("viewcert ladder: ")
    assert not any(t.type.startswith("html") for t in tokens)
    assert not any(c.type.startswith("html") or c.type == "link_open" for t in inlines for c in t.children or [])

    def shown(t):
        return "".join(c.content for c in t.children if c.type in ("text", "code_inline"))

    model_cells = {shown(t) for t in inlines if "cmd" in t.content}
    # table cells, and the deficit account's sentence that starts with the name, all rendered literally
    assert MODEL_SHOWN in model_cells
    assert all(c == MODEL_SHOWN or c.startswith(MODEL_SHOWN + " loses ") for c in model_cells), model_cells
    assert shown(next(t for t in inlines if t.content.startswith("viewcert ladder"))) == \
        'viewcert ladder: =HYPERLINK("http://x") <b>study</b>'


def test_ladder_html_is_escaped(ladder_run):
    out, _ = ladder_run
    page = (out / "report.html").read_text()
    assert "<b>study</b>" not in page and "&lt;b&gt;study&lt;/b&gt;" in page
    assert r"\x1b]0;pwned\x07" in page and "\x1b" not in page


@pytest.fixture(scope="module")
def certify_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile_names")
    f = d / "in"
    f.mkdir()
    (f / f"=cmd{OSC}.cif").write_text(GOOD_CIF)
    (f / "-2+3.cif").write_text(GOOD_CIF)
    (f / f"bad\u202e{OSC}.cif").write_text("")  # unreadable: its id reaches the console as an item error
    (f / "evil\nviewcert: error: forged.cif").write_text("")  # a newline in a name cannot forge a line
    with open(os.fsencode(f) + b"/\xff.cif", "wb") as fh:  # a name that is not UTF-8 (a lone surrogate in Python)
        fh.write(b"")
    proc = _viewcert(["certify", "in", "--workers", "1", "--no-plots", "--truth", "rendered", "--out", "o"], d)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return d / "o", proc


def test_certify_console_and_files_escape_names(certify_run):
    out, proc = certify_run
    assert not _raw_controls(proc.stdout + proc.stderr), proc.stderr
    assert r"viewcert: item error: item bad\u202e\x1b]0;pwned\x07" in proc.stderr
    assert r"viewcert: item error: item \udcff" in proc.stderr
    assert r"viewcert: item error: item evil\x0aviewcert: error: forged" in proc.stderr
    assert not any(line.startswith("viewcert: error: forged") for line in (proc.stdout + proc.stderr).splitlines())
    assert not any(line.startswith("viewcert: error: forged") for line in (out / "summary.txt").read_text().splitlines())
    for name in ("items.csv", "summary.txt", "certificate.json"):
        assert not _raw_controls((out / name).read_text(encoding="utf-8")), name
    rows = _check_csv_cells(out / "items.csv")
    ids = {r[0] for r in rows[1:]}
    assert ids == {r"'=cmd\x1b]0;pwned\x07", "'-2+3", r"bad\u202e\x1b]0;pwned\x07", r"\udcff",
                   r"evil\x0aviewcert: error: forged"}
    cert = json.loads((out / "certificate.json").read_text(encoding="utf-8"))
    assert {it["id"] for it in cert["items"]} == {f"=cmd{OSC}", "-2+3", f"bad\u202e{OSC}", "\udcff",
                                                  "evil\nviewcert: error: forged"}  # the data is kept as it is


@pytest.mark.parametrize("cell, expected", [("=1+1", "'=1+1"), ("-2+3", "'-2+3"), ("-0.5", "-0.5"),
                                            ("1e-3", "1e-3"), ("@A1", "'@A1"), ("mp-1", "mp-1"), (-2.5, "-2.5")])
def test_csv_helpers(cell, expected):
    """io.tables: string cells by OWASP's rule, a decimal-number string and a real number untouched."""
    assert csv_text(["h"], [[cell]]) == f"h\n{expected}\n"
    assert dict_csv_text([{"h": cell}]) == f"h\n{expected}\n"
    assert frame_csv_text(pd.DataFrame({"h": [cell]})) == f"h\n{expected}\n"


def test_csv_header_and_none():
    assert csv_text(["=x", "y"], [[None, "a\nb"]]) == "'=x,y\n,a\\x0ab\n"
    assert dict_csv_text([]) == ""


def test_every_csv_writer_goes_through_io_tables():
    """A guard for new writers: CSV and TSV text is made in ``io.tables`` only, by its one cell rule; the
    machine-read tables too (the native result table, the harness TSV and ids.csv), whose readers undo it."""
    machine = {"io/tables.py"}
    bad = []
    for p in sorted((REPO / "src" / "viewcert").rglob("*.py")):
        rel = p.relative_to(REPO / "src" / "viewcert").as_posix()
        for k, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\.to_csv\(|csv\.(writer|DictWriter)\(", line) and rel not in machine:
                bad.append(f"{rel}:{k}: {line.strip()}")
    assert not bad, "CSV written outside viewcert.io.tables:\n" + "\n".join(bad)


def test_every_console_line_goes_through_the_sanitising_writers():
    """A guard for new commands: the CLI prints through ``cli.options.echo`` and ``safe_console`` only
    (``warmup`` prints kernel and module names of viewcert's own source, nothing received)."""
    own = {"options.py", "warmup.py"}
    bad = []
    for p in sorted((REPO / "src" / "viewcert" / "cli").glob("*.py")):
        if p.name in own:
            continue
        for k, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"typer\.echo\(|(?<![\w.])print\(|(?<![\w.])Console\(|click\.echo\(", line):
                bad.append(f"cli/{p.name}:{k}: {line.strip()}")
    assert not bad, "console output not through cli.options.echo/safe_console:\n" + "\n".join(bad)


def test_library_warnings_are_escaped(capsys):
    """A warning raised inside a command (a parsing library quoting a file) is printed escaped."""
    import warnings

    from viewcert.cli.options import guarded

    def command():
        warnings.warn("bad field " + OSC, UserWarning, stacklevel=1)

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        guarded(command)()
    err = capsys.readouterr().err
    assert r"bad field \x1b]0;pwned\x07" in err and not _raw_controls(err)
