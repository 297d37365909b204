"""A benchmark export read back (``viewcert build-benchmark``'s folder): the item ids, the id table, the
shipped choices and answers, the task and the certificate. With it every reader maps a harness's own id
(VLMEvalKit ``index``, lmms-eval ``doc_id``, Inspect sample id, the input's ``source_id``) to the one item
id (``qNNNN``) and a letter target (``C``) to the shipped choice it names, and the ladder finds the
certificate's entry of every item with no option.

Files read: ``ids.csv`` (``index,id,source_id``; cells by the table rule, read back through its inverse
``io.tables.cell_value``) and ``benchmark.jsonl`` (``id``, ``task``,
``answer_format``, ``answer``, ``choices``, ``category``); ``certificate.json`` when present. Everything
read is hostile: sizes are checked first, and a malformed line, an unknown task or a repeated id is an
InputError naming the file, the line and the field.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from viewcert.attribution.misi import parse_answer
from viewcert.attribution.parsing import ChoiceParser, ParsedAnswer, crystal_system_parser
from viewcert.attribution.table import canonical_task
from viewcert.errors import InputError
from viewcert.io.received import iter_json_lines, read_received_text
from viewcert.io.tables import cell_value
from viewcert.sanitize import response_text
from viewcert.tasks.transforms import parse_command

COMMAND_TASKS = ("translation", "rotation", "zoom")
ANSWER_FORMATS = ("choice", "command", "list")  # benchmark.harness_files.ANSWER_FORMATS (a sibling: not imported)
#: interaction-list tasks (``benchmark.interaction_export``): answers are lists of hydrogen-bond entries
LIST_TASKS = ("pocket-ligand", "residue-ligand")
_ANSWER = re.compile(r"^\s*(?:final\s+)?answer\s*[:\-]\s*", re.IGNORECASE)
_YES = re.compile(r"^yes\b\s*[:,\-]?\s*", re.IGNORECASE)


def list_entries(text) -> list[str] | None:
    """The entries of an interaction-list answer (``E1; E2``, ``yes: E1; E2``; ``no`` is the empty list),
    whitespace-collapsed and case-folded as ``attribution.misi`` compares them; None when nothing is listed."""
    if text is None:
        return None
    s = _ANSWER.sub("", str(text).strip()).strip().strip("`'\"").strip()
    if re.fullmatch(r"no\.?", s, re.IGNORECASE):
        return []
    s = _YES.sub("", s)
    parts = [" ".join(p.split()).casefold().rstrip(".") for p in s.split(";")]
    parts = [p for p in parts if p]
    return parts or None


@dataclass(frozen=True)
class ListParser:
    """Interaction-list answers: the canonical answer is ``no`` or the sorted distinct entries joined by
    ``; ``; ``labels`` the export's distinct answers (chance = 1/their number)."""

    task: str
    labels: tuple[str, ...]
    name: str = "interaction list"
    letters: Mapping[str, str] = field(default_factory=dict)

    def canonical(self, value: str | None) -> str | None:
        entries = list_entries(value)
        if entries is None:
            return None
        return "; ".join(sorted(set(entries))) if entries else "no"

    def parse(self, text: str | None) -> ParsedAnswer:
        c = self.canonical(None if text is None else response_text(text))  # as it shows: control sequences removed
        return ParsedAnswer(c, "ok") if c is not None else ParsedAnswer(None, "unparseable", "no entry listed")

    def with_letters(self, letters: Mapping[str, str]) -> ListParser:
        return self


#: the interaction exports' command tasks (``benchmark.interaction_export``): their answers have no fixed grid
INTERACTION_COMMAND_TASKS = ("interaction-location", "docking")


def grid_labels(task: str) -> tuple[str, ...]:
    """Every answer of a transformation task's grid, formatted (``move z 40`` … ``move z 60``)."""
    from viewcert.tasks.model import task_grid  # lazy: the grids live beside the renderer; only command tasks

    return tuple(a.format() for a in task_grid(task).answers)


def command_labels(task: str, answers) -> tuple[str, ...]:
    """The answers a command task's chance is counted over: its grid (``grid_labels``), or for an interaction
    command task, which has none (a location's move is any whole Å; a docking grid is each complex's own), the
    export's distinct answers in their parsed form."""
    if task not in INTERACTION_COMMAND_TASKS:
        return grid_labels(task)
    base = CommandParser(task, ())
    return tuple(sorted({base.canonical(a) or a for a in answers}))


