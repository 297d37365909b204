"""Interaction benchmark export (``viewcert.benchmark.interaction_export``) on two real complexes (skipped when
../shared/data/complexes is absent): files, answers equal to the ground truth, byte-identical reruns, and the
tasks not built yet refused in one line."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("hydride", reason="the interactions extra (hydride) is not installed")

from tests.support.complex_data import COMPLEXES as DATA
from tests.support.complex_data import needs_complexes as needs_data
from viewcert.benchmark.interaction_export import (  # noqa: E402
    InteractionExportSettings,
    _best_mean_credit,
    build_interaction_benchmark,
    location_answer,
    question_text,
)
from viewcert.errors import InputError  # noqa: E402
from viewcert.interactions import hbond_truth  # noqa: E402


def test_unbuilt_tasks_and_bad_settings_are_one_line():
    assert InteractionExportSettings.from_options(task="interaction-location").task == "interaction-location"
    with pytest.raises(InputError, match="docking draws one orthographic camera"):
        InteractionExportSettings.from_options(task="docking", protocol="views.toml")
    with pytest.raises(InputError, match="task must be one of"):
        InteractionExportSettings.from_options(task="hbond")
    with pytest.raises(InputError, match="per_complex"):
        InteractionExportSettings.from_options(task="residue-ligand", per_complex=0)
    q = question_text("residue-ligand", ["front", "top"], 8.0, "ARG 285 A")
    assert "residue ARG 285 A" in q and "'no'" in q and "within 8 Å" in q


@pytest.fixture(scope="module")
def truth() -> dict[str, list[str]]:
    """The two complexes' bond entries from ``hbond_truth`` (about 2 s): computed once for the four tasks."""
    return {"1pwc": hbond_truth(DATA / "1pwc", ligand="PNM", crosscheck=False).entries(),
            "1s3v": hbond_truth(DATA / "1s3v", crosscheck=False).entries()}


@needs_data
@pytest.mark.parametrize("task", ["pocket-ligand", "residue-ligand", "interaction-location", "docking"])
def test_export_is_byte_identical_and_answers_the_truth(tmp_path, task, truth):
    cx = [(DATA / "1pwc", "PNM"), (DATA / "1s3v", None)]
    settings = InteractionExportSettings.from_options(task=task, n_boot=200)
    a = build_interaction_benchmark(cx, tmp_path / "a", settings)
    b = build_interaction_benchmark(cx, tmp_path / "b", settings)
    assert a.manifest["files"] == b.manifest["files"] and a.certificate.digest_value == b.certificate.digest_value
    names = set(a.manifest["files"])
    assert {"benchmark.jsonl", "benchmark.tsv", "certificate.json", "ids.csv"} <= names
    assert sum(n.endswith(".png") for n in names) == 12  # six views per complex (docking: 2 items x 3 images)
    recs = [json.loads(x) for x in (tmp_path / "a" / "benchmark.jsonl").read_text().splitlines()]
    lists = task in ("pocket-ligand", "residue-ligand")  # list answers have their own format, not "command"
    assert {r["answer_format"] for r in recs} == {"list" if lists else "command"}
    if task == "pocket-ligand":
        # 1pwc's two criterion-margin bonds are uncertain: out of the answer, listed in the item
        certain = [e for e in truth["1pwc"] if e not in ("ARG 285 NE A, O12", "TYR 159 OH A, N4")]
        assert [r["answer"] for r in recs] == ["; ".join(certain), "; ".join(truth["1s3v"])]
        items = json.loads((tmp_path / "a" / "certificate.json").read_text())["items"]
        # regression pin for the two THR 299 pairs (rotamer rule, tested by hand in test_interactions_rotamer.py)
        assert items[0]["uncertain"] == ["ARG 285 NE A, O12", "THR 299 OG1 A, O12", "THR 299 OG1 A, O13",
                                         "TYR 159 OH A, N4"]
    elif task == "docking":
        assert all(r["answer"].startswith("roll y ") and ", move x " in r["answer"] for r in recs)
        assert all(len(r["images"]) == 3 for r in recs)
    elif task == "interaction-location":
        assert all(r["answer"].startswith("move x ") and ", move y " in r["answer"] for r in recs)
        items = json.loads((tmp_path / "a" / "certificate.json").read_text())["items"]
        assert all(x["ideal"]["ceiling"] == 1.0 or x["ideal"]["loss"] == "rounding" for x in items)
        assert {x["entry"] for x in items} <= set(truth["1pwc"]) | set(truth["1s3v"])
    else:
        for r in recs:
            ents = truth[r["source_id"].split(":")[0]]
            if r["answer"] != "no":
                assert set(r["answer"][len("yes: "):].split("; ")) <= set(ents)
        assert {r["category"] for r in recs} == {"positive", "negative"}
    text = (tmp_path / "a" / "certificate.json").read_text()
    assert "shared/data" not in text and str(tmp_path) not in text  # location-free: files by name and hash
    cert = json.loads(text)
    assert cert["settings"]["ceiling"]["labels"]["font"] == "DejaVuSans.ttf"
    if task != "docking":
        assert cert["ground_truth"]["1pwc:PNM"]["criterion"]["max_h_acceptor"] == 2.5
    s = cert["summary"]["all"]
    assert 0 <= s["rendered"]["lo"] <= s["rendered"]["mean"] <= s["rendered"]["hi"] <= 1


