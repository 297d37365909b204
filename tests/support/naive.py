"""Slow, obviously-correct reference twins of the fast routines. One section per module; each twin is a
plain per-element loop written straight from the formula in docs/conventions.md."""

from __future__ import annotations

import itertools
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


# ----------------------------------------------------------------------------- oracle (viewcert.oracle)
# Twins of viewcert.oracle's primitives (solve, triangulate, line gap, nearest point, minimum image, wrap,
# components, greedy merge, translate box), as plain loops; then the whole oracle *from its definition*
# (docs/reference.md, "The oracle" and "The study's released oracle"): ``oracle_reconstruct`` enumerates every
# seed pair and every combination of same-label points within δ, with none of the kernels' machinery or
# heuristics (no epipolar bands, grids, collapsed sites, search-radius slack, caps, refit rounds, cluster
# refit). Where the definition leaves a choice open the twin says so, and tests/oracle/test_oracle.py compares the
# kernel with it only where the definition decides.


def oracle_solve3(a, b):
    """np.linalg.solve with the kernel's singularity rule (|det| ≤ 1e-12·max|a|³ → None)."""
    a = np.asarray(a, dtype=float)
    m = np.abs(a).max()
    if m == 0 or abs(np.linalg.det(a)) <= 1e-12 * m**3:
        return None
    return np.linalg.solve(a, np.asarray(b, dtype=float))


def oracle_triangulate(origins, dirs):
    """Least-squares point of rays: stack the projectors (I − d dᵀ) and solve with lstsq."""
    rows, rhs = [], []
    for o, d in zip(origins, dirs, strict=True):
        d = np.asarray(d, dtype=float) / np.linalg.norm(d)
        p = np.eye(3) - np.outer(d, d)
        rows.append(p)
        rhs.append(p @ np.asarray(o, dtype=float))
    if len(rows) < 2:
        return None
    x, *_ = np.linalg.lstsq(np.vstack(rows), np.concatenate(rhs), rcond=None)
    return x


def oracle_triangulate_orthographic(rotations, centers, plane_xy):
    """The closed form for orthographic views: x̂ = (K·I − Σ d dᵀ)⁻¹ Σ P_kᵀ (y_k + P_k c_k), with P_k the
    first two rows of R_k and d_k = −R_k[2]."""
    k = len(rotations)
    a = k * np.eye(3)
    b = np.zeros(3)
    for r, c, y in zip(rotations, centers, plane_xy, strict=True):
        r = np.asarray(r, dtype=float)
        d = -r[2]
        a -= np.outer(d, d)
        b += r[:2].T @ (np.asarray(y, dtype=float) + r[:2] @ np.asarray(c, dtype=float))
    return np.linalg.solve(a, b)


def oracle_line_gap(o1, d1, o2, d2):
    """Distance between two lines from the closest-approach parameters (2×2 normal equations)."""
    o1, d1, o2, d2 = (np.asarray(v, dtype=float) for v in (o1, d1, o2, d2))
    a = np.array([[d1 @ d1, -(d1 @ d2)], [d1 @ d2, -(d2 @ d2)]])
    if abs(np.linalg.det(a)) < 1e-12:
        return math.inf
    t1, t2 = np.linalg.solve(a, [(o2 - o1) @ d1, (o2 - o1) @ d2])
    return float(np.linalg.norm((o1 + t1 * d1) - (o2 + t2 * d2)))


def oracle_nearest(points2d, labels, query, label, radius):
    """Index of the nearest point with this label within radius (ties → lowest index), or −1."""
    best, bestd = -1, math.inf
    for i, (p, z) in enumerate(zip(points2d, labels, strict=True)):
        if z != label:
            continue
        d = math.hypot(p[0] - query[0], p[1] - query[1])
        if d <= radius and d < bestd:
            best, bestd = i, d
    return best


def oracle_min_image(dv, lattice):
    """Shortest lattice-equivalent vector of dv, and the integer translation n with dv = v + n·L."""
    dv = np.asarray(dv, dtype=float)
    if lattice is None:
        return dv, np.zeros(3)
    lat = np.asarray(lattice, dtype=float)
    f = np.linalg.solve(lat.T, dv)
    n0 = np.round(f)
    best = None
    for a in (-1, 0, 1):
        for b in (-1, 0, 1):
            for c in (-1, 0, 1):
                n = n0 + (a, b, c)
                v = dv - n @ lat
                if best is None or v @ v < best[0] @ best[0]:
                    best = (v, n)
    return best


def oracle_wrap(x, lattice):
    lat = np.asarray(lattice, dtype=float)
    f = np.linalg.solve(lat.T, np.asarray(x, dtype=float))
    f = f - np.floor(f)
    f[f >= 1.0] -= 1.0
    return f @ lat


def oracle_neighbour_pairs(pos, labels, lattice, h, strict):
    """Every pair i < j with the same label within h (strict: < h), minimum image when periodic."""
    out = []
    for i in range(len(pos)):
        for j in range(i + 1, len(pos)):
            if labels[i] != labels[j]:
                continue
            v, _ = oracle_min_image(np.asarray(pos[j]) - np.asarray(pos[i]), lattice)
            d = float(np.linalg.norm(v))
            if (d < h) if strict else (d <= h):
                out.append((i, j))
    return out


