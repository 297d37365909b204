"""Script-verifiable response constraints: a typed inventory, the prompt text that asks for them, and strict
verifiers (SciMIF-style instruction adherence, scored apart from correctness).

The inventory (names accepted by ``build-benchmark --constraints``):

============  =====================================================================  ==================
name          the response must ...                                                  answer kinds
============  =====================================================================  ==================
format        carry its answer as a JSON object with the key ``answer``              every kind
letter        give the option letter only (``A``, ``B``, ...)                        choice
precision     give the number (every magnitude of a command) with exactly N decimals   numeric, command
unit          give the number followed by its unit (Å or °; a command: Å after a     numeric with a unit,
              move, ° after a turn or roll)                                          command
structure     reason first, then end with exactly one ``Answer:`` line               every kind
count         list exactly the asked number of entries                               list
case          write the answer in lowercase                                          choice, command
============  =====================================================================  ==================

An item's answer is described by an :class:`AnswerSpec` (kind, options, unit, decimals, entries); a constraint
that does not fit it is skipped for that item and the reason recorded (``precision`` on a crystal-system
label: "the answer is not a number"). The reference answer is never changed: constraints only add text after
the prompt, except that a question's own "Answer with the X only" sentence, which a layout constraint
(``format``, ``structure``) contradicts, is rewritten as "Give the answer as the X" (:func:`reconciled_question`).

Verification is strict and bounded: a response is decoded as UTF-8 (bytes that are not are a failed
outcome), refused above :data:`MAX_RESPONSE_CHARS` characters, and JSON is parsed only when it is at most
:data:`MAX_JSON_CHARS` long and nested at most :data:`MAX_JSON_DEPTH` deep (checked by a scan before
``json.loads``, which recurses). Every outcome is a :class:`Check`; no response raises.

*Payload*: with ``structure`` the text after the last ``Answer:`` line's marker (the whole text when there is
no such line); otherwise the whole response, stripped. *Value*: with ``format``, the JSON object's ``answer``
as text when the payload parses, else the payload. ``letter``, ``precision``, ``unit``, ``count`` and ``case``
judge the value, so each constraint is scored on its own (DRFR counts them one by one).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from viewcert.errors import InputError

__all__ = ["CHOOSE_SENTENCE", "INVENTORY", "KINDS", "LAYOUT", "NO_IMAGE_SENTENCE", "UNITS", "AnswerSpec", "Check",
           "Constraint", "Plan", "choices_only_prompt", "constrained_prompt", "no_image_prompt", "parse_names",
           "plan", "reconciled_question", "spec_of_record", "verify", "with_constraints"]

KINDS = ("choice", "command", "numeric", "list")
UNITS = ("Å", "°")
MAX_RESPONSE_CHARS = 100_000
MAX_JSON_CHARS = 10_000
MAX_JSON_DEPTH = 32
ANSWER_KEY = "answer"
MAX_DECIMALS = 12

_ANSWER_LINE = re.compile(r"^[ \t]*Answer:[ \t]*(.*?)[ \t]*$")


@dataclass(frozen=True)
class AnswerSpec:
    """What an item asks for: ``kind`` (choice | command | numeric | list), the option texts in letter order
    (choice), the unit (numeric: Å or °, or None), decimals (numeric) and the number of entries (list)."""

    kind: str
    options: tuple[str, ...] = ()
    unit: str | None = None
    decimals: int = 2
    entries: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InputError(f"answer kind {self.kind!r} is not one of {', '.join(KINDS)}", field="kind")
        if self.unit is not None and self.unit not in UNITS:
            raise InputError(f"unit {self.unit!r} is not one of {', '.join(UNITS)}", field="unit")
        if not 0 <= int(self.decimals) <= MAX_DECIMALS:
            raise InputError(f"decimals must be in 0..{MAX_DECIMALS}, got {self.decimals}", field="decimals")
        object.__setattr__(self, "options", tuple(str(o) for o in self.options))

    def to_dict(self) -> dict:
        return {"kind": self.kind, "options": list(self.options), "unit": self.unit, "decimals": self.decimals,
                "entries": self.entries}

    @staticmethod
    def from_dict(d: Mapping, *, source: str | None = None) -> AnswerSpec:
        if not isinstance(d, Mapping):
            raise InputError("answer_spec is not an object", source=source, field="answer_spec")
        try:
            return AnswerSpec(str(d.get("kind")), tuple(d.get("options") or ()), d.get("unit"),
                              int(d.get("decimals", 2)), d.get("entries"))
        except (TypeError, ValueError):
            raise InputError("answer_spec has a field of the wrong type", source=source,
                             field="answer_spec") from None


@dataclass(frozen=True)
class Constraint:
    """One constraint as applied to an item: its inventory name, the sentence the prompt gains and the
    parameters its verifier reads (key, decimals, unit, entries, letters)."""

    name: str
    instruction: str
    params: tuple[tuple[str, object], ...] = ()

    def param(self, key: str, default: object = None) -> object:
        return dict(self.params).get(key, default)

    def to_dict(self) -> dict:
        return {"name": self.name, "instruction": self.instruction, "params": dict(self.params)}

    @staticmethod
    def from_dict(d: Mapping, *, source: str | None = None) -> Constraint:
        if not isinstance(d, Mapping) or d.get("name") not in INVENTORY:
            raise InputError(f"constraint {str(d)[:60]!r} is not an object naming one of {', '.join(INVENTORY)}",
                             source=source, field="constraints")
        params = d.get("params") or {}
        if not isinstance(params, Mapping):
            raise InputError("constraint params is not an object", source=source, field="constraints")
        return Constraint(str(d["name"]), str(d.get("instruction", "")),
                          tuple(sorted((str(k), _frozen(v)) for k, v in params.items())))


def _frozen(v: object) -> object:
    return tuple(v) if isinstance(v, list) else v


@dataclass(frozen=True)
class Plan:
    """The constraints applied to one item and those skipped, with why."""

    applied: tuple[Constraint, ...]
    skipped: tuple[tuple[str, str], ...] = field(default=())

    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.applied)

    def to_dict(self) -> dict:
        return {"applied": [c.to_dict() for c in self.applied], "skipped": dict(self.skipped)}


# ---------------------------------------------------------------------- the inventory
def _format(spec: AnswerSpec) -> Constraint | str:
    return Constraint("format", f'Give the final answer as a JSON object with the key "{ANSWER_KEY}", for '
                      f'example {{"{ANSWER_KEY}": "..."}}.', (("key", ANSWER_KEY),))


def _letter(spec: AnswerSpec) -> Constraint | str:
    if spec.kind != "choice" or not spec.options:
        return "the answer has no lettered options"
    if len(spec.options) > 26:
        return "more than 26 options"
    letters = "".join(chr(65 + i) for i in range(len(spec.options)))
    listing = ", ".join(f"{chr(65 + i)} = {o}" for i, o in enumerate(spec.options))
    return Constraint("letter", f"Give only the option letter ({listing}).", (("letters", letters),))


def _precision(spec: AnswerSpec) -> Constraint | str:
    if spec.kind not in ("numeric", "command"):
        return "the answer is not a number"
    n = int(spec.decimals)
    what = "the number" if spec.kind == "numeric" else "every magnitude of the command"
    return Constraint("precision", f"Give {what} with exactly {n} decimal place{'s' * (n != 1)}.",
                      (("decimals", n), ("answer", spec.kind)))


def _unit(spec: AnswerSpec) -> Constraint | str:
    if spec.kind == "command":
        return Constraint("unit", "Write the unit after every magnitude: Å after a move, ° after a turn or roll.",
                          (("unit", "command"),))
    if spec.kind != "numeric" or spec.unit is None:
        return "the answer is not a quantity with a unit"
    return Constraint("unit", f"Write the unit {spec.unit} after the number.", (("unit", spec.unit),))


def _structure(spec: AnswerSpec) -> Constraint | str:
    return Constraint("structure", "Write your reasoning first, then end with exactly one line of the form "
                      "'Answer: <your answer>' and nothing after it.")


def _count(spec: AnswerSpec) -> Constraint | str:
    if spec.kind != "list" or not spec.entries:
        return "the answer is not a list with a known number of entries"
    return Constraint("count", f"List exactly {spec.entries} entries, separated by commas.",
                      (("entries", int(spec.entries)),))


def _case(spec: AnswerSpec) -> Constraint | str:
    if spec.kind not in ("choice", "command"):
        return "the answer is not a word"
    return Constraint("case", "Write the answer in lowercase letters.")


#: name -> builder (a Constraint for a compatible answer, else the reason it does not fit)
INVENTORY = {"format": _format, "letter": _letter, "precision": _precision, "unit": _unit,
             "structure": _structure, "count": _count, "case": _case}
#: pairs that cannot both hold (the second is skipped)
CONFLICTS = {("letter", "case"): "letters are upper case"}


def parse_names(text: str | Sequence[str] | None) -> tuple[str, ...]:
    """Constraint names from ``"format,precision"`` (or a list): known, deduplicated, inventory order.

    Parameters
    ----------
    text : str or sequence of str or None
        Comma-separated names (``"format,precision"``) or a list of names; case and spaces ignored; None: none.

    Returns
    -------
    tuple of str
        Lowercase names of :data:`INVENTORY`, each once, in inventory order.

    Raises
    ------
    InputError
        A name is not in the inventory (field ``constraints``).
    """
    if text is None:
        return ()
    raw = text.split(",") if isinstance(text, str) else list(text)
    names = [str(x).strip().lower() for x in raw if str(x).strip()]
    unknown = [n for n in names if n not in INVENTORY]
    if unknown:
        raise InputError(f"unknown constraint {unknown[0]!r}; known: {', '.join(INVENTORY)}", field="constraints")
    return tuple(n for n in INVENTORY if n in names)


def plan(names: Iterable[str], spec: AnswerSpec) -> Plan:
    """The constraints of ``names`` that fit ``spec`` (inventory order), and the skipped ones with why.

    Parameters
    ----------
    names : iterable of str
        Constraint names (as :func:`parse_names` accepts them).
    spec : AnswerSpec
        What the item's answer is (kind, options, unit, decimals, entries).

    Returns
    -------
    Plan
        ``applied`` (constraints, inventory order) and ``skipped`` ((name, reason) pairs).

    Raises
    ------
    InputError
        A name is not in the inventory (field ``constraints``).
    """
    applied: list[Constraint] = []
    skipped: list[tuple[str, str]] = []
    for name in parse_names(list(names)):
        made = INVENTORY[name](spec)
        clash = next((why for (a, b), why in CONFLICTS.items() if b == name and a in [c.name for c in applied]),
                     None)
        if isinstance(made, str):
            skipped.append((name, made))
        elif clash:
            skipped.append((name, f"conflicts with {next(a for a, b in CONFLICTS if b == name)}: {clash}"))
        else:
            applied.append(made)
    return Plan(tuple(applied), tuple(skipped))


#: constraints that fix the layout of the whole response (a JSON object; reasoning, then one ``Answer:`` line)
LAYOUT = ("format", "structure")
#: a question's own "Answer with the X only" sentence: it contradicts a layout constraint (reasoning first, a
#: JSON object), so with one applied it is rewritten to say what the answer is without saying it stands alone
_ONLY = re.compile(r"\bAnswer with the ([\w' -]{1,40}?) only(?=[,.;]|$)")


def reconciled_question(question: str, constraints: Sequence[Constraint]) -> str:
    """``question`` with its "Answer with the X only" sentence rewritten as "Give the answer as the X" when a
    :data:`LAYOUT` constraint applies (the example and the rest of the text unchanged); otherwise unchanged.

    Parameters
    ----------
    question : str
        The question text.
    constraints : sequence of Constraint
        The constraints applied to it.

    Returns
    -------
    str
        The question, rewritten or not.
    """
    if not any(c.name in LAYOUT for c in constraints):
        return question
    return _ONLY.sub(lambda m: f"Give the answer as the {m.group(1)}", question)


def constrained_prompt(prompt: str, constraints: Sequence[Constraint]) -> str:
    """``prompt`` followed by one line per constraint (the prompt itself unchanged); no constraints: the
    prompt.

    Parameters
    ----------
    prompt : str
        The prompt text.
    constraints : sequence of Constraint
        The constraints applied, in the order their lines are written.

    Returns
    -------
    str
        ``prompt``, then a blank line, ``Response requirements:`` and one ``- instruction`` line per constraint.
    """
    if not constraints:
        return prompt
    return prompt + "\n\nResponse requirements:\n" + "\n".join(f"- {c.instruction}" for c in constraints)


# ---------------------------------------------------------------------- verification
@dataclass(frozen=True)
class Check:
    """One constraint's outcome on one response."""

    name: str
    ok: bool
    reason: str = ""


