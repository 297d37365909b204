"""Minimal solvers: a camera from three 3D–2D correspondences, vectorised over many hypotheses at once.

Frames. World points are Cartesian Å; image points are the tool's pixels (u right, v down, docs/conventions.md).
Both solvers return 3×4 projection matrices P onto those pixels, ``(u·w, v·w, w) = P (X, 1)``, in the form
``cameras.PixelProjection`` takes.

- ``weak_perspective_3pt``: a scaled orthographic camera (rotation R, one scale s px/Å, a 2D offset) through three
  correspondences. Writing A = [X1 − X0, X2 − X0] = Q U (QR, Q 3×2 orthonormal) and B the matching image
  differences in a y-up frame, M = B U⁻¹ = s · R₂ Q (R₂ the first two rows of R). s² is the larger root of
  σ² − σ(|m₁|² + |m₂|²) + det(M)² = 0 (the largest singular value of M), and each row of R₂ gains a component
  w_k along the triangle's normal n with |m_k|²/s² + w_k² = 1 and m₁·m₂/s² + w₁w₂ = 0: two solutions (w and −w,
  the Necker pair, mirror images in depth). Huttenlocher & Ullman (1990), "Recognizing solid objects by alignment
  with an image".
- ``p3p``: a perspective camera of known focal f (px) and principal point through three correspondences: Grunert's
  quartic for the distances along the three rays (Haralick, Lee, Ottenberg & Nölle 1994, "Review and analysis of
  solutions of the three point perspective pose estimation problem"), then the rotation and translation taking
  the world triangle's orthonormal frame to the camera-frame triangle's (the two are congruent). Up to four
  solutions.
"""

from __future__ import annotations

import numpy as np

__all__ = ["p3p", "weak_perspective_3pt"]

_EPS = 1e-12