def oracle_components(n, pairs):
    """Connected components by repeated relabelling: every node gets the smallest index it is linked to."""
    comp = list(range(n))
    changed = True
    while changed:
        changed = False
        for i, j in pairs:
            m = min(comp[i], comp[j])
            if comp[i] != m or comp[j] != m:
                comp[i] = comp[j] = m
                changed = True
    return comp


def oracle_merge_greedy(xs, labels, tol, lattice=None):
    """First-come merge: keep a candidate unless a kept same-label one is strictly closer than tol."""
    kept = []
    for i, (x, z) in enumerate(zip(xs, labels, strict=True)):
        dup = False
        for j in kept:
            if labels[j] != z:
                continue
            v, _ = oracle_min_image(np.asarray(x) - np.asarray(xs[j]), lattice)
            if np.linalg.norm(v) < tol:
                dup = True
                break
        if not dup:
            kept.append(i)
    return kept


def oracle_box_ok(translations, tiling):
    """Whether the set of integer translations contains a full box of shape tiling."""
    s = {tuple(int(v) for v in t) for t in translations}
    if not s:
        return False
    lo = [min(t[j] for t in s) for j in range(3)]
    hi = [max(t[j] for t in s) for j in range(3)]
    for o0 in range(lo[0], hi[0] - tiling[0] + 2):
        for o1 in range(lo[1], hi[1] - tiling[1] + 2):
            for o2 in range(lo[2], hi[2] - tiling[2] + 2):
                if all((o0 + a, o1 + b, o2 + c) in s for a in range(tiling[0]) for b in range(tiling[1])
                       for c in range(tiling[2])):
                    return True
    return False


class _OracleView:
    """One view for the naive oracle: per 2D point its coordinate (orthographic: image plane in Å,
    perspective: px), back-projected ray (origin, unit direction), label, depth and drawn disc radius (2D
    units, for the occlusion rule). δ is kept in the view's compare unit: orthographic Å in the plane (px:
    δ/scale), perspective px (delta_unit='px') or Å at the point's depth (delta_unit='angstrom')."""

    def __init__(self, view, delta, delta_unit, radius_scale):
        from ase.data import covalent_radii  # the table itself, not viewcert's accessor (code under test)

        cam = view.camera
        self.cam = cam
        self.ortho = cam.kind == "orthographic"
        self.rot = np.asarray(cam.rotation, dtype=float)
        self.labels = [int(z) for z in view.labels]
        self.depth = [float(d) for d in view.depth]
        self.w, self.o, self.d = [], [], []
        for u, v in view.uv:
            if self.ortho:
                x, y = (u - 0.5 * cam.width) / cam.scale, (0.5 * cam.height - v) / cam.scale
                self.w.append((x, y))
                self.o.append(np.asarray(cam.center, dtype=float) + x * self.rot[0] + y * self.rot[1])
                self.d.append(-self.rot[2])
            else:
                self.w.append((u, v))
                dw = np.array([(u - cam.cx) / cam.focal, (cam.cy - v) / cam.focal, -1.0]) @ self.rot
                self.o.append(np.asarray(cam.position, dtype=float))
                self.d.append(dw / np.linalg.norm(dw))
        self.sf = cam.scale if self.ortho else cam.focal
        self.delta_px = (not self.ortho) and delta_unit == "px"
        self.delta = delta / cam.scale if (self.ortho and delta_unit == "px") else delta
        self.radius = [float(covalent_radii[z]) * radius_scale * (1.0 if self.ortho else cam.focal / dep)
                       for z, dep in zip(self.labels, self.depth, strict=True)]

    def project(self, x):
        """(2D coordinate or None behind a perspective camera, depth)."""
        cam = self.cam
        c = self.rot @ (np.asarray(x, dtype=float) - (cam.center if self.ortho else cam.position))
        if self.ortho:
            return (c[0], c[1]), -c[2]
        if -c[2] <= 0:
            return None, -c[2]
        return (cam.cx + cam.focal * c[0] / -c[2], cam.cy - cam.focal * c[1] / -c[2]), -c[2]

    def residual(self, x, p):
        """Distance of x's projection from point p, in the compare unit of this view's δ."""
        q, depth = self.project(x)
        if q is None:
            return math.inf
        r = math.hypot(self.w[p][0] - q[0], self.w[p][1] - q[1])
        return r if (self.ortho or self.delta_px) else r * depth / self.sf

    def within(self, x, label, tol):
        """Every point of this label whose residual against x is ≤ tol, in index order."""
        return [p for p, z in enumerate(self.labels) if z == label and self.residual(x, p) <= tol]

    def delta_angstrom(self, x):
        """δ of this view as a length in Å at x."""
        if self.delta_px:
            return self.delta * self.project(x)[1] / self.sf
        return self.delta

    def hidden(self, x):
        """x's projection falls inside the drawn disc of a nearer observed atom (definition, step 6)."""
        q, depth = self.project(x)
        return q is not None and any(
            self.depth[p] < depth and math.hypot(self.w[p][0] - q[0], self.w[p][1] - q[1]) < self.radius[p]
            for p in range(len(self.w)))