def decode_response(raw: str | bytes | None) -> tuple[str | None, str]:
    """(text, "") or (None, why the response cannot be verified): no output, not UTF-8, too long.

    Parameters
    ----------
    raw : str or bytes or None
        A model response as recorded (None or NaN: no output; bytes are decoded as UTF-8).

    Returns
    -------
    tuple of (str or None, str)
        The text and ``""``, or None and the reason.
    """
    if raw is None or (isinstance(raw, float) and raw != raw):
        return None, "no output recorded"
    if isinstance(raw, bytes | bytearray):
        if len(raw) > 4 * MAX_RESPONSE_CHARS:
            return None, f"response longer than {MAX_RESPONSE_CHARS} characters"
        try:
            raw = bytes(raw).decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, f"response is not UTF-8 (byte {exc.start})"
    text = str(raw)
    if len(text) > MAX_RESPONSE_CHARS:
        return None, f"response longer than {MAX_RESPONSE_CHARS} characters ({len(text)})"
    return text, ""


def json_depth_ok(text: str, max_depth: int = MAX_JSON_DEPTH) -> bool:
    """True when ``text``'s brackets outside strings nest at most ``max_depth`` deep (a scan, no parse).

    Parameters
    ----------
    text : str
        Candidate JSON text.
    max_depth : int, default MAX_JSON_DEPTH
        Deepest nesting of ``[``/``{`` allowed.

    Returns
    -------
    bool
        Whether the nesting stays within ``max_depth``.
    """
    depth, in_str, esc = 0, False, False
    for ch in text:
        if in_str:
            esc, in_str = (False, in_str) if esc else (ch == "\\", ch != '"')
            continue
        if ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > max_depth:
                return False
        elif ch in "]}":
            depth -= 1
    return True


