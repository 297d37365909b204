"""How much the majority vote's tie rule decides: each arm's majority-vote count under every tie rule, and what
the rule does to the models' ranking at each rung.

The study's files keep vote counts only, so an item whose K answers split evenly (a, b, c at K = 3) has no
majority; a tie rule picks one (``parsing.majority_vote``: ``first`` the tied answer met first in sample order,
``alphabetical`` the alphabetically first, ``none`` no answer, hence wrong). Per arm (from the canonical table,
``samples.arm_samples``; an unscored arm or one whose K varies per item is left out and ``tie_sensitivity`` says
which):

- ``ties``: items whose ``ok`` answers have two or more answers at the top count;
- ``correct_<rule>``: items whose vote is right under each rule of :data:`parsing.TIE_RULES`
  (``samples.vote_right``), and ``spread`` = (largest − smallest) / n, in points of accuracy;

and per rung with at least three such arms: Spearman's ρ (Pearson of ``scipy.stats.rankdata`` ranks, ties averaged; undefined when a rule ties every model) between the
models' majority-vote accuracies under every two rules, its smallest value, and the pairs of models whose order
(strict, one above the other) differs between two rules. The tie-free figure is the expected accuracy (mean of
c_i / K over the items, ``samples``), which the report shows first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats as sps

from viewcert.attribution.parsing import TIE_RULES
from viewcert.attribution.samples import ArmSamples, arm_samples, vote_right

__all__ = ["COLUMNS", "TieSensitivity", "tie_counts", "tie_sensitivity"]

COLUMNS = ["model", "rung", "K", "n", "ties", *[f"correct_{r}" for r in TIE_RULES], "spread"]


def tie_counts(s: ArmSamples) -> np.ndarray:
    """Per item, whether its answered samples have two or more answers at the top count (a tied vote).

    Parameters
    ----------
    s : samples.ArmSamples
        One arm's (n, K) answers (−1: no answer).

    Returns
    -------
    numpy.ndarray of bool, shape (n,)
        True where the vote is tied.
    """
    a = s.answers
    valid = a >= 0
    same = (a[:, :, None] == a[:, None, :]) & valid[:, None, :]
    count = np.where(valid, same.sum(-1), 0)
    top = count.max(-1, keepdims=True)
    at_top = valid & (count == top) & (top > 0)
    first = np.take_along_axis(a, at_top.argmax(-1)[:, None], -1)
    return (at_top & (a != first)).any(-1)


@dataclass(frozen=True)
class TieSensitivity:
    """Per arm the counts under every tie rule (``arms``, :data:`COLUMNS`), per rung the ranking's agreement
    across rules (``rankings``), the arms left out and why, and the report's lines."""

    arms: pd.DataFrame
    rankings: pd.DataFrame
    left_out: tuple[str, ...]
    tie_rule: str

    def lines(self) -> list[str]:
        """One sensitivity line per rung with ties (none when no arm has a tie)."""
        out = []
        for rung, g in self.arms.groupby("rung", sort=False):
            if not int(g["ties"].sum()):
                continue
            line = (f"{rung}: {int(g['ties'].min())}–{int(g['ties'].max())} tied items per arm; the majority-vote "
                    f"accuracy moves by up to {g['spread'].max():.4f} over the tie rules ({', '.join(TIE_RULES)}; "
                    f"this report uses {self.tie_rule})")
            rk = self.rankings[self.rankings["rung"] == rung]
            if len(rk):
                r = rk.iloc[0]
                rho = (f"Spearman ρ ≥ {r['min_spearman']:.4f} between rules" if np.isfinite(r["min_spearman"])
                       else "Spearman ρ undefined (a rule ties every model)")
                line += f"; ranking of {int(r['models'])} models: {rho}; " + _swaps(r["swaps"])
            out.append(line)
        return out


#: pairs named in a sensitivity line (every pair is in ``tie_rankings.csv``)
SHOWN_SWAPS = 3


def _swaps(text: str) -> str:
    pairs = [p for p in text.split("; ") if p]
    if not pairs:
        return "no pair changes order"
    shown = "; ".join(pairs[:SHOWN_SWAPS]) + ("; …" if len(pairs) > SHOWN_SWAPS else "")
    return f"{len(pairs)} pair(s) change order: {shown}"


def tie_sensitivity(frame: pd.DataFrame, universe: Sequence[str], scored: Mapping[tuple[str, str], bool],
                    tie_rule: str) -> TieSensitivity:
    """The tie sensitivity of the module docstring over the ladder's arms.

    Parameters
    ----------
    frame : pandas.DataFrame
        The canonical table's rows over ``universe``.
    universe : sequence of str
        The ladder's items.
    scored : mapping of (model, rung) to bool
        Which arms the ladder scored (``Ladder.arm_objects``); unscored arms are left out.
    tie_rule : str
        The rule the ladder used (named in the lines).

    Returns
    -------
    TieSensitivity
        Counts per arm and rule (items), the rankings' agreement per rung, the arms left out.
    """
    rows, left = [], []
    for (model, rung), g in frame.groupby(["model", "rung"], sort=True):
        key = (str(model), str(rung))
        if not scored.get(key, False):
            left.append(f"{model} {rung}: unscored")
            continue
        s = arm_samples(g, universe)
        if isinstance(s, str):
            left.append(f"{model} {rung}: {s}")
            continue
        right = {r: int(vote_right(s.answers, s.correct, r).sum()) for r in TIE_RULES}
        n = s.answers.shape[0]
        rows.append({"model": key[0], "rung": key[1], "K": s.k, "n": n, "ties": int(tie_counts(s).sum()),
                     **{f"correct_{r}": v for r, v in right.items()},
                     "spread": (max(right.values()) - min(right.values())) / n})
    arms = pd.DataFrame(rows, columns=COLUMNS)
    return TieSensitivity(arms, _rankings(arms), tuple(left), tie_rule)


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's ρ (``scipy.stats.rankdata``, ties averaged; Pearson of the ranks); NaN when either is constant."""
    rx, ry = sps.rankdata(x), sps.rankdata(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    den = float(np.sqrt((rx @ rx) * (ry @ ry)))
    return float(rx @ ry / den) if den > 0 else float("nan")


def _rankings(arms: pd.DataFrame) -> pd.DataFrame:
    """Per rung with three or more arms: the smallest Spearman ρ between two rules and the pairs whose order
    changes."""
    rows = []
    for rung, g in arms.groupby("rung", sort=False):
        if len(g) < 3:
            continue
        acc = {r: g[f"correct_{r}"].to_numpy(float) for r in TIE_RULES}
        rhos = [_spearman(acc[x], acc[y]) for x, y in combinations(TIE_RULES, 2)]
        models = g["model"].tolist()
        swaps = []
        for i, j in combinations(range(len(models)), 2):
            signs = {int(np.sign(acc[r][i] - acc[r][j])) for r in TIE_RULES}
            if {1, -1} <= signs:
                swaps.append(f"{models[i]} / {models[j]}")
        rows.append({"rung": rung, "models": len(models),
                     "min_spearman": float(np.nanmin(rhos)) if np.isfinite(rhos).any() else float("nan"),
                     "swaps": "; ".join(swaps)})
    return pd.DataFrame(rows, columns=["rung", "models", "min_spearman", "swaps"])
