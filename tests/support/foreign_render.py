"""Render a structure with another tool, under a camera in that tool's own terms, and say where each atom landed.

The shared helper of issue 53 (camera importers, the pixel detector, the ``images:`` input) and issue 54 (camera
recovery). A test renders a structure (Cartesian Å + element symbols) with a real tool and gets back the image,
the camera as the tool states it (the ``camera = {tool = ...}`` table of an ``images.toml``) and the **truth**:
each atom's pixel centre as the tool itself placed it, and how many of its pixels are visible.

Interface (stable; tell the ``cameras`` engineer before changing it)::

    from tests.support.foreign_render import render, example_camera, available, TOOLS

    reason = available("pymol")               # None when the tool renders here, else why not (skip with it)
    cam = example_camera("pymol", xyz, seed=3, size=(320, 240), kind="perspective")
    r = render("pymol", xyz, elements, tmp_path, camera=cam, size=(320, 240), mode="shaded")
    r.image          # Path of the PNG the tool wrote (shaded: as the tool draws by default; flat: one colour per atom)
    r.camera         # the camera table in the tool's terms (below), "width"/"height" = the image's pixels
    r.centres        # (n, 2) px, the tool's own pixel centre of each atom (x right, y down, origin top-left,
                     #   pixel centres at +0.5; docs/conventions.md); NaN where it could not be measured
    r.visible        # (n,) int, each atom's visible pixels in this image (from a flat twin render of the same
                     #   scene when mode="shaded": the pixels showing that atom's own flat colour)
    r.colours        # (n, 3) uint8, each atom's flat colour (flat mode; in shaded mode the twin's)
    r.truth          # how centres were obtained: "transform" (the tool's own transform) or "probe" (below)

Tools (``TOOLS``) and their camera tables:

- ``"pymol"``: ``{"tool": "pymol", "view": [18 numbers of cmd.get_view()], "width": W, "height": H}``; rendered by
  ``cmd.set_view(view)``, ``orthoscopic`` on when ``view[17] > 0`` and ``field_of_view = |view[17]|`` (as
  ``set_view`` does), ``cmd.png(path, width=W, height=H, ray=1)``; spheres of radius ``vdw`` = the given radii.
- ``"matplotlib"``: mplot3d ``ax.scatter`` (MCS-Set's path): ``{"tool": "matplotlib", "elev", "azim", "roll"
  (degrees), "xlim", "ylim", "zlim", "box_aspect" ([x, y, z]), "zoom", "proj_type" ("persp" | "ortho"),
  "focal_length" (persp: 1 = 90°), "figsize" ([w, h] inches), "dpi", "position" ([left, bottom, width, height]
  figure fraction of the axes as created: ``fig.add_axes(position, projection="3d")``), "width", "height"}``.
- ``"ase"``: ASE's PNG writer: ``{"tool": "ase", "rotation" (ASE's string, e.g. "30x,-20y,5z"), "scale" (px/Å),
  "bbox" ([xlo, ylo, xhi, yhi] Å in the rotated image plane, as ``PlottingVariables.get_bbox()``), "width",
  "height"}``; ``ase.io.write(path, atoms, rotation=, scale=, bbox=, radii=, show_unit_cell=0)``.
- ``"ase-povray"``: ASE's POV-Ray writer, rendered by Debian's povray: ``{"tool": "ase-povray", "rotation",
  "camera_type" ("orthographic" | "perspective"), "offset" ([x, y, z] Å: scene = rotated world − offset), "right"
  and "up" (the image plane's width and height in Å as the .pov file writes them: ``right -W*x up H*y``),
  "direction" (the ``direction`` length, Å), "location" (the camera's z, Å: ``location <0,0,d> look_at <0,0,0>``),
  "width", "height"}``.
- ``"ovito"``: ``{"tool": "ovito", "type" ("ortho" | "perspective"), "camera_pos", "camera_dir", "camera_up",
  "fov" (ortho: half the visible height, Å; perspective: the vertical angle, radians), "width", "height"}``;
  ``Viewport(...).render_image(size=(W, H))`` (shaded: OVITO's StandardRenderer, spheres).
- ``"jmol"``: Debian's Jmol (headless ``JmolData.jar``, one process per test process fed script lines):
  ``{"tool": "jmol", "moveto" (the line ``show orientation`` prints for the view), "perspective" (Jmol's
  ``perspectiveDepth``), "state" (the state script of the PNGJ file written beside the image as
  ``<name>.pngj``), "width", "height"}``; ``write image W H png`` (Jmol's default: antialiased).
  tests/support/foreign_jmol.py.

Truth. "transform": matplotlib (``proj3d.proj_transform`` with ``ax.get_proj()`` then ``ax.transData``) and ASE's
PNG writer (the image-plane positions its ``PlottingVariables`` computes and draws each circle at; y flipped to
the image's rows) expose where they draw each atom. "probe": PyMOL, OVITO, POV-Ray and Jmol do not; the helper renders
the same camera again with every atom shrunk to a small sphere (a disc of ~4 px radius) in its own flat colour, no
lighting, no antialiasing (Jmol: its written images are antialiased, so a disc's blended rim is not counted), and
takes each colour's pixel centroid; an atom whose probe disc touches another
atom's or the image border is re-rendered in a later pass with only atoms whose discs were apart, until each is
measured alone; one whose probe disc is cut by the border, or is off the image, is NaN. A probe disc's centroid is
the projected centre to ~0.05 px (quantisation), and under perspective the sphere's ellipse is off-centre by
(r/d)² × its distance from the principal point: negligible at the probe's size. Nothing here calls viewcert's
camera resolver: the truth is the tool's.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

TOOLS = ("pymol", "matplotlib", "ase", "ase-povray", "ovito", "jmol")
MODES = ("shaded", "flat")
PROBE_RADIUS_PX = 4.0
#: tools whose flat images are antialiased (Jmol writes images so by default): rims blend with the background
ANTIALIASED = ("jmol",)
_BACKGROUND = (0, 0, 0)


@dataclass(frozen=True, eq=False)
class ForeignRender:
    """One image a real tool drew, its camera in the tool's terms and the truth (module docstring)."""

    tool: str
    mode: str
    image: Path
    camera: dict
    positions: np.ndarray
    elements: tuple
    radii: np.ndarray
    centres: np.ndarray
    visible: np.ndarray
    colours: np.ndarray
    truth: str

    @property
    def size(self) -> tuple[int, int]:
        return int(self.camera["width"]), int(self.camera["height"])


