"""Camera recovery on real tools' pictures (issue 54's acceptance): the corpus, the residuals, the speed.

The corpus: molecules (PDB Chemical Component Dictionary entries of 8–80 atoms, and CH4, benzene and SF6 for
their symmetry) and crystals (e3 eval structures, conventional cell, drawn 1×1×1 or 2×2×2 up to 160 atoms), each
drawn by five real renderers through ``tests/support/foreign_render``: PyMOL orthographic and perspective
(ray-traced ``cmd.png``), matplotlib (MCS-Set's path: ``ax.scatter`` in a 3D axes filling the figure, default
perspective, per-axis autoscale, 8×8 in at 64 dpi) and OVITO (orthographic and perspective, alternating) and ASE's
PNG writer (orthographic), at a random orientation the recovery is not told. An image counts when at least 4 atoms
have ≥ 30 visible pixels (the tool's own flat twin render).

Per image: the detections (``--detector truth``: the tool's own centres of the atoms with ≥ 30 visible pixels,
plus 0.3 px Gaussian noise, their drawn radii in px — a stand-in for the pixel reader; ``--detector pixels``: the
classical detector of issue 53 on the shaded image), ``viewcert.recover.recover_camera`` with no hint but the
tool's name for matplotlib, and against the tool's own per-atom centres the set-to-set residual of the best pose
(each drawn atom to the nearest projected atom of its element; RMS px). Outcomes: recovered within 1 px RMS;
recovered off by more than 3 px (silently wrong); not recovered (with the reason). Speed: recovery and detection
CPU seconds per image in the same run, and their ratio.

Bad input (one line each, never a camera): a swapped structure file (the picture of one structure certified
against another's), an empty image, an image of 2 atoms.

The ceiling with recovered cameras: the same renders as items (two per structure: PyMOL orthographic,
matplotlib and ASE; PyMOL perspective and OVITO), certified by ``viewcert certify images:`` twice
with the same detections — every camera stated in its tool's terms, and every camera ``tool = "unknown"`` with
``drawn_by`` — at δ = τ = 0.15 Å (the study's); the items whose outcomes differ are listed.

Writes ``benchmarks/results/recover_cameras.json`` (``--detector truth``) or ``recover_cameras_pixels.json``.
Renders are cached under ``--work`` (default /tmp/viewcert-recover-corpus), so a rerun only recovers.

Usage: ``python benchmarks/bench_recover.py [--n-molecules 16] [--n-crystals 16] [--detector truth|pixels]
[--work DIR] [--quick] [--no-ceiling] [--only KEY ...] [--out FILE] [--merge FILE ...]``; each measured row is
also appended to ``WORK/rows-DETECTOR.jsonl`` as it is measured.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.foreign_render import available, example_camera, render  # noqa: E402
from tests.support.molecule_geometries import benzene, methane, sf6  # noqa: E402
from viewcert.cameras import resolve_tool_camera  # noqa: E402
from viewcert.elements import covalent_radii, symbols  # noqa: E402
from viewcert.io.atomic import write_json_atomic  # noqa: E402
from viewcert.recover import DetectedAtoms, RecoveryHints, recover_camera  # noqa: E402
from viewcert.recover.evidence import local_scale  # noqa: E402

SHARED = REPO.parent / "shared" / "data" / "render-ceiling" / "data" / "e3"
RESULTS = REPO / "benchmarks" / "results"
SIZE = 400
MPL_SIZE = 512
MIN_VISIBLE = 30
#: (tool, kind): the five renderers of the corpus
RENDERERS = (("pymol", "orthographic"), ("pymol", "perspective"), ("matplotlib", "perspective"),
             ("ovito", None), ("ase", "orthographic"))
CCD_CODES = ("IBP", "ATP", "HEM", "CLR", "BEN", "NAG", "FAD", "SAM", "TRP", "PHE", "GLC", "CAF", "ASP", "NCT",
             "SAL", "PNM", "EST", "BEZ", "URA", "ADN")


def molecules(n: int) -> list[tuple]:
    """(name, drawn positions Å, atomic numbers, the structure as shipped, tiling) of the corpus' molecules."""
    from viewcert.io.ccd import read_ccd_structure
    from viewcert.structures import Structure
    out = [(name, pos, z, Structure(pos, z), (1, 1, 1))
           for name, (pos, z) in (("CH4", methane()), ("C6H6", benzene()), ("SF6", sf6()))]
    for code in CCD_CODES:
        if len(out) >= n:
            break
        try:
            s = read_ccd_structure(code)
        except Exception:  # noqa: BLE001 - an entry the bundled dictionary lacks
            continue
        if 8 <= s.n_atoms <= 80:
            out.append((f"ccd:{code}", s.positions, s.numbers, s, (1, 1, 1)))
    return out[:n]


