"""Every interaction task ships every rung (issue 57, item 3): a ``pocket-ligand``, ``residue-ligand``,
``interaction-location`` or ``docking`` export of a real complex (1s3v, ../shared/data/complexes; skipped when
absent) ships the image arm, the geometry-as-text arm R3, the no-image and the choices-only arms, and its
documented Inspect dry run followed by ``viewcert ladder`` scores every rung and gives a perception share or a
stated reason (before: ``share: not computed: no R3``). A missing extra is one line naming the install command.

Expected values from the definitions, not from the exporter: the R3 text's coordinates are the first view's
screen frame (x right, y up, origin at the view's centre), so a location answer is minus the rounded midpoint of
the bond's two atoms as the text gives them; a docking answer ``roll y −θ, move x −d``, applied by hand (a
rotation about the screen y axis through the displaced ligand's centroid, right-hand rule, then a move along x),
takes the text's displaced ligand onto its native one; every pocket-ligand entry's donor and acceptor stand
within 3.5 Å (Baker–Hubbard: H···A ≤ 2.5 Å with D–H ≈ 1 Å) in the text."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.support.complex_data import COMPLEXES, needs_complexes
from tests.support.harness_roundtrip import dry_run_commands, offline_env

pytest.importorskip("hydride", reason="the interactions extra (hydride) is not installed")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect_ai.*")

TASKS = ("pocket-ligand", "residue-ligand", "interaction-location", "docking")
ARMS = {"image": "benchmark.jsonl", "r3": "benchmark_r3.jsonl", "no-image": "benchmark_no_image.jsonl",
        "choices-only": "benchmark_choices_only.jsonl"}
MODEL = "viewcert-replay/dry_run_answers.jsonl"


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> dict[str, Path]:
    """1s3v exported for each interaction task (one complex: about 3 s each)."""
    from viewcert.benchmark.interaction_export import InteractionExportSettings, build_interaction_benchmark

    if not COMPLEXES.is_dir():
        pytest.skip(f"complexes not found at {COMPLEXES}")
    root = tmp_path_factory.mktemp("interaction-arms")
    out = {}
    for task in TASKS:
        build_interaction_benchmark([(COMPLEXES / "1s3v", None)], root / task,
                                    InteractionExportSettings.from_options(task=task, n_boot=200))
        out[task] = root / task
    return out


def _dry_run_in_process(folder: Path) -> None:
    """HARNESSES.md's Inspect dry run (its task file, model and log folder, read from the documented command) run
    by Inspect's own ``eval`` in this process: every arm, one log each."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    cmd = shlex.split(dry_run_commands(folder, "Inspect AI")[0])
    assert cmd[:3] == ["inspect", "eval", "inspect_task.py"]
    model, log_dir = cmd[cmd.index("--model") + 1], cmd[cmd.index("--log-dir") + 1]
    here = os.getcwd()
    os.chdir(folder)
    try:  # not memoized: Inspect keeps one model per name in a process, and each export has its own answers
        logs = inspect_eval("inspect_task.py", model=get_model(model, memoize=False), log_dir=log_dir,
                            display="none")
    finally:
        os.chdir(here)
    assert len(logs) == 4 and all(log.status == "success" for log in logs), [str(log.error)[:600] for log in logs]