# -- availability --------------------------------------------------------------------------------------------
def available(tool: str) -> str | None:
    """None when ``tool`` renders on this machine, else the reason it cannot (for ``pytest.skip``)."""
    if tool not in TOOLS:
        return f"unknown tool {tool!r} (one of {TOOLS})"
    try:
        if tool == "pymol":
            import pymol2  # noqa: F401
        elif tool == "ovito":
            import ovito  # noqa: F401
            if not list(Path("/usr/share/vulkan/icd.d").glob("lvp_icd*.json")):
                return "OVITO's renderer needs Debian's mesa-vulkan-drivers (make foreign-debs)"
        elif tool in ("ase", "ase-povray", "matplotlib"):
            import ase.io.png  # noqa: F401
            import matplotlib  # noqa: F401
    except ImportError as exc:
        return f"{tool} is not installed ({exc.name}): pip install -e '.[foreign]' (make test installs it)"
    if tool == "jmol":
        from tests.support import foreign_jmol
        return foreign_jmol.unavailable()
    if tool == "ase-povray":
        if shutil.which("povray") is None:
            return "POV-Ray is not installed: Debian's povray (make foreign-debs)"
        if not Path("/usr/share/povray-3.7/include/colors.inc").is_file():
            return "POV-Ray's include files are missing: Debian's povray-includes (make foreign-debs)"
    return None


# -- colours -------------------------------------------------------------------------------------------------
def flat_palette(n: int) -> np.ndarray:
    """n distinct flat colours (uint8), far from black (the flat background) and from each other."""
    k = max(2, math.ceil((n + 1) ** (1 / 3)))
    levels = np.linspace(40, 250, k).round().astype(int)
    grid = np.array([(r, g, b) for r in levels for g in levels for b in levels], dtype=np.uint8)
    rng = np.random.default_rng(0)
    return grid[rng.permutation(len(grid))[:n]]


def _element_colours(elements) -> np.ndarray:
    from ase.data import atomic_numbers
    from ase.data.colors import jmol_colors
    return np.array([jmol_colors[atomic_numbers[e]] for e in elements])


def _default_radii(elements) -> np.ndarray:
    from ase.data import atomic_numbers, covalent_radii
    return np.array([0.6 * covalent_radii[atomic_numbers[e]] for e in elements]) + 0.15