def test_location_answer_and_consistent_set_by_hand():
    import numpy as np

    from viewcert.cameras.camera import OrthographicCamera
    from viewcert.structures import Structure

    # identity rotation: screen x = world x, y = world y; the midpoint of (2, 4, 0) and (4, 6, 1) is (3, 5, .5)
    cam = OrthographicCamera(rotation=np.eye(3), center=np.zeros(3), scale=10.0, width=100, height=80, name="front")
    s = Structure(np.array([[2.0, 4.0, 0.0], [4.0, 6.0, 1.0]]), np.array([7, 8]), None)
    assert location_answer(s, (0, 1), cam) == "move x -3, move y -5"
    # two consistent answers one Å apart on x: credit 1 − 1/4 on that axis, mean over the two axes 0.875;
    # either answer's mean over the set: (1 + 0.875) / 2
    assert _best_mean_credit(["move x 1, move y 2", "move x 2, move y 2"]) == pytest.approx(0.9375)
    assert _best_mean_credit(["move x 1, move y 2"]) == 1.0


def test_docking_answer_restores_the_native_pose():
    # from the definition: the displaced ligand, rolled by −θ about its own (moved) centroid and moved by
    # −d, is the native ligand again
    import numpy as np

    from viewcert.benchmark.docking_export import displaced, restoring
    from viewcert.cameras.camera import OrthographicCamera
    from viewcert.tasks.transforms import rigid_motion

    rot = np.array([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]])  # a proper rotation: camera looks along world +x
    cam = OrthographicCamera(rotation=rot, center=np.zeros(3), scale=10.0, width=200, height=100, name="front")
    lig = np.array([[0.0, 0, 0], [1.5, 0.3, 0], [2.0, 1.4, 0.7], [-0.4, 2.0, 1.1]])
    moved = displaced(lig, 45, 9, cam)
    m, t = rigid_motion(restoring(45, 9), cam.rotation, moved.mean(axis=0))
    assert np.allclose(moved @ m.T + t, lig, atol=1e-9)
    assert restoring(45, 9).format() == "roll y -45, move x -9"


def test_docking_symmetric_ligand_has_two_consistent_answers(tmp_path):
    # a ligand of two N atoms at x = ±1 (screen x of the front view) projects the same after roll y θ and
    # roll y −θ (x' = ±cos θ, y' = 0): both answers are consistent; the best answer's mean docking credit over
    # the pair is (1 + (max(0, 1 − |2θ|/90) + 1) / 2) / 2 with the move's sign agreeing (rotation credit
    # 1 − |Δθ|/90, move on its sign: 1)
    import numpy as np

    from viewcert.benchmark.docking_export import docking_item
    from viewcert.structures import Structure

    ring = [[10.0 * np.cos(a), 10.0 * np.sin(a), 6.0] for a in np.linspace(0, 2 * np.pi, 9)[:-1]]
    s = Structure(np.array([[-1.0, 0, 0], [1.0, 0, 0], *ring]), np.array([7, 7] + [6] * 8), None)
    settings = InteractionExportSettings.from_options(task="docking", protocol="axes-6")
    images, answer, d0, ce, _ = docking_item(s, [0, 1], settings, np.random.default_rng(3), tmp_path, "q0000")
    theta = -int(answer.split(",")[0].split()[-1])
    assert ce["ideal"].n_consistent == 2, ce  # the typed ceiling (formats.item_sections.ItemCeiling)
    rot_other = max(0.0, 1 - abs(2 * theta) / 90)
    assert ce["ideal"].ceiling == pytest.approx((1 + (rot_other + 1) / 2) / 2)
    assert len(images) == 3 and all((tmp_path / p).is_file() for p in images)


@needs_data
def test_protocol_file_is_recorded_by_name_and_hash(tmp_path):
    import hashlib

    from typer.testing import CliRunner

    from viewcert.cli import app

    toml = CliRunner().invoke(app, ["protocol", "show", "axes-6", "--format", "toml"]).output
    (tmp_path / "here").mkdir()
    f = tmp_path / "here" / "six.toml"
    f.write_text(toml)
    s = InteractionExportSettings.from_options(task="pocket-ligand", protocol=str(f))
    d = s.to_dict()
    assert d["protocol"] == "six.toml" and d["protocol_sha256"] == hashlib.sha256(f.read_bytes()).hexdigest()
    assert str(tmp_path) not in json.dumps(d)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_docking_draws_without_replacement(tmp_path, seed):
    # the synthetic complex of the symmetric-ligand test: every one of the 24 grid displacements clears the
    # ring (it lies 10 Å from the ligand's axis, 6 Å above it), so 24 distinct items are drawn, then none
    import numpy as np

    from viewcert.benchmark.docking_export import docking_item, grid
    from viewcert.structures import Structure

    ring = [[10.0 * np.cos(a), 10.0 * np.sin(a), 6.0] for a in np.linspace(0, 2 * np.pi, 9)[:-1]]
    s = Structure(np.array([[-1.0, 0, 0], [1.0, 0, 0], *ring]), np.array([7, 7] + [6] * 8), None)
    settings = InteractionExportSettings.from_options(task="docking", protocol="axes-6", width=160, height=120)
    rng, used, answers, pngs = np.random.default_rng(seed), set(), [], set()
    while (made := docking_item(s, [0, 1], settings, rng, tmp_path, f"q{len(answers):04d}", used)) is not None:
        answers.append(made[1])
        pngs.add((tmp_path / made[0][2]).read_bytes())
        assert len(answers) <= len(grid(4))
    assert len(answers) == len(set(answers)) == len(grid(4)) == 24
    # the two-N ligand draws the same after roll y θ and roll y −θ (the symmetric-ligand test): 12 distinct
    # displaced views for 24 distinct items (image and answer), never the same item twice
    assert len(pngs) == 12
