"""The answers a replay model gives: from a file of answers keyed by item id, or one rule for every item.

A replay spec (what follows ``viewcert-replay/`` in a harness's model name):

- ``always-X``: answer ``X`` to every question (``always-A``: the first option; ``always-move z 44``);
- otherwise the path of a JSONL file, relative to the working directory (the export folder), one object per
  line: ``{"id": "q0000", "answer": "A"}`` (the answer: a letter for choice questions, the text otherwise)
  or ``{"id": ..., "response": "..."}`` (the whole response, given verbatim). A line for an item the export
  beside it does not have is never asked for: ignored, and counted (``Replay.ignored``, one line on stderr).

An answer is presented in the harness's own response form by its replay model (Inspect's multiple choice:
``ANSWER: A``); a ``response`` never is. ``build-benchmark`` ships ``dry_run_answers.jsonl`` (``A`` to every
choice question, the first question's answer to every free-text one) and the commands that replay it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from viewcert.errors import InputError

ALWAYS = "always-"
DRY_RUN_FILE = "dry_run_answers.jsonl"

__all__ = ["ALWAYS", "DRY_RUN_FILE", "Replay", "dry_run_answers", "load_replay"]


@dataclass(frozen=True)
class Replay:
    """``always``: the rule's answer, else ``by_id``: ``{item id: (text, verbatim)}`` (verbatim: a whole
    ``response``, not an ``answer`` to present); ``source``: the spec it came from."""

    source: str
    always: str | None = None
    by_id: Mapping[str, tuple[str, bool]] = field(default_factory=lambda: MappingProxyType({}))
    ignored: tuple[str, ...] = ()  # ids of answer lines for items the export does not have (never asked)

    def note(self) -> str:
        """One line saying how many answer lines name items the export does not have (ignored, counted), or
        "" when none does; their ids escaped for a console."""
        if not self.ignored:
            return ""
        from viewcert.sanitize import console_text  # lazy: start-up (Inspect loads this plugin)

        shown = ", ".join(repr(i[:40]) for i in self.ignored[:5]) + (" ..." if len(self.ignored) > 5 else "")
        return console_text(f"viewcert-replay: {len(self.ignored)} answer line(s) of {self.source} name items this "
                            f"export does not have (ignored): {shown}", keep_newlines=False)

    def answer(self, item_id: str) -> tuple[str, bool]:
        """(text, verbatim) for the item; an item the file does not answer is an InputError naming it."""
        if self.always is not None:
            return self.always, False
        try:
            return self.by_id[str(item_id)]
        except KeyError:
            raise InputError(f"no answer for item {str(item_id)[:80]!r}", source=self.source) from None


def load_replay(spec: str, base: Path | None = None) -> Replay:
    """The replay named by ``spec`` (module docstring); a file is read as received input (a regular file
    within the JSON size limit), every line checked: an object with a string ``id`` and exactly one string
    ``answer`` or ``response``, each id once.

    Parameters
    ----------
    spec : str
        ``always-X`` or the path of a JSONL answer file.
    base : Path, optional
        Folder a relative path is resolved against (default: the working directory).

    Returns
    -------
    Replay
        The rule, or the answers by item id.
    """
    from viewcert.io.received import (  # lazy: start-up (Inspect loads this plugin)
        iter_json_lines,
        read_received_text,
    )

    if spec.startswith(ALWAYS):
        text = spec[len(ALWAYS):]
        if not text.strip():
            raise InputError(f"replay rule {spec[:80]!r} gives no answer (always-A, always-move z 44)")
        return Replay(source=spec, always=text)
    path = Path(spec) if base is None or Path(spec).is_absolute() else Path(base) / spec
    src = str(path)
    if not path.is_file():
        raise InputError("replay answers not found (a JSONL file, or a rule such as always-A)", source=src)
    by_id: dict[str, tuple[str, bool]] = {}
    for n, rec in iter_json_lines(read_received_text(path, what="replay answers"), source=src):
        keys = set(rec) if isinstance(rec, dict) else set()
        kind = keys & {"answer", "response"}
        if not isinstance(rec, dict) or not isinstance(rec.get("id"), str) or len(kind) != 1 \
                or not keys <= {"id", "answer", "response"} or not isinstance(rec[next(iter(kind))], str):
            raise InputError(f"line {n}: expected {{\"id\": str, \"answer\" or \"response\": str}}", source=src)
        if rec["id"] in by_id:
            raise InputError(f"line {n}: item {rec['id'][:80]!r} answered twice", source=src)
        k = next(iter(kind))
        by_id[rec["id"]] = (rec[k], k == "response")
    if not by_id:
        raise InputError("no answers", source=src)
    return Replay(source=src, by_id=MappingProxyType(by_id), ignored=_not_in_export(by_id, path.parent))


def _not_in_export(by_id: Mapping[str, tuple[str, bool]], folder: Path) -> tuple[str, ...]:
    """The answered ids that the export in ``folder`` (its ``benchmark.jsonl``) does not have; () when the
    folder holds no export."""
    from viewcert.io.received import iter_json_lines, read_received_text  # lazy: start-up (as load_replay)

    questions = folder / "benchmark.jsonl"
    if not questions.is_file():
        return ()
    ids = {rec.get("id") for _, rec in iter_json_lines(read_received_text(questions, what="questions"),
                                                       source=str(questions)) if isinstance(rec, dict)}
    return tuple(sorted(i for i in by_id if i not in ids))


def dry_run_answers(records: list[dict]) -> list[dict]:
    """The shipped dry run's answers: ``A`` to every choice question, the first question's answer to every
    other one (the "always" rule written out, so any harness replays it from one file).

    Parameters
    ----------
    records : list of dict
        An export's question records (``id``, ``answer``, ``answer_format``), in question order.

    Returns
    -------
    list of dict
        One ``{"id", "answer"}`` per question.
    """
    if not records:
        return []
    first = records[0]["answer"]
    return [{"id": r["id"], "answer": "A" if r["answer_format"] == "choice" else first} for r in records]
