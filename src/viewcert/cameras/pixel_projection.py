"""A camera as another tool states it, resolved to one 3×4 projection onto an image's pixels.

``PixelProjection.matrix`` P maps a world point X (Cartesian Å) to homogeneous pixels: ``(u·w, v·w, w) = P (X, 1)``,
with (u, v) in the image's own pixel frame (u right, v down, origin at the top-left corner of the top-left pixel,
pixel (row i, col j) centred at (j + 0.5, i + 0.5); docs/conventions.md). P is stored in a canonical scale:

- **orthographic** (affine): the last row is exactly (0, 0, 0, 1), so w = 1;
- **perspective**: P = K · diag(1, 1, −1) · R · [I | −C] with K = [[a, s, cx], [0, −b, cy], [0, 0, 1]], a, b > 0,
  R a proper rotation (world→camera, rows = camera x right, y up, z toward the viewer) and C the pinhole (Å), so
  w is the depth (Å along the view direction, larger = farther).

Every finite camera decomposes so (an RQ decomposition), whatever the tool: non-square pixels, skew and a scaling
of each world axis on its own (matplotlib's 3D axes) all land in K. The oracle takes viewcert's own cameras
(square pixels, no skew); ``equivalent()`` returns the viewcert camera with the same rays and the 2D affine
``warp`` from its pixels to the tool's, so observations made in the tool's image are mapped into the camera's
frame by ``to_camera_pixels`` and certified unchanged. The facing direction is the one under which the image is
not mirrored (R proper, image u right and v down for camera x right and y up).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from viewcert.cameras.camera import Camera, OrthographicCamera, PerspectiveCamera
from viewcert.errors import CameraError

KINDS = ("orthographic", "perspective")
#: a left 3×3 (perspective) or 2×3 (orthographic) block whose smallest singular value is below this fraction of
#: its largest is singular: no camera
SINGULAR_RTOL = 1e-12

_FLIP = np.diag([1.0, 1.0, -1.0])


def _finite_matrix(matrix) -> np.ndarray:
    try:
        p = np.array(matrix, dtype=np.float64)
    except (TypeError, ValueError):
        raise CameraError("projection matrix must be 12 numbers (3×4)") from None
    if p.size == 12:
        p = p.reshape(3, 4)
    if p.shape != (3, 4):
        raise CameraError(f"projection matrix must be 3×4 (12 numbers), got shape {np.shape(matrix)}")
    if not np.isfinite(p).all():
        raise CameraError("projection matrix has non-finite entries")
    return p


def _check_rank(block: np.ndarray, what: str) -> np.ndarray:
    sv = np.linalg.svd(block, compute_uv=False)
    if sv[0] == 0 or sv[-1] <= SINGULAR_RTOL * sv[0]:
        raise CameraError(f"projection matrix is singular ({what} has rank < {min(block.shape)}): no camera")
    return sv


def _canonical_affine(p: np.ndarray) -> np.ndarray:
    if np.any(p[2, :3] != 0.0) or p[2, 3] == 0.0:
        raise CameraError("an orthographic projection matrix needs a last row (0, 0, 0, w) with w ≠ 0")
    q = p / p[2, 3]
    _check_rank(q[:2, :3], "its 2×3 block")
    return q


def _rq_affine(m2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """m2 (2×3) = U · [[1, 0], [0, −1]] · R[:2], U = [[a, s], [0, b]] with a, b > 0; returns (U, R proper)."""
    r2 = -m2[1] / np.linalg.norm(m2[1])
    b = float(np.linalg.norm(m2[1]))
    s = float(m2[0] @ r2)
    rest = m2[0] - s * r2
    a = float(np.linalg.norm(rest))
    r1 = rest / a
    r = np.array([r1, r2, np.cross(r1, r2)])
    return np.array([[a, s], [0.0, b]]), r


def _rq_perspective(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """m (3×3) = λ · K · diag(1, 1, −1) · R with K = [[a, s, cx], [0, −b, cy], [0, 0, 1]], a, b > 0, R proper."""
    u, q = scipy.linalg.rq(m)
    # choose the signs d (diagonal ±1, u q = (u d)(d q)) so that K has a > 0, −b < 0 and R = diag(1,1,−1)·d·q
    # is proper; the scale λ = (u d)[2, 2] takes the remaining sign
    det_q = float(np.sign(np.linalg.det(q)))
    d2 = det_q * float(np.sign(u[0, 0] * u[1, 1]))
    d0 = float(np.sign(u[0, 0] * u[2, 2])) * d2
    d1 = -float(np.sign(u[1, 1] * u[2, 2])) * d2
    d = np.diag([d0, d1, d2])
    k = u @ d
    lam = float(k[2, 2])
    k = k / lam
    r = _FLIP @ d @ q
    return k, r, lam


@dataclass(frozen=True, eq=False)
class PixelProjection:
    """A 3×4 projection P onto an image of ``width`` × ``height`` px (canonical scale, module docstring).

    matrix: P (3×4; world Å → homogeneous px); kind: ``"orthographic"`` (affine) or ``"perspective"``;
    tool: the tool whose terms it was resolved from (``"pymol"``, ``"matplotlib"``, ..., ``"matrix"``);
    name: the view's name."""

    matrix: np.ndarray
    width: int
    height: int
    kind: str
    tool: str = "matrix"
    name: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise CameraError(f"projection kind must be one of {KINDS}, got {self.kind!r}")
        if (not isinstance(self.width, (int, np.integer)) or not isinstance(self.height, (int, np.integer))
                or self.width <= 0 or self.height <= 0):
            raise CameraError(f"image size must be positive integers, got {self.width!r}×{self.height!r}")
        p = _finite_matrix(self.matrix)
        if self.kind == "orthographic":
            p = _canonical_affine(p)
        else:
            _check_rank(p[:, :3], "its left 3×3 block")
            _, _, lam = _rq_perspective(p[:, :3])
            p = p / lam
        p.setflags(write=False)
        object.__setattr__(self, "matrix", p)
        object.__setattr__(self, "width", int(self.width))
        object.__setattr__(self, "height", int(self.height))

    # -- projection ---------------------------------------------------------------------------------------
    def project(self, xyz) -> tuple[np.ndarray, np.ndarray]:
        """World points (n, 3) Å → (uv (n, 2) px in the tool's image, depth (n,) Å, larger = farther).

        Orthographic depth is measured from the plane through the equivalent camera's ``center``; a
        perspective point at or behind the pinhole (depth ≤ 0) gets NaN pixel coordinates."""
        pts = np.atleast_2d(np.asarray(xyz, dtype=np.float64))
        if pts.ndim != 2 or pts.shape[1] != 3:
            raise CameraError(f"points must have shape (n, 3), got {np.shape(xyz)}")
        h = pts @ self.matrix[:, :3].T + self.matrix[:, 3]
        if self.kind == "orthographic":
            cam, _ = self.equivalent()
            return h[:, :2].copy(), cam.project(pts)[1]
        depth = h[:, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = np.where(depth > 0, 1.0 / depth, np.nan)
        return h[:, :2] * inv[:, None], depth.copy()

    # -- the viewcert camera with the same rays -----------------------------------------------------------
    def equivalent(self) -> tuple[Camera, np.ndarray]:
        """(camera, warp): viewcert's camera with the same rays, and the 2×3 affine map A from its pixels to
        this image's (``uv_tool = A[:, :2] @ uv_camera + A[:, 2]``). A is the identity when the tool's pixels
        are square and unskewed. The camera's image size is this image's; its scale (px/Å) or focal (px) is the
        geometric mean of the tool's two axes."""
        p = self.matrix
        if self.kind == "orthographic":
            u2, r = _rq_affine(p[:2, :3])  # p[:2,:3] = U · diag(1, −1) · R[:2]
            a, s, b = u2[0, 0], u2[0, 1], u2[1, 1]
            scale = math.sqrt(a * b)
            # the tool's pixel of a world point: u = a x + s y + t0, v = −b y + t1 with (x, y) = R[:2] X; the
            # camera's centre is the point of the plane z = 0 (camera frame) drawn at the image centre
            t0, t1 = p[0, 3], p[1, 3]
            cx, cy = 0.5 * self.width, 0.5 * self.height
            y = (t1 - cy) / b
            x = (cx - t0 - s * y) / a
            center = x * r[0] + y * r[1]
            cam = OrthographicCamera(rotation=r, center=center, scale=scale, width=self.width,
                                     height=self.height, name=self.name)
            # camera px → (x, y): x = (u − W/2)/scale + x0, y = (H/2 − v)/scale + y0, then the tool's map
            lin = np.array([[a / scale, -s / scale], [0.0, b / scale]])
            warp = np.column_stack([lin, np.array([cx, cy]) - lin @ np.array([cx, cy])])
            return cam, warp
        k, r, _ = _rq_perspective(p[:, :3])
        centre = -np.linalg.solve(p[:, :3], p[:, 3])
        a, s, b, cx, cy = k[0, 0], k[0, 1], -k[1, 1], k[0, 2], k[1, 2]
        focal = math.sqrt(a * b)
        cam = PerspectiveCamera(rotation=r, position=centre, focal=focal, width=self.width, height=self.height,
                                cx=cx, cy=cy, name=self.name)
        k_cam = np.array([[focal, 0.0, cx], [0.0, -focal, cy], [0.0, 0.0, 1.0]])
        warp = (k @ np.linalg.inv(k_cam))[:2]
        return cam, warp

    def to_camera_pixels(self, uv) -> np.ndarray:
        """Pixels (n, 2) of this image → the same rays' pixels in ``equivalent()``'s camera."""
        _, warp = self.equivalent()
        q = np.atleast_2d(np.asarray(uv, dtype=np.float64))
        return np.linalg.solve(warp[:, :2], (q - warp[:, 2]).T).T

    # -- from and to viewcert's cameras and records --------------------------------------------------------
    @classmethod
    def from_camera(cls, camera: Camera, *, tool: str = "viewcert") -> PixelProjection:
        """The exact projection of one of viewcert's cameras."""
        r = camera.rotation
        if isinstance(camera, OrthographicCamera):
            s, c = camera.scale, camera.center
            p = np.zeros((3, 4))
            p[0, :3], p[0, 3] = s * r[0], 0.5 * camera.width - s * (r[0] @ c)
            p[1, :3], p[1, 3] = -s * r[1], 0.5 * camera.height + s * (r[1] @ c)
            p[2, 3] = 1.0
            return cls(p, camera.width, camera.height, "orthographic", tool=tool, name=camera.name)
        k = np.array([[camera.focal, 0.0, camera.cx], [0.0, -camera.focal, camera.cy], [0.0, 0.0, 1.0]])
        m = k @ _FLIP @ r
        p = np.column_stack([m, -m @ camera.position])
        return cls(p, camera.width, camera.height, "perspective", tool=tool, name=camera.name)

    def to_dict(self) -> dict:
        """JSON form: the 12 numbers of P row by row (``P00`` … ``P23``), the image size, kind, tool, name."""
        return {"kind": self.kind, "tool": self.tool, "name": self.name, "width": self.width,
                "height": self.height, "matrix": self.matrix.ravel().tolist()}

    @classmethod
    def from_dict(cls, d: dict) -> PixelProjection:
        """Inverse of ``to_dict``."""
        try:
            return cls(d["matrix"], d["width"], d["height"], d["kind"], tool=d.get("tool", "matrix"),
                       name=d.get("name", ""))
        except KeyError as exc:
            raise CameraError(f"projection record lacks {exc.args[0]!r}") from None
