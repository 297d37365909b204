"""The model-free text ceiling: the best score any reader of the prompt text alone can reach; and the two
MicroVQA audits of what a prompt gives away (visual giveaway, weak distractors).

**Exact text ceiling.** A reader that sees only the text answers each distinct text with one label, so the
best it can score is Σ over distinct texts of the largest class count among the items with that text,
divided by n. When every item has the same text this is the largest class share (the render-ceiling study's
crystal-system prompt: 30/210 = 1/7). When every text is distinct it is 1 and says nothing; then:

**Leave-one-out lookup** on what the text carries (its element symbols, its formula tokens, its option
texts): item i is answered with the majority label of the *other* items sharing its key (ties: the larger
class of the whole benchmark, then alphabetical), or, when no other item shares it, with the class prior's
largest class. Its score estimates what the text carries beyond the prior; reported with a two-sided
Clopper–Pearson interval.

**Visual-giveaway audit** (per item): the answer named more often than the least-named label (a prompt
listing every option names each once), a space-group symbol or the words "space group", lattice parameters
(``a=… b=… c=…`` or α/β/γ), and any item-given determining names (e.g. the atom names of an asked bond).

**Distractor audit**: MicroVQA's answer/distractor length ratio (mean answer length over mean distractor
length, characters) and how often option-only heuristics (longest, shortest option) pick the answer,
against 1/k.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from viewcert import stats as st
from viewcert.elements import SYMBOLS
from viewcert.errors import InputError

_SYMBOLS = set(SYMBOLS[1:])  # index 0 is "X" (unknown)
_TOKEN = re.compile(r"(?<![A-Za-z])([A-Z][a-z]?)(?![a-z])")
_FORMULA = re.compile(r"(?<![A-Za-z0-9])((?:[A-Z][a-z]?\d*){2,})(?![A-Za-z0-9])")
_SPACE_GROUP = re.compile(r"(?i:space[\s-]*group)|(?<![A-Za-z0-9])(?:[PIFCABR][mnabcde\-]*\d[\d_/mnabcde\-]*|"
                          r"P(?:nma|bca|mmm|bcm|nnm)|C(?:mcm|mca|mmm)|Fmmm|Immm)(?![A-Za-z0-9])")
_LATTICE = re.compile(r"(?i)(?<![a-z])a\s*=\s*[\d.]+.{0,40}?(?<![a-z])b\s*=\s*[\d.]+.{0,40}?(?<![a-z])c\s*="
                      r"|alpha\s*=|α\s*=")


@dataclass(frozen=True)
class TextCeiling:
    """One text-only score: what it keys on, correct of n (exact), whether it is informative, its method."""

    key: str
    correct: int
    n: int
    method: str
    informative: bool = True

    @property
    def value(self) -> Fraction:
        return Fraction(self.correct, self.n)

    def row(self, alpha: float = st.DEFAULT_ALPHA) -> dict:
        b = st.clopper_pearson_interval(self.correct, self.n, 1 - alpha)
        return {"key": self.key, "correct": self.correct, "n": self.n, "value": float(self.value),
                "value_exact": str(self.value), "ci_lo": b.lower, "ci_hi": b.upper,
                "informative": self.informative, "method": self.method}


def _norm(text: str) -> str:
    return " ".join(str(text).split())


def _check(texts: Sequence[str], targets: Sequence[str]) -> None:
    if len(texts) != len(targets) or not texts:
        raise InputError(f"{len(texts)} texts for {len(targets)} targets (need the same, at least one)",
                         field="texts")


def exact_ceiling(texts: Sequence[str], targets: Sequence[str]) -> TextCeiling:
    """Σ over distinct texts (whitespace-normalised) of the largest class count, over n."""
    _check(texts, targets)
    groups: dict[str, Counter] = {}
    for t, y in zip(texts, targets, strict=True):
        groups.setdefault(_norm(t), Counter())[y] += 1
    best = sum(max(c.values()) for c in groups.values())
    n = len(texts)
    if len(groups) == 1:
        method = "every item has the same text: the largest class share"
    else:
        method = f"{len(groups)} distinct texts: sum of each text's largest class count"
    return TextCeiling("text", best, n, method, informative=len(groups) < n)


def exact_ceiling_items(texts: Sequence[str], targets: Sequence[str]) -> np.ndarray:
    """Per item, whether the reader of :func:`exact_ceiling` is right: it answers each distinct text with its
    largest class (ties: the alphabetically first label), so the vector's sum is the ceiling's count."""
    _check(texts, targets)
    groups: dict[str, Counter] = {}
    for t, y in zip(texts, targets, strict=True):
        groups.setdefault(_norm(t), Counter())[y] += 1
    label = {k: min(c, key=lambda y: (-c[y], y)) for k, c in groups.items()}
    return np.array([label[_norm(t)] == y for t, y in zip(texts, targets, strict=True)], dtype=bool)


def _prior_order(targets: Sequence[str]) -> list[str]:
    counts = Counter(targets)
    return sorted(counts, key=lambda y: (-counts[y], y))


def loo_lookup(keys: Sequence[str], targets: Sequence[str], *, name: str) -> TextCeiling:
    """Leave-one-out majority label among the other items with the same key, else the prior's top class."""
    _check(keys, targets)
    counts = Counter(targets)
    rank = {y: i for i, y in enumerate(_prior_order(targets))}
    by_key: dict[str, Counter] = {}
    for k, y in zip(keys, targets, strict=True):
        by_key.setdefault(k, Counter())[y] += 1
    correct = 0
    for k, y in zip(keys, targets, strict=True):
        others = by_key[k].copy()
        others[y] -= 1
        others = +others
        if others:
            guess = min(others, key=lambda c: (-others[c], rank[c], c))
        else:
            prior = counts.copy()  # the class prior without item i
            prior[y] -= 1
            guess = min(prior, key=lambda c: (-prior[c], rank[c], c))
        correct += guess == y
    shared = sum(1 for k in keys if sum(by_key[k].values()) > 1)
    return TextCeiling(name, correct, len(keys), f"leave-one-out lookup on {name} ({shared} of {len(keys)} items "
                       "share their key with another), else the class prior")


