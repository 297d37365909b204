"""MiSI-Bench scoring of model answers: command parsing, the axis gate, magnitude partial credit,
composites, the docking sign rule and interaction lists.

- Cloze answers (``move x 3``, ``roll y 15``, ``turn y 15``, ``move z 45``, comma-separated composites)
  are read leniently: case, surrounding prose, a trailing ``Å``/``°``/``degrees`` and a ``Answer:`` prefix
  are tolerated; anything else gets ``status="unparseable"`` (never an exception) and scores 0.
- Credit: ``viewcert.tasks.credit`` — axis gate, max(0, 1 − |d̂ − d| / N) with N a parameter; default N
  = half the width of the task's magnitude interval (translation 4 Å, rotation 90°, zoom 10 Å); composite
  components weigh equally; docking counts a move only on its sign.
- Multiple choice and zooming are scored by accuracy (``exact_match``).
- Interaction lists: score = |correct| / |true|; capped at 0.5 when any listed entry is fabricated (not
  true); 0 when more than twice the true count are listed. Entries compare after whitespace/case folding.
  **Uncertain entries are neutral**: an entry of the ``uncertain`` list (a bond whose verdict the X-ray
  structure cannot settle: ``interactions.ceiling.uncertainty``) that is not true is dropped from the answer
  before the rule above, so naming it is neither rewarded (it is not correct) nor punished (it is not a
  fabrication and does not count towards twice the true count). An empty true list (a complex whose bonds
  are all uncertain) scores 1 when nothing but uncertain entries is listed, else 0 (any other entry is beyond
  twice the true count, 0).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from viewcert.errors import InputError
from viewcert.sanitize import response_text
from viewcert.tasks.credit import transformation_credit
from viewcert.tasks.transforms import Transformation, parse_command

MISI_NORMALISERS = {"translate": 4.0, "rotate": 90.0}  # half-widths of −4…4 Å and −90…90°
ZOOM_NORMALISERS = {"translate": 10.0}  # half-width of 40…60 Å
_CMD = re.compile(r"(move|turn|roll)\s+([xyzXYZ])\s*[:=]?\s*([-+−]?\s*(?:\d+\.?\d*|\.\d+))", re.IGNORECASE)


@dataclass(frozen=True)
class ParsedAnswer:
    """``status``: ``"ok"``, ``"empty"`` or ``"unparseable"``; ``transformation`` when ok."""

    text: str
    status: str
    transformation: Transformation | None = None
    reason: str = ""


def parse_answer(text) -> ParsedAnswer:
    """Every ``move|turn|roll AXIS NUMBER`` in the text, in order, as one (composite) transformation."""
    if text is None or not str(text).strip():
        return ParsedAnswer("" if text is None else str(text), "empty", None, "no answer")
    s = str(text)
    found = _CMD.findall(response_text(s))  # as the response shows: control sequences removed
    if not found:
        return ParsedAnswer(s, "unparseable", None, "no 'move|turn|roll x|y|z NUMBER' command found")
    cmd = ", ".join(f"{v} {a} {n.replace('−', '-').replace(' ', '')}" for v, a, n in found)
    try:
        return ParsedAnswer(s, "ok", parse_command(cmd))
    except InputError as exc:
        return ParsedAnswer(s, "unparseable", None, str(exc))


@dataclass(frozen=True)
class Score:
    value: float
    status: str
    reason: str = ""


def score_transformation(answer, truth, *, normalisers: Mapping[str, float] | None = None,
                         docking: bool = False) -> Score:
    """Partial credit of a model's answer (text or Transformation) against the true command (text or
    Transformation). ``normalisers`` default: ``MISI_NORMALISERS``; ``docking``: moves count on sign."""
    true_t = parse_command(truth) if isinstance(truth, str) else truth
    if isinstance(answer, Transformation):
        parsed = ParsedAnswer(answer.format(), "ok", answer)
    else:
        parsed = parse_answer(answer)
    if parsed.status != "ok":
        return Score(0.0, parsed.status, parsed.reason)
    norms = dict(MISI_NORMALISERS if normalisers is None else normalisers)
    return Score(transformation_credit(parsed.transformation, true_t, norms, sign_only_moves=docking), "ok")


def exact_match(answer, truth) -> Score:
    """Accuracy scoring (multiple choice, zooming): 1 when the parsed answer equals the truth step by step
    (turn ≡ roll), else 0."""
    true_t = parse_command(truth) if isinstance(truth, str) else truth
    parsed = parse_answer(answer) if not isinstance(answer, Transformation) else ParsedAnswer("", "ok", answer)
    if parsed.status != "ok":
        return Score(0.0, parsed.status, parsed.reason)
    a, b = parsed.transformation.steps, true_t.steps
    same = len(a) == len(b) and all(
        x.operation == y.operation and x.axis == y.axis and x.magnitude == y.magnitude for x, y in zip(a, b, strict=True)
    )
    return Score(1.0 if same else 0.0, "ok")


def _norm_entry(e) -> str:
    return re.sub(r"\s+", " ", str(e)).strip().casefold()


def score_interactions(listed: Iterable, true: Iterable, uncertain: Iterable = ()) -> Score:
    """Interaction-list score (module docstring): ``uncertain`` entries are dropped from the answer first
    (neutral); duplicated entries count once."""
    true_set = {_norm_entry(e) for e in true}
    neutral = {_norm_entry(e) for e in uncertain} - true_set
    listed_l = [e for e in (_norm_entry(x) for x in listed) if e not in neutral]
    listed_set = set(listed_l)
    if not true_set:
        if not neutral:
            raise InputError("the true interaction list is empty and no entry is uncertain", field="true")
        return Score(1.0, "ok") if not listed_l else Score(0.0, "ok", "an entry listed where only uncertain "
                                                                       "bonds exist")
    if len(listed_l) > 2 * len(true_set):
        return Score(0.0, "ok", f"{len(listed_l)} entries > twice the {len(true_set)} true")
    value = len(listed_set & true_set) / len(true_set)
    if listed_set - true_set:
        return Score(min(value, 0.5), "ok", "fabricated entry present: capped at 0.5")
    return Score(value, "ok")
