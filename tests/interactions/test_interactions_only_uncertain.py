"""A complex whose only hydrogen bonds are uncertain still yields items (issue 28 item 3), by the stated rule:
pocket-ligand asks the same question and its answer is ``no`` (the true list is empty; naming an uncertain entry
is neutral, ``attribution.misi``), its ceiling 1; interaction-location asks about the uncertain bonds (the
question names the pair, whose midpoint does not depend on whether it is a bond); residue-ligand leaves a
residue with only uncertain bonds out, so a pocket of that one residue gives no residue question.

Hand-built complex (``tests/data/uncertain/eoh_asp.pdb``): an ethanol hydroxyl O at the origin, its C1 on −z
(so its hydrogen turns on a cone 70.5° from +z), an aspartate whose OD1 (2.383, 1.082, 0.931) and OD2 (2.356,
−1.127, 0.920) lie 2.778 and 2.769 Å from O at 70.4° and 70.6° from +z: on that cone, so one rotamer points the
hydrogen straight at either (H···A ≈ 2.78 − 0.96 = 1.82 Å, 180°). Hydride's placement picks one; the other is
reachable too, so both are uncertain (reason ``rotatable_hydrogen``) and no bond is certain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("hydride", reason="the interactions extra (hydride) is not installed")

from viewcert.benchmark.interaction_export import (  # noqa: E402
    InteractionExportSettings,
    build_interaction_benchmark,
    location_answer,
)
from viewcert.errors import InputError  # noqa: E402
from viewcert.interactions import hbond_truth  # noqa: E402
from viewcert.interactions.ceiling import pocket_ligand_ceiling, uncertainty  # noqa: E402
from viewcert.render import frame_cameras  # noqa: E402

PDB = Path(__file__).parents[1] / "data" / "uncertain" / "eoh_asp.pdb"
BOTH = ["ASP 1 OD1 A, O", "ASP 1 OD2 A, O"]


@pytest.fixture(scope="module")
def truth():
    return hbond_truth(PDB, ligand="EOH", crosscheck=False)


def test_every_bond_is_uncertain_and_the_ceiling_is_one(truth):
    assert len(truth.bonds) == 1 and truth.bonds[0].entry() in BOTH  # hydride's placement chose one
    assert uncertainty(truth, truth.bonds[0], 0.01) == "rotatable_hydrogen"
    cams = frame_cameras(truth.protonated.prepared.structure, "axes-6", style="ball-and-stick", width=320,
                         height=240)
    c = pocket_ligand_ceiling(truth, cams, mode="ideal")
    assert (c["n_true"], c["entries"], c["ceiling"]) == (0, [], 1.0)
    assert [(x["entry"], x["reason"]) for x in c["uncertain"]] == [(e, "rotatable_hydrogen") for e in BOTH]


def test_pocket_ligand_asks_and_the_answer_is_no(tmp_path):
    m = build_interaction_benchmark([(PDB, "EOH")], tmp_path / "pl", InteractionExportSettings.from_options(n_boot=50))
    recs = [json.loads(x) for x in (tmp_path / "pl" / "benchmark.jsonl").read_text().splitlines()]
    assert [r["answer"] for r in recs] == ["no"]
    assert "answer 'no' when there is none" in recs[0]["question"]
    item = m.certificate.to_dict()["items"][0]
    assert (item["positive"], item["n_bonds"], item["uncertain"]) == (False, 0, BOTH)
    assert item["ideal"]["ceiling"] == item["rendered"]["ceiling"] == 1.0
    ground = next(iter(m.certificate.to_dict()["ground_truth"].values()))
    assert [(x["entry"], x["reason"]) for x in ground["uncertain"]] == [(e, "rotatable_hydrogen") for e in BOTH]


def test_interaction_location_asks_about_the_uncertain_bond(tmp_path, truth):
    settings = InteractionExportSettings.from_options(task="interaction-location", n_boot=50)
    m = build_interaction_benchmark([(PDB, "EOH")], tmp_path / "il", settings)
    recs = [json.loads(x) for x in (tmp_path / "il" / "benchmark.jsonl").read_text().splitlines()]
    item = m.certificate.to_dict()["items"][0]
    bond = truth.bonds[0]
    assert len(recs) == 1 and item["entry"] == bond.entry() and item["uncertain_bond"] is True
    s = truth.protonated.prepared.structure
    im = settings.image
    cams = frame_cameras(s, im.protocol, style=im.style, width=im.width, height=im.height)
    assert recs[0]["answer"] == location_answer(s, bond.pair(), cams[0])
    assert item["ideal"]["located"] is True


def test_residue_ligand_has_no_residue_to_ask_about(tmp_path):
    with pytest.raises(InputError, match="every hydrogen bond between ligand and pocket is uncertain"):
        build_interaction_benchmark([(PDB, "EOH")], tmp_path / "rl",
                                    InteractionExportSettings.from_options(task="residue-ligand", n_boot=50))
    assert not (tmp_path / "rl").exists()  # a failed export removes what it created
