"""Model pairs: is model A better than model B on the same items?

For every pair of models (A before B alphabetically) and every rung both have scored, over the ladder's items
(each item's majority vote, an item without an answer wrong):

- **exact McNemar**: the two-sided exact binomial test on the discordant items (A right and B wrong: ``a_only``;
  the reverse: ``b_only``), p = min(1, 2 · P[Bin(a_only + b_only, ½) ≤ min(a_only, b_only)])
  (:func:`viewcert.stats.mcnemar_exact`);
- on the **perception term** of the deficit account, per item d_i = R3_i − R4_i ∈ {−1, 0, 1}: the exact sign
  test on the items where A's term differs from B's (the same binomial test; McNemar is its 0/1 case), for the
  models with both R3 and R4 scored;
- ``a_total``/``b_total``: items right at the rung, or the sum of the term's per-item values (R3 items right less
  R4 items right); ``difference`` = (a_total − b_total)/n;
- on the **shortcut term**, per item R4_i (free_i − text_i) (the account's 0/1 form: R4's credit the model's
  image-free arm also earns, less what the text-only reader earns), when the text-only reader's per-item
  correctness is known, for the models with a scored R4 arm and an image-free arm with an answer
  (``no-image`` first, as the account); the format term needs each response's compliance and is not tested here;
- **Benjamini–Hochberg** over the pairs within each family (one rung, or the term):
  ``scipy.stats.false_discovery_control(p, method="bh")``;
- **items for 80 % power**: Connor's (1987) approximation for McNemar at two-sided α, from the observed
  discordant proportions p10 = a_only/n, p01 = b_only/n, ψ = p10 + p01, δ = p10 − p01:
  n = ⌈(z_{1−α/2} √ψ + z_{0.8} √(ψ − δ²))² / δ²⌉; none when δ = 0 (no difference observed).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats as sps

from viewcert import stats as st
from viewcert.attribution.account import FREE_ORDER

POWER = 0.8
PERCEPTION = "perception term (R3 − R4)"
SHORTCUT = "shortcut term R4 (free − text)"
COLUMNS = ["family", "model_a", "model_b", "n", "a_only", "b_only", "a_total", "b_total", "difference",
           "p_value", "p_bh", "items_for_80pct_power"]


def connor_items(a_only: int, b_only: int, n: int, *, alpha: float = st.DEFAULT_ALPHA,
                 power: float = POWER) -> int | None:
    """Items a paired difference of the observed size needs for ``power`` (Connor 1987; module docstring);
    None when the observed discordant counts are equal."""
    p10, p01 = a_only / n, b_only / n
    psi, delta = p10 + p01, p10 - p01
    if delta == 0:
        return None
    za, zb = sps.norm.ppf(1 - alpha / 2), sps.norm.ppf(power)
    return int(math.ceil((za * math.sqrt(psi) + zb * math.sqrt(max(psi - delta * delta, 0.0))) ** 2 / delta ** 2))


def _pair_row(family: str, a: str, b: str, va: np.ndarray, vb: np.ndarray, alpha: float) -> dict:
    """One pair on one family: A's and B's per-item values (0/1, or −1/0/1 for a term), the discordant counts
    (A above B, B above A), the exact test and Connor's items."""
    a_only, b_only = int((va > vb).sum()), int((vb > va).sum())
    p = st.sign_test([1] * a_only + [-1] * b_only).p_value  # the exact binomial on the discordant items
    n = va.size
    return {"family": family, "model_a": a, "model_b": b, "n": n, "a_only": a_only, "b_only": b_only,
            "a_total": float(va.sum()), "b_total": float(vb.sum()), "difference": (float(va.sum()) - float(vb.sum())) / n,
            "p_value": p, "items_for_80pct_power": connor_items(a_only, b_only, n, alpha=alpha)}


def pair_tests(vectors: Mapping[str, Mapping[str, np.ndarray]], *, alpha: float = st.DEFAULT_ALPHA) -> pd.DataFrame:
    """``vectors``: family (a rung or a term) → model → per-item values over the same items. One row per family
    and pair of the models the family has, with BH-adjusted p-values within the family (module docstring)."""
    rows = []
    for family, by_model in vectors.items():
        fam = [_pair_row(family, a, b, np.asarray(by_model[a], float), np.asarray(by_model[b], float), alpha)
               for a, b in combinations(sorted(by_model), 2)]
        if fam:
            adj = sps.false_discovery_control([r["p_value"] for r in fam], method="bh")
            for r, q in zip(fam, adj, strict=True):
                r["p_bh"] = float(q)
        rows += fam
    return pd.DataFrame(rows).reindex(columns=COLUMNS)


def shortcut_vectors(arms: Mapping[tuple[str, str], object], text_items: np.ndarray) -> dict[str, np.ndarray]:
    """Per model with a scored R4 arm and an image-free arm with an answer: R4_i (free_i − text_i)."""
    out = {}
    text = np.asarray(text_items, float)
    for (m, r), a in sorted(arms.items()):
        if r != "R4" or not a.scored:
            continue
        free = next((arms[(m, f)] for f in FREE_ORDER if (m, f) in arms
                     and any(x is not None for x in arms[(m, f)].answers)), None)
        if free is not None:
            out[m] = a.correct_vector.astype(float) * (free.correct_vector.astype(float) - text)
    return out


def ladder_vectors(arms: Mapping[tuple[str, str], object], rungs: Sequence[str],
                   text_items: np.ndarray | None = None) -> dict[str, dict[str, np.ndarray]]:
    """The families of :func:`pair_tests` from the ladder's arms (``Ladder.arm_objects``): each rung's scored
    arms' correctness, the perception term R3_i − R4_i of the models with both scored, and, given the text-only
    reader's per-item correctness, the shortcut term (module docstring)."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for rung in rungs:
        got = {m: a.correct_vector.astype(float) for (m, r), a in sorted(arms.items()) if r == rung and a.scored}
        if len(got) >= 2:
            out[rung] = got
    term = {}
    for (m, r), a in sorted(arms.items()):
        a3 = arms.get((m, "R3"))
        if r == "R4" and a.scored and a3 is not None and a3.scored:
            term[m] = a3.correct_vector.astype(float) - a.correct_vector.astype(float)
    if len(term) >= 2:
        out[PERCEPTION] = term
    short = {} if text_items is None else shortcut_vectors(arms, text_items)
    if len(short) >= 2:
        out[SHORTCUT] = short
    return out


def pair_matrix(tests: pd.DataFrame, family: str) -> pd.DataFrame:
    """The compact table of one family: rows model A, columns model B, each cell ``a_only:b_only`` and the
    BH-adjusted p (``*`` below 0.05)."""
    sub = tests[tests["family"] == family]
    models = sorted(set(sub["model_a"]) | set(sub["model_b"]))
    cells = {m: {o: "" for o in models} for m in models}
    for _, r in sub.iterrows():
        star = "*" if r["p_bh"] < 0.05 else ""
        cells[r["model_a"]][r["model_b"]] = f"{r['a_only']}:{r['b_only']} p={r['p_bh']:.3g}{star}"
        cells[r["model_b"]][r["model_a"]] = f"{r['b_only']}:{r['a_only']} p={r['p_bh']:.3g}{star}"
    for m in models:
        cells[m][m] = "—"
    return pd.DataFrame([{"model": m, **cells[m]} for m in models], columns=["model", *models])


__all__ = ["COLUMNS", "PERCEPTION", "SHORTCUT", "connor_items", "ladder_vectors", "pair_matrix", "pair_tests",
           "shortcut_vectors"]