def bounded_json(text: str) -> tuple[object | None, str]:
    """(parsed JSON, "") or (None, why not): too long, nested too deep, or not JSON.

    Parameters
    ----------
    text : str
        Candidate JSON text (at most :data:`MAX_JSON_CHARS` characters, nested at most :data:`MAX_JSON_DEPTH`).

    Returns
    -------
    tuple of (object or None, str)
        The parsed value and ``""``, or None and the reason.
    """
    if len(text) > MAX_JSON_CHARS:
        return None, f"JSON longer than {MAX_JSON_CHARS} characters"
    if not json_depth_ok(text):
        return None, f"JSON nested deeper than {MAX_JSON_DEPTH}"
    try:
        return json.loads(text), ""
    except (ValueError, RecursionError) as exc:
        return None, f"not JSON ({str(exc)[:60]})"


def _answer_lines(text: str) -> list[tuple[int, str]]:
    return [(i, m.group(1)) for i, ln in enumerate(text.splitlines()) if (m := _ANSWER_LINE.match(ln))]


def _structure_check(text: str) -> Check:
    lines = text.splitlines()
    found = _answer_lines(text)
    nonempty = [i for i, ln in enumerate(lines) if ln.strip()]
    if not found:
        return Check("structure", False, "no 'Answer:' line")
    if len(found) > 1:
        return Check("structure", False, f"{len(found)} 'Answer:' lines (exactly one asked)")
    i, payload = found[0]
    if nonempty[-1] != i:
        return Check("structure", False, "text after the 'Answer:' line")
    if nonempty[0] == i:
        return Check("structure", False, "no reasoning before the 'Answer:' line")
    if not payload:
        return Check("structure", False, "the 'Answer:' line is empty")
    return Check("structure", True)


