"""``viewcert.api`` validates every argument the command line validates (issue 58): a table of every public function
of ``viewcert.api`` and every one of its arguments (its ``**settings`` keys too), each given every wrong type and
out-of-range value the command line refuses for its option (``api.vocabulary``: the option's type, and its bounds,
which the command line enforces through click), expects one ``InputError`` naming the argument, raised before any
work. Before issue 58, ``api.certify(config="axes-3")`` was a bare AttributeError and ``api.explore(workers=-1)``,
``api.build_benchmark(limit=-1)`` were accepted.

The wrong values of each type are this test's own (a text where a number is asked, a float where a count is, a
number where text or a path is, a text where True/False is); the arguments that are not options (a configuration,
a plan, limits, a callback) get a value of another type."""

from __future__ import annotations

import inspect
from dataclasses import fields
from pathlib import Path
from typing import get_origin

import pytest
from typer.testing import CliRunner

from viewcert import api
from viewcert.api.attribution import LadderSettings
from viewcert.api.export import BenchmarkSettings, RenderSettings
from viewcert.api.views import DesignSettings
from viewcert.api.vocabulary import COMMANDS
from viewcert.certify import CertifyConfig
from viewcert.certify.sweep import SweepPlan
from viewcert.errors import InputError

#: each public job: (its command in the vocabulary, the required arguments a call needs besides the one tested,
#: the names its ``**settings`` take, argument -> option name where they differ)
JOBS = {
    "certify": ("certify", {"input_spec": "no-such-input"}, (), {"input_spec": "input"}),
    "verify": ("verify", {"cert": "no-such-certificate.json"}, (), {"input_spec": "input",
                                                                     "allow_stale": "allow_stale_certificate"}),
    "sweep": ("sweep", {"input_spec": "no-such-input", "config": CertifyConfig(),
                        "plan": SweepPlan(protocols=("axes-3",))}, (), {"input_spec": "input"}),
    "design": ("design", {"input_spec": "no-such-input"}, tuple(f.name for f in fields(DesignSettings)), {}),
    "margins": ("margin", {"input_spec": "no-such-input"}, (), {}),
    "occlusion": ("occlusion", {"input_spec": "no-such-input"}, (), {}),
    "render": ("render", {"input_spec": "no-such-input"}, tuple(f.name for f in fields(RenderSettings)), {}),
    "build_benchmark": ("build-benchmark", {"input_spec": "no-such-input", "out": "/dev/null/no"},
                        tuple(f.name for f in fields(BenchmarkSettings)), {}),
    "gallery": ("gallery", {"out": "/dev/null/no.png"}, (), {}),
    "ladder": ("ladder", {"export": "no-such-export"}, tuple(f.name for f in fields(LadderSettings)),
               {"subset_size": "subset"}),
    "audit_extraction": ("audit-extraction", {"emitted": "no-such.json", "structures": "no-such.json"}, (), {}),
    "explore": ("explore", {"folder": "no-such-folder"}, (), {}),
    "observe": ("observe", {"source": "no-such-input"}, (), {}),
    "main_job": ("run", {"out": "/dev/null/no"}, (), {}),
    "learn": ("learn", {"source": "no-such-input", "reader": "cell-forest"}, ("protocol", "image_size", "epochs"), {}),
    "read_results": (None, {"export": "no-such-export"}, (), {}),
    "read_export": (None, {"out": "no-such-export"}, (), {}),
    "warmup": (None, {}, (), {}),
}

#: the arguments that are not command options, and a value of another type for each
NOT_OPTIONS = {"config": ["axes-3", {"tiling": "2,2,2"}], "plan": ["axes-3"], "limits": ["max_atoms=10", 10],
               "progress": ["stderr", 3], "progress_factory": ["bars"], "tiling": [2, (2, 2), 2.5],
               "constraints": ["format,letter", 3], "results": ["logs", 3], "r1": ["1", 1.0],
               "sweep": ["0.1,0.2", 0.1], "export": [3], "out": [3], "main_job": ["yes", 1]}