def _read_rgb(path: Path) -> np.ndarray:
    with Image.open(path) as im:
        if im.mode in ("RGBA", "LA", "P"):
            im = im.convert("RGBA")
            a = np.asarray(im)
            rgb = a[..., :3].astype(np.int16)
            rgb[a[..., 3] == 0] = _BACKGROUND
            return rgb
        return np.asarray(im.convert("RGB")).astype(np.int16)


def _label_colours(rgb: np.ndarray, colours: np.ndarray, tol: int) -> np.ndarray:
    """Each pixel's atom: the index of the colour every channel of which is within ``tol``, else -1 (the last
    such colour where several are). Per channel a 256-entry table maps a value to its distinct palette level;
    the three levels index a table of atoms: one pass over the image, not one per colour."""
    cols = np.asarray(colours, dtype=np.int64).reshape(-1, 3)
    pix = np.clip(np.asarray(rgb, dtype=np.int64), -1, 256)
    levels = [np.unique(cols[:, k]) for k in range(3)]
    if any(len(v) > 1 and np.diff(v).min() <= 2 * tol for v in levels):  # levels whose windows overlap
        label = np.full(rgb.shape[:2], -1, dtype=np.int32)
        for i, c in enumerate(cols):
            label[np.all(np.abs(pix - c) <= tol, axis=2)] = i
        return label
    codes = []
    for k, v in enumerate(levels):
        lut = np.full(258, -1, dtype=np.int64)  # values -1..256 (clipped) at offset 1
        for j, x in enumerate(v):
            lut[max(x - tol, -1) + 1:min(x + tol, 256) + 2] = j
        codes.append(lut[pix[..., k] + 1])
    table = np.full(len(levels[0]) * len(levels[1]) * len(levels[2]), -1, dtype=np.int32)
    at = [np.searchsorted(levels[k], cols[:, k]) for k in range(3)]
    table[(at[0] * len(levels[1]) + at[1]) * len(levels[2]) + at[2]] = np.arange(len(cols), dtype=np.int32)
    ok = (codes[0] >= 0) & (codes[1] >= 0) & (codes[2] >= 0)
    label = np.full(rgb.shape[:2], -1, dtype=np.int32)
    label[ok] = table[(codes[0][ok] * len(levels[1]) + codes[1][ok]) * len(levels[2]) + codes[2][ok]]
    return label


def _colour_stats(rgb: np.ndarray, colours: np.ndarray, tol: int = 1, rims: bool = False):
    """Per colour: centroid (px, +0.5 centres), pixel count, touches the border, touches another atom's colour.

    rims: the image is antialiased (Jmol's written images): a disc's rim pixels are its colour blended with the
    black background, α·colour, and are the disc's own edge, not another atom (a rim blended with a second
    colour is not of that form and still counts as another atom)."""
    h, w = rgb.shape[:2]
    n = len(colours)
    label = _label_colours(rgb, colours, tol)
    centres = np.full((n, 2), np.nan)
    counts = np.bincount(label[label >= 0], minlength=n)[:n]
    border = np.zeros(n, bool)
    other = np.zeros(n, bool)
    # a non-background pixel of another label next to this one: the disc may be cut by a nearer atom
    occupied = np.any(np.abs(rgb - np.array(_BACKGROUND)) > tol, axis=2)
    for dy, dx in ((0, 1), (1, 0), (0, -1), (-1, 0)):
        a = label[max(0, -dy):h - max(0, dy), max(0, -dx):w - max(0, dx)]
        b = label[max(0, dy):h - max(0, -dy), max(0, dx):w - max(0, -dx)]
        ob = occupied[max(0, dy):h - max(0, -dy), max(0, dx):w - max(0, -dx)]
        bad = (a >= 0) & ob & (b != a)
        if rims and bad.any():
            q = rgb[max(0, dy):h - max(0, -dy), max(0, dx):w - max(0, -dx)][bad].astype(float)
            c = colours.astype(float)[a[bad]]
            alpha = np.einsum("ij,ij->i", q, c) / np.einsum("ij,ij->i", c, c)
            own_rim = (b[bad] < 0) & (alpha > 0) & (alpha <= 1.02) & (np.abs(q - alpha[:, None] * c).max(1) <= 3)
            bad[bad] = ~own_rim
        other[np.unique(a[bad])] = True
    edge = np.concatenate([label[0], label[-1], label[:, 0], label[:, -1]])
    border[np.unique(edge[edge >= 0])] = True
    yy, xx = np.nonzero(label >= 0)
    lab = label[yy, xx]
    if len(lab):
        sx = np.bincount(lab, weights=xx + 0.5, minlength=n)[:n]
        sy = np.bincount(lab, weights=yy + 0.5, minlength=n)[:n]
        ok = counts > 0
        centres[ok, 0] = sx[ok] / counts[ok]
        centres[ok, 1] = sy[ok] / counts[ok]
    return centres, counts, border, other


