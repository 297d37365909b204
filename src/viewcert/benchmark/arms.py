"""The arms an export ships as harness tasks, one per rung of the attribution ladder, so that one harness run
over the export fills every rung:

| arm | rung | question | images |
|---|---|---|---|
| ``image`` | R4 | the image question (``benchmark.jsonl``) | the views |
| ``r3`` | R3 | the geometry the images show, as text (crystals: the rendered cell, as ``r3_prompts.jsonl``) | none |
| ``no-image`` | no-image | the image question with the no-image sentence (``constraints.no_image_prompt``) | none |
| ``choices-only`` | choices-only | no question: "Choose the correct option." (the harness adds the options) or, for a command task, the answer's form alone | none |

Every arm holds the same items (ids, answers, choices) in the same order; only the question and the images
differ. Names, each harness's own way: the arm's JSONL ``benchmark{suffix}.jsonl`` (Inspect, lmms-eval), the
Inspect task and lmms-eval task ``viewcert_TASK{suffix}``, the VLMEvalKit dataset ``ViewcertTask{Suffix}`` and its
TSV ``benchmark{suffix}.tsv``; the suffix is empty for the image arm (the names exports had before the other
arms), ``_r3``, ``_no_image``, ``_choices_only`` otherwise. ``attribution.discover`` reads these names back
(restated there, a sibling unit; a test holds the two equal).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from viewcert.constraints import CHOOSE_SENTENCE, no_image_prompt, with_constraints

ARMS = ("image", "r3", "no-image", "choices-only")
RUNG = {"image": "R4", "r3": "R3", "no-image": "no-image", "choices-only": "choices-only"}
_CAMEL = {"image": "", "r3": "R3", "no-image": "NoImage", "choices-only": "ChoicesOnly"}

__all__ = ["ARMS", "RUNG", "arm_records", "dataset_name", "jsonl_name", "suffix", "task_name", "tsv_name"]


def suffix(arm: str) -> str:
    """``""`` for the image arm, else ``_`` and the arm's name with underscores (``_no_image``)."""
    return "" if arm == "image" else "_" + arm.replace("-", "_")


def task_name(task: str, arm: str) -> str:
    """The Inspect and lmms-eval task name of an arm: ``viewcert_crystal_system_r3``."""
    return "viewcert_" + task.replace("-", "_") + suffix(arm)


def dataset_name(task: str, arm: str) -> str:
    """The VLMEvalKit dataset name of an arm: ``ViewcertCrystalSystemR3`` (no underscore: VLMEvalKit's file
    names join model and dataset with one)."""
    return "Viewcert" + "".join(w.capitalize() for w in task.replace("_", "-").split("-")) + _CAMEL[arm]


def jsonl_name(arm: str) -> str:
    return f"benchmark{suffix(arm)}.jsonl"


def tsv_name(arm: str) -> str:
    return f"benchmark{suffix(arm)}.tsv"


def _constrained(rec: Mapping, question: str) -> str:
    """``question`` under the response constraints the record's image question carries."""
    names = [c["name"] for c in rec.get("constraints", [])]
    return with_constraints({**rec, "question": question}, names)["question"] if names else question


def _text_arm(rec: Mapping, arm: str, question: str) -> dict:
    out = {k: v for k, v in rec.items() if k not in ("question_no_image", "question_choices_only")}
    out.update({"images": [], "question": question, "arm": arm})
    return out


def arm_records(records: Sequence[Mapping], r3: Sequence[str], choices_only: Sequence[str] | None = None
                ) -> dict[str, list[dict]]:
    """``{arm: question records}`` (module table) from the image arm's records, the R3 texts (one per record,
    unconstrained) and, for a command task, the choices-only texts (the answer's form); the text arms'
    questions are constrained as the image question is."""
    if len(r3) != len(records) or (choices_only is not None and len(choices_only) != len(records)):
        raise ValueError("one R3 (and choices-only) text per record")  # a caller's bug
    out: dict[str, list[dict]] = {"image": [dict(r) for r in records], "r3": [], "no-image": [], "choices-only": []}
    for k, r in enumerate(records):
        plain = str(r["question"])
        out["r3"].append(_text_arm(r, "r3", _constrained(r, r3[k])))
        no_image = r.get("question_no_image") or no_image_prompt(plain)
        out["no-image"].append(_text_arm(r, "no-image", no_image))
        if r["answer_format"] == "choice":
            # the options come from the harness (as in the image arm): only the sentence, constrained alike
            only = _constrained(r, CHOOSE_SENTENCE)
        else:
            only = _constrained(r, choices_only[k] if choices_only is not None else CHOOSE_SENTENCE)
        out["choices-only"].append(_text_arm(r, "choices-only", only))
    return out