def _oracle_fit(views, sup):
    """Least-squares point of the rays of a support tuple (−1 = no point in that view), or None."""
    used = [(views[k].o[p], views[k].d[p]) for k, p in enumerate(sup) if p >= 0]
    if len(used) < 2:
        return None
    a, b = np.zeros((3, 3)), np.zeros(3)
    for o, d in used:
        proj = np.eye(3) - np.outer(d, d)
        a += proj
        b += proj @ o
    return oracle_solve3(a, b)


def _oracle_worst(views, x, sup):
    """Largest per-view residual/δ of x against its support."""
    return max(views[k].residual(x, p) / views[k].delta for k, p in enumerate(sup) if p >= 0)


def _oracle_view_pairs(views, pairs):
    out = []
    for a in range(len(views)):
        for b in range(a + 1, len(views)):
            va, vb = views[a], views[b]
            if va.ortho and vb.ortho and np.linalg.norm(np.cross(va.rot[2], vb.rot[2])) < 1e-9:
                continue  # parallel orthographic views: no pair point
            out.append((a, b))
    return out[:1] if pairs == "first" else out


def _oracle_tuples(views, pairs, occlusion, window):
    """Definition steps 1–2 (and 6), by enumeration. Every view pair, every same-label pair of points whose
    two-ray least-squares point x0 is within δ of both; in every other view *every* same-label point within δ
    of x0's projection (no nearest-point choice: all combinations are tried), or, with occlusion, no point
    when none is within δ; the tuple's point is refitted on all its supporting rays and accepted when its
    largest per-view residual is ≤ δ (a point missing in a view must be hidden there by a nearer atom's disc,
    at most one view missing, not a seed view). Returns ({(label, support): (x, worst ratio)} accepted,
    {(label, support): worst ratio} rejected near misses: full tuples with residual in (δ, window·δ], found by
    the same enumeration with window·δ in place of δ)."""
    nv = len(views)
    acc, near = {}, {}
    for va, vb in _oracle_view_pairs(views, pairs):
        for i, z in enumerate(views[va].labels):
            for j in range(len(views[vb].labels)):
                if views[vb].labels[j] != z:
                    continue
                seed = [-1] * nv
                seed[va], seed[vb] = i, j
                x0 = _oracle_fit(views, seed)
                if x0 is None or _oracle_worst(views, x0, seed) > window:
                    continue
                options = []
                for k in range(nv):
                    if k in (va, vb):
                        options.append([seed[k]])
                        continue
                    near_k = views[k].within(x0, z, window * views[k].delta)
                    options.append(near_k if near_k else ([-1] if occlusion and nv >= 3 else []))
                for sup in itertools.product(*options):
                    x = _oracle_fit(views, sup)
                    if x is None:
                        continue
                    worst = _oracle_worst(views, x, sup)
                    in_delta = all(p < 0 or views[k].residual(x0, p) <= views[k].delta
                                   for k, p in enumerate(sup)) and _oracle_worst(views, x0, seed) <= 1.0
                    missing = [k for k, p in enumerate(sup) if p < 0]
                    ok = len(missing) <= 1 and all(views[k].hidden(x) for k in missing)
                    if in_delta and ok and worst <= 1.0:
                        acc.setdefault((z, tuple(sup)), (x, worst))
                    elif not missing and 1.0 < worst <= window:
                        near[(z, tuple(sup))] = worst
    return acc, {k: r for k, r in near.items() if k not in acc}


def _oracle_translates_ok(views, x, label, lattice, tiling):
    """Definition step 5: with tiled observations every drawn translate of x must be matched: some box of
    tiling shape of lattice translates x + n·L has, in every view, a same-label point within δ of each."""
    def seen(y):
        return all(v.within(y, label, v.delta) for v in views)

    ranges = [range(-t - 1, 2) for t in tiling]
    for o in itertools.product(*ranges):
        if all(seen(x + (np.add(o, n)) @ lattice)
               for n in itertools.product(*(range(t) for t in tiling))):
            return True
    return False