#: wrong values for an option of each type (a text, a float, a number, a yes)
WRONG = {int: ["3", 2.5, True], float: ["0.1", True], str: [3, 2.5], bool: ["yes", 1, None], Path: [3, 2.5]}


def _option_cases():
    cases = []
    for name, (command, _needed, settings, alias) in JOBS.items():
        fn = getattr(api, name)
        specs = COMMANDS[command].specs() if command else {}
        params = [p for p in inspect.signature(fn).parameters.values() if p.kind is not p.VAR_KEYWORD]
        for arg in [p.name for p in params] + [s for s in settings if s not in {p.name for p in params}]:
            opt = specs.get(alias.get(arg, arg))
            if arg in NOT_OPTIONS:
                values = NOT_OPTIONS[arg]
            elif opt is not None:
                kind = list if get_origin(opt.type) is list else opt.type
                values = [3, "x"] if kind is list else [v for v in WRONG.get(kind, [3])
                                                        if not (v is None and opt.default is None)]
                lo, hi = getattr(opt, "min", None), getattr(opt, "max", None)  # an Arg has no bounds
                if lo is not None:
                    values.append(int(lo) - 1 if opt.type is int else lo - 0.5)
                    values += [-1] if opt.type is int and lo > 0 else []
                if hi is not None:
                    values.append(int(hi) + 1 if opt.type is int else hi + 0.5)
            else:
                continue  # neither an option nor listed: nothing the command line checks
            for v in values:
                cases.append(pytest.param(name, arg, v, id=f"{name}-{arg}-{type(v).__name__}-{v!r}"[:90]))
    return cases


CASES = _option_cases()


def test_the_table_covers_every_public_job_and_the_cases_of_the_issue():
    jobs = {n for n in api.__all__ if inspect.isfunction(getattr(api, n)) and n != "certify_config"}
    assert jobs == set(JOBS)
    ids = {(c.values[0], c.values[1], repr(c.values[2])) for c in CASES}
    assert {("certify", "config", "'axes-3'"), ("explore", "workers", "-1"), ("build_benchmark", "limit", "-1")} <= ids
    assert len(CASES) > 200


@pytest.mark.parametrize(("job", "arg", "value"), CASES)
def test_every_wrong_argument_is_one_input_error_naming_it(job, arg, value, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _, needed, _, _ = JOBS[job]
    kwargs = {**needed, arg: value}
    fn = getattr(api, job)
    positional = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty]
    args = [kwargs.pop(p) for p in positional]
    with pytest.raises(InputError) as e:
        fn(*args, **kwargs)
    assert e.value.field == arg, (str(e.value), arg)
    assert "\n" not in str(e.value) and len(str(e.value)) < 400
    assert list(tmp_path.iterdir()) == []  # before any work: nothing written


def test_an_unknown_keyword_is_named_with_the_nearest():
    with pytest.raises(InputError, match=r"unknown setting 'viewz' \(did you mean views\?\)") as e:
        api.design("no-such-input", viewz=3)
    assert e.value.field == "viewz"
    with pytest.raises(InputError) as e:
        api.certify("no-such-input", workerz=2)
    assert e.value.field == "workerz"


@pytest.mark.parametrize(("argv", "option"), [(["explore", ".", "--workers", "-1"], "--workers"),
                                              (["build-benchmark", "x", "--out", "o", "--limit", "-1"], "--limit"),
                                              (["ladder", "--n-boot", "0", "--r1", "1", "--study-dir", "."], "--n-boot")])
def test_the_command_line_refuses_the_same_bounds(argv, option):
    from viewcert.cli import app

    r = CliRunner().invoke(app, argv)
    assert r.exit_code == 2 and option in r.output and "greater than or equal to" in r.output, r.output
