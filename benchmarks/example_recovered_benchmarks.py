"""Two published benchmarks whose cameras were never published, recovered and certified (issue 54, item 4; the
worked examples of docs/recover-cameras.md).

1. **MCS-Set's rendering path** (MultiCrystalSpectrumSet, ``framework_flow.create_3d_plot``): each structure's
   coordinates turned about a random axis (MCS-Set ships the turned XYZ), drawn by matplotlib ``ax.scatter`` in a
   3D axes (one call per element, ``s=10``, MCS-Set's six element colours, black for every other element), axes
   off and filling an 8×8 in figure, default perspective and view (elev 30°, azim −60°), limits autoscaled to the
   data, saved as a 512×512 JPEG at 64 dpi. The e3 eval structures (conventional cell) stand in for MCS-Set's
   clusters. ``images.toml`` states ``camera = { tool = "unknown", drawn_by = "matplotlib" }``: the recovery is not
   told the view.
2. **MiSI-Bench-style base views of the six complexes** in ``../shared/data/complexes``: the pocket (residues with
   a heavy atom within 4.5 Å of the ligand) and the ligand, heavy atoms only, drawn by PyMOL (the nearest renderer
   that installs here) through ChimeraX's orthographic front, top and left views (``cameras.get_protocol("axes-3")``,
   framed on the bounding sphere), spheres of half the covalent radius plus 0.2 Å. ``images.toml`` states
   ``camera = { tool = "unknown", drawn_by = "pymol", kind = "orthographic", zone_axis = ... }`` (the view
   direction a MiSI base view is known to have).

Each folder (images, structures, images.toml; nothing committed) is certified by ``viewcert certify images:``;
the recovered cameras are compared with the true ones (each tool's camera resolved by
``cameras.resolve_tool_camera``): RMS and largest distance (px) between the drawn atoms' true and recovered
projections. Writes ``benchmarks/results/recovered_benchmarks.json``.

Usage: ``python benchmarks/example_recovered_benchmarks.py [--out DIR] [--n-mcs 12] [--skip-mcs] [--skip-complexes]``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from viewcert.cameras import get_protocol, resolve_tool_camera  # noqa: E402
from viewcert.certify import CertifyConfig  # noqa: E402
from viewcert.certify.published import certify_published  # noqa: E402
from viewcert.certify.published_outputs import write_published_outputs  # noqa: E402
from viewcert.elements import covalent_radii, symbols  # noqa: E402
from viewcert.io.atomic import write_json_atomic  # noqa: E402
from viewcert.io.xyz import xyz_text  # noqa: E402
from viewcert.structures import Structure  # noqa: E402

SHARED = REPO.parent / "shared" / "data"
E3 = SHARED / "render-ceiling" / "data" / "e3"
COMPLEXES = SHARED / "complexes"
RESULTS = REPO / "benchmarks" / "results"
#: MCS-Set's element colours (framework_flow.ELEMENT_COLORS); every other element is drawn black
MCS_COLOURS = {"Ag": "silver", "Au": "gold", "Pb": "darkgrey", "S": "yellow", "Zn": "blue", "O": "red"}
POCKET_A = 4.5
PYMOL_SIZE = 480


# -- 1. MCS-Set ---------------------------------------------------------------------------------------------
def mcs_structures(n: int) -> list[tuple[str, Structure]]:
    from viewcert.io.cif import read_cif_text
    from viewcert.symmetry.standardize import conventional_standard_cell
    data = json.loads((E3 / "structures.json").read_text())
    ids = [json.loads(line)["material_id"] for line in (E3 / "eval.jsonl").read_text().splitlines() if line]
    rng = np.random.default_rng(2025)
    out = []
    for mid in rng.permutation(ids):
        cell = conventional_standard_cell(read_cif_text(data[mid]["cif"], source=mid))
        if 8 <= cell.n_atoms <= 60:
            out.append((str(mid), cell))
        if len(out) >= n:
            break
    return out


def mcs_draw(xyz: np.ndarray, elements: list[str], path: Path) -> dict:
    """MCS-Set's create_3d_plot + savefig(dpi=64, pad_inches=0) as a JPEG; returns the camera matplotlib used
    (its terms, limits read back after drawing: the truth, never shown to the recovery)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(8, 8))
    ax = fig.add_subplot(111, projection="3d")
    for element in sorted(set(elements)):
        idx = [i for i, a in enumerate(elements) if a == element]
        ax.scatter(xyz[idx, 0], xyz[idx, 1], xyz[idx, 2], s=10, color=MCS_COLOURS.get(element, "black"))
    ax.set_axis_off()
    ax.set_position([0, 0, 1, 1])
    fig.savefig(path, dpi=64, pad_inches=0)
    camera = {"tool": "matplotlib", "elev": float(ax.elev), "azim": float(ax.azim), "roll": float(ax.roll),
              "xlim": list(map(float, ax.get_xlim3d())), "ylim": list(map(float, ax.get_ylim3d())),
              "zlim": list(map(float, ax.get_zlim3d())), "box_aspect": [4.0, 4.0, 3.0], "zoom": 1.0,
              "proj_type": "persp", "focal_length": 1.0, "figsize": [8.0, 8.0], "dpi": 64.0,
              "position": [0.0, 0.0, 1.0, 1.0], "width": 512, "height": 512}
    plt.close(fig)
    return camera