def oracle_reconstruct(observations, *, delta, delta_unit="angstrom", pairs="all", merge=None, lattice=None,
                       visibility="strict", near_miss_window=2.0):
    """The oracle from its definition (docs/reference.md, "The oracle", steps 1–6), by exhaustive enumeration.

    Deterministic merge: the accepted support tuples of ``_oracle_tuples`` (identical tuples are one point);
    then same-label points within δ (Å; px: the largest per-view equivalent; minimum image when periodic)
    form connected components, each one output point: the members' average (no refit: the definition does
    not say on which support, so callers compare counts and positions within δ, not refitted coordinates).
    Tiled observations: a component is dropped unless translate-consistent (step 5). ``merge="greedy"``:
    the released rules (``_oracle_released``). No search-radius slack, no caps, no refit rounds.
    Returns a dict: points (wrapped when periodic), labels, support (first member's tuple), ratios (largest
    member's worst residual/δ), occluded, members, translate_rejected, near_ratios (rejected full tuples
    with residual in (δ, w·δ], w = near_miss_window)."""
    merge = merge or ("deterministic" if pairs == "all" else "greedy")
    views = [_OracleView(v, delta, delta_unit, observations.model.radius_scale) for v in observations.views]
    lat = None if lattice is None else np.asarray(lattice, dtype=float)
    tiling = tuple(int(t) for t in observations.model.tiling)
    tol3d = _oracle_delta3d(views, delta, delta_unit)
    if merge == "greedy":
        return _oracle_released(views, pairs, lat, tiling, tol3d)
    acc, near = _oracle_tuples(views, pairs, visibility == "occlusion", near_miss_window)
    keys = sorted(acc)
    xs = [acc[k][0] for k in keys]
    labels = [k[0] for k in keys]
    comp = oracle_components(len(keys), oracle_neighbour_pairs(xs, labels, lat, tol3d, False))
    out = {"points": [], "labels": [], "support": [], "ratios": [], "occluded": [], "members": [],
           "translate_rejected": 0, "near_ratios": sorted(near.values())}
    for root in sorted(set(comp)):
        members = [i for i in range(len(keys)) if comp[i] == root]
        ref = xs[members[0]]
        x = sum(ref + oracle_min_image(xs[i] - ref, lat)[0] for i in members) / len(members)
        if lat is not None and tiling != (1, 1, 1) and not _oracle_translates_ok(views, x, labels[root], lat, tiling):
            out["translate_rejected"] += 1
            continue
        out["points"].append(x if lat is None else oracle_wrap(x, lat))
        out["labels"].append(labels[root])
        out["support"].append(list(keys[members[0]][1]))
        out["ratios"].append(max(acc[keys[i]][1] for i in members))
        out["occluded"].append(any(min(keys[i][1]) < 0 for i in members))
        out["members"].append(len(members))
    return _oracle_arrays(out, len(views))


def _oracle_arrays(out, nv):
    out["points"] = np.array(out["points"], dtype=float).reshape(-1, 3)
    out["labels"] = np.array(out["labels"], dtype=int)
    out["support"] = np.array(out["support"], dtype=int).reshape(-1, nv)
    out["ratios"] = np.array(out["ratios"], dtype=float)
    out["occluded"] = np.array(out["occluded"], dtype=bool)
    return out


def _oracle_released(views, pairs, lat, tiling, tol3d):
    """The study's released rules (docs/reference.md, "The study's released oracle"; greedy semantics in viewcert.oracle's
    docs): ONE tolerance δ. A seed pair (view pairs in order, view-a points in order, their same-label
    view-b partners in order) is a candidate when its two rays pass within δ (px: the pair's mean Å
    equivalent at the point); the candidate is the midpoint of closest approach (no refit); it is verified
    when every other view has a same-label point within δ of its projection; it is kept unless a kept
    same-label point lies strictly closer than δ (minimum image only with tiled observations); points
    keep that order and are wrapped afterwards. support: the seed pair, −1 elsewhere (the rules say "some
    point", not which)."""
    nv = len(views)
    cand = []
    for va, vb in _oracle_view_pairs(views, pairs):
        A, B = views[va], views[vb]
        for i, z in enumerate(A.labels):
            for j in range(len(B.labels)):
                if B.labels[j] != z:
                    continue
                gap = oracle_line_gap(A.o[i], A.d[i], B.o[j], B.d[j])
                sup = [-1] * nv
                sup[va], sup[vb] = i, j
                x = _oracle_fit(views, sup)
                if x is None or not math.isfinite(gap):
                    continue
                if gap > 0.5 * (A.delta_angstrom(x) + B.delta_angstrom(x)):
                    continue
                if all(k in (va, vb) or views[k].within(x, z, views[k].delta) for k in range(nv)):
                    cand.append((x, z, sup))
    keep = oracle_merge_greedy([c[0] for c in cand], [c[1] for c in cand], tol3d,
                               lat if (lat is not None and tiling != (1, 1, 1)) else None)
    out = {"points": [], "labels": [], "support": [], "ratios": [], "occluded": [], "members": [],
           "translate_rejected": 0, "near_ratios": []}
    for i in keep:
        x, z, sup = cand[i]
        out["points"].append(x if lat is None else oracle_wrap(x, lat))
        out["labels"].append(z)
        out["support"].append(sup)
        out["ratios"].append(math.nan)
        out["occluded"].append(False)
        out["members"].append(1)
    return _oracle_arrays(out, nv)


def _oracle_delta3d(views, delta, delta_unit):
    """The 3D merge tolerance in Å: δ, or with δ in px the largest per-view Å equivalent (perspective: at the
    median observed depth)."""
    if delta_unit == "angstrom":
        return delta
    return delta * max((1.0 / v.cam.scale) if v.ortho else (float(np.median(v.depth)) / v.cam.focal if v.depth else 0.0)
                       for v in views)