# -- cameras in each tool's terms ----------------------------------------------------------------------------
def _random_rotation(rng) -> np.ndarray:
    from scipy.spatial.transform import Rotation
    return Rotation.random(random_state=int(rng.integers(2**31))).as_matrix()


def _extent(positions, radii) -> tuple[np.ndarray, float]:
    c = 0.5 * (positions.min(0) + positions.max(0))
    return c, float(np.max(np.linalg.norm(positions - c, axis=1) + radii)) + 0.5


def example_camera(tool: str, positions, *, seed: int = 0, size=(320, 240), kind: str | None = None,
                   radii=None) -> dict:
    """A camera in ``tool``'s terms that frames ``positions`` (Å) at a random orientation (``seed``).

    kind: "orthographic" or "perspective" where the tool has both (random when None)."""
    rng = np.random.default_rng(seed)
    pos = np.asarray(positions, float)
    radii = np.full(len(pos), 0.5) if radii is None else np.asarray(radii, float)
    w, h = int(size[0]), int(size[1])
    if kind is None:
        kind = ("orthographic", "perspective")[int(rng.integers(2))]
    centre, rad = _extent(pos, radii)
    if tool == "pymol":
        r = _random_rotation(rng)
        fov = float(rng.uniform(15, 45))
        t = math.tan(math.radians(fov) / 2)
        dist = rad / t * float(rng.uniform(1.05, 1.4)) / min(1.0, w / h) + (rad if kind == "perspective" else 0)
        view = list(r.T.ravel()) + [0.0, 0.0, -dist] + list(centre) + [dist - rad - 1, dist + rad + 1]
        view.append(fov if kind == "orthographic" else -fov)
        return {"tool": "pymol", "view": [float(x) for x in view], "width": w, "height": h}
    if tool == "matplotlib":
        lo, hi = pos.min(0) - radii.max(), pos.max(0) + radii.max()
        pad = (hi - lo) * rng.uniform(0.0, 0.3, 3)
        persp = kind == "perspective"
        return {"tool": "matplotlib", "elev": float(rng.uniform(-80, 80)), "azim": float(rng.uniform(-180, 180)),
                "roll": float(rng.uniform(-30, 30)) if rng.random() < 0.5 else 0.0,
                "xlim": [float(lo[0] - pad[0]), float(hi[0])], "ylim": [float(lo[1]), float(hi[1] + pad[1])],
                "zlim": [float(lo[2] - pad[2] / 2), float(hi[2] + pad[2] / 2)],
                "box_aspect": [4.0, 4.0, 3.0] if rng.random() < 0.5 else [float(x) for x in rng.uniform(1, 4, 3)],
                "zoom": 1.0, "proj_type": "persp" if persp else "ortho",
                "focal_length": float(rng.choice([1.0, 0.5, 2.0])) if persp else None,
                "figsize": [w / 64, h / 64], "dpi": 64.0,
                "position": [0.125, 0.11, 0.775, 0.77] if rng.random() < 0.5 else [0.0, 0.0, 1.0, 1.0],
                "width": w, "height": h}
    if tool in ("ase", "ase-povray"):
        angles = rng.uniform(-180, 180, 3).round(1)
        rotation = f"{angles[0]}x,{angles[1]}y,{angles[2]}z"
        from ase.io.utils import rotate
        rc = (centre @ rotate(rotation))
        # scale a power of two (px/Å) so the bbox's ends and size are exact and the writer's image is W × H px
        s = 2.0 ** math.floor(math.log2(min(w, h) / (2 * rad * float(rng.uniform(1.0, 1.3)))))
        half = np.array([w, h]) / (2 * s)
        lo = np.round((rc[:2] - half) * s) / s
        bbox = [float(lo[0]), float(lo[1]), float(lo[0] + w / s), float(lo[1] + h / s)]
        if tool == "ase":
            return {"tool": "ase", "rotation": rotation, "scale": s, "bbox": bbox, "width": w, "height": h}
        return {"tool": "ase-povray", "rotation": rotation, "bbox": bbox, "scale": s,
                "camera_type": kind, "camera_dist": float(rng.uniform(2 * rad, 6 * rad)) if kind == "perspective"
                else 50.0, "width": w, "height": h}
    if tool == "ovito":
        r = _random_rotation(rng)
        d, up = -r[2], r[1]
        if kind == "orthographic":
            fov = rad * float(rng.uniform(1.05, 1.4)) / min(1.0, w / h)
            cam = centre - d * (rad + 10)
            return {"tool": "ovito", "type": "ortho", "camera_pos": cam.tolist(), "camera_dir": d.tolist(),
                    "camera_up": up.tolist(), "fov": float(fov), "width": w, "height": h}
        fov = math.radians(float(rng.uniform(20, 60)))
        dist = rad / math.tan(fov / 2) * float(rng.uniform(1.1, 1.4)) / min(1.0, w / h) + rad
        return {"tool": "ovito", "type": "perspective", "camera_pos": (centre - d * dist).tolist(),
                "camera_dir": d.tolist(), "camera_up": up.tolist(), "fov": fov, "width": w, "height": h}
    if tool == "jmol":
        from tests.support import foreign_jmol
        return foreign_jmol.example_camera(pos, radii, rng, (w, h), kind)
    raise ValueError(f"unknown tool {tool!r}")


