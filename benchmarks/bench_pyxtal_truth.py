"""The truth label of an input cell is its own symmetry at the stated tolerances: a seeded pyxtal set over
space groups 1–230, checked against spglib called directly (issue 23).

Set (generated at run time, seeded, nothing stored): for every space group 1–230, ``--per-group`` random
crystals from pyxtal (``from_random``, 3D, two species: the general position's multiplicity of Si and the
smallest Wyckoff multiplicity of O; ``random_state`` = 23,000 + 10·group + k, retried with the next seeds when
pyxtal cannot place the atoms), each as generated ("exact") and perturbed near the tolerance boundaries
("perturbed": lattice strained by N(0, 0.002) per matrix element, atoms moved by N(0, 0.003) Å per
component, numpy seed 23). The standardisation is on the per-item path of ``viewcert certify``
(``viewcert.certify.evaluate.prepare``), the labels are the ones certify scores with.

Per item and tolerance setting (τ = 0.01 Å and an angle tolerance; settings: the study's 5°, spglib's own
rule −1, and "mismatched": labels at −1 with the standardisation at 5°, which is what ``--angle-tolerance -1``
did before it reached the standardisation):

- viewcert's truth label: the rendered cell's label, or the input's when the item is flagged
  (``symmetry_raised``) — ``evaluate``'s reference with ``truth="rendered"``;
- the independent answer: ``spglib.get_symmetry_dataset`` on the input cell at the same tolerances;
- a raise seen independently: spglib called directly on viewcert's rendered cell gives another space group
  than on the input; every such item must be flagged;
- moyopy on the input (certify's cross-check, ``cross_check.input``) disagreeing with spglib: counted.

Writes ``benchmarks/results/pyxtal_truth.json`` (counts, every disagreement by item, tolerances, seeds,
library versions, CPU seconds). Usage: ``python benchmarks/bench_pyxtal_truth.py [--per-group N]
[--groups 1-230]``; exit 1 when a truth label disagrees with spglib or a raise is unflagged.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import warnings
from importlib.metadata import version
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results" / "pyxtal_truth.json"
TAU = 0.01
SETTINGS = {"study_5deg": (5.0, 5.0), "spglib_default": (-1.0, -1.0), "mismatched": (-1.0, 5.0)}


def generate(group: int, k: int):
    """One pyxtal crystal of ``group`` as a viewcert Structure, and the seed that produced it."""
    from pyxtal import pyxtal
    from pyxtal.symmetry import Group

    from viewcert.structures import Structure

    mult = sorted({w.multiplicity for w in Group(group).Wyckoff_positions})
    for attempt in range(8):
        seed = 23_000 + 10 * group + k + 1000 * attempt
        c = pyxtal()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                c.from_random(3, group, ["Si", "O"], [mult[-1], mult[0]], random_state=seed)
        except Exception:  # noqa: BLE001 - pyxtal could not place the atoms: next seed
            continue
        if c.valid:
            a = c.to_ase()
            return Structure(a.positions, a.numbers, np.array(a.cell[:])), seed
    raise RuntimeError(f"pyxtal could not generate group {group}")


def perturbed(s, rng: np.random.Generator):
    from viewcert.structures import Structure

    lat = s.lattice @ (np.eye(3) + rng.normal(0, 0.002, (3, 3)))
    frac = s.frac_coords + rng.normal(0, 0.003, s.frac_coords.shape) / np.linalg.norm(lat, axis=1)
    return Structure(frac @ lat, s.numbers, lat)


def check(item, setting: str) -> dict:
    """viewcert's truth label and the independent spglib answers for one item under one setting."""
    import spglib

    from viewcert.certify import CertifyConfig
    from viewcert.certify.evaluate import prepare, symmetry_raised

    angle, std_angle = SETTINGS[setting]
    cfg = CertifyConfig(delta=0.01, tau=TAU, angle_tolerance=angle, std_angle_tolerance=std_angle,
                        truth="rendered", score="space_group")
    prep = prepare(item, cfg)
    if prep.cell is None:
        return {"error": prep.error}
    rendered, inp = prep.rendered_check(cfg), prep.input_check(cfg)
    raised = symmetry_raised(inp, rendered)
    truth = (raised.input if raised else rendered.label_dict())["space_group"]
    s, c = item.payload, prep.cell
    direct = int(spglib.get_symmetry_dataset((s.lattice, s.frac_coords, s.numbers), symprec=TAU,
                                             angle_tolerance=angle).number)
    fresh = int(spglib.get_symmetry_dataset((c.lattice, c.frac_coords, c.numbers), symprec=TAU,
                                            angle_tolerance=angle).number)
    return {"truth": truth, "spglib_input": direct, "spglib_rendered_fresh": fresh,
            "rendered": rendered.label.space_group, "flagged": raised is not None,
            "moyopy_input": None if inp.moyo is None else inp.moyo.space_group,
            "moyopy_rendered": None if rendered.moyo is None else rendered.moyo.space_group}