def study_oracle(positions, numbers, ase_matrices, tol):
    """A plain re-implementation of the render-ceiling study's released oracle, from its description
    (docs/reference.md, "The study's released oracle"): screen coordinates of a view are the first two columns of pos @ M
    (M = ase.utils.rotate(string)); candidates only from the first two views: for every atom i of view 0 and
    every same-element atom j of view 1, the midpoint of closest approach of the two back-projected rays,
    kept when the rays pass within tol; verified when in every other view some same-element point lies
    within tol of its projection; then a greedy first-come merge dropping a candidate that lies strictly
    within tol of an already kept one of the same element. ONE tolerance for line gap, 2D check and 3D
    merge. Returns (points (k, 3), numbers (k,))."""
    pos = np.asarray(positions, dtype=float)
    ms = [np.asarray(m, dtype=float) for m in ase_matrices]
    screens = [pos @ m for m in ms]
    cand = []
    m0, m1 = ms[0], ms[1]
    for i in range(len(pos)):
        u0, v0 = screens[0][i, 0], screens[0][i, 1]
        o0 = u0 * m0[:, 0] + v0 * m0[:, 1]
        d0 = m0[:, 2] / np.linalg.norm(m0[:, 2])
        for j in range(len(pos)):
            if numbers[j] != numbers[i]:
                continue
            u1, v1 = screens[1][j, 0], screens[1][j, 1]
            o1 = u1 * m1[:, 0] + v1 * m1[:, 1]
            d1 = m1[:, 2] / np.linalg.norm(m1[:, 2])
            a = np.array([[d0 @ d0, -(d0 @ d1)], [d0 @ d1, -(d1 @ d1)]])
            try:
                t0, t1 = np.linalg.solve(a, [(o1 - o0) @ d0, (o1 - o0) @ d1])
            except np.linalg.LinAlgError:
                continue
            p0, p1 = o0 + t0 * d0, o1 + t1 * d1
            if np.linalg.norm(p0 - p1) > tol:
                continue
            x = 0.5 * (p0 + p1)
            ok = True
            for k in range(2, len(ms)):
                s = (x @ ms[k])[:2]
                dists = [np.linalg.norm(screens[k][q, :2] - s) for q in range(len(pos)) if numbers[q] == numbers[i]]
                if not dists or min(dists) > tol:
                    ok = False
                    break
            if ok:
                cand.append((x, numbers[i]))
    kept = []
    for x, z in cand:
        if not any(z == kz and np.linalg.norm(x - kx) < tol for kx, kz in kept):
            kept.append((x, z))
    return np.array([k[0] for k in kept], dtype=float).reshape(-1, 3), np.array([k[1] for k in kept], dtype=int)


# ----------------------------------------------------------------------------- render.raster / visibility
# (renderer section) A pixel-by-pixel analytic ray-caster in the *world* frame, written from the formulas
# with rays from ``camera.ray`` (unit directions) and depths from ``camera.project``: it shares no arithmetic
# with the numba kernel, which works in the camera frame. Pixels within ``eps`` of a boundary (silhouette,
# cap rim, line border) or where the two nearest surfaces lie within ``eps`` in depth are flagged ambiguous.


def _ray_sphere_world(o, d, c, r, eps):
    """(s along the unit ray of the front hit or None, ambiguous)."""
    oc = [c[k] - o[k] for k in range(3)]
    s0 = sum(oc[k] * d[k] for k in range(3))
    perp2 = max(sum(x * x for x in oc) - s0 * s0, 0.0)
    perp = math.sqrt(perp2)
    amb = abs(perp - r) < eps
    if perp >= r:
        return None, amb
    return s0 - math.sqrt(r * r - perp2), amb


def _ray_capped_cylinder_world(o, d, a, b, r, eps):
    """(s of the entry point or None, ambiguous) for a capped cylinder from a to b of radius r."""
    axis = [b[k] - a[k] for k in range(3)]
    length = math.sqrt(sum(x * x for x in axis))
    w = [x / length for x in axis]
    oa = [o[k] - a[k] for k in range(3)]
    z0 = sum(oa[k] * w[k] for k in range(3))
    dz = sum(d[k] * w[k] for k in range(3))
    op = [oa[k] - z0 * w[k] for k in range(3)]
    dp = [d[k] - dz * w[k] for k in range(3)]
    hits, amb = [], False
    qa = sum(x * x for x in dp)
    if qa > 1e-12:
        qb = 2 * sum(op[k] * dp[k] for k in range(3))
        qc = sum(x * x for x in op) - r * r
        disc = qb * qb - 4 * qa * qc
        # closest approach of the ray to the axis line, for the boundary test
        s_min = -qb / (2 * qa)
        dmin = math.sqrt(max(sum((op[k] + s_min * dp[k]) ** 2 for k in range(3)), 0.0))
        if abs(dmin - r) < eps:
            amb = True
        if disc > 0:
            s = (-qb - math.sqrt(disc)) / (2 * qa)
            z = z0 + s * dz
            if abs(z) < eps or abs(z - length) < eps:
                amb = True
            if 0 < z < length:
                hits.append(s)
    if abs(dz) > 1e-12:
        for zt in (0.0, length):
            s = (zt - z0) / dz
            rad = math.sqrt(sum((op[k] + s * dp[k]) ** 2 for k in range(3)))
            if abs(rad - r) < eps:
                amb = True
            if rad < r:
                hits.append(s)
    return (min(hits) if hits else None), amb


