"""Answer parsing and majority voting.

A parser turns one raw model output into a :class:`ParsedAnswer`: the canonical answer (or ``None``), a
status (``ok``, ``unparseable``, ``refused``; ``api_error`` is set by readers, never guessed from text)
and, whenever the answer is missing, the *reason* in words, so a report can say why an arm failed.

:class:`ChoiceParser` is the pluggable parser for any closed-vocabulary task (labels, synonyms, optional
option letters); :func:`crystal_system_parser` configures it for the seven crystal systems.

Parsing rules, in order (first that applies wins):

0. the response is read as it shows: terminal control sequences (colours, titles, cursor moves) and other
   control characters removed (``sanitize.response_text``);
1. empty or whitespace-only output -> ``unparseable`` ("empty output");
2. an explicit answer marker (``Answer: X``, ``final answer ... X``, ``crystal system is X``,
   ``\\boxed{X}``, ``**X**`` on the last line, a JSON field, a JSON object after ``Answer:`` or on the last
   line, whose field may hold an option letter) naming exactly one label -> ``ok``; the last marker in the
   text wins (models restate and correct themselves);
3. a bare option letter (``C``, ``(C)``, ``C.``) when option letters are configured -> ``ok``;
4. exactly one distinct label mentioned anywhere -> ``ok``;
5. a refusal phrase and no label -> ``refused``;
6. several distinct labels and no marker -> ``unparseable`` ("ambiguous: ...");
7. no label -> ``unparseable`` ("no label named").

Majority vote (:func:`majority_vote`) over the ``ok`` answers of K samples. Tie rules:

- ``"first"`` (default, the study's rule): among the tied answers, the one whose first occurrence comes
  earliest in sample order — what ``collections.Counter(answers).most_common(1)`` returns;
- ``"alphabetical"``: the alphabetically smallest tied answer;
- ``"none"``: a tie gives no answer (scored wrong, status ``tie``).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from viewcert.errors import InputError
from viewcert.sanitize import response_text

PARSE_STATUSES = ("ok", "unparseable", "refused", "api_error")
#: how the parse reason of a received response that is not UTF-8 text begins (the readers set it; adherence
#: then fails every constraint of that response with the reason)
UNDECODABLE = "response is not UTF-8 text"
TieRule = Literal["first", "alphabetical", "none"]
TIE_RULES: tuple[str, ...] = ("first", "alphabetical", "none")

CRYSTAL_SYSTEMS = ("triclinic", "monoclinic", "orthorhombic", "tetragonal", "trigonal", "hexagonal", "cubic")
CRYSTAL_SYSTEM_SYNONYMS = {
    "anorthic": "triclinic",
    "rhombohedral": "trigonal",
    "isometric": "cubic",
    "orthorhombic system": "orthorhombic",
}

_REFUSAL = re.compile(
    r"\b(i\s*(?:can(?:'|no)t|cannot|am unable to|'m unable to|am not able to|won't)|unable to (?:determine|"
    r"identify|provide|answer)|not (?:possible|able) to (?:determine|identify|tell)|i (?:do not|don't) "
    r"(?:have|see) (?:enough|any) (?:information|image)|no image (?:was|is) (?:provided|attached|shown)|"
    r"as an ai)",
    re.IGNORECASE,
)
_MARKERS = (
    r"final\s+answer\s*(?:is)?\s*[:\-]?",
    r"answer\s*[:\-]",
    r"answer\s+is",
    r"crystal\s+system\s*(?:is|would be|should be|[:\-=])",
    r"conclusion\s*[:\-]",
)
_MARKER_RE = re.compile("(?:" + "|".join(_MARKERS) + ")", re.IGNORECASE)
_BOXED_RE = re.compile(r"\\boxed\{\s*(?:\\text\{)?([^{}]+?)\}?\s*\}")
_BOLD_RE = re.compile(r"\*\*([^*]{1,60})\*\*")
_LETTER_RE = re.compile(r"^\s*(?:option\s+)?\(?([A-Z])\)?[.:)]?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class ParsedAnswer:
    """One parsed output: ``answer`` is a canonical label or None; ``reason`` explains a None."""

    answer: str | None
    status: str
    reason: str = ""

    def __post_init__(self) -> None:
        if self.status not in PARSE_STATUSES:
            raise InputError(f"parse status must be one of {PARSE_STATUSES}, got {self.status!r}", field="status")
        if (self.answer is None) == (self.status == "ok"):
            raise InputError(
                f"an answer must be given exactly when the status is 'ok' (answer={self.answer!r}, "
                f"status={self.status!r})",
                field="answer",
            )


class AnswerParser(Protocol):
    """Anything that maps raw text to a :class:`ParsedAnswer` and names its label set."""

    labels: tuple[str, ...]

    def parse(self, text: str | None) -> ParsedAnswer: ...

    def canonical(self, value: str | None) -> str | None: ...


@dataclass(frozen=True)
class ChoiceParser:
    """Closed-vocabulary parser. ``labels`` are canonical answers; ``synonyms`` map extra words to labels;
    ``letters`` maps option letters (``{"A": "triclinic", ...}``) when the prompt offered lettered options."""

    labels: tuple[str, ...]
    synonyms: Mapping[str, str] = field(default_factory=dict)
    letters: Mapping[str, str] = field(default_factory=dict)
    name: str = "choice"

    def __post_init__(self) -> None:
        if not self.labels:
            raise InputError("a choice parser needs at least one label", field="labels")
        labels = tuple(str(x).strip().lower() for x in self.labels)
        if len(set(labels)) != len(labels):
            raise InputError(f"labels repeat: {labels}", field="labels")
        for k, v in {**self.synonyms, **self.letters}.items():
            if str(v).lower() not in labels:
                raise InputError(f"synonym or letter {k!r} maps to {v!r}, which is not a label", field="synonyms")
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "synonyms", {str(k).lower(): str(v).lower() for k, v in self.synonyms.items()})
        object.__setattr__(self, "letters", {str(k).upper(): str(v).lower() for k, v in self.letters.items()})

    @functools.cached_property
    def word_pattern(self) -> re.Pattern:
        """The labels and synonyms as whole words, longest first (case-insensitive), compiled once."""
        words = sorted({*self.labels, *self.synonyms}, key=len, reverse=True)
        return re.compile(r"(?<![a-z])(" + "|".join(re.escape(w) for w in words) + r")(?![a-z])", re.IGNORECASE)

    def with_letters(self, letters: Mapping[str, str]) -> ChoiceParser:
        return ChoiceParser(self.labels, dict(self.synonyms), dict(letters), self.name)

    # ------------------------------------------------------------------ helpers
    def canonical(self, value: str | None) -> str | None:
        """Canonical label of a target or answer string (label, synonym or option letter); None if none."""
        if value is None:
            return None
        v = str(value).strip().strip(".").lower()
        if v in self.labels:
            return v
        if v in self.synonyms:
            return self.synonyms[v]
        if v.upper() in self.letters:
            return self.letters[v.upper()]
        return None

    def _mentions(self, text: str) -> list[str]:
        out = []
        for m in self.word_pattern.finditer(text):
            w = m.group(1).lower()
            out.append(self.synonyms.get(w, w))
        return out

    def _from_json(self, text: str) -> str | None:
        s = text.strip()
        if s.startswith("```"):
            s = s.strip("`")
            s = s[s.find("{") :] if "{" in s else s
        if not (s.startswith("{") and s.rstrip().endswith("}")):
            return None
        try:
            obj = json.loads(s)
        except (ValueError, RecursionError):  # deeply nested JSON recurses in json.loads: not an answer
            return None
        if not isinstance(obj, dict):
            return None
        for key in ("answer", "crystal_system", "prediction", "label", "final_answer"):
            value = obj.get(key)
            if isinstance(value, str):
                label = self.canonical(value)
                if label is not None:
                    return label
                found = set(self._mentions(value))
                if len(found) == 1:
                    return found.pop()
        return None

    # ------------------------------------------------------------------ the parser
    def _marked(self, text: str) -> str | None:
        """The label an explicit marker names: a boxed answer, an ``Answer:`` marker (its requested JSON object
        included), a JSON object or a bold label on the last line; None when no marker names one."""
        # explicit markers: scan every marker and keep the last one that names exactly one label
        marked: str | None = None
        for m in _BOXED_RE.finditer(text):
            found = set(self._mentions(m.group(1))) or ({self.canonical(m.group(1))} - {None})
            if len(found) == 1:
                marked = found.pop()
        if marked is None:
            for m in _MARKER_RE.finditer(text):
                tail = text[m.end() : m.end() + 80].split("\n")[0]
                # the requested JSON object after the marker (``Answer: {"answer": "E"}``): its field is read
                # as the whole response would be (a label, a synonym or an option letter)
                line = text[m.end() : m.end() + 10_000].split("\n")[0]
                in_json = self._from_json(line) if tail.lstrip().startswith("{") else None
                found = [in_json] if in_json is not None else self._mentions(tail)
                if found:
                    marked = found[0]
                elif self.letters:
                    lm = re.match(r"\s*\(?([A-Z])\)?(?![a-z])", tail)
                    if lm and lm.group(1).upper() in self.letters:
                        marked = self.letters[lm.group(1).upper()]
        if marked is None:
            lines = [ln for ln in text.strip().splitlines() if ln.strip()]
            if lines:
                marked = self._from_json(lines[-1])  # a JSON object as the last line
            if lines and marked is None:
                for m in _BOLD_RE.finditer(lines[-1]):
                    found = set(self._mentions(m.group(1)))
                    if len(found) == 1:
                        marked = found.pop()
        return marked

    def parse(self, text: str | None) -> ParsedAnswer:
        if text is None or (isinstance(text, float) and text != text):
            return ParsedAnswer(None, "unparseable", "no output recorded")
        text = response_text(text)  # what the response shows: colour codes and other control sequences removed
        if not text.strip():
            return ParsedAnswer(None, "unparseable", "empty output")
        direct = self.canonical(text)
        if direct is not None:
            return ParsedAnswer(direct, "ok")
        js = self._from_json(text)
        if js is not None:
            return ParsedAnswer(js, "ok")
        marked = self._marked(text)
        if marked is not None:
            return ParsedAnswer(marked, "ok")
        if self.letters:
            lm = _LETTER_RE.match(text)
            if lm:
                letter = lm.group(1).upper()
                if letter in self.letters:
                    return ParsedAnswer(self.letters[letter], "ok")
                return ParsedAnswer(None, "unparseable", f"option letter {letter!r} is not one of the options")
        mentions = self._mentions(text)
        distinct = list(dict.fromkeys(mentions))
        if len(distinct) == 1:
            return ParsedAnswer(distinct[0], "ok")
        if _REFUSAL.search(text):
            snippet = _REFUSAL.search(text).group(0)
            return ParsedAnswer(None, "refused", f"refusal phrase {snippet!r} and no final answer")
        if len(distinct) > 1:
            return ParsedAnswer(
                None, "unparseable", f"ambiguous: names {', '.join(distinct)} without a final-answer marker"
            )
        head = " ".join(text.split())[:60]
        return ParsedAnswer(None, "unparseable", f"no {self.name} label named in {head!r}")


def crystal_system_parser(letters: Mapping[str, str] | None = None) -> ChoiceParser:
    """Parser for the seven crystal systems (synonyms: anorthic, rhombohedral, isometric)."""
    return ChoiceParser(CRYSTAL_SYSTEMS, CRYSTAL_SYSTEM_SYNONYMS, dict(letters or {}), name="crystal-system")


PARSERS = {"crystal_system": crystal_system_parser}


def get_parser(task: str | AnswerParser | None) -> AnswerParser:
    """A parser by task name (``crystal_system``) or a parser object passed through; default crystal system.

    Parameters
    ----------
    task : str, AnswerParser or None
        A task name (``crystal_system``, a transformation task, ...), a parser object, or None.

    Returns
    -------
    AnswerParser
        The parser (crystal system for None).
    """
    if task is None:
        return crystal_system_parser()
    if isinstance(task, str):
        if task not in PARSERS:
            raise InputError(f"unknown task {task!r}; known: {sorted(PARSERS)}", field="task")
        return PARSERS[task]()
    return task


# ---------------------------------------------------------------------- voting
@dataclass(frozen=True)
class Vote:
    """Result of a majority vote: the answer (None when no sample parsed, or on a tie under rule 'none'),
    the vote counts in first-occurrence order, and whether the top count was tied."""

    answer: str | None
    votes: dict[str, int]
    tied: bool
    n_ok: int


def majority_vote(answers: Iterable[str | None], tie_rule: TieRule = "first") -> Vote:
    """Majority vote over the answers of K samples in sample order; None entries (failed samples) do not
    vote. See the module docstring for the tie rules.

    Parameters
    ----------
    answers : iterable of str or None
        The parsed answers of an item's K samples, in sample order (None: the sample did not parse).
    tie_rule : {"first", "alphabetical", "none"}
        Which tied answer wins: the first to occur, the alphabetically first, or none (answer None).

    Returns
    -------
    Vote
        The answer, the counts in first-occurrence order and whether the top count was tied.
    """
    if tie_rule not in TIE_RULES:
        raise InputError(f"tie rule must be one of {TIE_RULES}, got {tie_rule!r}", field="tie_rule")
    votes: dict[str, int] = {}
    for a in answers:
        if a is not None:
            votes[a] = votes.get(a, 0) + 1
    if not votes:
        return Vote(None, {}, False, 0)
    top = max(votes.values())
    tied_answers = [a for a, c in votes.items() if c == top]  # first-occurrence order
    tied = len(tied_answers) > 1
    if not tied:
        answer: str | None = tied_answers[0]
    elif tie_rule == "first":
        answer = tied_answers[0]
    elif tie_rule == "alphabetical":
        answer = sorted(tied_answers)[0]
    else:
        answer = None
    return Vote(answer, votes, tied, sum(votes.values()))


def letters_from_options(options: Sequence[str | None], parser: ChoiceParser) -> dict[str, str]:
    """Option letters A, B, ... for option texts (skipping empty options), each canonicalised by ``parser``;
    an option that is not a label raises, naming it."""
    out = {}
    for i, text in enumerate(options):
        if text is None or (isinstance(text, float) and text != text) or str(text).strip() == "":
            continue
        lab = parser.canonical(str(text))
        if lab is None:
            raise InputError(f"option {chr(65 + i)} = {text!r} is not a {parser.name} label", field=chr(65 + i))
        out[chr(65 + i)] = lab
    return out