@dataclass(frozen=True)
class CommandParser:
    """Free-text transformation answers (``move z 45``, ``roll y -30``, composites): the canonical answer is
    the parsed command's own format (``viewcert.tasks.transforms``); ``labels`` the task's answer grid."""

    task: str
    labels: tuple[str, ...]
    name: str = "command"
    letters: Mapping[str, str] = field(default_factory=dict)

    def canonical(self, value: str | None) -> str | None:
        if value is None or not str(value).strip():
            return None
        try:
            return parse_command(str(value).strip()).format()
        except InputError:
            return None

    def parse(self, text: str | None) -> ParsedAnswer:
        p = parse_answer(text)
        if p.status != "ok":
            return ParsedAnswer(None, "unparseable", p.reason or "no command")
        return ParsedAnswer(p.transformation.format(), "ok")

    def with_letters(self, letters: Mapping[str, str]) -> CommandParser:
        return self


@dataclass(frozen=True)
class ShippedBenchmark:
    """The export's items in index order, with the aliases of each id and the shipped choices."""

    folder: Path
    task: str
    answer_format: str
    ids: tuple[str, ...]
    answers: Mapping[str, str]
    choices: Mapping[str, tuple[str, ...]]
    aliases: Mapping[str, str]
    source_ids: Mapping[str, str]  # item id -> the input's id

    @property
    def certificate(self) -> Path | None:
        p = self.folder / "certificate.json"
        return p if p.is_file() else None

    def resolve(self, raw) -> str:
        """The item id of any id a harness logged (index, doc_id, qNNNN or source_id); unknown ids unchanged
        (the coverage check then lists them). An id is taken as it is first (a source id may begin with a tab),
        then without surrounding whitespace."""
        key = str(raw)
        if key in self.aliases:
            return self.aliases[key]
        key = key.strip()
        return self.aliases.get(key, key)

    def parser(self):
        """The task's parser, by answer format: crystal system (with its synonyms), the shipped choices,
        interaction lists, or commands."""
        if self.task == "crystal-system":
            return crystal_system_parser()
        if self.answer_format == "list":
            base = ListParser(self.task, ())
            return ListParser(self.task, tuple(sorted({base.canonical(a) or a for a in self.answers.values()})))
        if self.answer_format == "choice":
            labels = tuple(dict.fromkeys(c for cs in self.choices.values() for c in cs))
            return ChoiceParser(labels, name=self.task)
        return CommandParser(self.task, command_labels(self.task, self.answers.values()))

    def item_parser(self, base, item_id: str):
        """``base`` with the option letters of the item's shipped choices (a choice question), else ``base``."""
        opts = self.choices.get(item_id)
        if not opts or not hasattr(base, "with_letters"):
            return base
        return base.with_letters({chr(65 + i): base.canonical(c) or c for i, c in enumerate(opts)})

    def chance(self) -> Fraction:
        """Chance accuracy: the mean of 1/|choices| over the items (choice), else 1/|answer grid| (an interaction
        list or command task: 1/|the export's distinct answers|)."""
        if self.answer_format == "choice":
            return sum((Fraction(1, len(self.choices[i])) for i in self.ids), Fraction(0)) / len(self.ids)
        if self.answer_format == "list":
            return Fraction(1, len(self.parser().labels))
        return Fraction(1, len(command_labels(self.task, self.answers.values())))

    def targets(self, parser) -> dict[str, str]:
        """{item id: canonical target} in index order."""
        return {i: parser.canonical(self.answers[i]) or self.answers[i] for i in self.ids}


def _ids_table(path: Path) -> list[dict]:
    src = str(path)
    if not path.exists():
        raise InputError("no ids.csv: not a viewcert benchmark export (build-benchmark writes one)", source=src)
    text = read_received_text(path, what="id table")  # a regular file within max_json_bytes
    try:
        rows = list(csv.DictReader(text.splitlines()))
    except (UnicodeError, csv.Error) as exc:
        raise InputError(f"cannot read the id table: {exc}", source=src) from None
    # the cells as written, by the table rule's inverse (a source id "@SUM(1+1)cmd" is stored as "'@SUM(1+1)cmd")
    rows = [{cell_value(k): cell_value(v) for k, v in r.items()} for r in rows]
    for n, r in enumerate(rows, start=2):
        if not all(r.get(k) for k in ("index", "id", "source_id")):
            raise InputError(f"line {n}: needs index, id and source_id", source=src, field="id")
    return rows