def raycast_loop(scene, camera, *, eps=1e-7):
    """(ids (H, W) int, depth (H, W) float, ambiguous (H, W) bool): for every pixel centre, every primitive
    of ``scene`` tested analytically; nearest surface wins, ties to the lower primitive index (spheres, then
    cylinders, then lines); ids: sphere k → k, cylinder → −2, line → −3, nothing → −1 (depth +inf)."""
    h, w = camera.height, camera.width
    persp = camera.kind == "perspective"
    ids = np.full((h, w), -1, dtype=np.int64)
    depth = np.full((h, w), np.inf)
    amb = np.zeros((h, w), dtype=bool)
    hw = 0.5 * scene.line_px
    line_uv = []
    for p0, p1 in zip(scene.line_starts, scene.line_ends, strict=True):
        (uv0, d0), (uv1, d1) = camera.project(p0), camera.project(p1)
        line_uv.append((uv0, d0, uv1, d1))
    for i in range(h):
        for j in range(w):
            uv = (j + 0.5, i + 0.5)
            o, d = camera.ray(uv)
            o, d = o.tolist(), d.tolist()
            hits = []  # (depth, primitive order, code)
            order = 0
            for c, r in zip(scene.sphere_centres.tolist(), scene.sphere_radii.tolist(), strict=True):
                s, a = _ray_sphere_world(o, d, c, r, eps)
                amb[i, j] |= a
                if s is not None and (s > 0 or not persp):
                    hits.append((float(camera.project([o[k] + s * d[k] for k in range(3)])[1]), order, order))
                order += 1
            for a_, b_, r in zip(scene.cylinder_starts.tolist(), scene.cylinder_ends.tolist(),
                                 scene.cylinder_radii.tolist(), strict=True):
                s, a = _ray_capped_cylinder_world(o, d, a_, b_, r, eps)
                amb[i, j] |= a
                if s is not None and (s > 0 or not persp):
                    hits.append((float(camera.project([o[k] + s * d[k] for k in range(3)])[1]), order, -2))
                order += 1
            for uv0, d0, uv1, d1 in line_uv:
                e = uv1 - uv0
                l2 = float(e @ e)
                t = 0.0 if l2 == 0 else min(max(float((np.asarray(uv) - uv0) @ e) / l2, 0.0), 1.0)
                dist = math.hypot(*(uv0 + t * e - np.asarray(uv)))
                amb[i, j] |= abs(dist - hw) < eps
                if dist < hw:
                    z = 1.0 / ((1 - t) / d0 + t / d1) if persp else d0 + t * (d1 - d0)
                    hits.append((float(z), order, -3))
                order += 1
            if hits:
                hits.sort()
                if len(hits) > 1 and hits[1][0] - hits[0][0] < eps:
                    amb[i, j] = True
                depth[i, j], _, ids[i, j] = hits[0]
    return ids, depth, amb


def visible_pixels_loop(ids, n_atoms):
    """Per atom: (count, mean u, mean v) of the pixel centres showing it, by a plain scan."""
    count = [0] * n_atoms
    su = [0.0] * n_atoms
    sv = [0.0] * n_atoms
    for i in range(ids.shape[0]):
        for j in range(ids.shape[1]):
            k = int(ids[i, j])
            if k >= 0:
                count[k] += 1
                su[k] += j + 0.5
                sv[k] += i + 0.5
    return [(count[k], su[k] / count[k] if count[k] else math.nan, sv[k] / count[k] if count[k] else math.nan)
            for k in range(n_atoms)]


# ----------------------------------------------------------------------------- oracle: streaming seeding bookkeeping
# Twins of viewcert.oracle._tuples (the distinct-tuple table and the isolated-site test of the seeding stage).


def first_occurrences(labels, supports):
    """Indices of the first occurrence of every distinct (label, support tuple) row, in input order."""
    first = {}
    for i, (z, sup) in enumerate(zip(labels, supports, strict=True)):
        first.setdefault((int(z), tuple(int(v) for v in sup)), i)
    return sorted(first.values())


def site_isolated_loop(w, lrank, p, q, rad, sites):
    """True when no site s ≠ p among ``sites`` with p's label rank lies within distance ≤ rad of q (2D)."""
    for s in sites:
        if s != p and lrank[s] == lrank[p]:
            e0, e1 = float(w[s][0]) - q[0], float(w[s][1]) - q[1]
            if e0 * e0 + e1 * e1 <= rad * rad:
                return False
    return True


