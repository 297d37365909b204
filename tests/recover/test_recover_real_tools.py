"""Camera recovery on real tools' pictures (issue 54's cover set; the whole corpus is benchmarks/bench_recover.py):
the tool draws a structure at an orientation the recovery is not told, and the truth is the tool's own pixel
centre of each atom (``tests/support/foreign_render``: matplotlib's and ASE's own transforms, PyMOL's flat probe
discs). The detections are those centres for the atoms with at least 30 visible pixels, plus 0.3 px noise (the
pixel reader is issue 53's to test); the measure is the set-to-set residual, RMS ≤ 1 px."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.foreign_render import available, example_camera, render
from viewcert.elements import covalent_radii
from viewcert.io.builtin import builtin
from viewcert.recover import DetectedAtoms, RecoveryHints, recover_camera


def _set_rms(projection, xyz, z, truth, truth_z) -> float:
    uv, _ = projection.project(xyz)
    d = [np.nanmin(np.linalg.norm(uv[z == e] - t, axis=1)) for t, e in zip(truth, truth_z, strict=True)]
    return float(np.sqrt(np.mean(np.square(d))))


def _mcs_camera(xyz, elev, azim):
    """MCS-Set's matplotlib camera: a 3D axes filling the figure, default perspective, limits autoscaled."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(6, 6), dpi=64)
    FigureCanvasAgg(fig)
    ax = fig.add_axes([0, 0, 1, 1], projection="3d")
    ax.scatter(xyz[:, 0], xyz[:, 1], xyz[:, 2], s=10)
    ax.view_init(elev=elev, azim=azim)
    fig.canvas.draw()
    return {"tool": "matplotlib", "elev": elev, "azim": azim, "roll": 0.0, "xlim": list(ax.get_xlim3d()),
            "ylim": list(ax.get_ylim3d()), "zlim": list(ax.get_zlim3d()), "box_aspect": [4.0, 4.0, 3.0],
            "zoom": 1.0, "proj_type": "persp", "focal_length": 1.0, "figsize": [6.0, 6.0], "dpi": 64.0,
            "position": [0.0, 0.0, 1.0, 1.0], "width": 384, "height": 384}


@pytest.mark.parametrize("tool, kind", [("ase", "orthographic"), ("matplotlib", "perspective"),
                                        ("pymol", "perspective")])
def test_recovers_the_tools_own_camera(tool, kind, tmp_path):
    reason = available(tool)
    if reason:
        pytest.skip(reason)
    s = next(m for m in builtin("sample") if m.identifier == "ccd:IBP")
    radii = 0.5 * covalent_radii(s.numbers) + 0.1
    if tool == "matplotlib":
        camera = _mcs_camera(s.positions, 37.0, -121.0)
    else:
        camera = example_camera(tool, s.positions, seed=11, size=(360, 360), kind=kind, radii=radii)
    r = render(tool, s.positions, s.symbols, tmp_path, camera=camera, radii=radii)
    drawn = (r.visible >= 30) & np.isfinite(r.centres).all(axis=1)
    noisy = r.centres[drawn] + np.random.default_rng(0).normal(scale=0.3, size=(int(drawn.sum()), 2))
    w, h = r.size
    rec = recover_camera(s.positions, s.numbers, DetectedAtoms(noisy, s.numbers[drawn]), w, h,
                         hints=RecoveryHints(tool="matplotlib" if tool == "matplotlib" else "unknown"))
    assert rec.recovered, rec.message
    assert rec.poses[0].projection.kind == kind
    assert _set_rms(rec.poses[0].projection, s.positions, s.numbers, r.centres[drawn], s.numbers[drawn]) <= 1.0