def run(groups, per_group: int) -> dict:
    from viewcert.certify.inputs import Item

    rng = np.random.default_rng(23)
    counts = {k: {"items": 0, "truth_equals_spglib": 0, "flagged": 0, "raised_independently": 0,
                  "raised_unflagged": 0, "moyopy_input_disagrees": 0, "errors": 0} for k in SETTINGS}
    disagree: dict[str, list] = {k: [] for k in SETTINGS}
    flagged: dict[str, list] = {k: [] for k in SETTINGS}
    moyo: dict[str, list] = {k: [] for k in SETTINGS}
    seeds, exact_not_group = {}, []
    for g in groups:
        for k in range(per_group):
            s, seed = generate(g, k)
            seeds[f"{g}-{k}"] = seed
            for tag, cell in (("exact", s), ("perturbed", perturbed(s, rng))):
                item = Item(f"sg{g:03d}-{k}-{tag}", "structure", cell, "pyxtal")
                for name in SETTINGS:
                    r = check(item, name)
                    c = counts[name]
                    c["items"] += 1
                    if "error" in r:
                        c["errors"] += 1
                        disagree[name].append({"id": item.id, "error": r["error"][:200]})
                        continue
                    c["truth_equals_spglib"] += r["truth"] == r["spglib_input"]
                    c["flagged"] += r["flagged"]
                    independent = r["spglib_rendered_fresh"] != r["spglib_input"]
                    c["raised_independently"] += independent
                    c["raised_unflagged"] += independent and not r["flagged"]
                    c["moyopy_input_disagrees"] += r["moyopy_input"] != r["spglib_input"]
                    if r["truth"] != r["spglib_input"] or (independent and not r["flagged"]):
                        disagree[name].append({"id": item.id, **r})
                    if r["flagged"]:
                        flagged[name].append({"id": item.id, **r})
                    if r["moyopy_input"] != r["spglib_input"]:
                        moyo[name].append({"id": item.id, **r})
                    if tag == "exact" and name == "study_5deg" and r["spglib_input"] != g:
                        exact_not_group.append({"id": item.id, "spglib_input": r["spglib_input"]})
    return {"counts": counts, "disagreements": disagree, "flagged": flagged, "moyopy_input_disagreements": moyo,
            "exact_cells_not_of_their_group_at_5deg": exact_not_group, "pyxtal_seeds": seeds}


def _groups(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-group", type=int, default=1, help="crystals per space group (default 1)")
    ap.add_argument("--groups", default="1-230", help="space-group range, e.g. 1-230 or 3-15")
    args = ap.parse_args(argv)
    from viewcert import __version__
    from viewcert.symmetry.labels import library_versions

    t0 = time.process_time()
    res = run(_groups(args.groups), args.per_group)
    cpu = time.process_time() - t0
    out = {"what": __doc__.splitlines()[0], "groups": args.groups, "per_group": args.per_group,
           "variants": ["exact", "perturbed (lattice N(0, 0.002) relative, atoms N(0, 0.003) A)"],
           "tolerances": {"symprec_A": TAU, "settings": {k: {"angle_tolerance_deg": a, "std_angle_tolerance_deg": b}
                                                         for k, (a, b) in SETTINGS.items()},
                          "negative_angle": "spglib's own rule", "moyopy": "at symprec, its own angle handling"},
           **res, "cpu_s": round(cpu, 1),
           "libraries": {"viewcert": __version__, **library_versions(), "pyxtal": version("pyxtal"),
                         "numpy": np.__version__, "python": platform.python_version()}}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    for name, c in res["counts"].items():
        print(f"{name}: {c}")
    print(f"wrote {OUT} ({cpu:.0f} s CPU)")
    bad = any(c["truth_equals_spglib"] + c["errors"] != c["items"] or c["raised_unflagged"]
              for c in res["counts"].values())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