# ----------------------------------------------------------------------------- oracle, from the definition
# docs/reference.md, "The oracle", steps 2–3: a 3D point is accepted when it is the least-squares point of a
# support tuple (one same-label 2D point per view) and lies within δ of every ray of the tuple; identical
# tuples are one point. No seeds, search radii, refit rounds or merge heuristics: every tuple is tried.


def definition_consistent_tuples(observations, *, delta):
    """Every consistent support tuple of orthographic observations with δ in Å, by exhaustive enumeration
    over one same-label point per view (strict visibility: every view supports the point). Pruning uses
    only a consequence of the definition: a point within δ of two rays forces their line gap ≤ 2δ.
    Returns a list of (x (3,), label, tuple of point indices per view)."""
    views = []
    for v in observations.views:
        cam = v.camera
        assert cam.kind == "orthographic", "the definition twin covers orthographic views"
        rot = np.asarray(cam.rotation, dtype=float)
        rays = []
        for u, w in v.uv:
            x, y = (u - 0.5 * cam.width) / cam.scale, (0.5 * cam.height - w) / cam.scale
            rays.append((np.asarray(cam.center, dtype=float) + x * rot[0] + y * rot[1], -rot[2]))
        views.append((rays, [int(z) for z in v.labels]))
    out = []

    def extend(chosen, label):
        k = len(chosen)
        if k == len(views):
            rays = [views[j][0][p] for j, p in enumerate(chosen)]
            x = oracle_triangulate([o for o, _ in rays], [d for _, d in rays])
            if x is None:
                return
            resid = [np.linalg.norm(np.cross(x - o, d)) for o, d in rays]  # distance from x to each ray
            if max(resid) <= delta:
                out.append((x, label, tuple(chosen)))
            return
        rays_k, labels_k = views[k]
        for p, z in enumerate(labels_k):
            if z != label:
                continue
            o, d = rays_k[p]
            if all(oracle_line_gap(o, d, *views[j][0][q]) <= 2 * delta for j, q in enumerate(chosen)):
                extend(chosen + [p], label)

    for p, z in enumerate(views[0][1]):
        extend([p], z)
    return out


def definition_tuple_residuals(observations, *, delta, upto=2.0):
    """Every full support tuple of orthographic observations (δ in Å, one same-label point per view) whose
    least-squares point lies within upto·δ of each of its rays, with that largest distance over δ: a list of
    (x (3,), label, tuple, worst residual/δ). The residual of x in an orthographic view is its distance from
    the point's ray (Å in the image plane)."""
    out = []
    for x, z, sup in definition_consistent_tuples(observations, delta=upto * delta):
        worst = 0.0
        for v, p in zip(observations.views, sup, strict=True):
            cam = v.camera
            rot = np.asarray(cam.rotation, dtype=float)
            y = ((v.uv[p][0] - 0.5 * cam.width) / cam.scale, (0.5 * cam.height - v.uv[p][1]) / cam.scale)
            c = rot @ (np.asarray(x) - np.asarray(cam.center, dtype=float))
            worst = max(worst, math.hypot(c[0] - y[0], c[1] - y[1]))
        out.append((x, z, sup, worst / delta))
    return out


def oracle_phantoms(points, labels, positions, numbers, delta, lattice=None):
    """Φ_δ by its definition: the indices of the points farther than δ (Å, minimum image when periodic) from
    every same-label atom."""
    out = []
    for i, (x, z) in enumerate(zip(points, labels, strict=True)):
        near = [np.linalg.norm(oracle_min_image(np.asarray(x) - np.asarray(p), lattice)[0])
                for p, zz in zip(positions, numbers, strict=True) if int(zz) == int(z)]
        if not near or min(near) > delta:
            out.append(i)
    return out


# ----------------------------------------------------------------------------- phantom analysis
# Twins of viewcert.oracle.phantom_kernels, from the definitions (no numba, no trees). Minimum-image distance
# between a query q and a target t (Cartesian Å) over the given image shifts: min over shifts s of
# |(s + t) − q|; shifts = {0} for a molecule.

def phantom_nearest_same_label(q, qlab, t, tlab, shifts):
    """[(distance, index)] per query: nearest same-label target image; (inf, -1) when the label is absent."""
    out = []
    for i in range(len(q)):
        best, bj = math.inf, -1
        for k in range(len(shifts)):
            for j in range(len(t)):
                if tlab[j] != qlab[i]:
                    continue
                d = [(shifts[k][c] + t[j][c]) - q[i][c] for c in range(3)]
                d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
                if d2 < best:
                    best, bj = d2, j
        out.append((math.sqrt(best) if bj >= 0 else math.inf, bj))
    return out