@needs_complexes
@pytest.mark.parametrize("task", TASKS)
def test_every_rung_is_shipped_and_the_dry_run_gives_a_share_or_a_reason(exports, task, tmp_path):
    import shutil

    from viewcert.attribution.pipeline import run_ladder
    from viewcert.stats import BootstrapSettings

    folder = tmp_path / task
    shutil.copytree(exports[task], folder)
    arms = {a: _jsonl(folder / f) for a, f in ARMS.items()}
    image = arms["image"]
    for a, recs in arms.items():  # the same items and answers in every arm, no image in a text arm
        assert [(r["id"], r["answer"]) for r in recs] == [(r["id"], r["answer"]) for r in image], a
        if a != "image":
            assert all(r["images"] == [] and r["arm"] == a for r in recs), a
    assert all("Ligand atoms" in r["question"] or "Native ligand" in r["question"] for r in arms["r3"])
    assert all("image" not in r["question"].split("If an image")[0] for r in arms["choices-only"])
    _dry_run_in_process(folder)
    lad, _, _ = run_ladder(export=folder, bootstrap=BootstrapSettings(n_boot=200))
    rungs = {r["rung"]: (int(r["correct"]), int(r["n"]), bool(r["scored"])) for _, r in lad.arms.iterrows()}
    # the replay answers the first question's answer everywhere: each rung counts the items with that answer
    right = sum(r["answer"] == image[0]["answer"] for r in image)
    assert rungs == {r: (right, len(image), True) for r in ("R4", "R3", "no-image", "choices-only")}
    (d,) = [r for _, r in lad.decomposition.iterrows()]
    assert d["R3"] == right  # R3 is measured: the share is a number or says why it is not
    if d["status"] == "ok":
        assert d["share"] == pytest.approx(0.0)  # R3 = R4 item by item
    else:
        assert d["suppression_reason"] and "no R3" not in str(d["status"]) + str(d["suppression_reason"])


@needs_complexes
def test_pocket_ligand_documented_dry_run_as_a_user_runs_it(exports, tmp_path):
    """The issue's case, as printed in HARNESSES.md, as subprocesses: the share line states a reason per rung
    (R1 − R4 ≤ 0 here: the replay answers the one question right), not "no R3"."""
    import shutil

    folder = tmp_path / "pl"
    shutil.copytree(exports["pocket-ligand"], folder)
    out = ""
    for cmd in dry_run_commands(folder, "Inspect AI"):
        r = subprocess.run(shlex.split(cmd), cwd=folder, env=offline_env(), capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, f"{cmd}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
        out += r.stdout
    assert "not computed: no R3" not in out
    row = next(line for line in out.splitlines() if line.startswith(f"│ {MODEL}") and "R1 − R4" in line)
    assert re.search(r"│ 1\s+│ 1\s+│ suppressed: R1 − R4 = -?[0-9.]+ <= 0", row), row


def _atoms(text: str, block: str) -> dict[str, np.ndarray]:
    """{name: xyz} of one block of an R3 text: ligand lines ``NAME EL x y z``, pocket lines ``RES SEQ ATOM CHAIN EL
    x y z`` (named ``RES SEQ ATOM CHAIN``)."""
    part = text.split(block, 1)[1].split("\n", 1)[1]
    out = {}
    for line in part.splitlines():
        if not line.startswith("  "):
            break
        *name, _, x, y, z = line.split()
        out[" ".join(name)] = np.array([float(x), float(y), float(z)])
    return out


@needs_complexes
def test_r3_text_gives_the_location_answer(exports):
    recs = _jsonl(exports["interaction-location"] / ARMS["r3"])
    assert recs
    for r in recs:
        entry = re.search(r"hydrogen bond '([^']+)'", r["question"]).group(1)
        res, atom = entry.split(", ")
        lig, pocket = _atoms(r["question"], "Ligand atoms"), _atoms(r["question"], "Pocket atoms")
        mid = (lig[atom] + pocket[res]) / 2
        assert r["answer"] == f"move x {int(np.round(-mid[0]))}, move y {int(np.round(-mid[1]))}"


@needs_complexes
def test_r3_text_places_every_pocket_ligand_bond_within_reach(exports):
    (r,) = _jsonl(exports["pocket-ligand"] / ARMS["r3"])
    lig, pocket = _atoms(r["question"], "Ligand atoms"), _atoms(r["question"], "Pocket atoms")
    entries = r["answer"].split("; ")
    assert entries and entries != ["no"]
    for e in entries:
        res, atom = e.split(", ")
        assert np.linalg.norm(lig[atom] - pocket[res]) <= 3.5, e


@needs_complexes
def test_r3_text_gives_the_docking_answer(exports):
    def block(q: str, name: str) -> np.ndarray:
        """The ``ELEMENT x y z`` lines of one block of a docking R3 text, as (n, 3)."""
        part = q.split(name, 1)[1].split("\n")[1:]
        rows = []
        for line in part:
            if not line.startswith("  "):
                break
            rows.append([float(v) for v in line.split()[1:]])
        return np.array(rows)

    recs = _jsonl(exports["docking"] / ARMS["r3"])
    assert recs
    for r in recs:
        native, moved = block(r["question"], "Native ligand"), block(r["question"], "Displaced ligand")
        theta, d = (float(x) for x in re.fullmatch(r"roll y (-?\d+), move x (-?\d+)", r["answer"]).groups())
        c, s = np.cos(np.radians(theta)), np.sin(np.radians(theta))
        rot = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])  # about screen y, right-hand rule
        centre = moved.mean(axis=0)
        back = (moved - centre) @ rot.T + centre + np.array([d, 0, 0])
        assert native.shape == moved.shape and np.abs(back - native).max() < 0.01, r["id"]