def mcs_palette(elements) -> str:
    from matplotlib.colors import to_hex
    cols = {e: to_hex(MCS_COLOURS.get(e, "black")) for e in sorted(set(elements))}
    return "{ " + ", ".join(f'{e} = "{c}"' for e, c in cols.items()) + " }"


def build_mcs(folder: Path, n: int) -> dict:
    from scipy.spatial.transform import Rotation
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(54)
    lines, truth = ['format = "viewcert-images/1"', ""], {}
    for mid, cell in mcs_structures(n):
        axis = rng.normal(size=3)
        turned = Rotation.from_rotvec(axis / np.linalg.norm(axis) * np.radians(rng.uniform(20, 160)))
        xyz = turned.apply(np.array(cell.positions))  # MCS-Set's rotate_coords; the XYZ it ships
        els = list(symbols(cell.numbers))
        (folder / f"{mid}.xyz").write_text(xyz_text(Structure(xyz, cell.numbers)))
        truth[f"{mid}.jpg"] = mcs_draw(xyz, els, folder / f"{mid}.jpg")
        lines += ["[[image]]", f'file = "{mid}.jpg"', f'item = "{mid}"', f'structure = "{mid}.xyz"',
                  f"palette = {mcs_palette(els)}", 'camera = { tool = "unknown", drawn_by = "matplotlib" }', ""]
    (folder / "images.toml").write_text("\n".join(lines))
    return truth


# -- 2. the six complexes --------------------------------------------------------------------------------------
def _heavy_atoms(text: str) -> tuple[np.ndarray, list[str], list[tuple]]:
    import gemmi
    st = gemmi.read_pdb_string(text)
    st.remove_hydrogens()
    st.remove_waters()
    st.remove_alternative_conformations()
    pos, els, res = [], [], []
    for ch in st[0]:
        for r in ch:
            for a in r:
                pos.append([a.pos.x, a.pos.y, a.pos.z])
                els.append(a.element.name)
                res.append((ch.name, r.seqid.num, r.name))
    return np.array(pos), els, res


def pocket_and_ligand(case: Path) -> Structure:
    """MiSI-Bench's input: the ligand and every residue with a heavy atom within POCKET_A Å of it, heavy atoms."""
    from scipy.spatial import cKDTree

    from viewcert.elements import atomic_number
    ligands = {"1pwc": ("PNM", None), "19hc": ("HEM", ("A", 301))}
    if (case / "ligand.sdf").is_file():
        from viewcert.io.read import read_structure
        lig = read_structure(case / "ligand.sdf")
        keep = lig.numbers != 1
        lig_pos, lig_z = lig.positions[keep], lig.numbers[keep]
        pos, els, res = _heavy_atoms(gzip.open(case / "protein.pdb.gz", "rt").read())
        prot = np.ones(len(pos), dtype=bool)
    else:
        pos, els, res = _heavy_atoms(gzip.open(case / "complex.pdb.gz", "rt").read())
        name, where = ligands[case.name]
        is_lig = np.array([r[2] == name and (where is None or (r[0], r[1]) == where) for r in res])
        first = next(i for i, r in enumerate(res) if is_lig[i])
        is_lig &= np.array([r[:2] == res[first][:2] for r in res])  # one copy of the ligand
        lig_pos, lig_z = pos[is_lig], np.array([atomic_number(e.capitalize()) for e in np.array(els)[is_lig]])
        prot = ~is_lig & np.array([r[2] != name for r in res])
    near = cKDTree(lig_pos).query(pos, distance_upper_bound=POCKET_A)[0] <= POCKET_A
    residues = {res[i] for i in np.flatnonzero(near & prot)}
    sel = np.array([prot[i] and res[i] in residues for i in range(len(pos))])
    z = np.array([atomic_number(e.capitalize()) for e in np.array(els)[sel]])
    return Structure(np.vstack([pos[sel], lig_pos]), np.concatenate([z, lig_z]))


def pymol_view(rotation: np.ndarray, centre: np.ndarray, radius: float, size: int) -> dict:
    """ChimeraX-style orthographic framing of the bounding sphere as a PyMOL get_view (18 numbers)."""
    fov = 20.0
    dist = radius / math.tan(math.radians(fov) / 2) * 1.1
    view = list(rotation.T.ravel()) + [0.0, 0.0, -dist] + list(centre) + [dist - radius - 1, dist + radius + 1]
    return {"tool": "pymol", "view": [float(x) for x in view] + [fov], "width": size, "height": size}