def phantom_min_same_label_distance(p, lab, shifts, home):
    """Smallest same-label image distance, excluding an atom against itself at shift index ``home``."""
    best = math.inf
    for i in range(len(p)):
        for k in range(len(shifts)):
            for j in range(len(p)):
                if lab[j] != lab[i] or (i == j and k == home):
                    continue
                d = [(shifts[k][c] + p[j][c]) - p[i][c] for c in range(3)]
                best = min(best, d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    return math.sqrt(best)


# ----------------------------------------------------------------------------- transformation tasks
def task_views_consistent(uv_a, int_a, lab_a, uv_b, int_b, lab_b, delta, eps) -> bool:
    """Twin from the definition: same count per label, and every point of each set has a same-label point
    of the other within δ (Euclidean, px) whose intensity differs by ≤ ε."""
    if sorted(lab_a.tolist()) != sorted(lab_b.tolist()):
        return False

    def covered(ua, ia, la, ub, ib, lb):
        for p in range(len(ua)):
            if not any(la[p] == lb[q] and np.hypot(*(ua[p] - ub[q])) <= delta and abs(ia[p] - ib[q]) <= eps
                       for q in range(len(ub))):
                return False
        return True

    return covered(uv_a, int_a, lab_a, uv_b, int_b, lab_b) and covered(uv_b, int_b, lab_b, uv_a, int_a, lab_a)


# ----------------------------------------------------------------------------- io.images (exact indexed PNG)
def png_palette_scanlines(rgb):
    """Twin of ``io.images.exact_palette_scanlines`` from the PNG spec: palette = the distinct (R, G, B)
    triples sorted; bit depth 1/2/4/8 for ≤ 2/4/16/256 colours; each scanline = filter byte 0, then the
    indices written as ``bits``-wide binary digits left to right, padded with 0 to whole bytes. None beyond
    256 colours."""
    h, w = len(rgb), len(rgb[0])
    colours = sorted({tuple(int(v) for v in rgb[i][j]) for i in range(h) for j in range(w)})
    if len(colours) > 256:
        return None
    n = len(colours)
    bits = 1 if n <= 2 else 2 if n <= 4 else 4 if n <= 16 else 8
    index = {c: r for r, c in enumerate(colours)}
    rows = []
    for i in range(h):
        digits = "".join(format(index[tuple(int(v) for v in rgb[i][j])], f"0{bits}b") for j in range(w))
        digits += "0" * (-len(digits) % 8)
        rows.append([0] + [int(digits[k:k + 8], 2) for k in range(0, len(digits), 8)])
    return np.array(colours, dtype=np.uint8).reshape(-1, 3), np.array(rows, dtype=np.uint8), bits


# ----------------------------------------------------------------------------- render: flat orthographic shading
def flat_ortho_shade_loop(pidx, prim, code, col, cam, params):
    """Twin of ``render._kernels_pass1._shade_rows_flat_ortho`` from the raster docstring: pixel (i, j) seen
    through primitive p = pidx[i, j] (−1: background) has ID code[p] and the flat colour col[p], or the
    outline colour params[1:4] when p is a sphere and the ray through the pixel centre passes at camera-plane
    distance² ≥ prim[p, 9] from its centre (ox = (j + ½ − W/2)/s, oy = (H/2 − i − ½)/s); class 2p (+1 in
    the ring), −2 on background; 8-bit = round(255 × colour) clamped to 0..255. Returns (ids, cls, rgb)."""
    h, w = len(pidx), len(pidx[0])
    width, height, scale = int(cam[1]), cam[2], cam[3]

    def byte(x):
        return min(255, max(0, math.floor(255.0 * x + 0.5)))

    ids = np.zeros((h, w), dtype=np.int32)
    cls = np.zeros((h, w), dtype=np.int32)
    rgb = np.zeros((h, w, 3), dtype=np.uint8)
    for i in range(h):
        for j in range(w):
            p = int(pidx[i][j])
            if p < 0:
                ids[i, j], cls[i, j], rgb[i, j] = -1, -2, [byte(params[7 + c]) for c in range(3)]
                continue
            ring = False
            if prim[p][0] == 0.0:
                ex = (j + 0.5 - 0.5 * width) / scale - prim[p][5]
                ey = (0.5 * height - (i + 0.5)) / scale - prim[p][6]
                ring = ex * ex + ey * ey >= prim[p][9]
            ids[i, j] = code[p]
            cls[i, j] = 2 * p + (1 if ring else 0)
            rgb[i, j] = [byte(params[1 + c] if ring else col[p][c]) for c in range(3)]
    return ids, cls, rgb


# ----------------------------------------------------------------------------- structures (closest pair)
def closest_image_pair(cart, shifts, home):
    """Twin of ``viewcert.structures._kernels.closest_image_pair_nb`` from the definition: (i, j, distance) of
    the smallest |(cart[j] − cart[i]) + shifts[s]| (components summed x, y, z), the pair i == j at row ``home``
    counting as +inf; the first of equal minima in (i, j, s) order; a NaN, the first one, wins (as np.argmin)."""
    best = None
    for i, j, s in itertools.product(range(len(cart)), range(len(cart)), range(len(shifts))):
        if i == j and s == home:
            d2 = math.inf
        else:
            d = [(cart[j][c] - cart[i][c]) + shifts[s][c] for c in range(3)]
            d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
        if math.isnan(d2):
            return i, j, d2
        if best is None or d2 < best[2]:
            best = (i, j, d2)
    return best[0], best[1], math.sqrt(best[2])