def crystals(n: int) -> list[tuple]:
    """(name, drawn positions Å, atomic numbers, the conventional cell, tiling) of the corpus' e3 crystals."""
    from viewcert.io.cif import read_cif_text
    from viewcert.symmetry.standardize import conventional_standard_cell
    data = json.loads((SHARED / "structures.json").read_text())
    ids = [json.loads(line)["material_id"] for line in (SHARED / "eval.jsonl").read_text().splitlines() if line]
    rng = np.random.default_rng(54)
    out = []
    for mid in rng.permutation(ids):
        if len(out) >= n:
            break
        cell = conventional_standard_cell(read_cif_text(data[mid]["cif"], source=mid))
        tiling = (2, 2, 2) if cell.n_atoms * 8 <= 160 else (1, 1, 1)
        if cell.n_atoms * math.prod(tiling) > 160 or cell.n_atoms * math.prod(tiling) < 4:
            continue
        s = cell.supercell(tiling)
        out.append((f"{mid}-{'x'.join(map(str, tiling))}", s.positions, s.numbers, cell, tiling))
    return out


def mcs_camera(xyz: np.ndarray, seed: int) -> dict:
    """MCS-Set's matplotlib camera (framework_flow.create_3d_plot: a 3D axes filling an 8×8 in figure, default
    perspective and box aspect, limits autoscaled to the data) at a random elev/azim, its limits read back from
    matplotlib after drawing the scatter."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    rng = np.random.default_rng(seed)
    inches = MPL_SIZE / 64
    fig = Figure(figsize=(inches, inches), dpi=64)
    FigureCanvasAgg(fig)
    ax = fig.add_axes([0, 0, 1, 1], projection="3d")
    ax.scatter(xyz[:, 0], xyz[:, 1], xyz[:, 2], s=10)
    view = {"elev": float(rng.uniform(-80, 80)), "azim": float(rng.uniform(-180, 180)), "roll": 0.0}
    ax.view_init(**view)
    fig.canvas.draw()
    return {"tool": "matplotlib", **view, "xlim": [float(x) for x in ax.get_xlim3d()],
            "ylim": [float(x) for x in ax.get_ylim3d()], "zlim": [float(x) for x in ax.get_zlim3d()],
            "box_aspect": [4.0, 4.0, 3.0], "zoom": 1.0, "proj_type": "persp", "focal_length": 1.0,
            "figsize": [inches, inches], "dpi": 64.0, "position": [0.0, 0.0, 1.0, 1.0], "width": MPL_SIZE,
            "height": MPL_SIZE}


def rendered(work: Path, key: str, tool: str, kind, xyz, z, seed: int) -> dict:
    """The cached render of one corpus image: camera table, the tool's centres and visible pixel counts."""
    meta = work / f"{key}.json"
    if meta.is_file():
        return json.loads(meta.read_text())
    radii = 0.5 * covalent_radii(z) + 0.1
    if tool == "matplotlib":
        camera = mcs_camera(xyz, seed)
    else:
        camera = example_camera(tool, xyz, seed=seed, size=(SIZE, SIZE), kind=kind, radii=radii)
    t0 = time.process_time()
    r = render(tool, xyz, symbols(z), work, camera=camera, radii=radii, name=key)
    record = {"tool": tool, "camera": r.camera, "centres": np.where(np.isfinite(r.centres), r.centres, -1e9).tolist(),
              "visible": r.visible.tolist(), "radii": radii.tolist(), "image": r.image.name,
              "render_cpu_s": time.process_time() - t0}
    meta.write_text(json.dumps(record))
    return record


