"""One vocabulary on the command line (issue 39, Build 4), checked by walking the Typer app: an option name has one
type and one default in every command (the exceptions are listed below, each with its reason); no help text
truncates a choice list at a normal terminal width; every command that writes has ``-o/--out``; build-benchmark's
help names every task; the root options (limits, ``--debug``) are accepted after the command too."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import PurePosixPath

import typer
from typer.testing import CliRunner

from viewcert.cli.main import app, hoist_root_options

runner = CliRunner()
#: option -> why its default differs between commands (its type and meaning are the same everywhere)
DEFAULT_EXCEPTIONS = {
    "--out": "each command's own output under out/ (checked below), or required, or beside its input",
    "--seed": "each seeds a different draw: noise, answer sampling, candidate spiral, bootstrap, training",
    "--sigma-unit": "sweep's noise rule δ = max(δ, 4·√2·κ·σ) needs Å; certify's noise is in px by default",
    "--tiling": "sweep: design studies on one cell (the study's sweeps); certify: the protocol's (a named study "
                "protocol carries its study's tiling, issue 57 item 8; else 2,2,2); every other command the shared "
                "2,2,2",
    "--workers": "run: 1 (a fresh machine would compile the kernels in every worker); elsewhere one per CPU",
}
#: option -> why its type differs
TYPE_EXCEPTIONS = {"--seed": "build-benchmark reads it as text to refuse a negative or huge seed in one line"}
#: commands that write nothing a user asked for (verify and occlusion print; warmup fills numba's cache)
NO_OUTPUT = {"version", "verify", "occlusion", "warmup", "protocol show", "protocol list", "settings show"}


def commands():
    """(name, click command) of every leaf command of the app."""
    def walk(cmd, path):
        if hasattr(cmd, "commands"):
            for n, c in cmd.commands.items():
                yield from walk(c, path + (n,))
        else:
            yield " ".join(path), cmd

    return list(walk(typer.main.get_command(app), ()))


def options(cmd):
    return [p for p in cmd.params if p.param_type_name == "option"]


def test_the_vocabulary_table_is_consistent():
    """``viewcert.api.vocabulary``: each command's own and settings-file options are among its parameters (each
    once), each shared option is taken by at least two commands (else it is its command's own), and every command
    of the table is a command of the app."""
    from collections import Counter

    from viewcert.api.vocabulary import COMMANDS, OPTIONS

    users: Counter = Counter()
    for name, c in COMMANDS.items():
        params = c.params.split()
        assert len(set(params)) == len(params), name
        assert set(c.rare.split()) | set(c.own) <= set(params), name
        users.update(p for p in params if p not in c.own)
    assert {n for n in OPTIONS if users[n] < 2} == set()
    assert set(COMMANDS) - {""} <= {name for name, _ in commands()}


def test_each_option_has_one_type_and_one_default():
    seen = defaultdict(list)
    for name, cmd in commands():
        for p in options(cmd):
            key = max(p.opts, key=len)
            seen[key].append((name, p.type_descriptor.annotation, p.is_flag, repr(p.default),
                              tuple(sorted(p.opts))))
    for key, uses in seen.items():
        types = {(str(u[1]).replace("typing.Optional", ""), u[2]) for u in uses}
        defaults = {u[3] for u in uses}
        spellings = {u[4] for u in uses}
        if key not in TYPE_EXCEPTIONS:
            assert len(types) == 1, (key, uses)
        if key not in DEFAULT_EXCEPTIONS:
            assert len(defaults) == 1, (key, uses)
        assert len(spellings) == 1, (key, uses)  # -o everywhere or nowhere
    for key in DEFAULT_EXCEPTIONS:  # each exception is still needed
        assert len({u[3] for u in seen[key]}) > 1, key
    # the shared defaults: tiling 2,2,2 and workers one per CPU everywhere but the listed commands
    assert {u[0] for u in seen["--tiling"] if u[3] != "'2,2,2'"} == {"sweep", "certify"}
    assert {u[0] for u in seen["--workers"] if u[3] != "None"} == {"run"}


def test_every_command_that_writes_has_dash_o_out_under_out():
    for name, cmd in commands():
        outs = [p for p in options(cmd) if "--out" in p.opts]
        if name in NO_OUTPUT:
            assert not outs, name
            continue
        assert outs and set(outs[0].opts) == {"--out", "-o"}, name
        d = outs[0].default
        # never a fixed folder of the current directory other than out/ (gallery: not docs/)
        assert d is None or PurePosixPath(str(d)).parts[0] == "out", (name, d)


def _choices(text: str) -> list[list[str]]:
    """The choice lists ``a | b | c`` of a help text (a parenthesised remark after a choice set aside)."""
    text = re.sub(r"\([^()]*\)", "", text or "")
    return [[x.strip() for x in m.split("|")] for m in re.findall(r"[\w.-]+(?:\s*\|\s*[\w.-]+)+", text)]


def test_help_shows_every_choice_at_a_normal_width():
    checked = 0
    for name, cmd in commands():
        r = runner.invoke(app, [*name.split(), "--help"], terminal_width=100, env={"COLUMNS": "100"})
        assert r.exit_code == 0, name
        flat = re.sub(r"[\s│╭╮╰╯─]+", "", r.output)
        if any(p.hidden for p in options(cmd)):  # the settings-file options: their help is in settings show
            shown = runner.invoke(app, ["settings", "show", name])
            assert shown.exit_code == 0, shown.output
            flat += re.sub(r"\s+", "", shown.output)
        for p in options(cmd):
            for alternatives in _choices(p.help):
                for a in alternatives:
                    assert a.replace(" ", "") in flat, (name, p.name, a)
                    checked += 1
    assert checked >= 60  # the walk reached the choice lists (tasks, levels, objectives, styles, ...)


def test_build_benchmark_help_names_every_task():
    from viewcert.benchmark.interaction_export import INTERACTION_TASKS
    from viewcert.benchmark.molecule_export import MOLECULE_TASKS
    from viewcert.benchmark.settings import TASKS
    from viewcert.tasks.model import TASKS as TRANSFORMATION_TASKS

    (cmd,) = [c for n, c in commands() if n == "build-benchmark"]
    (task,) = [p for p in options(cmd) if p.name == "task"]
    named = {a for alts in _choices(task.help) for a in alts}
    assert named == set(TASKS + TRANSFORMATION_TASKS + MOLECULE_TASKS + INTERACTION_TASKS)


def test_root_options_after_the_command():
    root = typer.main.get_command(app)
    hoisted = hoist_root_options(["certify", "x", "--max-atoms", "5", "--out", "o", "--debug", "--max-views=3", "--",
                                  "--max-pixels", "1"], root.params, set(root.commands))
    assert hoisted == ["--max-atoms", "5", "--debug", "--max-views=3", "certify", "x", "--out", "o", "--",
                       "--max-pixels", "1"]
    assert hoist_root_options(["--settings", "certify", "certify", "x", "--max-atoms", "5"], root.params,
                              set(root.commands)) == ["--settings", "certify", "--max-atoms", "5", "certify", "x"]
    before = runner.invoke(app, ["--max-views", "2", "observe", "builtin:sample", "--out", "unused"])
    after = runner.invoke(app, ["observe", "builtin:sample", "--out", "unused", "--max-views", "2"])
    assert before.exit_code == after.exit_code == 2
    assert "max_views" in after.output and after.output == before.output


def test_protocol_list_names_every_protocol_with_its_views():
    r = runner.invoke(app, ["protocol", "list"])
    assert r.exit_code == 0, r.output
    lines = {ln.split()[0]: ln for ln in r.output.splitlines()}
    assert list(lines) == ["render-ceiling-5", "render-ceiling-5-offaxis", "axes-3", "axes-6", "fibonacci-N"]
    assert " 5 views " in lines["render-ceiling-5"] and "axis_a, axis_b, axis_c, body_diagonal, oblique2" in \
        lines["render-ceiling-5"]
    assert " 3 views " in lines["axes-3"] and lines["axes-3"].endswith("front, top, left")
    assert " 6 views " in lines["axes-6"] and "N views" in lines["fibonacci-N"]


def _one_line_error(args: list[str]) -> str:
    r = runner.invoke(app, args)
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("viewcert: error: "), r.output
    assert "Traceback" not in r.output and "╭" not in r.output
    return lines[0]


def test_unknown_names_get_a_did_you_mean_in_one_line(tmp_path):
    out = str(tmp_path / "o")
    assert "unknown protocol 'render-celing-5' (did you mean render-ceiling-5?)" in _one_line_error(
        ["certify", "builtin:sample", "--protocol", "render-celing-5", "--out", out])
    assert "(did you mean axis_c?)" in _one_line_error(
        ["certify", "builtin:sample", "--only-views", "axis_z", "--out", out])
    assert "got 'crystal-sytem' (did you mean crystal-system?)" in _one_line_error(
        ["build-benchmark", "builtin:sample", "--task", "crystal_sytem", "-o", out])
    assert "unknown level(s) space_grop (did you mean space_group?)" in _one_line_error(
        ["certify", "builtin:sample", "--score", "space-grop", "--out", out])
    assert "No such option: --scor" in _one_line_error(["certify", "builtin:sample", "--scor", "x"])
    assert "No such command 'certfy'" in _one_line_error(["certfy"])
    assert "must be orthographic or perspective" in _one_line_error(["design", "builtin:sample", "--camera", "x"])


PDB = """\
ATOM      1  N   GLY A   1       0.000   0.000   0.000  1.00  0.00           N
ATOM      2  CA  GLY A   1       1.458   0.000   0.000  1.00  0.00           C
ATOM      3  C   GLY A   1       2.009   1.420   0.000  1.00  0.00           C
ATOM      4  O   GLY A   1       1.251   2.390   0.000  1.00  0.00           O
HETATM    5  C1  PNM A 201       5.000   0.000   0.000  1.00  0.00           C
HETATM    6  O1  PNM A 201       6.200   0.000   0.000  1.00  0.00           O
HETATM    7  N1  PNM A 201       5.000   1.300   0.000  1.00  0.00           N
END
"""


def test_a_complex_without_or_with_a_wrong_ligand_names_its_hetero_residues(tmp_path):
    (tmp_path / "c.pdb").write_text(PDB)
    spec = f"complex:{tmp_path / 'c.pdb'}"
    none = _one_line_error(["build-benchmark", spec, "--task", "pocket-ligand", "-o", str(tmp_path / "a")])
    assert "complex:PATH#ligand=RES (hetero residues: PNM)" in none and "--ligand" not in none
    wrong = _one_line_error(["build-benchmark", f"{spec}#ligand=PMN", "--task", "pocket-ligand", "-o",
                             str(tmp_path / "b")])
    assert "ligand 'PMN' is not in the file (did you mean PNM?) (hetero residues: PNM)" in wrong


def test_no_command_shows_more_than_15_options():
    root = typer.main.get_command(app)
    for name, cmd in [("", root), *commands()]:
        shown = [p for p in cmd.params if p.param_type_name == "option" and not p.hidden and p.name != "help"]
        assert len(shown) <= 15, (name, len(shown))


def test_settings_show_round_trips_every_hidden_default(tmp_path):
    from viewcert.cli.settings import load_settings

    root = typer.main.get_command(app)
    r = runner.invoke(app, ["settings", "show"])
    assert r.exit_code == 0, r.output
    (tmp_path / "s.toml").write_text(r.output)
    loaded = load_settings(tmp_path / "s.toml", root)
    n = 0
    for name, cmd in commands():
        for p in options(cmd):
            if p.hidden and p.default is not None:
                got = loaded
                for part in name.split():
                    got = got[part]
                assert got[p.name] == (list(p.default) if isinstance(p.default, tuple) else p.default), (name, p.name)
                n += 1
    assert n >= 30


def test_a_settings_file_sets_defaults_and_the_command_line_wins(tmp_path):
    (tmp_path / "s.toml").write_text('[certify]\npairs = "first"\nplots = false\n')
    args = ["certify", "builtin:aflow:A_cF4_225_a", "--settings", str(tmp_path / "s.toml"), "--workers", "1"]
    r = runner.invoke(app, [*args, "--out", str(tmp_path / "a")])
    assert r.exit_code == 0, r.output
    assert "oracle pairs=first" in (tmp_path / "a" / "summary.txt").read_text()
    assert not (tmp_path / "a" / "phantoms.png").exists()  # plots = false
    r = runner.invoke(app, [*args, "--pairs", "all", "--out", str(tmp_path / "b")])
    assert r.exit_code == 0, r.output
    assert "oracle pairs=all" in (tmp_path / "b" / "summary.txt").read_text()


def test_a_bad_settings_file_is_one_line_naming_file_and_key(tmp_path):
    cases = {"key.toml": ('[certify]\npars = "first"\n', "field certify.pars: unknown key 'pars' of [certify] "
                                                             "(did you mean pairs?)"),
             "table.toml": ('[certfy]\npairs = "first"\n', "field certfy: unknown command table [certfy] "
                                                             "(did you mean certify?)"),
             "toml.toml": ("[certify\n", "not valid TOML")}
    for name, (text, fragment) in cases.items():
        (tmp_path / name).write_text(text)
        line = _one_line_error(["certify", "builtin:sample", "--out", str(tmp_path / "o"), "--settings",
                                str(tmp_path / name)])
        assert f"file {tmp_path / name}" in line and fragment in line, line
    line = _one_line_error(["certify", "builtin:sample", "--settings", str(tmp_path / "absent.toml")])
    assert f"file {tmp_path / 'absent.toml'}" in line and "not found" in line
    line = _one_line_error(["certify", "builtin:sample", "--settings", str(tmp_path)])
    assert f"file {tmp_path}" in line and "directory" in line
    (tmp_path / "value.toml").write_text('[build-benchmark]\nsize = "big"\n')
    line = _one_line_error(["--settings", str(tmp_path / "value.toml"), "build-benchmark", "builtin:sample", "-o",
                            str(tmp_path / "o")])
    assert f"(from the settings file {tmp_path / 'value.toml'}, key size)" in line
    assert not (tmp_path / "o").exists()


def test_a_crystal_task_on_a_complex_is_refused_before_anything_is_written(tmp_path):
    (tmp_path / "c.pdb").write_text(PDB)
    line = _one_line_error(["build-benchmark", f"complex:{tmp_path / 'c.pdb'}#ligand=PNM", "--task",
                            "crystal-system", "-o", str(tmp_path / "out")])
    assert "field task: a complex:PATH input is a molecule, not a crystal: an interaction task (" in line
    assert "not 'crystal-system'" in line
    assert not (tmp_path / "out").exists()