# -- the tools -----------------------------------------------------------------------------------------------
_PYMOL = {}


def _pymol_session():
    """This process's one PyMOL instance (started once: a fresh instance per probe pass cost ~0.1 s and its
    per-atom ``cmd.color`` selections ~0.1 s more); each draw starts from ``cmd.reinitialize()``, which restores
    every setting, colour and object, so a draw sees the state of a fresh instance."""
    if "p" not in _PYMOL:
        import atexit

        from pymol2 import PyMOL
        p = PyMOL()
        p.start()
        atexit.register(p.stop)
        _PYMOL["p"] = p
    return _PYMOL["p"]


def _draw_pymol(pos, elements, radii, colours, camera, path, flat, subset):
    cmd = _pymol_session().cmd
    cmd.reinitialize()
    lines = [str(len(pos)), "viewcert"] + [f"{e} {x:.6f} {y:.6f} {z:.6f}"
                                           for e, (x, y, z) in zip(elements, pos, strict=False)]
    cmd.load_raw("\n".join(lines) + "\n", "xyz", "mol")
    cmd.alter("mol", "vdw = radii[index - 1]", space={"radii": [float(r) for r in radii]})
    cmd.hide("everything")
    show = "mol" if subset is None else "mol and index " + "+".join(str(i + 1) for i in subset)
    cmd.show("spheres", show)
    if colours is None:
        cmd.color("atomic", "mol and not elem C")
        cmd.color("grey70", "mol and elem C")
        cmd.bg_color("white")
    else:
        # one named colour per atom, assigned by colour index in one pass (as cmd.color per atom would)
        for i, c in enumerate(colours):
            cmd.set_color(f"vc{i}", [float(x) / 255 for x in c])
        index = [cmd.get_color_index(f"vc{i}") for i in range(len(colours))]
        cmd.alter("mol", "color = index_of[index - 1]", space={"index_of": index})
        cmd.recolor()
        cmd.bg_color("black")
        for k, v in dict(ambient=1.0, direct=0.0, reflect=0.0, specular=0.0, ray_shadow=0, antialias=0,
                         depth_cue=0, ray_trace_fog=0, light_count=1, ray_trace_mode=0).items():
            cmd.set(k, v)
    cmd.set("ray_opaque_background", 1)
    view = [float(x) for x in camera["view"]]
    cmd.set("orthoscopic", 1 if view[17] > 0 else 0)
    cmd.set("field_of_view", abs(view[17]))
    cmd.set_view(view)
    cmd.png(str(path), width=int(camera["width"]), height=int(camera["height"]), ray=1)


def _mpl_axes(camera):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=tuple(camera["figsize"]), dpi=float(camera["dpi"]))
    FigureCanvasAgg(fig)
    ax = fig.add_axes(list(camera["position"]), projection="3d")
    ax.view_init(elev=camera["elev"], azim=camera["azim"], roll=camera.get("roll", 0.0))
    if camera["proj_type"] == "persp":
        ax.set_proj_type("persp", focal_length=camera.get("focal_length") or 1.0)
    else:
        ax.set_proj_type("ortho")
    ax.set_xlim(*camera["xlim"])
    ax.set_ylim(*camera["ylim"])
    ax.set_zlim(*camera["zlim"])
    ax.set_box_aspect(camera["box_aspect"], zoom=camera.get("zoom", 1.0))
    return fig, ax


