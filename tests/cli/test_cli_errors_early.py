"""Errors early and with the fix (issue 57, item 9): names are checked before any work, and two usage slips say
how to fix them. Each test fails on the main of session 52:

- a missing INPUT was found only after the certification modules were imported (6 s on the issue's machine);
- ``design --against render-ceiling-55`` failed after the whole view search (14.6 s);
- ``viewcert --margin certify …`` said ``No such option`` without "options go after the command";
- ``certify X --margin 0.05`` said ``unexpected extra argument`` without "--margin is a switch";
- ``certify notes.txt`` exited 1 with a 0-item certificate instead of one line, exit 2."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from viewcert.cli import app


def _error(args: list[str]) -> tuple[int, str]:
    res = CliRunner().invoke(app, args)
    return res.exit_code, res.output


def test_a_command_option_before_the_command_says_options_go_after_it():
    code, out = _error(["--margin", "certify", "builtin:sample"])
    assert code == 2 and out.count("\n") == 1
    assert "--margin is an option of `certify`; options go after the command (viewcert certify ... --margin)" in out


def test_a_value_after_a_switch_says_it_is_a_switch():
    code, out = _error(["certify", "builtin:sample", "--margin", "0.05"])
    assert code == 2 and out.count("\n") == 1
    assert "--margin is a switch (on or off) and takes no value: give --margin alone, not --margin 0.05" in out
    # an extra argument that follows no switch keeps Click's message alone
    code, out = _error(["certify", "builtin:sample", "--delta", "0.01", "0.05"])
    assert code == 2 and "switch" not in out and "unexpected extra argument" in out


def test_a_missing_input_is_refused_before_the_certification_modules_load(tmp_path):
    """The check runs before any work: the process that refuses the missing INPUT never imported the library's
    certification or design code (where the old check sat, behind 1-6 s of imports)."""
    script = textwrap.dedent(f"""
        import sys
        from typer.testing import CliRunner
        from viewcert.cli import app
        for args in (["certify", {str(tmp_path / "nosuch")!r}], ["design", {str(tmp_path / "nosuch")!r}],
                     ["certify", "complex:" + {str(tmp_path / "nosuch.pdb")!r}]):
            r = CliRunner().invoke(app, args)
            assert r.exit_code == 2 and "does not exist" in r.output and "field INPUT" in r.output, r.output
        heavy = [m for m in ("viewcert.api.certification", "viewcert.api.views", "viewcert.certify.inputs")
                 if m in sys.modules]
        print("heavy:", heavy)
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "heavy: []"


@pytest.mark.parametrize("args", [["design", "{cifs}", "--against", "render-ceiling-55"],
                                  ["design", "{cifs}", "--keep-protocol", "axes-7", "--keep", "front"],
                                  ["certify", "{cifs}", "--protocol", "axes-7"]])
def test_an_unknown_protocol_name_is_refused_before_any_work(args, tmp_path, monkeypatch):
    import viewcert.design.designer as designer

    def searched(*a, **k):  # pragma: no cover - reached only when the name was not checked first
        raise AssertionError("the view search ran before the protocol name was checked")

    monkeypatch.setattr(designer, "design_views", searched)
    code, out = _error([a.format(cifs=tmp_path) for a in args])
    assert code == 2 and out.count("\n") == 1, out
    assert "unknown protocol" in out and "did you mean" in out and "search ran" not in out


def test_design_api_checks_against_before_the_search(tmp_path, monkeypatch):
    import viewcert.design.designer as designer
    from viewcert.api import views
    from viewcert.errors import ViewcertError

    def searched(*a, **k):  # pragma: no cover - reached only when the name was not checked first
        raise AssertionError("the view search ran before --against was checked")

    monkeypatch.setattr(designer, "design_views", searched)
    monkeypatch.setattr(views, "cells", searched)
    with pytest.raises(ViewcertError, match="unknown protocol 'render-ceiling-55'"):
        views.design("builtin:prototypes", tmp_path / "d", against="render-ceiling-55")


def test_a_file_that_is_no_structure_is_one_line_exit_2(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    code, out = _error(["certify", str(notes), "--out", str(tmp_path / "cert")])
    assert code == 2 and out.count("\n") == 1, out
    assert "notes.txt" in out and "unknown structure file extension '.txt'" in out
    assert not (tmp_path / "cert").exists()  # no 0-item certificate