def truth_detections(record: dict, xyz, z, rng) -> tuple[DetectedAtoms, np.ndarray]:
    """The stand-in detector: the tool's own centres of the atoms with ≥ 30 visible pixels, 0.3 px noise, and
    their drawn radii in px (the drawn radius in Å times the true camera's local scale)."""
    centres = np.asarray(record["centres"])
    drawn = (np.asarray(record["visible"]) >= MIN_VISIBLE) & (centres > -1e8).all(1)
    proj = resolve_tool_camera(record["camera"])
    scale = local_scale(proj.matrix, proj.kind, xyz[drawn])
    radii_px = np.asarray(record["radii"])[drawn] * scale
    uv = centres[drawn] + rng.normal(scale=0.3, size=(int(drawn.sum()), 2))
    return DetectedAtoms(uv, z[drawn], radii_px), drawn


def set_rms(projection, xyz, z, truth, truth_z) -> float:
    uv, _ = projection.project(xyz)
    d = [np.nanmin(np.linalg.norm(uv[z == e] - t, axis=1)) for t, e in zip(truth, truth_z, strict=True)]
    return float(np.sqrt(np.mean(np.square(d))))


def run_corpus(work: Path, structures, detector: str, only=None, rows_file: Path | None = None) -> list[dict]:
    """Every corpus image's recovery (``only``: these image keys alone); each row also appended to ``rows_file``
    (JSON lines) as it is measured, so a long run interrupted keeps what it measured."""
    rows = []
    rng = np.random.default_rng(0)
    for s_index, (name, xyz, z, _, _) in enumerate(structures):
        for r_index, (tool, kind) in enumerate(RENDERERS):
            if available(tool):
                continue
            if tool == "ovito" and kind is None:
                kind = ("orthographic", "perspective")[s_index % 2]
            key = f"{name.replace(':', '_')}-{tool}-{kind}"
            if only and key not in only:
                continue
            seed = 1000 * s_index + r_index
            record = rendered(work, key, tool, kind, xyz, z, seed)
            centres = np.asarray(record["centres"])
            drawn = (np.asarray(record["visible"]) >= MIN_VISIBLE) & (centres > -1e8).all(1)
            row = {"image": key, "structure": name, "tool": tool, "kind": kind, "atoms": len(xyz),
                   "drawn": int(drawn.sum()), "crystal": name.startswith("mp-")}
            if drawn.sum() < 4:
                row["outcome"] = "excluded: fewer than 4 drawn atoms"
                rows.append(row)
                continue
            t0 = time.process_time()
            if detector == "truth":
                det, _ = truth_detections(record, xyz, z, rng)
            else:
                det = pixel_detections(work / record["image"], record, z)
            t1 = time.process_time()
            hints = RecoveryHints(tool="matplotlib" if tool == "matplotlib" else "unknown")
            rec = recover_camera(xyz, z, det, int(record["camera"]["width"]), int(record["camera"]["height"]),
                                 hints=hints)
            t2 = time.process_time()
            row.update({"detected": len(det), "detect_cpu_s": t1 - t0, "recover_cpu_s": t2 - t1,
                        "message": rec.message, "n_poses": len(rec.poses), "spread_deg": rec.spread_deg})
            if rec.recovered:
                best = rec.poses[0]
                res = set_rms(best.projection, xyz, z, centres[drawn], z[drawn])
                worst = max(set_rms(p.projection, xyz, z, centres[drawn], z[drawn]) for p in rec.poses)
                row.update({"model": best.model, "rms_px": best.rms_px, "set_rms_px": res,
                            "worst_pose_set_rms_px": worst,
                            "outcome": "within 1 px" if res <= 1.0 else ("silently wrong" if res > 3.0
                                                                          else "recovered, 1-3 px")})
            else:
                row.update({"outcome": "not recovered", "reason": rec.reason})
            rows.append(row)
            if rows_file is not None:
                with rows_file.open("a") as fh:
                    fh.write(json.dumps(row) + "\n")
            print(f"{key:>42} drawn {row['drawn']:4d} {row['recover_cpu_s']:6.2f}s {row['outcome']:>14} "
                  f"{row.get('set_rms_px', float('nan')):.3f} detect {row['detect_cpu_s']:.2f}s {rec.message[:70]}",
                  flush=True)
    return rows


