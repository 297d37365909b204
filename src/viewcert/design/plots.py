"""Plots of view designs (the only matplotlib importer of ``design``): stereographic projection of view
directions over the structures' low-index zone axes, and the δ* distribution."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from viewcert.design.designer import zone_axes  # noqa: E402
from viewcert.io.atomic import write_bytes_atomic  # noqa: E402
from viewcert.sanitize import plot_text  # noqa: E402


def stereographic(directions: np.ndarray) -> np.ndarray:
    """Upper-hemisphere stereographic coordinates (n, 2) of unit directions (folded to z ≥ 0: an orthographic
    view and its antipode see the same projection)."""
    d = np.asarray(directions, dtype=np.float64).reshape(-1, 3)
    d = d / np.linalg.norm(d, axis=1, keepdims=True)
    d = np.where(d[:, 2:3] < 0, -d, d)
    return d[:, :2] / (1.0 + d[:, 2:3])


def stereographic_plot(protocols: dict, structures, path, *, title: str = "view directions over zone axes") -> Path:
    """Write a PNG: grey dots = every structure's short lattice vectors (zone axes), one marker set per
    protocol (name → Protocol)."""
    fig, ax = plt.subplots(figsize=(6, 6))
    ax.add_patch(plt.Circle((0, 0), 1.0, fill=False, color="k", lw=0.8))
    z = stereographic(zone_axes(structures))
    ax.scatter(z[:, 0], z[:, 1], s=3, c="0.6", label="zone axes (short lattice vectors)", zorder=1)
    for (name, p), m in zip(protocols.items(), ("o", "s", "^", "D", "v", "P"), strict=False):
        xy = stereographic(np.array([v.direction for v in p.views]))
        ax.scatter(xy[:, 0], xy[:, 1], s=70, marker=m, label=plot_text(name), zorder=3, edgecolors="k")
        for (x, y), v in zip(xy, p.views, strict=True):
            ax.annotate(plot_text(v.name), (x, y), textcoords="offset points", xytext=(5, 5), fontsize=7)
    ax.set_xlim(-1.05, 1.05)
    ax.set_ylim(-1.05, 1.05)
    ax.set_aspect("equal")
    ax.set_xlabel("x / (1 + z) of the view direction (world frame)")
    ax.set_ylabel("y / (1 + z) of the view direction (world frame)")
    ax.set_title(plot_text(title), fontsize=10)
    ax.legend(loc="lower left", fontsize=7, framealpha=0.9)
    path = _saved(fig, path)
    plt.close(fig)
    return path


def margin_plot(values: dict, path, *, quantity: str = "δ* (uniqueness margin)", cap: float | None = None) -> Path:
    """Empirical CDF of a margin (Å) per protocol (name → array of per-structure values), the axis naming the
    ``quantity`` (δ* or δ_exact); with ``cap``, the values at it are lower bounds: the cap is drawn and the legend
    counts them per protocol."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, v in values.items():
        v = np.sort(np.asarray(v, dtype=np.float64))
        capped = int(np.sum(v >= cap - 1e-12)) if cap else 0
        label = plot_text(name) + (f" ({capped} of {len(v)} at the cap: at least it)" if capped else "")
        ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", label=label)
    if cap:
        ax.axvline(cap, color="0.4", ls=":", lw=1)
        ax.annotate(f"--cap {cap:g} Å", (cap, 0.02), textcoords="offset points", xytext=(-4, 0), ha="right",
                    fontsize=7, color="0.3")
    ax.set_xscale("log")
    ax.set_xlabel(plot_text(quantity) + " (Å)" + (f"; values at --cap {cap:g} are lower bounds" if cap else ""))
    ax.set_ylabel("fraction of structures at or below it")
    ax.legend(fontsize=8)
    path = _saved(fig, path)
    plt.close(fig)
    return path


def _saved(fig, path) -> Path:
    """``fig`` written to ``path`` in the format its suffix names, through ``io.atomic`` (no symlink followed
    inside a run's output folder)."""
    buf = io.BytesIO()
    fig.savefig(buf, format=Path(path).suffix.lstrip(".") or "png", dpi=120, bbox_inches="tight")
    return write_bytes_atomic(path, buf.getvalue())


def delta_star_plot(values: dict, path, *, cap: float | None = None) -> Path:
    """Empirical CDF of the uniqueness margin δ* (Å) per protocol (``margin_plot`` of δ*)."""
    return margin_plot(values, path, quantity="δ* (uniqueness margin)", cap=cap)
