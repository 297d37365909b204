"""Figures for the attribution report. Every function returns PNG bytes; no global pyplot state is used
(figures are built on ``matplotlib.figure.Figure`` with the Agg canvas), so plotting is deterministic and
safe in any process."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from viewcert.attribution.table import RUNGS
from viewcert.sanitize import plot_text

DPI = 110
_COLORS = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666", "#1f78b4",
           "#b2df8a", "#fb9a99", "#cab2d6", "#6a3d9a", "#b15928"]


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def _short(model: str) -> str:
    """A model's name without its organisation, as matplotlib text (received: controls and ``$`` escaped)."""
    return plot_text(model.split("/", 1)[-1])


def ladder_plot(arms: pd.DataFrame, *, chance: float, ceilings: list[tuple[str, float]]) -> bytes:
    """Accuracy per rung (x) and model (one line each), Clopper–Pearson bars; unscored arms hollow and
    not joined; chance and each ceiling as horizontal lines."""
    rungs = [r for r in RUNGS if r in set(arms["rung"])]
    x_of = {r: i for i, r in enumerate(rungs)}
    models = sorted(arms["model"].unique())
    fig = Figure(figsize=(8.5, 5.2))
    ax = fig.add_subplot(111)
    offsets = np.linspace(-0.18, 0.18, max(len(models), 1))
    for k, model in enumerate(models):
        sub = arms[arms["model"] == model].copy()
        sub["x"] = sub["rung"].map(x_of) + offsets[k]
        sub = sub.sort_values("x")
        color = _COLORS[k % len(_COLORS)]
        scored = sub[sub["scored"]]
        ax.plot(scored["x"], scored["accuracy"], "-", color=color, lw=1.2, alpha=0.8)
        for _, r in sub.iterrows():
            yerr = [[r["accuracy"] - r["ci_lo"]], [r["ci_hi"] - r["accuracy"]]]
            ax.errorbar(r["x"], r["accuracy"], yerr=yerr, fmt="o", color=color, ms=5, capsize=2, lw=0.8,
                        mfc=color if r["scored"] else "white", label=None)
        ax.plot([], [], "o-", color=color, label=_short(model))
    ax.axhline(chance, color="0.4", ls=":", lw=1)
    ax.text(len(rungs) - 0.5, chance, f" chance {chance:.3f}", va="bottom", ha="right", fontsize=8, color="0.3")
    for j, (label, value) in enumerate(ceilings):
        ax.axhline(value, color="black", ls="--" if j == 0 else "-.", lw=1)
        ax.text(-0.45, value, plot_text(label), va="bottom", fontsize=8)
    ax.set_xticks(range(len(rungs)), rungs)
    ax.set_xlim(-0.5, len(rungs) - 0.5)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("accuracy (count / items), 95% Clopper–Pearson")
    ax.set_title("Attribution ladder (hollow = unscored arm)")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    fig.tight_layout()
    return _png(fig)


def decomposition_bars(decomposition: pd.DataFrame, r1_label: str) -> bytes:
    """Stacked bars per model: R4 + perception gap (R3 − R4) + residual (R1 − R3) = R1."""
    d = decomposition[(decomposition["r1"] == r1_label) & decomposition["gap"].notna()].copy()
    d = d.sort_values("gap", ascending=True)
    fig = Figure(figsize=(8.0, 0.45 * max(len(d), 2) + 1.6))
    ax = fig.add_subplot(111)
    y = np.arange(len(d))
    r4 = (d["R4"] / d["n"]).to_numpy(float)
    gap = d["gap"].to_numpy(float)
    res = d["residual"].to_numpy(float)
    ax.barh(y, r4, color="#9ecae1", label="R4 (pixels)")
    ax.barh(y, gap, left=r4, color="#fd8d3c", label="perception gap R3 − R4")
    ax.barh(y, res, left=r4 + gap, color="#756bb1", label="residual R1 − R3")
    for yi, g, s in zip(y, gap, d["share"], strict=True):
        txt = "share suppressed" if pd.isna(s) else f"share {s:.3f}"
        ax.text(1.01, yi, txt if g >= 0 else txt + " (R3 < R4)", va="center", fontsize=7)
    ax.set_yticks(y, [_short(m) for m in d["model"]], fontsize=8)
    ax.set_xlim(0, 1.25)
    ax.set_xlabel("accuracy")
    ax.set_title(f"Error decomposition against {plot_text(r1_label)}")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.45, -0.09 - 0.3 / max(len(d), 2)), ncol=3,
              frameon=False)
    fig.tight_layout()
    return _png(fig)