def payload_of(text: str, names: Sequence[str]) -> str:
    """The part of a response that holds the answer (module docstring).

    Parameters
    ----------
    text : str
        The decoded response.
    names : sequence of str
        Names of the constraints applied.

    Returns
    -------
    str
        With ``structure`` applied and an ``Answer:`` line present, the last such line's text after the marker;
        otherwise the whole response; stripped.
    """
    if "structure" in names:
        found = _answer_lines(text)
        if found:
            return found[-1][1].strip()
    return text.strip()


def _format_check(payload: str, key: str) -> tuple[Check, str | None]:
    if not (payload.startswith("{") and payload.endswith("}")):
        return Check("format", False, "not a JSON object"), None
    obj, why = bounded_json(payload)
    if obj is None:
        return Check("format", False, why), None
    if not isinstance(obj, dict):
        return Check("format", False, "JSON is not an object"), None
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, str | int | float | list):
        return Check("format", False, f"no {key!r} key with a string, number or list"), None
    text = json.dumps(value, ensure_ascii=False) if isinstance(value, list) else str(value)
    return Check("format", True), text


def _value_check(c: Constraint, value: str) -> Check:
    """letter, precision, unit, count, case on the answer value."""
    v = value.strip()
    if c.name == "letter":
        ok = len(v) == 1 and v in str(c.param("letters", ""))
        return Check("letter", ok, "" if ok else f"{v[:20]!r} is not one option letter")
    if c.name in ("precision", "unit") and (c.param("answer") == "command" or c.param("unit") == "command"):
        return _command_check(c, v)
    if c.name == "precision":
        n = int(c.param("decimals", 2))
        num = re.sub(r"\s*(Å|°)$", "", v)
        ok = re.fullmatch(r"[-+]?\d+" + (rf"\.\d{{{n}}}" if n else ""), num) is not None
        return Check("precision", ok, "" if ok else f"{num[:20]!r} does not have exactly {n} decimals")
    if c.name == "unit":
        u = str(c.param("unit"))
        ok = re.fullmatch(r"[-+]?\d+(?:\.\d+)?\s*" + re.escape(u), v) is not None
        return Check("unit", ok, "" if ok else f"{v[:20]!r} is not a number followed by {u}")
    if c.name == "count":
        n = int(c.param("entries", 0))
        entries = _entries(v)
        ok = entries is not None and len(entries) == n
        return Check("count", ok, "" if ok else f"{'no list' if entries is None else len(entries)} entries, "
                                                 f"{n} asked")
    if c.name == "case":
        ok = any(ch.isalpha() for ch in v) and v == v.lower()
        return Check("case", ok, "" if ok else "not all lowercase")
    raise InputError(f"no verifier for constraint {c.name!r}", field="constraints")