def pixel_detections(image: Path, record: dict, z) -> DetectedAtoms:
    """Issue 53's pixel reader on the shaded image, under the palette the renderer drew with."""
    from viewcert.certify.recovered import detected_atoms
    from viewcert.detect import detect_atoms, palette_from_table
    from viewcert.io.pictures import read_picture
    rgb, _ = read_picture(image, name=image.name)
    palette = palette_from_table(PALETTE_TABLES[record["tool"]])
    det = detect_atoms(rgb, palette, sorted(set(symbols(z))))
    return detected_atoms(det.centres, det.radii, det.elements)


#: the palette each renderer of the corpus draws with (foreign_render: PyMOL's element colours with its carbons
#: grey70, Jmol's elsewhere), as images.toml states it and as a table for the detector
PALETTES = {"pymol": '{ name = "pymol", C = "#b3b3b3" }', "matplotlib": '"jmol"', "ovito": '"jmol"', "ase": '"jmol"'}
PALETTE_TABLES = {"pymol": {"name": "pymol", "C": "#b3b3b3"}, "matplotlib": {"name": "jmol"},
                  "ovito": {"name": "jmol"}, "ase": {"name": "jmol"}}
#: the items of the ceiling comparison: two per structure from its five renders (each image in one item)
ITEM_VIEWS = ((0, 2, 4), (1, 3))


def _keys(s_index: int, name: str) -> list[str]:
    out = []
    for tool, kind in RENDERERS:
        if tool == "ovito" and kind is None:
            kind = ("orthographic", "perspective")[s_index % 2]
        out.append(f"{name.replace(':', '_')}-{tool}-{kind}")
    return out


def _toml_value(v) -> str:
    return json.dumps(v)


def ceiling_comparison(work: Path, structures, detector: str, delta: float) -> dict:
    """The as-published ceiling with recovered cameras against the one with the true cameras: the same images
    (the corpus renders, two items of three views per structure), the same detections, two images.toml files
    (each camera in its tool's terms; every camera ``tool = "unknown"`` with ``drawn_by``)."""
    import shutil

    import viewcert.certify.published as published
    from viewcert.certify import CertifyConfig
    from viewcert.detect.detector import Detections as ToolDetections
    from viewcert.io.pictures import read_picture
    from viewcert.io.poscar import poscar_text
    from viewcert.io.xyz import xyz_text

    folder = work / "ceiling"
    folder.mkdir(exist_ok=True)
    true_lines, unknown_lines = ['format = "viewcert-images/1"', ""], ['format = "viewcert-images/1"', ""]
    truth: dict = {}
    rng = np.random.default_rng(3)
    for s_index, (name, xyz, z, shipped, tiling) in enumerate(structures):
        stem = name.replace(":", "_")
        if shipped.is_periodic:
            sfile = f"{stem}.POSCAR"
            (folder / sfile).write_text(poscar_text(shipped, direct=False))
        else:
            sfile = f"{stem}.xyz"
            (folder / sfile).write_text(xyz_text(shipped))
        keys = _keys(s_index, name)
        for k_item, views in enumerate(ITEM_VIEWS):
            for v in views:
                record = json.loads((work / f"{keys[v]}.json").read_text())
                if not (folder / record["image"]).is_file():
                    shutil.copyfile(work / record["image"], folder / record["image"])
                if detector == "truth" and record["image"] not in truth:
                    det, _ = truth_detections(record, xyz, z, rng)
                    truth[record["image"]] = det
                tool = record["tool"]
                head = [f'file = "{record["image"]}"', f'item = "{stem}-{k_item}"', f'structure = "{sfile}"',
                        f"palette = {PALETTES[tool]}"]
                if shipped.is_periodic:
                    head.append(f"tiling = {list(tiling)}")
                cam = {k: v for k, v in record["camera"].items()}
                true_lines += ["[[image]]", *head,
                               "camera = { " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in cam.items()) + " }",
                               ""]
                unknown_lines += ["[[image]]", *head, f'camera = {{ tool = "unknown", drawn_by = "{tool}" }}', ""]
    (folder / "true.toml").write_text("\n".join(true_lines))
    (folder / "unknown.toml").write_text("\n".join(unknown_lines))
    if detector == "truth":  # the stand-in detector: the same detections for both files
        def detect(entry, numbers, settings):
            _, picture = read_picture(entry.path, name=entry.file)
            d = truth[entry.file]
            n = len(d)
            return ToolDetections(d.uv, d.radii, tuple(symbols(d.labels)), ("",) * n, np.ones(n), "shaded",
                                  (255, 255, 255), picture.width, picture.height), picture

        published._detect = detect
    cfg = CertifyConfig(delta=delta, tau=delta)
    t0 = time.process_time()
    ref = published.certify_published(f"images:{folder / 'true.toml'}", cfg)
    t1 = time.process_time()
    got = published.certify_published(f"images:{folder / 'unknown.toml'}", cfg)
    t2 = time.process_time()
    rows, differences = [], []
    for a, b in zip(got.items, ref.items, strict=True):
        row = {"item": a.id, "true": None if b.is_error else [b.geometric.outcome, b.as_published.outcome],
               "recovered": None if a.is_error else [a.geometric.outcome, a.as_published.outcome],
               "pose_combinations": (a.extra or {}).get("pose_combinations")}
        if b.is_error:
            row["true_error"] = b.error
        if a.is_error:
            row["recovered_error"] = a.error
        same = (not a.is_error and not b.is_error and row["true"] == row["recovered"]
                and a.as_published.correct == b.as_published.correct and a.geometric.correct == b.geometric.correct)
        row["same"] = bool(same) or (a.is_error and b.is_error)
        rows.append(row)
        if not row["same"]:
            differences.append(row)
    n = len(rows)
    same = sum(r["same"] for r in rows)
    print(f"ceiling: {same}/{n} items the same with recovered cameras", flush=True)
    for r in differences:
        print("  differs:", json.dumps(r)[:300], flush=True)
    return {"items": n, "same": same, "same_fraction": same / n if n else None, "delta": delta, "tau": delta,
            "detector": detector, "item_views": [[RENDERERS[v][0] + " " + str(RENDERERS[v][1]) for v in views]
                                                 for views in ITEM_VIEWS], "true_certify_cpu_s": t1 - t0,
            "recovered_certify_cpu_s": t2 - t1,
            "as_published_true": ref.summary.as_published.to_dict() if ref.summary.as_published else None,
            "as_published_recovered": got.summary.as_published.to_dict() if got.summary.as_published else None,
            "differences": differences, "per_item": rows}