def _questions(path: Path) -> dict[str, dict]:
    src = str(path)
    if not path.exists():
        raise InputError("no benchmark.jsonl beside ids.csv", source=src)
    out: dict[str, dict] = {}
    for n, q in iter_json_lines(read_received_text(path, what="benchmark JSONL"), source=src):
        if not isinstance(q, dict) or not isinstance(q.get("id"), str) or not isinstance(q.get("answer"), str):
            raise InputError(f"line {n}: a question needs a string id and answer", source=src, field="id")
        if q["id"] in out:
            raise InputError(f"line {n}: duplicate item id {q['id']!r}", source=src, field="id")
        if not isinstance(q.get("answer_format", ""), str):
            raise InputError(f"line {n}: answer_format must be a string", source=src, field="answer_format")
        ch = q.get("choices")
        if ch is not None and not (isinstance(ch, list) and ch and all(isinstance(c, str) for c in ch)):
            raise InputError(f"line {n}: choices must be a list of strings", source=src, field="choices")
        out[q["id"]] = q
    return out


def load_shipped(folder: str | Path) -> ShippedBenchmark:
    """Read an export folder (module docstring)."""
    folder = Path(folder)
    rows = _ids_table(folder / "ids.csv")
    qs = _questions(folder / "benchmark.jsonl")
    src = str(folder / "ids.csv")
    aliases: dict[str, str] = {}
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["source_id"]] = counts.get(r["source_id"], 0) + 1
    for n, r in enumerate(rows, start=2):
        if r["id"] not in qs:
            raise InputError(f"line {n}: item {r['id']!r} is not in benchmark.jsonl", source=src, field="id")
        # a source id asked about more than once (per_structure > 1) names no single item: not an alias
        for key in (r["index"], r["id"], *([r["source_id"]] if counts[r["source_id"]] == 1 else [])):
            if aliases.get(key, r["id"]) != r["id"]:
                raise InputError(f"line {n}: id {key!r} names two items", source=src, field="id")
            aliases[key] = r["id"]
    if not rows:
        raise InputError("the id table lists no item", source=src)
    ids = tuple(r["id"] for r in rows)
    tasks = {canonical_task(str(qs[i].get("task")), source=str(folder / "benchmark.jsonl")) for i in ids}
    formats = {qs[i].get("answer_format", "choice" if qs[i].get("choices") else "command") for i in ids}
    if len(tasks) != 1 or len(formats) != 1:
        raise InputError(f"one task and answer format per export, got {sorted(tasks)} / {sorted(formats)}",
                         source=str(folder / "benchmark.jsonl"), field="task")
    fmt = formats.pop()
    if (fmt == "list") != (next(iter(tasks)) in LIST_TASKS) or fmt not in ANSWER_FORMATS:
        raise InputError(f"answer format {str(fmt)[:40]!r} does not fit task {next(iter(tasks))!r} (interaction "
                         f"lists {', '.join(LIST_TASKS)} are 'list', others one of choice, command; an export "
                         "written before the list format: build it again)", source=str(folder / "benchmark.jsonl"),
                         field="answer_format")
    choices = {i: tuple(qs[i]["choices"]) for i in ids if fmt == "choice"}
    return ShippedBenchmark(folder, tasks.pop(), fmt, ids, {i: qs[i]["answer"] for i in ids}, choices, aliases,
                            {r["id"]: r["source_id"] for r in rows})


def is_export(folder: Path) -> bool:
    """Whether a folder holds an export's id table and questions."""
    return (folder / "ids.csv").is_file() and (folder / "benchmark.jsonl").is_file()


def task_parser(task: str | None, shipped: ShippedBenchmark | None = None):
    """The parser of a task (None: the export's task, else crystal system): the export's (its shipped
    choices) when given, else crystal system or the task's command grid; a choice task other than crystal
    system needs its export (the choices are shipped there)."""
    if task is None:
        task = "crystal-system" if shipped is None else shipped.task
    task = canonical_task(task)
    if shipped is not None:
        if shipped.task != task:
            raise InputError(f"the manifest's task {task!r} is not the export's {shipped.task!r}",
                             source=str(shipped.folder), field="task")
        return shipped.parser()
    if task == "crystal-system":
        return crystal_system_parser()
    if task in COMMAND_TASKS:
        return CommandParser(task, grid_labels(task))
    raise InputError(f"task {task!r} is scored against its export's shipped choices or answers: set "
                     "[study].benchmark to the export folder", field="task")