def pymol_draw(s: Structure, camera: dict, path: Path) -> None:
    from pymol2 import PyMOL
    p = PyMOL()
    p.start()
    try:
        cmd = p.cmd
        els = symbols(s.numbers)
        radii = 0.5 * covalent_radii(s.numbers) + 0.2
        lines = [str(s.n_atoms), "pocket"] + [f"{e} {x:.6f} {y:.6f} {z:.6f}" for e, (x, y, z) in
                                              zip(els, s.positions, strict=True)]
        cmd.load_raw("\n".join(lines) + "\n", "xyz", "mol")
        cmd.alter("mol", "vdw = radii[index - 1]", space={"radii": [float(r) for r in radii]})
        cmd.hide("everything")
        cmd.show("spheres", "mol")
        cmd.color("atomic", "mol and not elem C")
        cmd.color("grey70", "mol and elem C")
        cmd.bg_color("white")
        cmd.set("ray_opaque_background", 1)
        view = camera["view"]
        cmd.set("orthoscopic", 1)
        cmd.set("field_of_view", abs(view[17]))
        cmd.set_view(view)
        cmd.png(str(path), width=camera["width"], height=camera["height"], ray=1)
    finally:
        p.stop()


def build_complexes(folder: Path) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    proto = get_protocol("axes-3")
    lines, truth = ['format = "viewcert-images/1"', ""], {}
    for case in sorted(p for p in COMPLEXES.iterdir() if p.is_dir()):
        s = pocket_and_ligand(case)
        (folder / f"{case.name}.xyz").write_text(xyz_text(s))
        centre = 0.5 * (s.positions.min(0) + s.positions.max(0))
        radius = float(np.linalg.norm(s.positions - centre, axis=1).max()) + 1.5
        for view in proto.views:
            r = np.asarray(view.rotation)
            cam = pymol_view(r, centre, radius, PYMOL_SIZE)
            name = f"{case.name}-{view.name}.png"
            pymol_draw(s, cam, folder / name)
            truth[name] = cam
            zone = [float(x) for x in -r[2]]
            lines += ["[[image]]", f'file = "{name}"', f'item = "{case.name}"', f'structure = "{case.name}.xyz"',
                      f'name = "{view.name}"', 'palette = { name = "pymol", C = "#b3b3b3" }',
                      f'camera = {{ tool = "unknown", drawn_by = "pymol", kind = "orthographic", zone_axis = {zone} }}',
                      ""]
    (folder / "images.toml").write_text("\n".join(lines))
    return truth


# -- certify and compare --------------------------------------------------------------------------------------
def certify_and_compare(folder: Path, truth: dict, delta: float) -> dict:
    from viewcert.io.read import read_structure
    t0 = time.process_time()
    cert = certify_published(f"images:{folder / 'images.toml'}", CertifyConfig(delta=delta, tau=delta))
    cpu = time.process_time() - t0
    write_published_outputs(folder / "cert", cert)
    images = []
    for im in cert.images:
        rec = im.recovered
        row = {"image": im.file, "item": im.item, "detected": im.detected, "status": rec.status if rec else None,
               "reason": rec.reason if rec else None, "n_poses": rec.n_poses if rec else None,
               "rms_px": rec.rms_px if rec else None, "written_back": rec.written_back if rec else None}
        if rec and rec.status == "recovered":
            s = read_structure(folder / next(it.structure.file for it in cert.items if it.id == im.item))
            true = resolve_tool_camera(truth[im.file])
            best = np.asarray(rec.poses[0]["matrix"]).reshape(3, 4)
            h = s.positions @ best[:, :3].T + best[:, 3]
            d = np.linalg.norm(h[:, :2] / h[:, 2:] - true.project(s.positions)[0], axis=1)
            row.update({"vs_true_rms_px": float(np.sqrt(np.mean(d ** 2))), "vs_true_max_px": float(d.max())})
        images.append(row)
        print(json.dumps(row)[:260], flush=True)
    s = cert.summary
    return {"items": len(cert.items), "certified": s.n, "not_recovered_or_errors": s.n_errors,
            "errors": s.errors, "as_published": s.as_published.to_dict() if s.as_published else None,
            "geometric": s.geometric.to_dict() if s.geometric else None, "certify_cpu_s": cpu,
            "delta": delta, "images": images}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/viewcert-recovered-benchmarks"))
    ap.add_argument("--n-mcs", type=int, default=12)
    ap.add_argument("--delta", type=float, default=0.15)
    ap.add_argument("--skip-mcs", action="store_true")
    ap.add_argument("--skip-complexes", action="store_true")
    args = ap.parse_args()
    result = {"example": "recovered_benchmarks", "issue": 54}
    if not args.skip_mcs:
        if not E3.is_dir():
            raise SystemExit(f"shared data absent: {E3}")
        truth = build_mcs(args.out / "mcs-set", args.n_mcs)
        result["mcs_set"] = certify_and_compare(args.out / "mcs-set", truth, args.delta)
    if not args.skip_complexes:
        if not COMPLEXES.is_dir():
            raise SystemExit(f"shared data absent: {COMPLEXES}")
        truth = build_complexes(args.out / "complexes")
        result["complexes"] = certify_and_compare(args.out / "complexes", truth, args.delta)
    write_json_atomic(RESULTS / "recovered_benchmarks.json", result)
    print(json.dumps({k: {kk: vv for kk, vv in v.items() if kk != "images"} if isinstance(v, dict) else v
                      for k, v in result.items()}, indent=1))


if __name__ == "__main__":
    main()