#: one component of a command answer: verb, axis, magnitude (sign, digits, decimals) and an optional unit
_COMPONENT = re.compile(r"(move|turn|roll)\s+[xyz]\s+[-+]?\d+(\.\d+)?\s*(Å|°)?", re.IGNORECASE)
_UNIT_OF = {"move": "Å", "turn": "°", "roll": "°"}


def _command_check(c: Constraint, v: str) -> Check:
    """precision / unit on a command answer (``move x 3.0 Å, roll y 45.0 °``): every comma-separated
    component must be a command, each magnitude with exactly N decimals / followed by its verb's unit."""
    parts = [p.strip() for p in v.split(",")]
    found = [_COMPONENT.fullmatch(p) for p in parts]
    if not parts or not all(found):
        return Check(c.name, False, f"{v[:20]!r} is not a command (move|turn|roll AXIS MAGNITUDE)")
    if c.name == "precision":
        n = int(c.param("decimals", 2))
        ok = all(len(m.group(2) or ".")-1 == n for m in found)
        return Check("precision", ok, "" if ok else f"a magnitude of {v[:20]!r} does not have exactly {n} decimals")
    ok = all(m.group(3) == _UNIT_OF[m.group(1).lower()] for m in found)
    return Check("unit", ok, "" if ok else f"a magnitude of {v[:20]!r} lacks its unit (Å for move, ° for turn/roll)")


def _entries(v: str) -> list[str] | None:
    if v.startswith("["):
        obj, _ = bounded_json(v)
        return [str(x) for x in obj] if isinstance(obj, list) else None
    parts = [p.strip() for p in v.split(",")]
    return parts if all(parts) else None