def _matplotlib_transform(pos, camera) -> np.ndarray:
    from mpl_toolkits.mplot3d import proj3d
    fig, ax = _mpl_axes(camera)
    fig.canvas.draw()
    x2, y2, _ = proj3d.proj_transform(pos[:, 0], pos[:, 1], pos[:, 2], ax.get_proj())
    disp = ax.transData.transform(np.column_stack([x2, y2]))
    return np.column_stack([disp[:, 0], fig.bbox.height - disp[:, 1]])


def _draw_matplotlib(pos, elements, radii, colours, camera, path, flat, subset):
    fig, ax = _mpl_axes(camera)
    sel = np.arange(len(pos)) if subset is None else np.asarray(subset)
    ppa = fig.bbox.height * 0.6 / max(np.ptp(camera["xlim"]), np.ptp(camera["ylim"]), np.ptp(camera["zlim"]))
    s = (2 * radii[sel] * ppa * 72 / float(camera["dpi"])) ** 2
    if flat:
        fig.set_facecolor("black")
        ax.set_facecolor("black")
        ax.set_axis_off()
        ax.scatter(pos[sel, 0], pos[sel, 1], pos[sel, 2], c=colours[sel] / 255, s=s, depthshade=False,
                   linewidths=0, edgecolors="none", antialiased=False)
    else:
        ax.scatter(pos[sel, 0], pos[sel, 1], pos[sel, 2], c=_element_colours(elements)[sel], s=s)
    fig.savefig(path, dpi=float(camera["dpi"]), facecolor=fig.get_facecolor())


def _ase_writer(pos, elements, radii, colours, camera):
    from ase import Atoms
    from ase.io.png import PNG
    atoms = Atoms(symbols=list(elements), positions=pos)
    return PNG(atoms, rotation=camera["rotation"], scale=float(camera["scale"]), bbox=list(camera["bbox"]),
               radii=list(radii), colors=None if colours is None else list(colours / 255), show_unit_cell=0)


def _ase_transform(pos, elements, radii, camera) -> np.ndarray:
    wr = _ase_writer(pos, elements, radii, None, camera)
    xy = wr.positions[: len(pos), :2]
    return np.column_stack([xy[:, 0], int(wr.h) - xy[:, 1]])


def _draw_ase(pos, elements, radii, colours, camera, path, flat, subset):
    sel = np.arange(len(pos)) if subset is None else np.asarray(subset)
    # the writer of the whole structure fixes the frame (bbox given); only the subset is drawn
    wr = _ase_writer(pos[sel], [elements[i] for i in sel], radii[sel], None if colours is None else colours[sel],
                     camera)
    wr.write(str(path))
    if flat:  # the PNG is transparent outside the atoms; the flat background is black
        rgb = _read_rgb(path)
        Image.fromarray(rgb.astype(np.uint8)).save(path)


def _draw_ovito(pos, elements, radii, colours, camera, path, flat, subset):
    from ovito.data import DataCollection
    from ovito.pipeline import Pipeline, StaticSource
    from ovito.vis import ParticlesVis, StandardRenderer, TachyonRenderer, Viewport
    sel = np.arange(len(pos)) if subset is None else np.asarray(subset)
    dc = DataCollection()
    parts = dc.create_particles(count=len(sel))
    parts.create_property("Position", data=pos[sel])
    cols = (_element_colours(elements) if colours is None else colours / 255)[sel]
    parts.create_property("Color", data=cols)
    parts.create_property("Radius", data=radii[sel])
    if flat:
        parts.vis.shape = ParticlesVis.Shape.Circle
    pipe = Pipeline(source=StaticSource(data=dc))
    pipe.add_to_scene()
    try:
        typ = Viewport.Type.Ortho if camera["type"] == "ortho" else Viewport.Type.Perspective
        vp = Viewport(type=typ, camera_pos=tuple(camera["camera_pos"]), camera_dir=tuple(camera["camera_dir"]),
                      camera_up=tuple(camera["camera_up"]), fov=float(camera["fov"]))
        if flat:
            renderer = TachyonRenderer(antialiasing=False, direct_light=False, shadows=False,
                                       ambient_occlusion=False)
            bg = (0.0, 0.0, 0.0)
        else:
            renderer, bg = StandardRenderer(), (1.0, 1.0, 1.0)
        vp.render_image(size=(int(camera["width"]), int(camera["height"])), filename=str(path),
                        background=bg, renderer=renderer)
    finally:
        pipe.remove_from_scene()