def test_a_missing_extra_is_one_line_naming_the_install_command():
    from viewcert.api.report import one_line

    line = one_line(ModuleNotFoundError("No module named 'hydride'", name="hydride"))
    assert line == ("No module named 'hydride': it comes with the interactions extra: "
                    "pip install 'viewcert[interactions]'")
    assert "viewcert[molecules]" in one_line(ModuleNotFoundError("No module named 'rdkit'", name="rdkit.Chem"))
    # a module no extra installs keeps its plain message
    assert one_line(ModuleNotFoundError("No module named 'zzz'", name="zzz")) == "ModuleNotFoundError: No module named 'zzz'"


def test_every_extra_module_is_in_its_extra():
    """The module → extra table (``viewcert.errors.EXTRAS``) against pyproject.toml's optional dependencies."""
    import tomllib

    from viewcert.errors import EXTRAS

    extras = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    for module, (extra, dist) in EXTRAS.items():
        names = {re.split(r"[<>=\[; ]", r, maxsplit=1)[0].lower() for r in extras[extra]}
        assert dist.lower() in names, (module, extra, dist)


@needs_complexes
def test_build_benchmark_without_the_extra_says_what_to_install(tmp_path):
    """``build-benchmark complex:… --task pocket-ligand`` with hydride unimportable (a finder that refuses it):
    one line naming the install command, exit 2, no traceback."""
    script = ("import sys, importlib.abc\n"
              "class Refuse(importlib.abc.MetaPathFinder):\n"
              "    def find_spec(self, name, path=None, target=None):\n"
              "        if name.split('.')[0] == 'hydride':\n"
              "            raise ModuleNotFoundError(f\"No module named {name!r}\", name=name)\n"
              "sys.meta_path.insert(0, Refuse())\n"
              "from viewcert.cli import app\n"
              "sys.argv = ['viewcert'] + sys.argv[1:]\n"
              "app()\n")
    r = subprocess.run([sys.executable, "-c", script, "build-benchmark", f"complex:{COMPLEXES / '1s3v'}",
                        "--task", "pocket-ligand", "--out", str(tmp_path / "out")], capture_output=True, text=True,
                       timeout=600, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert r.returncode == 2, r.stderr[-2000:]
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert lines == ["viewcert: error: No module named 'hydride': it comes with the interactions extra: "
                     "pip install 'viewcert[interactions]'"], r.stderr[-2000:]


def test_the_ladder_restates_the_interaction_command_credit():
    """``attribution.task_scores.INTERACTION_COMMAND_CREDIT`` restates the exporters' normalisers (sibling units)."""
    from viewcert.attribution.task_scores import INTERACTION_COMMAND_CREDIT
    from viewcert.benchmark.docking_export import DOCKING_NORMALISERS
    from viewcert.benchmark.interaction_export import LOCATION_NORMALISER

    assert INTERACTION_COMMAND_CREDIT["docking"] == (DOCKING_NORMALISERS, True)
    assert INTERACTION_COMMAND_CREDIT["interaction-location"] == ({"translate": LOCATION_NORMALISER, "rotate": 90.0},
                                                                  False)