def forest_plot(decomposition: pd.DataFrame, summary: pd.DataFrame) -> bytes:
    """Perception share with bootstrap interval per model, one panel per ceiling; the median dashed."""
    labels = list(dict.fromkeys(decomposition["r1"]))
    fig = Figure(figsize=(4.2 * len(labels) + 1.5, 0.4 * decomposition["model"].nunique() + 1.8))
    models = sorted(decomposition["model"].unique())
    for j, label in enumerate(labels):
        ax = fig.add_subplot(1, len(labels), j + 1)
        d = decomposition[decomposition["r1"] == label].set_index("model")
        for i, m in enumerate(models):
            if m not in d.index or pd.isna(d.loc[m].get("share", np.nan)):
                why = "—" if m not in d.index else ("suppressed" if d.loc[m]["status"] == "suppressed"
                                                    else "not computed")
                ax.text(0.5, i, why, ha="center", va="center", fontsize=7, color="0.5")
                continue
            r = d.loc[m]
            ax.errorbar(r["share"], i, xerr=[[r["share"] - r["share_lo"]], [r["share_hi"] - r["share"]]],
                        fmt="s", color="black", ms=4, capsize=2, lw=0.9)
        s = summary[summary["r1"] == label]
        if len(s) and "median_share" in s and pd.notna(s["median_share"].iloc[0]):
            med = float(s["median_share"].iloc[0])
            ax.axvline(med, color="#d95f02", ls="--", lw=1)
            ax.axvspan(float(s["median_share_lo"].iloc[0]), float(s["median_share_hi"].iloc[0]), color="#d95f02",
                       alpha=0.12)
            ax.text(med, len(models) - 0.4, f"median {med:.4f}", fontsize=7, color="#d95f02", ha="center")
        ax.axvline(0, color="0.6", lw=0.8)
        ax.set_yticks(range(len(models)), [_short(m) for m in models] if j == 0 else [""] * len(models),
                      fontsize=8)
        ax.set_ylim(-0.7, len(models) - 0.1)
        ax.invert_yaxis()
        ax.set_xlim(-0.3, 1.1)
        ax.set_xlabel("perception share (R3 − R4)/(R1 − R4)")
        ax.set_title(plot_text(label), fontsize=9)
    fig.tight_layout()
    return _png(fig)


def transition_matrices(transitions: pd.DataFrame) -> bytes:
    """One 2×2 matrix per model: items right/wrong at R4 (rows) × right/wrong at R3 (columns)."""
    n = len(transitions)
    cols = min(5, max(n, 1))
    rows = int(np.ceil(max(n, 1) / cols))
    fig = Figure(figsize=(2.3 * cols, 2.4 * rows + 0.4))
    if n == 0:  # no model has both R4 and R3 arms: say so instead of failing on the missing columns
        fig.text(0.5, 0.5, "no model has both R4 and R3 arms: no transitions", ha="center", va="center")
        return _png(fig)
    for i, (_, r) in enumerate(transitions.sort_values("model").iterrows()):
        ax = fig.add_subplot(rows, cols, i + 1)
        m = np.array([[r["R4_right_R3_right"], r["R4_right_R3_wrong"]],
                      [r["R4_wrong_R3_right"], r["R4_wrong_R3_wrong"]]], dtype=float)
        ax.imshow(m, cmap="Blues", vmin=0, vmax=max(m.max(), 1))
        for (a, b), v in np.ndenumerate(m):
            ax.text(b, a, f"{int(v)}", ha="center", va="center", fontsize=9,
                    color="white" if v > 0.6 * m.max() else "black")
        ax.set_xticks([0, 1], ["R3 ✓", "R3 ✗"], fontsize=7)
        ax.set_yticks([0, 1], ["R4 ✓", "R4 ✗"], fontsize=7)
        ax.set_title(_short(r["model"]), fontsize=7)
    fig.suptitle("R4 → R3 transitions (items)", fontsize=10)
    fig.tight_layout()
    return _png(fig)