def povray_scene(pos, elements, radii, colours, camera, flat):
    """ASE's POVRAY object for ``camera`` (an "ase-povray" table) and the camera table completed with the
    numbers the .pov file states (offset, right, up, direction, location)."""
    from ase import Atoms
    from ase.io.pov import POVRAY
    from ase.io.utils import PlottingVariables
    atoms = Atoms(symbols=list(elements), positions=pos)
    pv = PlottingVariables(atoms, rotation=camera["rotation"], scale=1.0, bbox=list(camera["bbox"]),
                           radii=list(radii), colors=None if colours is None else list(colours / 255),
                           show_unit_cell=0)
    settings = dict(canvas_width=int(camera["width"]), camera_type=camera["camera_type"],
                    camera_dist=float(camera["camera_dist"]), transparent=False,
                    background="Black" if flat else "White")
    if flat:
        settings["textures"] = ["vcflat"] * len(pos)
    pov = POVRAY.from_PlottingVariables(pv, **settings)
    if flat:
        pov.material_styles_dict = {**pov.material_styles_dict,
                                    "vcflat": "finish {ambient 1 diffuse 0 specular 0 phong 0 reflection 0}"}
    table = {"tool": "ase-povray", "rotation": camera["rotation"], "camera_type": camera["camera_type"],
             "offset": [float(x) for x in np.asarray(pv.offset) / pv.scale + np.asarray(pov.offset)],
             "right": float(f"{pov.image_width:.2f}"), "up": float(f"{pov.image_height:.2f}"),
             "direction": float(f"{pov.image_plane:.2f}"), "location": float(f"{pov.camera_dist:.2f}"),
             "width": int(camera["width"]), "height": int(camera["height"])}
    return pov, table


def _draw_povray(pos, elements, radii, colours, camera, path, flat, subset):
    sel = np.arange(len(pos)) if subset is None else np.asarray(subset)
    pov, _ = povray_scene(pos, elements, radii, colours, camera, flat)
    if subset is not None:  # keep the frame of the whole structure; draw only the subset
        keep = np.zeros(len(pos), bool)
        keep[sel] = True
        pov.positions = pov.positions[keep]
        pov.diameters = np.asarray(pov.diameters)[keep]
        pov.colors = [c for c, k in zip(pov.colors, keep, strict=False) if k]
        pov.textures = None if pov.textures is None else [t for t, k in zip(pov.textures, keep, strict=False) if k]
    pov.bondatoms = []
    pov_path = Path(path).with_suffix(".pov")
    inputs = pov.write(pov_path)
    if flat:  # exact colours: linear gamma throughout, no antialiasing
        text = pov_path.read_text().replace("assumed_gamma 2.2", "assumed_gamma 1.0")
        pov_path.write_text(text)
        ini = Path(inputs.path)
        ini.write_text(ini.read_text().replace("Display_Gamma=sRGB", "Display_Gamma=1.0")
                       .replace("Antialias=True", "Antialias=False") + "File_Gamma=1.0\n")
    subprocess.run(["povray", Path(inputs.path).name, "-D", "+L/usr/share/povray-3.7/include"],
                   cwd=pov_path.parent, check=True, capture_output=True, timeout=300)
    out = pov_path.with_suffix(".png")
    if out != Path(path):
        out.replace(path)


def _draw_jmol(pos, elements, radii, colours, camera, path, flat, subset):
    from tests.support import foreign_jmol
    foreign_jmol.draw(pos, elements, radii, colours, camera, path, flat, subset)


_DRAW = {"pymol": _draw_pymol, "matplotlib": _draw_matplotlib, "ase": _draw_ase, "ase-povray": _draw_povray,
         "ovito": _draw_ovito, "jmol": _draw_jmol}


def tool_palette(tool: str, n: int) -> np.ndarray:
    """The flat colours ``tool`` draws exactly: ``flat_palette`` (Jmol: snapped to its 6-bit channels)."""
    colours = flat_palette(n)
    if tool == "jmol":
        from tests.support import foreign_jmol
        colours = foreign_jmol.palette(colours)
    return colours


