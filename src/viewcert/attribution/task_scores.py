"""Task scores beside the ladder: MiSI partial credit of command answers with the certified ceilings, and
where a harness's own per-sample scores disagree with viewcert's.

- ``misi_scores``: per arm (model × rung) of a transformation export with command answers (translation,
  rotation, zoom), the mean MiSI partial credit of each item's voted answer (``attribution.misi``; items
  without an answer score 0) with the certificate's normalisers, the exact-match accuracy, and the
  certified mean partial-credit and exact ceilings over the same items.
- ``list_scores``: the same for interaction-list exports (pocket-ligand, residue-ligand): MiSI's list score
  (``attribution.misi.score_interactions``; a negative residue scores 1 for ``no``; an item's ``uncertain``
  entries are neutral: dropped from the answer before scoring) beside the certified mean list ceilings as
  rendered and under ideal observations.
- ``interaction_command_scores``: the same for an interaction export's command tasks (interaction-location,
  docking): MiSI partial credit with the exporters' normalisers (``INTERACTION_COMMAND_CREDIT``) beside the
  certified mean consistent-answer ceilings as rendered and under ideal observations.
- ``harness_agreement``: per arm, the accuracy from the harness's own scores (an item is right when the
  mean of its samples' scores is ≥ 0.5, as ``scoring="harness"``) beside viewcert's, and the items on
  which they differ (listed); "no harness score" for a file that has none (a VLMEvalKit predictions-only
  file, whose score column would be viewcert's own parse).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from viewcert.attribution.account import ItemScale
from viewcert.attribution.ladder import Ladder, list_ceilings
from viewcert.attribution.misi import _norm_entry, score_interactions, score_transformation
from viewcert.attribution.table import ResultTable
from viewcert.errors import InputError
from viewcert.formats.reader import receive
from viewcert.formats.records import Certificate, InteractionCertificate, TaskCertificate, TaskItemRecord
from viewcert.formats.table import TableCertificate

MISI_COLUMNS = ["model", "rung", "n", "exact_correct", "exact_accuracy", "misi_credit", "certified_partial_ceiling",
                "certified_exact_ceiling", "normalisers"]
#: the harness column of an arm whose file carries no harness score
NO_HARNESS_SCORE = "no harness score"
AGREEMENT_COLUMNS = ["model", "rung", "n", "viewcert_correct", "harness_correct", "disagreements", "disagreeing_ids"]


def _certificate(certificate: str | Path, parsed: Certificate | TableCertificate | None) -> Certificate | TableCertificate:
    """The typed certificate: ``parsed`` when the caller read it already (``formats.reader.receive``), else read
    now (format and digest checked)."""
    return parsed if parsed is not None else receive(certificate, streamed=True).certificate


def _task_certificate(cert: Certificate | TableCertificate, src: str) -> TaskCertificate:
    if not isinstance(cert, TaskCertificate):
        raise InputError("MiSI partial credit needs a transformation-task certificate", source=src, field="format")
    return cert


def _normalisers(cert: TaskCertificate, src: str) -> dict:
    norms = cert.normalisers
    if not (isinstance(norms, dict) and norms and all(isinstance(v, int | float) and v > 0 for v in norms.values())):
        raise InputError("the task certificate has no normalisers {operation: Å or degrees}", source=src,
                         field="normalisers")
    return norms


def _certificate_items(cert: TaskCertificate, src: str, universe: Sequence[str]) -> dict[str, TaskItemRecord]:
    items = {e.id: e for e in cert.items}
    missing = [u for u in universe if u not in items]
    if missing:
        raise InputError(f"{len(missing)} item(s) of the results are not in the certificate: "
                         + ", ".join(repr(x) for x in missing[:5]), source=src, field="items")
    return items


def _mean_of(items: dict[str, TaskItemRecord], universe: Sequence[str], key: str, src: str) -> float:
    vals = [getattr(items[u], key) for u in universe]
    if not all(isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 1 for v in vals):
        raise InputError(f"a certificate item's {key} is not a number in [0, 1]", source=src, field=key)
    return float(np.mean(vals))


def misi_scores(ladder: Ladder, targets: Mapping[str, str], certificate: str | Path,
                parsed: Certificate | TableCertificate | None = None) -> pd.DataFrame:
    """MiSI partial credit per arm beside the certified ceilings (module docstring)."""
    src = str(certificate)
    cert = _task_certificate(_certificate(certificate, parsed), src)
    norms = _normalisers(cert, src)
    universe = list(ladder.universe)
    items = _certificate_items(cert, src, universe)
    partial = _mean_of(items, universe, "partial_ceiling", src)
    exact = _mean_of(items, universe, "exact_ceiling", src)
    rows = []
    for (model, rung), arm in sorted(ladder.arm_objects.items()):
        credit = [0.0 if a is None else score_transformation(a, targets[u], normalisers=norms).value
                  for a, u in zip(arm.answers, universe, strict=True)]
        rows.append({"model": model, "rung": rung, "n": len(universe), "exact_correct": arm.correct,
                     "exact_accuracy": arm.correct / len(universe), "misi_credit": float(np.mean(credit)),
                     "certified_partial_ceiling": partial, "certified_exact_ceiling": exact,
                     "normalisers": ", ".join(f"{k} {v:g}" for k, v in sorted(norms.items()))})
    return pd.DataFrame(rows, columns=MISI_COLUMNS)


def _list_score(answer: str | None, target: str, uncertain: Sequence[str] = ()) -> float:
    """MiSI's interaction-list score of a canonical answer (``no`` or ``E1; E2``); a negative item scores 1
    exactly when the answer is ``no`` or names only ``uncertain`` entries (neutral, ``score_interactions``)."""
    if answer is None:
        return 0.0
    listed = [] if answer == "no" else answer.split("; ")
    true = [] if target == "no" else target.split("; ")
    if not true and not uncertain:
        return float(not listed)
    return score_interactions(listed, true, uncertain).value


def uncertain_entries(cert: InteractionCertificate) -> dict[str, tuple[str, ...]]:
    """{item id: its uncertain entries} of an interaction certificate (``items[].uncertain``, none when
    absent), in the case-folded form of the canonical answers (``misi``'s entry normalisation)."""
    return {e.id: tuple(_norm_entry(x) for x in e.extra.get("uncertain") or ())
            for e in cert.items}


def list_scores(ladder: Ladder, targets: Mapping[str, str], certificate: str | Path,
                parsed: Certificate | TableCertificate | None = None) -> pd.DataFrame:
    """Per arm of an interaction-list export: the mean MiSI list score of the voted answers beside the
    certified mean list ceiling as rendered (``certified_partial_ceiling``) and under ideal observations
    (``certified_exact_ceiling`` holds the ideal one here; ``normalisers`` says so)."""
    src = str(certificate)
    cert = _certificate(certificate, parsed)
    universe = list(ladder.universe)
    rendered = list_ceilings(cert, src, universe, "rendered")
    ideal = list_ceilings(cert, src, universe, "ideal")
    unsure = uncertain_entries(cert)
    rows = []
    for (model, rung), arm in sorted(ladder.arm_objects.items()):
        score = [_list_score(a, targets[u], unsure.get(u, ())) for a, u in zip(arm.answers, universe, strict=True)]
        rows.append({"model": model, "rung": rung, "n": len(universe), "exact_correct": arm.correct,
                     "exact_accuracy": arm.correct / len(universe), "misi_credit": float(np.mean(score)),
                     "certified_partial_ceiling": float(np.mean(list(rendered.values()))),
                     "certified_exact_ceiling": float(np.mean(list(ideal.values()))),
                     "normalisers": "interaction list: |correct|/|true|, ≤ 0.5 with a fabricated entry, 0 beyond "
                                    "twice the true count; ceilings: as rendered (partial column), ideal (exact "
                                    "column)"})
    return pd.DataFrame(rows, columns=MISI_COLUMNS)


#: (normalisers, moves scored on their sign) of the interaction exports' command tasks: ``benchmark.
#: interaction_export.LOCATION_NORMALISER`` (N = 4 Å) and ``benchmark.docking_export.DOCKING_NORMALISERS`` restated
#: (a sibling unit; a test holds them equal)
INTERACTION_COMMAND_CREDIT = {"interaction-location": ({"translate": 4.0, "rotate": 90.0}, False),
                              "docking": ({"translate": 4.0, "rotate": 90.0}, True)}


def _command_credit(task: str):
    """MiSI partial credit of an interaction command task's answer (``INTERACTION_COMMAND_CREDIT``)."""
    norms, docking = INTERACTION_COMMAND_CREDIT[task]
    return lambda answer, target: 0.0 if answer is None else score_transformation(
        answer, target, normalisers=norms, docking=docking).value


def interaction_command_scores(ladder: Ladder, targets: Mapping[str, str], certificate: str | Path, task: str,
                               parsed: Certificate | TableCertificate | None = None) -> pd.DataFrame:
    """Per arm of an interaction command export (``interaction-location``, ``docking``): the mean MiSI partial
    credit of the voted answers beside the certified mean consistent-answer ceiling as rendered
    (``certified_partial_ceiling``) and under ideal observations (``certified_exact_ceiling``, as for lists)."""
    src = str(certificate)
    cert = _certificate(certificate, parsed)
    universe = list(ladder.universe)
    rendered = list_ceilings(cert, src, universe, "rendered")
    ideal = list_ceilings(cert, src, universe, "ideal")
    credit = _command_credit(task)
    norms, docking = INTERACTION_COMMAND_CREDIT[task]
    rows = []
    for (model, rung), arm in sorted(ladder.arm_objects.items()):
        score = [credit(a, targets[u]) for a, u in zip(arm.answers, universe, strict=True)]
        rows.append({"model": model, "rung": rung, "n": len(universe), "exact_correct": arm.correct,
                     "exact_accuracy": arm.correct / len(universe), "misi_credit": float(np.mean(score)),
                     "certified_partial_ceiling": float(np.mean(list(rendered.values()))),
                     "certified_exact_ceiling": float(np.mean(list(ideal.values()))),
                     "normalisers": ", ".join(f"{k} {v:g}" for k, v in sorted(norms.items()))
                                    + ("; moves on their sign" if docking else "")
                                    + "; ceilings: as rendered (partial column), ideal (exact column)"})
    return pd.DataFrame(rows, columns=MISI_COLUMNS)


def interaction_command_scale(ladder: Ladder, cert: InteractionCertificate, task: str,
                              src: str = "certificate") -> ItemScale:
    """MiSI partial credit of an interaction command export as the deficit account's item scale, the per-item
    certified consistent-answer ceiling as rendered (``items[].rendered.ceiling``) as R1."""
    rendered = list_ceilings(cert, src, list(ladder.universe), "rendered")
    return ItemScale("MiSI partial credit", _command_credit(task), tuple(rendered.values()),
                     "R1 = certified MiSI partial-credit ceiling as rendered (per item)",
                     "points of MiSI partial credit (mean per item, 0–1)")


def misi_scale(ladder: Ladder, targets: Mapping[str, str], cert: Certificate | TableCertificate | None,
               src: str = "certificate") -> ItemScale:
    """MiSI partial credit of a command export as the deficit account's item scale: an answer's
    ``score_transformation`` value with the certificate's normalisers, the per-item certified partial ceiling
    (``items[].partial_ceiling``) as R1."""
    cert = _task_certificate(cert, src)
    norms = _normalisers(cert, src)
    universe = list(ladder.universe)
    items = _certificate_items(cert, src, universe)
    _mean_of(items, universe, "partial_ceiling", src)  # every item's ceiling checked in [0, 1]

    def score(answer: str | None, target: str) -> float:
        return 0.0 if answer is None else score_transformation(answer, target, normalisers=norms).value

    return ItemScale("MiSI partial credit", score, tuple(float(items[u].partial_ceiling) for u in universe),
                     "R1 = certified MiSI partial-credit ceiling (per item)",
                     "points of MiSI partial credit (mean per item, 0–1)")


def list_scale(ladder: Ladder, cert: InteractionCertificate, src: str = "certificate",
               targets: Mapping[str, str] | None = None) -> ItemScale:
    """MiSI's interaction-list score as the deficit account's item scale, the per-item certified list ceiling
    as rendered (``items[].rendered.ceiling``) as R1. The scale scores (answer, target), so with ``targets``
    ({item id: canonical target}) an item's uncertain entries are neutral for the answers to its target."""
    rendered = list_ceilings(cert, src, list(ladder.universe), "rendered")
    by_target: dict[str, set] = {}
    for u, entries in uncertain_entries(cert).items():
        if targets is not None and u in rendered and u in targets:
            by_target.setdefault(targets[u], set()).update(entries)
    return ItemScale("MiSI list score", lambda a, t: _list_score(a, t, tuple(sorted(by_target.get(t, ())))),
                     tuple(rendered.values()),
                     "R1 = certified MiSI list ceiling as rendered (per item)",
                     "points of MiSI list score (mean per item, 0–1)")


def harness_agreement(ladder: Ladder, table: ResultTable) -> pd.DataFrame:
    """The harness's own accuracy beside viewcert's per arm, with the disagreeing items (module docstring)."""
    universe = list(ladder.universe)
    rows = []
    for (model, rung), sub in table.frame.groupby(["model", "rung"], sort=True):
        arm = ladder.arm_objects[(str(model), str(rung))]
        if "harness_scored" in sub.columns and (sub["harness_scored"] == "no").all():
            # a file without the harness's own scores (a VLMEvalKit predictions-only file): its score column
            # is viewcert's parse, so there is nothing to agree with
            rows.append({"model": str(model), "rung": str(rung), "n": len(universe), "viewcert_correct": arm.correct,
                         "harness_correct": NO_HARNESS_SCORE, "disagreements": 0, "disagreeing_ids": ""})
            continue
        mean = sub.groupby("item_id")["score"].mean()
        harness = np.array([bool(u in mean.index and mean[u] >= 0.5) for u in universe])
        differ = [u for u, h, v in zip(universe, harness, arm.correct_vector, strict=True) if bool(h) != bool(v)]
        rows.append({"model": str(model), "rung": str(rung), "n": len(universe), "viewcert_correct": arm.correct,
                     "harness_correct": int(harness.sum()), "disagreements": len(differ),
                     "disagreeing_ids": " ".join(differ)})
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)
