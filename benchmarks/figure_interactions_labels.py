"""Regenerate ``docs/interactions_labels.png``: 1of6's front and top views of ``axes-6``, cropped around the
ligand, with a box around every label the hydrogen bonds need — green where that label is legible in that
view, red where not — side by side.

Everything comes from the library's own code paths, as the interaction export (``viewcert build-benchmark
complex:… --task pocket-ligand``, ``benchmark.interaction_export``) takes them: the truth is
``interactions.hbond_truth`` under ``InteractionExportSettings``' defaults (pocket 8 Å, Baker–Hubbard); the cameras are ``render.frame_cameras`` of that protocol (``axes-6``,
1160×803, ball-and-stick); the labels are ``interactions.ceiling.label_set``'s, drawn and measured by
``interactions.ceiling.render_views`` (``render.labels.draw_labels``: legible when the share of the label's
glyph pixels not under a nearer atom and not within 1 px of another label's ink is ≥ 0.8, the glyph rule).
The labels boxed: the atom-name labels of both atoms of every bond and the residue label (``RES SEQ CHAIN``)
of every bonded residue; a box is the label's text box (``LabelLayer.boxes``) grown by 2 px.

Checks (the script exits 1 when one fails): per view, the legibility drawn equals what
``pocket_ligand_ceiling`` reports for that view alone (its entries lost to ``label_hidden`` and its residue
labels; ``observe_views``' atom labels, the ones the ceiling reads); over the six views, the entries it loses
to ``label_hidden`` are those with a needed label legible in none of the six; at ``fibonacci-27`` it prints
how many are lost the same way (the caption's "with 27 views" sentence). The image is written twice in
memory and compared byte for byte before it is saved (``io.images.encode_render_png``, the renderer's own
PNG encoding, written atomically).

Inputs: ``../shared/data/complexes/1of6`` (PoseBusters' copy of the PDB entry: ``protein.pdb.gz`` and
``ligand.sdf``), read in place; when it is absent the script prints why and exits 0.
Usage: ``python benchmarks/figure_interactions_labels.py [--out PATH] [--skip-27]``. Not a ``bench_*``
script: ``make bench`` does not run it.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from viewcert.benchmark.interaction_export import InteractionExportSettings  # noqa: E402
from viewcert.interactions import hbond_truth  # noqa: E402
from viewcert.interactions.ceiling import (  # noqa: E402
    label_set,
    observe_views,
    pocket_ligand_ceiling,
    render_views,
    residue_key,
)
from viewcert.interactions.criteria import criterion_named  # noqa: E402
from viewcert.io.atomic import write_bytes_atomic  # noqa: E402
from viewcert.io.images import encode_render_png  # noqa: E402
from viewcert.render import frame_cameras  # noqa: E402
from viewcert.render.labels import glyph_mask  # noqa: E402

COMPLEX = REPO.parent / "shared" / "data" / "complexes" / "1of6"
OUT = REPO / "docs" / "interactions_labels.png"
VIEWS = ("front", "top")
MARGIN = 40  # px around the ligand's drawn atoms and the boxed labels
PAD = 2  # px between a label's text box and the box drawn around it
LINE = 2  # px: the box's line width
TITLE = 24  # px: the strip above each crop holding the view's name
GAP = 8  # px between the two crops
GREEN, RED, WHITE, BLACK = (0, 150, 0), (220, 0, 0), (255, 255, 255), (0, 0, 0)


def needed(truth) -> tuple[dict, dict]:
    """(label index → what it names, label index → the entries that need it) for the labels the bonds need:
    both atoms' atom-name labels and the residue's label, per bond of the truth."""
    s, lig = truth.protonated.prepared.structure, set(truth.protonated.prepared.ligand_atoms)
    labels, names = label_set(s, truth.protonated.prepared.ligand_atoms)
    by_name = {what: j for j, what in names.items()}
    need: dict[int, set[str]] = {}
    for b in truth.bonds:
        r = b.acceptor.index if b.donor.index in lig else b.donor.index
        for what in (("atom", b.donor.index), ("atom", b.acceptor.index), ("residue", residue_key(s, r))):
            need.setdefault(by_name[what], set()).add(b.entry())
    return names, {j: sorted(e) for j, e in sorted(need.items())}


def crop_window(layer, camera, ligand_xyz: np.ndarray, boxed: list[int]) -> tuple[int, int, int, int]:
    """[u0, v0, u1, v1) px: the ligand's projected atoms and the boxed labels' boxes, grown by MARGIN, within
    the image."""
    h, w = layer.label_id.shape
    uv, _ = camera.project(ligand_xyz)
    uv = np.asarray(uv).reshape(-1, 2)
    u0, v0 = np.floor(uv.min(axis=0)).astype(int)
    u1, v1 = np.ceil(uv.max(axis=0)).astype(int)
    for j in boxed:
        a0, b0, a1, b1 = layer.boxes[j].tolist()
        u0, v0, u1, v1 = min(u0, a0), min(v0, b0), max(u1, a1), max(v1, b1)
    return max(u0 - MARGIN, 0), max(v0 - MARGIN, 0), min(u1 + MARGIN, w), min(v1 + MARGIN, h)


def stamp_text(img: np.ndarray, text: str, u: int, v: int, size: int = 16) -> None:
    """Black ``text`` with its ink's top-left at (u, v), the labels' font (``render.labels.glyph_mask``)."""
    m = glyph_mask(text, size).astype(np.float64)[..., None] / 255.0
    h, w = m.shape[:2]
    patch = img[v:v + h, u:u + w].astype(np.float64)
    img[v:v + h, u:u + w] = np.round(patch * (1 - m) + np.asarray(BLACK, dtype=np.float64) * m).astype(np.uint8)


def panel(layer, window, boxed: list[int], title: str) -> np.ndarray:
    """The crop of the labelled view with its boxes and a title strip above it."""
    u0, v0, u1, v1 = window
    crop = layer.rgb[v0:v1, u0:u1].copy()
    legible = layer.legible()
    for j in boxed:
        colour = np.asarray(GREEN if legible[j] else RED, dtype=np.uint8)
        a0, b0, a1, b1 = (int(x) for x in layer.boxes[j])
        a0, b0, a1, b1 = a0 - u0 - PAD, b0 - v0 - PAD, a1 - u0 + PAD, b1 - v0 + PAD
        hh, ww = crop.shape[:2]
        for x0, y0, x1, y1 in ((a0, b0, a1, b0 + LINE), (a0, b1 - LINE, a1, b1),  # top, bottom
                               (a0, b0, a0 + LINE, b1), (a1 - LINE, b0, a1, b1)):  # left, right
            x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, ww), min(y1, hh)
            if x0 < x1 and y0 < y1:
                crop[y0:y1, x0:x1] = colour
    out = np.full((crop.shape[0] + TITLE, crop.shape[1], 3), 255, dtype=np.uint8)
    out[TITLE:] = crop
    stamp_text(out, title, 6, 4)
    return out


def side_by_side(panels: list[np.ndarray]) -> np.ndarray:
    h = max(p.shape[0] for p in panels)
    w = sum(p.shape[1] for p in panels) + GAP * (len(panels) - 1)
    out = np.full((h, w, 3), 255, dtype=np.uint8)
    u = 0
    for p in panels:
        out[:p.shape[0], u:u + p.shape[1]] = p
        u += p.shape[1] + GAP
    return out


def figure(truth, settings: InteractionExportSettings) -> tuple[np.ndarray, dict, tuple, dict]:
    """(the figure, per view the needed labels' text and legibility plus the six-view ceiling, the six cameras,
    the two views' label layers)."""
    s = truth.protonated.prepared.structure
    lig = np.asarray(truth.protonated.prepared.ligand_atoms)
    cams = frame_cameras(s, settings.resolved, style=settings.style, width=settings.width, height=settings.height)
    names, need = needed(truth)
    layers: dict[str, object] = {}

    def keep(k: int, layer) -> None:
        if cams[k].name in VIEWS:
            layers[cams[k].name] = layer

    rendered = render_views(truth, cams, settings.ceiling, rgb=True, on_view=keep)
    boxed = list(need)
    panels, report = [], {}
    for view in VIEWS:
        layer = layers[view]
        leg = layer.legible()
        title = f"{view}: {int(leg[boxed].sum())} of {len(boxed)} needed labels legible"
        panels.append(panel(layer, crop_window(layer, next(c for c in cams if c.name == view), s.positions[lig],
                                               boxed), boxed, title))
        report[view] = {layer.labels[j].text + ("" if names[j][0] == "residue" else f" [{names[j][1]}]"):
                        {"kind": names[j][0], "legible": bool(leg[j]),
                         "visible_fraction": round(float(layer.visible_fraction[j]), 3), "needed_by": need[j]}
                        for j in boxed}
    report["axes-6"] = pocket_ligand_ceiling(truth, cams, settings.ceiling, "rendered", rendered=rendered)
    return side_by_side(panels), report, cams, layers


def check(truth, settings: InteractionExportSettings, six: dict, cams: tuple, layers: dict,
          skip_27: bool) -> list[str]:
    """Disagreements between the figure's boxes (``layers``) and the ceiling's verdicts (``six``: the ceiling
    over the six ``cams``); empty: none."""
    s = truth.protonated.prepared.structure
    names, need = needed(truth)
    bad = []
    union = np.zeros(len(names), dtype=bool)
    for view in VIEWS:
        one = tuple(c for c in cams if c.name == view)
        leg = layers[view].legible()
        c = pocket_ligand_ceiling(truth, one, settings.ceiling, "rendered")  # renders the view again
        seen = observe_views(truth, one, settings.ceiling, "rendered", atoms=[])
        for j in need:
            kind, what = names[j]
            said = bool(seen["atom_label"][what]) if kind == "atom" else bool(seen["residue_label"][what])
            if said != bool(leg[j]):
                bad.append(f"{view}: label {layers[view].labels[j].text} ({what}) drawn legible={bool(leg[j])}, "
                           f"observe_views says {said}")
        for e in c["entries"]:
            boxes_ok = all(leg[j] for j in need if e["entry"] in need[j])
            if (e["loss"] == "label_hidden") == boxes_ok:
                bad.append(f"{view}: entry {e['entry']} loss {e['loss']} but its boxes legible={boxes_ok}")
        for key, ok in c["residue_label_legible"].items():
            j = next(i for i, w in names.items() if w == ("residue", key))
            if bool(ok) != bool(leg[j]):
                bad.append(f"{view}: residue label {key} ceiling {ok}, drawn {bool(leg[j])}")
        print(f"{view}: one-view ceiling {c['ceiling']}, label_hidden {c['losses']['label_hidden']} of {c['n_true']}")
    # the needed labels legible in some view: each of the six rendered alone again, read by observe_views
    for cam in cams:
        seen = observe_views(truth, (cam,), settings.ceiling, "rendered", atoms=[])
        for j, (kind, what) in names.items():
            union[j] |= bool(seen["atom_label"][what]) if kind == "atom" else bool(seen["residue_label"][what])
    hidden6 = sorted(e["entry"] for e in six["entries"] if e["loss"] == "label_hidden")
    expect6 = sorted({e for j, es in need.items() if not union[j] for e in es})
    if hidden6 != expect6:
        bad.append(f"axes-6: ceiling loses {hidden6} to label_hidden, labels legible in no view need {expect6}")
    never = [names[j] for j in need if not union[j]]
    print(f"axes-6: ceiling {six['ceiling']}, {six['n_determined']} of {six['n_true']} determined; lost to "
          f"label_hidden: {hidden6}; needed labels legible in no view: "
          f"{[s.site_labels[w] if k == 'atom' else w for k, w in never]}")
    if not skip_27:
        cams27 = frame_cameras(s, "fibonacci-27", style=settings.style, width=settings.width,
                               height=settings.height)
        c27 = pocket_ligand_ceiling(truth, cams27, settings.ceiling, "rendered")
        hidden27 = sorted(e["entry"] for e in c27["entries"] if e["loss"] == "label_hidden")
        print(f"fibonacci-27: ceiling {c27['ceiling']}, {c27['n_determined']} of {c27['n_true']} determined; "
              f"lost to label_hidden: {hidden27}")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT, help=f"the PNG to write (default {OUT.relative_to(REPO)})")
    ap.add_argument("--skip-27", action="store_true", help="do not compute the fibonacci-27 ceiling")
    args = ap.parse_args()
    if not (COMPLEX / "protein.pdb.gz").is_file() or not (COMPLEX / "ligand.sdf").is_file():
        print(f"skipped: 1of6 not found at {COMPLEX} (protein.pdb.gz, ligand.sdf)")
        return 0
    settings = InteractionExportSettings()
    truth = hbond_truth(COMPLEX, pocket=settings.pocket, criterion=criterion_named(settings.criterion),
                        crosscheck=False)
    img, report, cams, layers = figure(truth, settings)
    first, second = encode_render_png(img), encode_render_png(figure(truth, settings)[0])
    if first != second:
        print("the figure is not deterministic: two renders differ", file=sys.stderr)
        return 1
    for view in VIEWS:
        print(f"{view}:")
        for text, r in report[view].items():
            print(f"  {'legible  ' if r['legible'] else 'ILLEGIBLE'} {text:22s} {r['kind']:8s} "
                  f"visible {r['visible_fraction']:.3f}  for {'; '.join(r['needed_by'])}")
    bad = check(truth, settings, report["axes-6"], cams, layers, args.skip_27)
    for line in bad:
        print("MISMATCH", line, file=sys.stderr)
    write_bytes_atomic(args.out, first)
    print(f"wrote {args.out} {img.shape[1]}x{img.shape[0]} sha256 {hashlib.sha256(first).hexdigest()}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