# -- the truth -----------------------------------------------------------------------------------------------
def _probe_centres(tool, pos, elements, radii, camera, workdir: Path) -> np.ndarray:
    n = len(pos)
    colours = tool_palette(tool, n)
    draw = _DRAW[tool]
    probe_path = workdir / "probe.png"

    def shot(r, subset):
        draw(pos, elements, r, colours, camera, probe_path, True, subset)
        return _colour_stats(_read_rgb(probe_path), colours, rims=tool in ANTIALIASED)

    # size the probe discs to ~PROBE_RADIUS_PX from a first pass
    r = np.full(n, 0.25 * float(np.median(radii)))
    for _ in range(3):
        _, counts, _, _ = shot(r, None)
        seen = counts[counts > 0]
        if not len(seen):
            return np.full((n, 2), np.nan)
        r_px = math.sqrt(float(np.median(seen)) / math.pi)
        k = PROBE_RADIUS_PX / max(r_px, 0.5)
        if 0.75 < k < 1.35:
            break
        r = r * min(k, 8.0)
    centres = np.full((n, 2), np.nan)
    pending = [list(range(n))]
    approx = np.full((n, 2), np.nan)
    for _ in range(4 * n + 4):
        if not pending:
            break
        group = pending.pop(0)
        c, counts, border, other = shot(r, group if len(group) < n else None)
        g = np.asarray(group)
        approx[g[counts[g] > 0]] = c[g[counts[g] > 0]]
        done = [i for i in group if counts[i] > 0 and not other[i]]
        for i in done:
            centres[i] = np.nan if border[i] else c[i]
        rest = [i for i in group if i not in set(done)]
        if not rest:
            continue
        if len(group) == 1:  # alone and still no pixels: off the image or behind the camera
            continue
        # split the rest into groups whose probe discs lie apart (greedy colouring by approximate centres)
        reach = 4 * PROBE_RADIUS_PX + 3
        groups: list[list[int]] = []
        for i in rest:
            for grp in groups:
                if np.isfinite(approx[i, 0]) and all(
                        np.isfinite(approx[j, 0]) and np.linalg.norm(approx[i] - approx[j]) > reach for j in grp):
                    grp.append(i)
                    break
            else:
                groups.append([i])
        if len(groups) == 1 and len(groups[0]) == len(group):  # no progress: measure each alone
            groups = [[i] for i in rest]
        pending.extend(groups)
    return centres


def render(tool: str, positions, elements, out, *, camera: dict | None = None, size=(320, 240),
           mode: str = "shaded", radii=None, seed: int = 0, name: str | None = None) -> ForeignRender:
    """Render ``positions`` (n, 3) Å with ``elements`` by ``tool`` under ``camera`` (the tool's terms; None:
    ``example_camera(tool, positions, seed=seed, size=size)``) into the folder ``out``; module docstring."""
    if tool not in TOOLS:
        raise ValueError(f"unknown tool {tool!r} (one of {TOOLS})")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    reason = available(tool)
    if reason:
        raise RuntimeError(reason)
    pos = np.asarray(positions, dtype=float).reshape(-1, 3)
    elements = tuple(str(e) for e in elements)
    radii = _default_radii(elements) if radii is None else np.broadcast_to(np.asarray(radii, float), (len(pos),))
    radii = np.array(radii, dtype=float)
    if camera is None:
        camera = example_camera(tool, pos, seed=seed, size=size, radii=radii)
    camera = dict(camera)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    stem = name or f"{tool}-{mode}"
    work = out / f".{stem}-work"
    work.mkdir(exist_ok=True)
    image = out / f"{stem}.png"
    colours = tool_palette(tool, len(pos))
    draw = _DRAW[tool]
    draw(pos, elements, radii, colours if mode == "flat" else None, camera, image, mode == "flat", None)
    if mode == "flat":
        twin = image
    else:
        twin = work / "flat-twin.png"
        draw(pos, elements, radii, colours, camera, twin, True, None)
    _, visible, _, _ = _colour_stats(_read_rgb(twin), colours, rims=tool in ANTIALIASED)
    if tool == "matplotlib":
        centres, truth = _matplotlib_transform(pos, camera), "transform"
    elif tool == "ase":
        centres, truth = _ase_transform(pos, elements, radii, camera), "transform"
    else:
        centres, truth = _probe_centres(tool, pos, elements, radii, camera, work), "probe"
    if tool == "ase-povray":
        _, camera = povray_scene(pos, elements, radii, None, camera, False)
    if tool == "jmol":  # the camera as Jmol states it: show orientation, and the state a PNGJ file embeds
        from tests.support import foreign_jmol
        camera = foreign_jmol.stated_camera(pos, elements, radii, camera, work, pngj=out / f"{stem}.pngj")
    shutil.rmtree(work, ignore_errors=True)
    return ForeignRender(tool=tool, mode=mode, image=image, camera=camera, positions=pos, elements=elements,
                         radii=radii, centres=centres, visible=np.asarray(visible, dtype=int), colours=colours,
                         truth=truth)