def recall_curves(summary: pd.DataFrame) -> bytes:
    """Median recall vs tolerance, species-aware and species-blind with bootstrap bands, and the null."""
    fig = Figure(figsize=(6.8, 4.4))
    ax = fig.add_subplot(111)
    for mode, color in (("species-aware", "#d95f02"), ("species-blind", "#1b9e77")):
        s = summary[summary["mode"] == mode].sort_values("tolerance")
        ax.plot(s["tolerance"], s["median_recall"], "o-", color=color, label=f"{mode} median recall")
        ax.fill_between(s["tolerance"], s["median_recall_lo"], s["median_recall_hi"], color=color, alpha=0.15)
    for mode, color in (("species-aware", "#d95f02"), ("species-blind", "#1b9e77")):
        s = summary[summary["mode"] == mode].sort_values("tolerance")
        if "null_median_recall" in s:
            ax.plot(s["tolerance"], s["null_median_recall"], "--", color=color, lw=1,
                    label=f"random-position null ({mode})")
            ax.fill_between(s["tolerance"], s["null_median_recall_draws_lo"], s["null_median_recall_draws_hi"],
                            color=color, alpha=0.07)
    ax.set_xlabel("tolerance (minimum-image distance)")
    ax.set_ylabel("median recall over items")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Extraction audit: recall of true atoms vs tolerance")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _png(fig)


#: one colour per term of the deficit account (colour-blind-safe Dark2)
TERM_COLORS = {"format": "#e7298a", "shortcut": "#e6ab02", "perception": "#d95f02", "reasoning": "#7570b3"}


#: the account figure's x-axis: one scale for every model, in points of the item scale (0–1)
ACCOUNT_XLIM = (-0.05, 1.05)


def account_bars(account: pd.DataFrame, r1_label: str, *, unit: str = "points = fraction of the items") -> bytes:
    """PNG of :func:`account_figure`."""
    return _png(account_figure(account, r1_label, unit=unit))


def account_figure(account: pd.DataFrame, r1_label: str, *, unit: str = "points = fraction of the items") -> Figure:
    """One stacked horizontal bar per model from R4 to R1 on one scale (:data:`ACCOUNT_XLIM`, in the account's
    ``unit``; points = fraction of the items by default): the terms format, shortcut, perception, reasoning in
    that order, each a signed segment from the running total (a negative term runs left); at each segment's end
    its own 95 % interval as an error bar. A term not measured has no segment; a model not decomposed shows
    why. Models top to bottom in name order (row i at y = i)."""
    d = account[account["r1"] == r1_label].sort_values("model", kind="stable")
    fig = Figure(figsize=(9.0, 0.5 * max(len(d), 2) + 1.8))
    ax = fig.add_subplot(111)
    for i, (_, r) in enumerate(d.iterrows()):
        if pd.isna(r["R4"]):
            ax.text(0.01, i, "no R4 arm", va="center", fontsize=7, color="0.4")
            continue
        ax.plot([r["R4"]], [i], "|", color="black", ms=14, mew=1.5, zorder=4)
        if r["status"] != "ok":
            ax.text(r["R4"] + 0.01, i, plot_text(str(r["status"])[:90]), va="center", fontsize=6.5, color="0.4")
            continue
        at = float(r["R4"])
        for term, color in TERM_COLORS.items():
            v = r[term]
            if pd.isna(v):
                continue
            # a negative term (credit, e.g. a shortcut below the text ceiling) runs left, drawn narrow on top
            ax.barh(i, v, left=at, color=color, height=0.6 if v >= 0 else 0.25, edgecolor="white" if v >= 0 else
                    "black", lw=0.5, zorder=2 if v >= 0 else 3, gid=term)
            end = at + v
            ax.errorbar(end, i, xerr=[[max(v - r[f"{term}_lo"], 0.0)], [max(r[f"{term}_hi"] - v, 0.0)]], fmt="none",
                        ecolor="black", elinewidth=0.7, capsize=2)
            at = end
        ax.plot([r["R1"]], [i], "d", color="black", ms=4, zorder=4)
    handles = [Patch(facecolor=c, label=t) for t, c in TERM_COLORS.items()]
    handles += [Line2D([], [], marker="|", color="black", ls="none", ms=10, label="R4"),
                Line2D([], [], marker="d", color="black", ls="none", ms=4, label="R1")]
    ax.set_yticks(range(len(d)), [_short(m) for m in d["model"]], fontsize=8)
    ax.set_ylim(-0.7, len(d) - 0.3)
    ax.invert_yaxis()
    ax.set_xlim(*ACCOUNT_XLIM)
    ax.axvline(0, color="0.7", lw=0.6)
    ax.set_xlabel(f"{plot_text(unit)}; bars from R4 to R1, 95 % paired bootstrap per term")
    ax.set_title(f"Deficit R1 − R4 by kind against {plot_text(r1_label)}", fontsize=10)
    ax.legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.3 / max(len(d), 2)),
              ncol=6, frameon=False)
    fig.tight_layout()
    return fig
