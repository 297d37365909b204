"""Other tools' cameras in their own terms → one pixel projection (issue 53, item 1) and back (issue 54, item 3):
hand-worked cases from each tool's documented conventions, every bad field named, and exact round trips of
``to_tool_terms``. The real tools' own pixels are the truth in tests/cameras/test_tool_cameras_real.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from viewcert.cameras import PixelProjection, resolve_tool_camera, to_tool_terms
from viewcert.errors import CameraError, InputError

PTS = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.5, -1.0, 3.0]])


def _uv(table, size=None):
    return resolve_tool_camera(table, where="images.toml", image_size=size).project(PTS)[0]


# -- PyMOL: get_view() (PyMOL wiki "Get View": 0-8 column-major rotation, 9-11 origin in camera space, 12-14
# origin in model space, 15-16 clip, 17 field of view, orthoscopic when positive) ----------------------------------
def test_pymol_orthoscopic_by_hand():
    # identity rotation, the origin 50 Å in front: the image height spans 2·50·tan(10°) Å
    view = [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, -50, 0, 0, 0, 40, 60, 20]
    s = 50 / (50 * math.tan(math.radians(10)))   # (H/2) / half height, px/Å
    uv = _uv({"tool": "pymol", "view": view, "width": 200, "height": 100})
    np.testing.assert_allclose(uv[1], [100 + s, 50], atol=1e-9)
    np.testing.assert_allclose(uv[2], [100, 50 - 2 * s], atol=1e-9)
    np.testing.assert_allclose(uv[3], [100 + 0.5 * s, 50 + s], atol=1e-9)  # depth does not matter


def test_pymol_perspective_by_hand():
    # camera at (0, 0, 50) looking down −z; focal px = (H/2)/tan(fov/2), fov vertical
    view = [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, -50, 0, 0, 0, 40, 60, -20]
    f = 50 / math.tan(math.radians(10))
    uv = _uv({"tool": "pymol", "view": view, "width": 200, "height": 100})
    np.testing.assert_allclose(uv[1], [100 + f / 50, 50], atol=1e-9)
    np.testing.assert_allclose(uv[3], [100 + 0.5 * f / 47, 50 + f / 47], atol=1e-9)


def test_pymol_rotation_is_column_major():
    # 90° about z, column-major: model x → camera y
    view = [0, 1, 0, -1, 0, 0, 0, 0, 1, 0, 0, -50, 0, 0, 0, 40, 60, 20]
    s = 50 / (50 * math.tan(math.radians(10)))
    uv = _uv({"tool": "pymol", "view": view, "width": 100, "height": 100})
    np.testing.assert_allclose(uv[1], [50, 50 - s], atol=1e-9)


# -- ChimeraX: "view matrix camera" is the camera-to-scene 3×4, row-major; "camera ortho fieldWidth w" is the width
# of the view in Å; "camera mono fieldOfView a" the horizontal angle, default 30° (ChimeraX User Guide, commands
# "view" and "camera": https://www.cgl.ucsf.edu/chimerax/docs/user/commands/camera.html) ---------------------------
CHIMERAX_IDENTITY_AT_30 = "view matrix camera 1,0,0,0,0,1,0,0,0,0,1,30"


def test_chimerax_ortho_by_hand():
    uv = _uv({"tool": "chimerax", "matrix": CHIMERAX_IDENTITY_AT_30, "mode": "ortho", "field_width": 20,
              "width": 400, "height": 300})
    np.testing.assert_allclose(uv[1], [200 + 20, 150], atol=1e-9)   # 400 px / 20 Å
    np.testing.assert_allclose(uv[2], [200, 150 - 40], atol=1e-9)


def test_chimerax_mono_default_fov_by_hand():
    f = 200 / math.tan(math.radians(15))
    uv = _uv({"tool": "chimerax", "matrix": CHIMERAX_IDENTITY_AT_30, "width": 400, "height": 300})
    np.testing.assert_allclose(uv[1], [200 + f / 30, 150], atol=1e-9)
    np.testing.assert_allclose(uv[3], [200 + 0.5 * f / 27, 150 + f / 27], atol=1e-9)


def test_chimerax_camera_axes_are_columns():
    # the camera's x axis along scene y: a scene point on +y is drawn right of centre
    m = "0,-1,0,0, 1,0,0,0, 0,0,1,30"
    uv = _uv({"tool": "chimerax", "matrix": m, "mode": "ortho", "field_width": 40, "width": 400, "height": 400})
    np.testing.assert_allclose(uv[2], [200 + 2 * 10, 200], atol=1e-9)


# -- Jmol: "moveto timeSeconds {x y z degrees} zoomPercent transX transY {x y z} rotationRadius {nav} navX navY
# navDepth cameraDepth cameraX cameraY" (Jmol's moveto documentation); the scale and camera as Jmol 14's
# TransformManager computes them: zoom 100 fits rotationRadius into half of N px, N = the larger window side
# (zoomLarge, default true; the smaller when false) less 2, counted at twice the size when the image is written
# antialiased (antialiasImages, default true); the centre at width·(1/2 + transX/100), height·(1/2 + transY/100);
# in perspective the camera (cameraDepth + 1/2)·N px before the centre's plane -------------------------------
def test_jmol_moveto_orthographic_by_hand():
    line = "moveto 1.0 { 0 0 1 90 } 100.0 0.0 0.0 {0 0 0} 10.0 {0 0 0} 0 0 0 3.0 0.0 0.0;"
    # the smaller side, not antialiased: N = 300 - 2 px over 2 x 10 Å
    uv = _uv({"tool": "jmol", "moveto": line, "perspective": False, "zoom_large": False, "antialias": False,
              "width": 400, "height": 300})
    s = 298 / 20
    np.testing.assert_allclose(uv[1], [200, 150 - s], atol=1e-9)    # x rotated 90° about z onto y
    np.testing.assert_allclose(uv[2], [200 - 2 * s, 150], atol=1e-9)
    # Jmol's defaults: the larger side, drawn at 2x: N = 800 - 2 (2x px), halved back
    uv = _uv({"tool": "jmol", "moveto": line, "perspective": False, "width": 400, "height": 300})
    s = 798 / 20 / 2
    np.testing.assert_allclose(uv[1], [200, 150 - s], atol=1e-9)


def test_jmol_zoom_and_translation():
    line = "moveto 0 {1 0 0 0} 200 10 -20 {1 0 0} 5;"
    uv = _uv({"tool": "jmol", "moveto": line, "perspective": False, "antialias": False, "width": 200,
              "height": 200})
    s = 2 * 198 / 10
    # the centre (1, 0, 0) at 200·(0.5 + 0.1), 200·(0.5 - 0.2): transY > 0 moves the model down
    np.testing.assert_allclose(uv[0], [120 - s, 60], atol=1e-9)


def test_jmol_perspective_keeps_the_centre_plane_scale():
    line = "moveto 0 {0 0 1 0} 100 0 0 {0 0 0} 10 {0 0 0} 0 0 0 3.0 0 0;"
    uv = _uv({"tool": "jmol", "moveto": line, "antialias": False, "width": 202, "height": 102})
    s, f = 200 / 20, 3.5 * 200          # N = 200 px; the camera 3.5 N px = 70 Å before the centre
    np.testing.assert_allclose(uv[1], [101 + s, 51], atol=1e-9)                 # on the centre's plane
    np.testing.assert_allclose(uv[3], [101 + 0.5 * f / 67, 51 + f / 67], atol=1e-9)  # 3 Å nearer


SHOW_ORIENTATION = ("moveto /* time, axisAngle */ 1.0 { 0 0 1 90} /* zoom, translation */  100.0 0.0 0.0  "
                    "/* center, rotationRadius */ {0 0 0} 10.0 /* navigation center, translation, depth */ "
                    "{0 0 0} 0 0 0 /* cameraDepth, cameraX, cameraY */  3.0 0.0 0.0;")


def test_jmol_show_orientation_and_state_text():
    # show orientation's line, comments and all, and a state script (as a PNGJ embeds) with its settings
    table = {"tool": "jmol", "moveto": SHOW_ORIENTATION, "perspective": False, "width": 400, "height": 300}
    plain = {**table, "moveto": "moveto 1.0 { 0 0 1 90} 100.0 0.0 0.0 {0 0 0} 10.0"}
    np.testing.assert_allclose(_uv(table), _uv(plain), atol=1e-12)
    state = ("function _setPerspectiveState() {\n  set perspectiveModel 11;\n  set perspectiveDepth false;\n"
             "  set cameraDepth 3.0;\n  moveto -1.0 {1 0 0 30} 50.0 0.0 0.0 {0 0 0} 10.0;\n"
             "  moveto 0.0 { 0 0 1 90} 100.0 0.0 0.0 {0 0 0} 10.0 {0 0 0} 0 0 0 3.0 0.0 0.0;;\n}\n"
             "  set zoomlarge false;\n")
    got = resolve_tool_camera({"tool": "jmol", "state": state, "width": 400, "height": 300})
    want = resolve_tool_camera({**plain, "zoom_large": False})
    assert got.kind == "orthographic"    # perspectiveDepth false in the state; the last moveto is the view
    np.testing.assert_allclose(got.project(PTS)[0], want.project(PTS)[0], atol=1e-12)


def test_jmol_state_from_a_pngj_file():
    import io
    import zipfile

    from viewcert.cameras.tool_jmol import jmol_state_from_pngj
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("JmolManifest.txt", "state.spt\n")
        z.writestr("state.spt", "moveto 0.0 {0 0 1 0} 100 0 0 {0 0 0} 5;")
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 64        # a PNG's bytes, then the archive (as Jmol writes PNGJ)
    assert jmol_state_from_pngj(png + buf.getvalue()).startswith("moveto 0.0")
    with pytest.raises(InputError, match="not a Jmol PNGJ"):
        jmol_state_from_pngj(png)


# -- VESTA: SCENE = a 4×4 view matrix, the in-plane translation, the zoom scale ----------------------------------
def test_vesta_scene_by_hand():
    scene = """SCENE
 0.0 -1.0 0.0 0.0
 1.0  0.0 0.0 0.0
 0.0  0.0 1.0 0.0
 0.0  0.0 0.0 1.0
  0.500   0.000
  0.000
  2.000"""
    uv = _uv({"tool": "vesta", "scene": scene, "px_per_angstrom": 10, "width": 300, "height": 200})
    s = 20.0
    np.testing.assert_allclose(uv[0], [150 + 0.5 * s, 100], atol=1e-9)
    np.testing.assert_allclose(uv[1], [150 + 0.5 * s, 100 - s], atol=1e-9)   # x → view y


def test_plain_matrix_and_kind():
    p = [[2, 0, 0, 10], [0, -2, 0, 20], [0, 0, 0, 1]]
    proj = resolve_tool_camera({"tool": "matrix", "matrix": p}, image_size=(40, 40))
    assert proj.kind == "orthographic"
    np.testing.assert_allclose(proj.project(PTS)[0][2], [10, 16])


# -- bad input: one error naming the field -----------------------------------------------------------------------
GOOD_VIEW = [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, -50, 0, 0, 0, 40, 60, 20]


@pytest.mark.parametrize("table, size, field, words", [
    ({"tool": "pymol", "view": GOOD_VIEW[:9] + [float("nan")] + GOOD_VIEW[10:], "width": 9, "height": 9},
     None, "camera.view", "non-finite"),
    ({"tool": "pymol", "view": [0] * 9 + GOOD_VIEW[9:], "width": 9, "height": 9}, None, "camera.view",
     "not a rotation (singular"),
    ({"tool": "pymol", "view": [-1, 0, 0, 0, 1, 0, 0, 0, 1] + GOOD_VIEW[9:], "width": 9, "height": 9}, None,
     "camera.view", "reflection"),
    ({"tool": "pymool", "view": GOOD_VIEW}, (9, 9), "camera.tool", "did you mean pymol"),
    ({"tool": "pymol", "width": 9, "height": 9}, None, "camera.view", "missing"),
    ({"tool": "pymol", "view": GOOD_VIEW, "width": 640, "height": 480}, (320, 240), "camera.width",
     "640×480 px but the image is 320×240"),
    ({"tool": "pymol", "view": GOOD_VIEW}, None, "camera.width", "missing"),
    ({"tool": "chimerax", "matrix": CHIMERAX_IDENTITY_AT_30, "mode": "ortho", "width": 9, "height": 9}, None,
     "camera.field_width", "missing"),
    ({"tool": "ovito", "type": "ortho", "camera_pos": [0, 0, 0], "camera_dir": [0, 0, 0], "fov": 1}, (9, 9),
     "camera.camera_dir", "non-zero"),
    ({"tool": "ase", "rotation": "10q", "scale": 1, "bbox": [0, 0, 1, 1]}, (9, 9), "camera.rotation",
     "bad rotation term"),
    ({"tool": "matplotlib", "elev": 1, "azim": 2, "xlim": [0, 1], "ylim": [0, 1], "zlim": [0, 1],
      "figsize": [8, 8], "dpi": 64}, (500, 512), "camera.figsize", "512×512 px but the image is 500×512"),
    ({"tool": "matrix", "matrix": [[1, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 1]]}, (9, 9), "camera.matrix",
     "singular"),
    ({"tool": "jmol", "moveto": "rotate x 30"}, (9, 9), "camera.moveto", "moveto"),
    ({"tool": "jmol", "moveto": "moveto 0 {0 0 1 0} 100 0 0 {0 0 0} 5 {0 0 0} 0 0 0 3 1.5 0"}, (9, 9),
     "camera.moveto", "camera x/y shift"),
    ({"tool": "jmol", "moveto": SHOW_ORIENTATION, "perspective": "maybe"}, (9, 9), "camera.perspective",
     "true or false"),
    ("pymol", (9, 9), "camera", "table"),
])
def test_bad_camera_names_the_field(table, size, field, words):
    with pytest.raises(InputError) as exc:
        resolve_tool_camera(table, where="images.toml", image_size=size)
    msg = str(exc.value)
    assert msg.startswith(f"file images.toml, field {field}:"), msg
    assert words in msg, msg
    assert "\n" not in msg


# -- writing back ------------------------------------------------------------------------------------------------
def _projections():
    rng = np.random.default_rng(4)
    out = []
    for i in range(6):
        from scipy.spatial.transform import Rotation
        r = Rotation.random(random_state=i).as_matrix()
        table = {"tool": "ovito", "type": "ortho" if i % 2 else "perspective", "camera_pos": list(rng.normal(size=3) * 30),
                 "camera_dir": list(-r[2]), "camera_up": list(r[1]), "fov": 8.0 if i % 2 else 0.6,
                 "width": 320, "height": 240}
        out.append(resolve_tool_camera(table))
    return out


@pytest.mark.parametrize("tool", ["pymol", "chimerax", "ovito", "matplotlib", "matrix"])
def test_to_tool_terms_round_trip(tool):
    rng = np.random.default_rng(9)
    pts = rng.normal(size=(20, 3)) * 5
    for proj in _projections():
        cam, _ = proj.equivalent()
        # a centre in front of the camera (a perspective camera's origin must be)
        centre = cam.position - 20 * cam.rotation[2] if proj.kind == "perspective" else pts.mean(0)
        table = to_tool_terms(proj, tool, centre=centre)
        back = resolve_tool_camera(table, where="written", image_size=(proj.width, proj.height))
        assert back.kind == proj.kind
        np.testing.assert_allclose(back.project(pts)[0], proj.project(pts)[0], atol=1e-7)


def test_pymol_and_chimerax_commands():
    proj = _projections()[1]
    pym = to_tool_terms(proj, "pymol")
    assert pym["commands"][0].startswith("set_view (") and pym["commands"][-1].endswith("ray=1")
    cx = to_tool_terms(proj, "chimerax")
    assert cx["commands"][0] == "windowsize 320 240" and cx["commands"][1].startswith("camera ortho fieldWidth ")
    assert cx["commands"][2].startswith("view matrix camera ")
    # the command text itself reads back (ChimeraX's own command line as the matrix field)
    table = {"tool": "chimerax", "matrix": cx["commands"][2], "mode": "ortho", "field_width": cx["field_width"],
             "width": 320, "height": 240}
    np.testing.assert_allclose(resolve_tool_camera(table).project(PTS)[0], proj.project(PTS)[0], atol=1e-5)


def test_a_tool_that_cannot_draw_the_projection_says_why():
    # matplotlib's per-axis scaling gives non-square pixels: PyMOL, ChimeraX and OVITO cannot draw it
    mpl = {"tool": "matplotlib", "elev": 30, "azim": -60, "xlim": [0, 10], "ylim": [0, 2], "zlim": [0, 5],
           "proj_type": "ortho", "figsize": [5, 5], "dpi": 64}
    proj = resolve_tool_camera(mpl, image_size=(320, 320))
    for tool in ("pymol", "chimerax", "ovito"):
        with pytest.raises(CameraError, match="not square or are skewed"):
            to_tool_terms(proj, tool)
    back = resolve_tool_camera(to_tool_terms(proj, "matplotlib"))
    np.testing.assert_allclose(back.project(PTS)[0], proj.project(PTS)[0], atol=1e-7)
    skewed = PixelProjection([[1, 0.5, 0, 0], [0, -1, 0, 0], [0, 0, 0, 1]], 10, 10, "orthographic")
    with pytest.raises(CameraError, match="matplotlib cannot draw"):
        to_tool_terms(skewed, "matplotlib")
    with pytest.raises(CameraError, match="one of"):
        to_tool_terms(proj, "vmd")
