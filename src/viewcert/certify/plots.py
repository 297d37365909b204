"""Plots of certifications and design studies (matplotlib, Agg; written atomically as PNG)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from viewcert.formats.model import ABSENT
from viewcert.formats.records import CeilingCertificate
from viewcert.io.atomic import write_bytes_atomic
from viewcert.sanitize import plot_text


def _fig():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: str | Path) -> Path:
    plt = _fig()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return write_bytes_atomic(path, buf.getvalue())


def plot_ceiling_by_system(cert: CeilingCertificate, path: str | Path) -> Path:
    """Bar per crystal system: correct / n, with the overall R1 and its exact lower bound."""
    plt = _fig()
    s = cert.summary
    systems = s.by_crystal_system
    names = list(systems)
    rates = [v.correct / v.n for v in systems.values()]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.bar(names, rates, color="#4c72b0")
    for i, v in enumerate(systems.values()):
        ax.text(i, rates[i] + 0.01, f"{v.correct}/{v.n}", ha="center", va="bottom", fontsize=8)
    ax.axhline(s.R1, color="k", lw=1, label=f"R1 = {s.correct}/{s.n}")
    bound = s.bound
    ax.axhline(bound.lower, color="k", lw=1, ls="--",
               label=f"one-sided {100 * bound.confidence:g}% lower bound {bound.lower:.4f}")
    ax.set_ylim(0, 1.12)
    ax.set_ylabel(f"ceiling ({s.score.replace('_', ' ')})")
    tol = cert.tolerances
    ax.set_title(f"{plot_text(cert.protocol.name)}: δ = {tol.delta:g} Å, τ = {tol.tau:g} Å", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    ax.tick_params(axis="x", labelrotation=30, labelsize=8)
    return _save(fig, path)


def plot_phantoms(cert: CeilingCertificate, path: str | Path) -> Path:
    """Phantom count per item (items sorted by count), failures marked."""
    plt = _fig()
    items = cert.items
    counts = [((it.oracle.n_phantoms if it.oracle else None) or 0, not it.correct, it.id) for it in items]
    counts.sort(key=lambda t: (-t[0], t[2]))
    fig, ax = plt.subplots(figsize=(7, 3.2))
    xs = range(len(counts))
    ax.bar(xs, [c[0] for c in counts], color=["#c44e52" if c[1] else "#55a868" for c in counts], width=1.0)
    ax.set_xlabel("items (sorted by phantom count; red = not correct)")
    ax.set_ylabel("phantoms |Φ_δ|")
    c = cert.summary.phantom_census
    ax.set_title(f"{c.items_with_phantoms} of {len(items)} items with phantoms ({c.total_phantoms} points)",
                 fontsize=10)
    if not any(x[0] for x in counts):
        ax.set_ylim(0, 1)
    return _save(fig, path)


def plot_delta_star(cert: CeilingCertificate, path: str | Path) -> Path:
    """Uniqueness margins δ* (Å) of the items that have one: histogram (log bins) and empirical CDF, with the
    certification's δ marked (items whose δ* ≤ δ can have phantoms at δ)."""
    plt = _fig()
    v = np.sort([it.uniqueness_margin.delta_star for it in cert.items
                 if it.uniqueness_margin and it.uniqueness_margin.delta_star not in (ABSENT, None)])
    delta = cert.tolerances.delta
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(9, 3.4))
    pos = v[v > 0]
    if len(pos):
        lo, hi = float(pos.min()), float(pos.max())
        bins = np.geomspace(lo / 1.05, hi * 1.05, 30) if hi > lo else np.array([lo / 1.05, hi * 1.05])
        ax.hist(pos, bins=bins, color="#4c72b0")
        ax.set_xscale("log")
        bx.step(pos, np.arange(1, len(pos) + 1) / len(v), where="post", color="#4c72b0")
        bx.set_xscale("log")
    for a in (ax, bx):
        a.axvline(delta, color="k", lw=1, ls="--", label=f"δ = {delta:g} Å")
        a.set_xlabel("uniqueness margin δ* (Å)")
    ax.set_ylabel("items")
    bx.set_ylabel("fraction of items ≤ δ*")
    bx.set_ylim(0, 1.02)
    bx.legend(fontsize=8, loc="upper left")
    n_zero = int(np.sum(v == 0))
    fig.suptitle(f"{plot_text(cert.protocol.name)}: δ* of {len(v)} items, {int(np.sum(v <= delta))} with δ* ≤ δ"
                 + (f" ({n_zero} with δ* = 0: dependent views)" if n_zero else ""), fontsize=10)
    return _save(fig, path)


def plot_ceiling_vs_delta(rows: list[dict], path: str | Path, *, reference: dict | None = None) -> Path:
    """Ceiling (correct / n) against δ, one line per protocol (``rows``: protocol, delta, correct, n);
    ``reference``: {label: (deltas, correct counts, n)} drawn dashed (e.g. the study's frontier)."""
    plt = _fig()
    fig, ax = plt.subplots(figsize=(6.4, 4))
    by: dict[str, list] = {}
    for r in rows:
        if r["n"]:  # a configuration where no item could be certified has no ceiling to draw
            by.setdefault(r["protocol"], []).append((r["delta"], r["correct"] / r["n"]))
    for name, pts in by.items():
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=plot_text(name))
    for name, (ds, ks, n) in (reference or {}).items():
        ax.plot(ds, [k / n for k in ks], ls="--", lw=1, color="gray", label=plot_text(name))
    ax.set_xscale("log")
    ax.set_xlabel("δ (Å)")
    ax.set_ylabel("ceiling R1")
    if by or reference:  # every configuration unreadable: an empty plot, no empty legend
        ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def plot_phantom_rate_by_subset(rows: list[dict], path: str | Path) -> Path:
    """Share of items with phantoms per view subset (``rows``: subset, n_views, items_with_phantoms, n)."""
    plt = _fig()
    rows = sorted((r for r in rows if r["n"]), key=lambda r: (r["n_views"], r["subset"]))
    fig, ax = plt.subplots(figsize=(8, 4))
    colors = {2: "#c44e52", 3: "#dd8452", 4: "#4c72b0", 5: "#55a868"}
    ax.bar(range(len(rows)), [r["items_with_phantoms"] / r["n"] for r in rows],
           color=[colors.get(r["n_views"], "#8172b3") for r in rows])
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([plot_text(r["subset"]) for r in rows], rotation=90, fontsize=6)
    ax.set_ylabel("items with Φ_δ ≠ ∅")
    ax.set_title("phantom rate per view subset", fontsize=10)
    return _save(fig, path)