def elements_key(text: str) -> str:
    """The sorted set of element symbols a text names (capitalised tokens that are symbols)."""
    return " ".join(sorted({m for m in _TOKEN.findall(str(text)) if m in _SYMBOLS}))


def formula_key(text: str) -> str:
    """The sorted formula-like tokens of a text (two or more element symbols with optional counts)."""
    out = set()
    for tok in _FORMULA.findall(str(text)):
        parts = re.findall(r"[A-Z][a-z]?", tok)
        if all(p in _SYMBOLS for p in parts):
            out.add(tok)
    return " ".join(sorted(out))


KEYS: dict[str, Callable[[str], str]] = {"elements": elements_key, "formula": formula_key}


def text_ceilings(texts: Sequence[str], targets: Sequence[str], *, options: Sequence[Sequence[str]] | None = None,
                  alpha: float = st.DEFAULT_ALPHA) -> pd.DataFrame:
    """The exact ceiling and, when texts differ, the leave-one-out lookups (elements, formula, options)."""
    rows = [exact_ceiling(texts, targets).row(alpha)]
    if len({_norm(t) for t in texts}) > 1:
        for name, fn in KEYS.items():
            rows.append(loo_lookup([fn(t) for t in texts], targets, name=name).row(alpha))
        if options is not None:
            rows.append(loo_lookup(["|".join(o) for o in options], targets, name="option texts").row(alpha))
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------- audits
def _mentions(text: str, label: str) -> int:
    return len(re.findall(r"(?<![A-Za-z])" + re.escape(label) + r"(?![A-Za-z])", text, flags=re.IGNORECASE))


def giveaway_audit(item_ids: Sequence[str], texts: Sequence[str], targets: Sequence[str], labels: Sequence[str],
                   determining: Mapping[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """Per item: answer named beyond the option list, space-group symbol, lattice parameters, determining
    names present; ``flagged`` when any holds, ``flags`` names them."""
    determining = determining or {}
    rows = []
    for iid, text, y in zip(item_ids, texts, targets, strict=True):
        t = str(text)
        counts = {lab: _mentions(t, lab) for lab in labels}
        named = counts.get(y, _mentions(t, y)) > min(counts.values(), default=0)
        sg = _SPACE_GROUP.search(t)
        lat = _LATTICE.search(t) is not None
        names = [x for x in determining.get(iid, ()) if x and re.search(r"(?<![A-Za-z])" + re.escape(x) +
                                                                          r"(?![a-z])", t)]
        flags = [f for f, on in (("answer named", named), ("space group", sg is not None),
                                 ("lattice parameters", lat), ("determining names", bool(names))) if on]
        rows.append({"item_id": iid, "answer_named": named, "space_group": None if sg is None else sg.group(0),
                     "lattice_parameters": lat, "determining_names": " ".join(names), "flagged": bool(flags),
                     "flags": ", ".join(flags)})
    return pd.DataFrame(rows, columns=["item_id", "answer_named", "space_group", "lattice_parameters",
                                       "determining_names", "flagged", "flags"])


def distractor_audit(options: Sequence[Sequence[str]], answers: Sequence[str]) -> dict:
    """MicroVQA's length ratio (mean answer length / mean distractor length, characters) and the share of
    items where the longest / shortest option is the answer (ties: none picked), against 1/k."""
    if len(options) != len(answers) or not options:
        raise InputError(f"{len(options)} option lists for {len(answers)} answers", field="options")
    ans_len, dis_len, longest, shortest, ks = [], [], 0, 0, []
    for opts, a in zip(options, answers, strict=True):
        opts = [str(o) for o in opts]
        folded = [o.casefold() for o in opts]  # canonical labels are lower case ("c2v"), options as shipped
        if str(a).casefold() not in folded:
            raise InputError(f"answer {a!r} is not among its options", field="options")
        a = opts[folded.index(str(a).casefold())]
        ans_len.append(len(a))
        dis_len += [len(o) for o in opts if o != a]
        lens = [len(o) for o in opts]
        longest += lens.count(max(lens)) == 1 and len(a) == max(lens)
        shortest += lens.count(min(lens)) == 1 and len(a) == min(lens)
        ks.append(len(opts))
    n = len(answers)
    mean_d = sum(dis_len) / len(dis_len) if dis_len else float("nan")
    return {"items": n, "length_ratio": (sum(ans_len) / n) / mean_d if dis_len else None,
            "mean_answer_chars": sum(ans_len) / n, "mean_distractor_chars": mean_d,
            "longest_option_is_answer": Fraction(longest, n), "shortest_option_is_answer": Fraction(shortest, n),
            "chance": Fraction(sum(Fraction(1, k) for k in ks), n)}