def verify(raw: str | bytes | None, constraints: Sequence[Constraint]) -> tuple[Check, ...]:
    """Every constraint's strict outcome on one response (inventory order of ``constraints``); never raises
    on the response.

    Parameters
    ----------
    raw : str or bytes or None
        The model response as recorded (see :func:`decode_response`).
    constraints : sequence of Constraint
        The constraints applied to the item.

    Returns
    -------
    tuple of Check
        One per constraint, in the order of ``constraints``; empty when there are none.
    """
    if not constraints:
        return ()
    text, why = decode_response(raw)
    if text is None:
        return tuple(Check(c.name, False, why) for c in constraints)
    if not text.strip():
        return tuple(Check(c.name, False, "empty output") for c in constraints)
    names = [c.name for c in constraints]
    payload = payload_of(text, names)
    value = payload
    out: list[Check] = []
    by_name = {c.name: c for c in constraints}
    if "format" in by_name:
        chk, parsed = _format_check(payload, str(by_name["format"].param("key", ANSWER_KEY)))
        value = parsed if parsed is not None else payload
    for c in constraints:
        if c.name == "format":
            out.append(chk)
        elif c.name == "structure":
            out.append(_structure_check(text))
        else:
            out.append(_value_check(c, value))
    return tuple(out)


# ---------------------------------------------------------------------- prompt variants of an exported question
#: MicroVQA's no-image ablation sentence, appended to the question
NO_IMAGE_SENTENCE = "If an image is mentioned ignore this information and try your best to answer the question."


def no_image_prompt(question: str) -> str:
    """The question for the no-image arm (MicroVQA's wording appended; the images are not sent).

    Parameters
    ----------
    question : str
        The question text.

    Returns
    -------
    str
        ``question``, a space and :data:`NO_IMAGE_SENTENCE`.
    """
    return f"{question} {NO_IMAGE_SENTENCE}"


#: the choices-only arm's whole question (a harness that adds its own options gets this sentence alone)
CHOOSE_SENTENCE = "Choose the correct option."


def choices_only_prompt(options: Sequence[str]) -> str:
    """The choices-only arm: only the options (MicroVQA), no question and no image.

    Parameters
    ----------
    options : sequence of str
        The option texts, in letter order (A, B, ...).

    Returns
    -------
    str
        :data:`CHOOSE_SENTENCE`, then one ``X. option`` line per option.
    """
    listing = "\n".join(f"{chr(65 + i)}. {o}" for i, o in enumerate(options))
    return f"{CHOOSE_SENTENCE}\n{listing}"


def spec_of_record(rec: Mapping) -> AnswerSpec:
    """The answer spec of an exported question record: a choice among its ``choices``, an interaction list
    (``answer_format`` list), else a command.

    Parameters
    ----------
    rec : mapping
        An exported question record (keys ``answer_format``, ``choices``).

    Returns
    -------
    AnswerSpec
        Kind ``choice`` (with the choices as options), ``list`` or ``command``.
    """
    if rec.get("answer_format") == "choice" and rec.get("choices"):
        return AnswerSpec("choice", tuple(rec["choices"]))
    if rec.get("answer_format") == "list":  # how many entries is part of the answer: no count is asked
        return AnswerSpec("list")
    return AnswerSpec("command")


def with_constraints(rec: Mapping, names: Sequence[str] = ()) -> dict:
    """An exported question record with the constraints of ``names`` that fit it appended to its question
    (the answer unchanged), the applied ``constraints`` and ``constraints_skipped`` recorded, and the
    ``question_no_image`` and (choice questions) ``question_choices_only`` variants, constrained alike. A
    sentence of the question that contradicts the constraints is rewritten first (:func:`reconciled_question`).

    Parameters
    ----------
    rec : mapping
        An exported question record (keys ``question``, ``answer_format``, ``choices``).
    names : sequence of str, default ()
        Constraint names (as :func:`parse_names` accepts them); none: only the prompt variants are added.

    Returns
    -------
    dict
        A copy of ``rec`` with ``question``, ``constraints``, ``constraints_skipped``, ``question_no_image`` and
        (choice questions) ``question_choices_only`` set.

    Raises
    ------
    InputError
        A name is not in the inventory (field ``constraints``).
    """
    out = dict(rec)
    p = plan(names, spec_of_record(rec))
    question = reconciled_question(str(rec["question"]), p.applied)
    out["question"] = constrained_prompt(question, p.applied)
    out["constraints"] = [c.to_dict() for c in p.applied]
    out["constraints_skipped"] = dict(p.skipped)
    out["question_no_image"] = constrained_prompt(no_image_prompt(question), p.applied)
    if rec.get("answer_format") == "choice" and rec.get("choices"):
        out["question_choices_only"] = constrained_prompt(choices_only_prompt(rec["choices"]), p.applied)
    return out
