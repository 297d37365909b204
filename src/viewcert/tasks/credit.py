"""MiSI partial credit for transformation answers (the scoring rule; text parsing lives in
``attribution.misi``).

Per true component i (composites: components weigh equally, matched in order): 0 unless the predicted
component i exists, has the same operation (``move`` vs ``turn``/``roll``; turn and roll are the same) and
the same axis (the **axis gate**); otherwise max(0, 1 − |d̂ − d| / N) with N the operation's normaliser.
Default N (``normalisers=None``): half the width of the task's magnitude interval — translation −4…4 Å →
4 Å, rotation −90…90° → 90°, zoom 40…60 Å → 10 Å — so a sign error at the grid's end scores 0 (MiSI does
not publish its constant). Docking (``sign_only_moves=True``): a ``move`` component scores 1 when its sign
matches and 0 otherwise. Extra predicted components beyond the true count are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping

from viewcert.errors import InputError
from viewcert.tasks.transforms import Step, Transformation


def default_normalisers(ranges) -> dict[str, float]:
    """{operation: (hi − lo)/2} from ``AnswerGrid.ranges`` tuples (operation, lo, hi)."""
    out: dict[str, float] = {}
    for op, lo, hi in ranges:
        out[op] = max(out.get(op, 0.0), 0.5 * (float(hi) - float(lo)))
    return out


def step_credit(pred: Step, true: Step, normaliser: float, *, sign_only: bool = False) -> float:
    """Credit of one component in [0, 1] (see module)."""
    if pred.operation != true.operation or pred.axis != true.axis:
        return 0.0
    if sign_only and true.operation == "translate":
        return 1.0 if (pred.magnitude > 0) == (true.magnitude > 0) and pred.magnitude != 0 else 0.0
    if not normaliser > 0:
        raise InputError(f"normaliser must be > 0, got {normaliser}", field="normaliser")
    return max(0.0, 1.0 - abs(pred.magnitude - true.magnitude) / normaliser)


def transformation_credit(pred: Transformation, true: Transformation, normalisers: Mapping[str, float], *,
                          sign_only_moves: bool = False) -> float:
    """Mean component credit over the true components (see module).

    Parameters
    ----------
    pred : Transformation
        The model's answer.
    true : Transformation
        The true transformation.
    normalisers : mapping of str to float
        Normaliser N per operation (Å for a move, degrees for a turn or roll; ``default_normalisers``).
    sign_only_moves : bool
        Docking: a move scores 1 when its sign matches, else 0.

    Returns
    -------
    float
        Mean component credit in [0, 1].
    """
    total = 0.0
    for i, t in enumerate(true.steps):
        if i < len(pred.steps):
            if t.operation not in normalisers:
                raise InputError(f"no normaliser for operation {t.operation!r}", field="normalisers")
            total += step_credit(pred.steps[i], t, normalisers[t.operation], sign_only=sign_only_moves)
    return total / len(true.steps)