def bad_inputs(work: Path, structures) -> list[dict]:
    """The swapped file, the empty image and the 2-atom image, one line each."""
    out = []
    rng = np.random.default_rng(7)
    # the two largest molecules: the same elements (C, H, N, O), so no element gives the swap away
    mols = sorted((s for s in structures if not s[0].startswith("mp-")), key=lambda s: -len(s[1]))
    (na, xa, za, _, _), (nb, xb, zb, _, _) = mols[0], mols[1]
    key = f"{na.replace(':', '_')}-pymol-orthographic"
    record = json.loads((work / f"{key}.json").read_text())
    det, _ = truth_detections(record, xa, za, rng)
    w, h = int(record["camera"]["width"]), int(record["camera"]["height"])
    for case, (xyz, z, d) in {
        f"swapped: the picture of {na} against {nb}'s file": (xb, zb, det),
        "an empty image": (xa, za, DetectedAtoms(np.zeros((0, 2)), np.zeros(0, dtype=int))),
        "an image of 2 atoms": (xa, za, DetectedAtoms(det.uv[:2], det.labels[:2], det.radii[:2])),
    }.items():
        rec = recover_camera(xyz, z, d, w, h)
        out.append({"case": case, "recovered": rec.recovered, "line": rec.message})
        print(f"{case}: {rec.message}", flush=True)
    return out


