"""Slow, obviously-correct reference twins of the fast routines. One section per module; each twin is a
plain per-element loop written straight from the formula in docs/conventions.md."""

from __future__ import annotations

import math

import numpy as np

# ----------------------------------------------------------------------------- cameras / render.project


def project_orthographic_loop(points, rotation, center, scale, width, height):
    """u = W/2 + s·x_cam, v = H/2 − s·y_cam, depth = −z_cam with cam = R (p − center), atom by atom."""
    uv, depth = [], []
    for p in points:
        d = [p[k] - center[k] for k in range(3)]
        cam = [sum(rotation[r][k] * d[k] for k in range(3)) for r in range(3)]
        uv.append((width / 2 + scale * cam[0], height / 2 - scale * cam[1]))
        depth.append(-cam[2])
    return np.array(uv, dtype=float).reshape(-1, 2), np.array(depth, dtype=float)


def project_perspective_loop(points, rotation, position, focal, cx, cy):
    uv, depth = [], []
    for p in points:
        d = [p[k] - position[k] for k in range(3)]
        cam = [sum(rotation[r][k] * d[k] for k in range(3)) for r in range(3)]
        z = -cam[2]
        uv.append((cx + focal * cam[0] / z, cy - focal * cam[1] / z))
        depth.append(z)
    return np.array(uv, dtype=float).reshape(-1, 2), np.array(depth, dtype=float)


def observe_loop(positions, numbers, lattice, tiling, cameras):
    """Per view, per translation, per atom: the drawn atoms' (uv, depth, label, atom, tile) in the tiling's
    C order (a slowest), atoms fastest."""
    views = []
    for cam in cameras:
        rows = []
        t = 0
        for i in range(tiling[0]):
            for j in range(tiling[1]):
                for k in range(tiling[2]):
                    shift = [0.0, 0.0, 0.0] if lattice is None else [
                        i * lattice[0][c] + j * lattice[1][c] + k * lattice[2][c] for c in range(3)
                    ]
                    for a, (p, z) in enumerate(zip(positions, numbers, strict=True)):
                        q = [p[c] + shift[c] for c in range(3)]
                        if cam.kind == "orthographic":
                            uv, d = project_orthographic_loop(
                                [q], cam.rotation, cam.center, cam.scale, cam.width, cam.height
                            )
                        else:
                            uv, d = project_perspective_loop([q], cam.rotation, cam.position, cam.focal, cam.cx, cam.cy)
                        rows.append((uv[0, 0], uv[0, 1], d[0], int(z), a, t))
                    t += 1
        views.append(rows)
    return views


def rotation_about(axis, angle_deg):
    """Rodrigues rotation matrix (proper, det +1)."""
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    t = math.radians(angle_deg)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(t) * k + (1 - math.cos(t)) * (k @ k)