def weak_perspective_3pt(world: np.ndarray, image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scaled orthographic cameras through three correspondences each (two per triple).

    Parameters
    ----------
    world : numpy.ndarray, shape (h, 3, 3)
        h triples of world points (Cartesian Å).
    image : numpy.ndarray, shape (h, 3, 2)
        The matching image points (px, the tool's frame: u right, v down).

    Returns
    -------
    matrices : numpy.ndarray, shape (2h, 3, 4)
        Affine projection matrices (last row (0, 0, 0, 1)); solution k of triple i at index 2i + k.
    valid : numpy.ndarray of bool, shape (2h,)
        False where the world triple is collinear or the image triple degenerate.
    """
    w = np.asarray(world, dtype=np.float64)
    im = np.asarray(image, dtype=np.float64).copy()
    im[..., 1] = -im[..., 1]  # y up
    h = len(w)
    a = np.stack([w[:, 1] - w[:, 0], w[:, 2] - w[:, 0]], axis=2)  # (h, 3, 2)
    b = np.stack([im[:, 1] - im[:, 0], im[:, 2] - im[:, 0]], axis=2)  # (h, 2, 2)
    q, u = np.linalg.qr(a)  # q (h, 3, 2), u (h, 2, 2)
    det_u = u[:, 0, 0] * u[:, 1, 1]
    scale_a = np.maximum(np.linalg.norm(a, axis=(1, 2)), _EPS)
    ok = np.abs(det_u) > 1e-6 * scale_a ** 2
    u_safe = np.where(ok[:, None, None], u, np.eye(2))
    m = b @ np.linalg.inv(u_safe)  # (h, 2, 2) = s R2 Q
    m1, m2 = m[:, 0], m[:, 1]
    n1, n2 = (m1 * m1).sum(1), (m2 * m2).sum(1)
    d12 = (m1 * m2).sum(1)
    det_m = m[:, 0, 0] * m[:, 1, 1] - m[:, 0, 1] * m[:, 1, 0]
    tr = n1 + n2
    sigma = 0.5 * (tr + np.sqrt(np.maximum(tr * tr - 4 * det_m * det_m, 0.0)))
    ok &= sigma > _EPS
    sigma = np.where(ok, sigma, 1.0)
    s = np.sqrt(sigma)
    w1a = np.sqrt(np.clip(1 - n1 / sigma, 0.0, None))
    w2a = np.sqrt(np.clip(1 - n2 / sigma, 0.0, None))
    # w1 w2 = −m1·m2/σ fixes the sign of one relative to the other: take the larger magnitude as it is and
    # derive the other's sign from the product (stable when one of them is ~0)
    prod = -d12 / sigma
    first = w1a >= w2a
    w1 = np.where(first, w1a, np.sign(prod) * w1a)
    w2 = np.where(first, np.sign(prod) * w2a, w2a)
    normal = np.cross(q[:, :, 0], q[:, :, 1])  # (h, 3)
    qt = np.transpose(q, (0, 2, 1))  # (h, 2, 3)
    out = np.zeros((h, 2, 3, 4))
    for k, sign in enumerate((1.0, -1.0)):
        r1 = np.einsum("hi,hij->hj", m1 / s[:, None], qt) + (sign * w1)[:, None] * normal
        r2 = np.einsum("hi,hij->hj", m2 / s[:, None], qt) + (sign * w2)[:, None] * normal
        r1 /= np.maximum(np.linalg.norm(r1, axis=1, keepdims=True), _EPS)
        r2 = r2 - (r2 * r1).sum(1, keepdims=True) * r1
        r2 /= np.maximum(np.linalg.norm(r2, axis=1, keepdims=True), _EPS)
        t0 = im[:, 0, 0] - s * (r1 * w[:, 0]).sum(1)
        t1 = im[:, 0, 1] - s * (r2 * w[:, 0]).sum(1)
        out[:, k, 0, :3] = s[:, None] * r1
        out[:, k, 0, 3] = t0
        out[:, k, 1, :3] = -s[:, None] * r2  # back to v down
        out[:, k, 1, 3] = -t1
        out[:, k, 2, 3] = 1.0
    valid = np.repeat(ok, 2)
    return out.reshape(2 * h, 3, 4), valid


def _quartic_real_roots(coef: np.ndarray) -> np.ndarray:
    """Real roots (h, 4) of quartics coef (h, 5) (highest power first), NaN where complex or absent."""
    h = len(coef)
    lead = coef[:, 0]
    good = np.abs(lead) > 1e-14 * np.maximum(np.abs(coef).max(1), 1e-300)
    c = coef / np.where(good, lead, 1.0)[:, None]
    comp = np.zeros((h, 4, 4))
    comp[:, 0, :] = -c[:, 1:]
    comp[:, 1, 0] = comp[:, 2, 1] = comp[:, 3, 2] = 1.0
    roots = np.linalg.eigvals(comp)
    real = np.abs(roots.imag) <= 1e-6 * np.maximum(1.0, np.abs(roots.real))
    out = np.where(real & good[:, None], roots.real, np.nan)
    return out


def _frames(points: np.ndarray) -> np.ndarray:
    """Orthonormal frames (h, 3, 3) (rows e₁, e₂, e₃) of triangles (h, 3, 3): e₁ along p₁ − p₀, e₃ normal."""
    a = points[:, 1] - points[:, 0]
    b = points[:, 2] - points[:, 0]
    e1 = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), _EPS)
    e3 = np.cross(a, b)
    e3 /= np.maximum(np.linalg.norm(e3, axis=1, keepdims=True), _EPS)
    return np.stack([e1, np.cross(e3, e1), e3], axis=1)


def _align(cam: np.ndarray, world: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """R (h, 3, 3), t (h, 3) with cam = R world + t for congruent triangles (h, 3, 3): the rotation taking the
    world triangle's frame to the camera triangle's (exact for P3P's solutions, which keep every side)."""
    r = np.swapaxes(_frames(cam), 1, 2) @ _frames(world)
    t = cam[:, 0] - (r @ world[:, 0, :, None])[:, :, 0]
    return r, t


def p3p(world: np.ndarray, image: np.ndarray, focal: float, cx: float, cy: float) -> tuple[np.ndarray, np.ndarray]:
    """Perspective cameras of focal ``focal`` (px) and principal point (cx, cy) through three correspondences.

    Parameters
    ----------
    world : numpy.ndarray, shape (h, 3, 3)
        h triples of world points (Cartesian Å).
    image : numpy.ndarray, shape (h, 3, 2)
        The matching image points (px, u right, v down).
    focal : float
        Focal length in px (square pixels, no skew).
    cx, cy : float
        Principal point (px).

    Returns
    -------
    matrices : numpy.ndarray, shape (4h, 3, 4)
        Projection matrices K [R | t] (a computer-vision camera frame: x right, y down, z forward, so w is the
        depth in Å); solution k of triple i at index 4i + k.
    valid : numpy.ndarray of bool, shape (4h,)
        True where the solution exists (a real root with positive distances along all three rays).
    """
    w = np.asarray(world, dtype=np.float64)
    im = np.asarray(image, dtype=np.float64)
    h = len(w)
    rays = np.concatenate([(im - [cx, cy]) / focal, np.ones((h, 3, 1))], axis=2)
    rays /= np.linalg.norm(rays, axis=2, keepdims=True)
    cos_a = (rays[:, 1] * rays[:, 2]).sum(1)  # angle between rays 2 and 3 (opposite point 1)
    cos_b = (rays[:, 0] * rays[:, 2]).sum(1)
    cos_g = (rays[:, 0] * rays[:, 1]).sum(1)
    a2 = ((w[:, 1] - w[:, 2]) ** 2).sum(1)
    b2 = ((w[:, 0] - w[:, 2]) ** 2).sum(1)
    c2 = ((w[:, 0] - w[:, 1]) ** 2).sum(1)
    ok = (a2 > _EPS) & (b2 > _EPS) & (c2 > _EPS)
    b2s = np.where(ok, b2, 1.0)
    amc = (a2 - c2) / b2s
    apc = (a2 + c2) / b2s
    bmc = (b2 - c2) / b2s
    bma = (b2 - a2) / b2s
    a4 = (amc - 1) ** 2 - 4 * c2 / b2s * cos_a ** 2
    a3 = 4 * (amc * (1 - amc) * cos_b - (1 - apc) * cos_a * cos_g + 2 * c2 / b2s * cos_a ** 2 * cos_b)
    a2c = 2 * (amc ** 2 - 1 + 2 * amc ** 2 * cos_b ** 2 + 2 * bmc * cos_a ** 2
               - 4 * apc * cos_a * cos_b * cos_g + 2 * bma * cos_g ** 2)
    a1 = 4 * (-amc * (1 + amc) * cos_b + 2 * a2 / b2s * cos_g ** 2 * cos_b - (1 - apc) * cos_a * cos_g)
    a0 = (1 + amc) ** 2 - 4 * a2 / b2s * cos_g ** 2
    v = _quartic_real_roots(np.stack([a4, a3, a2c, a1, a0], axis=1))  # (h, 4)
    den = 2 * (cos_g[:, None] - v * cos_a[:, None])
    with np.errstate(divide="ignore", invalid="ignore"):
        u = ((-1 + amc)[:, None] * v ** 2 - 2 * (amc * cos_b)[:, None] * v + (1 + amc)[:, None]) / den
        s1sq = b2s[:, None] / (1 + v ** 2 - 2 * v * cos_b[:, None])
    s1 = np.sqrt(np.where(s1sq > 0, s1sq, np.nan))
    dist = np.stack([s1, u * s1, v * s1], axis=2)  # (h, 4, 3)
    good = (ok[:, None] & np.isfinite(dist).all(2) & (dist > 0).all(2)).reshape(4 * h)
    sel = np.flatnonzero(good)
    cam = (dist[..., None] * rays[:, None]).reshape(4 * h, 3, 3)[sel]  # (solutions, 3 points, 3)
    r, t = _align(cam, w[sel // 4])
    k = np.array([[focal, 0.0, cx], [0.0, focal, cy], [0.0, 0.0, 1.0]])
    out = np.zeros((4 * h, 3, 4))
    out[:, 2, 3] = 1.0
    out[sel] = k @ np.concatenate([r, t[:, :, None]], axis=2)
    return out, good