def summarise(rows: list[dict]) -> dict:
    counted = [r for r in rows if not r["outcome"].startswith("excluded")]
    by = {}
    for key in sorted({r["tool"] + ("" if r["kind"] is None else f" {r['kind']}") for r in counted}):
        sel = [r for r in counted if r["tool"] + ("" if r["kind"] is None else f" {r['kind']}") == key]
        by[key] = _tally(sel)
    rec_t = [r["recover_cpu_s"] for r in counted]
    det_t = [r["detect_cpu_s"] for r in counted]
    return {"images": len(counted), "excluded": len(rows) - len(counted), "all": _tally(counted),
            "molecules": _tally([r for r in counted if not r["crystal"]]),
            "crystals": _tally([r for r in counted if r["crystal"]]), "by_renderer": by,
            "speed": {"recover_cpu_s_median": float(np.median(rec_t)), "recover_cpu_s_p95": float(np.percentile(rec_t, 95)),
                      "recover_cpu_s_total": float(np.sum(rec_t)), "detect_cpu_s_median": float(np.median(det_t)),
                      "recover_over_detect_median_ratio": float(np.median(rec_t) / max(np.median(det_t), 1e-9))}}


def _tally(rows: list[dict]) -> dict:
    n = len(rows)
    within = sum(r["outcome"] == "within 1 px" for r in rows)
    return {"images": n, "within_1px": within, "within_1px_fraction": within / n if n else None,
            "recovered_1_to_3px": sum(r["outcome"] == "recovered, 1-3 px" for r in rows),
            "silently_wrong": sum(r["outcome"] == "silently wrong" for r in rows),
            "not_recovered": sum(r["outcome"] == "not recovered" for r in rows),
            "reasons": sorted({r["reason"] for r in rows if r.get("reason")})}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-molecules", type=int, default=16)
    ap.add_argument("--n-crystals", type=int, default=16)
    ap.add_argument("--detector", choices=("truth", "pixels"), default="truth")
    ap.add_argument("--work", type=Path, default=Path("/tmp/viewcert-recover-corpus"))
    ap.add_argument("--quick", action="store_true", help="2 molecules and 2 crystals")
    ap.add_argument("--delta", type=float, default=0.15, help="δ = τ (Å) of the ceiling comparison (the study's)")
    ap.add_argument("--no-ceiling", action="store_true", help="the corpus and the bad inputs only")
    ap.add_argument("--only", nargs="+", help="these image keys alone (e.g. a speed sample)")
    ap.add_argument("--out", type=Path, help="the results file (default: benchmarks/results/recover_cameras[_DETECTOR].json)")
    ap.add_argument("--merge", type=Path, nargs="+", help="merge the per-image rows of these results files (shards "
                    "of one corpus run, e.g. --n-crystals 0 and --n-molecules 0) into --out, then stop")
    args = ap.parse_args()
    if args.merge:
        parts = [json.loads(p.read_text()) for p in args.merge]
        merged = {**parts[0], "summary": summarise([r for p in parts for r in p["images"]]),
                  "images": [r for p in parts for r in p["images"]],
                  "bad_input": [b for p in parts for b in p.get("bad_input") or []],
                  "shards": [str(p.name) for p in args.merge]}
        write_json_atomic(args.out, merged)
        print(json.dumps(merged["summary"], indent=1))
        return
    if not SHARED.is_dir():
        raise SystemExit(f"shared data absent: {SHARED}")
    n_m, n_c = (2, 2) if args.quick else (args.n_molecules, args.n_crystals)
    args.work.mkdir(parents=True, exist_ok=True)
    structures = molecules(n_m) + crystals(n_c)
    rows = run_corpus(args.work, structures, args.detector, set(args.only or ()),
                      args.work / f"rows-{args.detector}.jsonl")
    bad = bad_inputs(args.work, structures) if sum(not s[0].startswith("mp-") for s in structures) >= 2 else []
    ceiling = None if args.no_ceiling else ceiling_comparison(args.work, structures, args.detector, args.delta)
    result = {"benchmark": "recover_cameras", "issue": 54, "detector": args.detector,
              "min_visible_pixels": MIN_VISIBLE, "summary": summarise(rows), "ceiling": ceiling,
              "bad_input": bad, "images": rows,
              "machine": {"python": platform.python_version(), "cpu": platform.processor() or platform.machine()}}
    if not args.quick:  # the acceptance run (the pixel reader) and the recovery's own measure apart
        name = "recover_cameras.json" if args.detector == "truth" else f"recover_cameras_{args.detector}.json"
        write_json_atomic(args.out or RESULTS / name, result)
    print(json.dumps(result["summary"], indent=1))


if __name__ == "__main__":
    main()
