"""The label audit of a database: each item's published label against the symmetry of its own cell, the rendered
cell's and the reconstruction's, at every level (crystal system, point group, space group).

For an item with a published label (``label_dataset``; read from a database's label columns) that was certified
(not an item error, a crystal), the four labels of a level are

- **published**: the database's value; a level the database does not state is implied by a stated space-group
  number (its crystal system and point group, ``published_from = "space_group"``);
- **input**: the symmetry of the cell as read, spglib at τ (the rendered cell's label, or the input cell's
  where the standardisation raised the symmetry: ``items[].symmetry_raised.input``);
- **rendered**: the rendered (conventional standard) cell's;
- **reconstructed**: the reconstruction's from the views ("" when the oracle determined none).

A disagreement is of one or more kinds (``KINDS``): ``published_vs_input`` (the published label is not the
symmetry of the database's own structure at τ: the label itself is in question), ``input_vs_rendered`` (the
standardisation raised the symmetry) and ``rendered_vs_reconstructed`` (the views do not determine the label).
One row per item and level with at least one kind; counts are items per kind and level.

A streamed run (``certify.stream``) audits shard by shard (``StreamedAudit``): each shard's rows are written as the
shard finishes (``OUT/.audit/part-NNNNNN.csv`` and ``.md``, atomically; a resumed run rewrites them from its
shards), only the counts are held, and at the end ``label_audit.csv`` and ``label_audit.md`` are assembled from the
parts one at a time: the same bytes as ``audit_csv`` / ``audit_markdown`` of every item at once.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from viewcert.formats.records import CeilingCertificate, ItemOutcome
from viewcert.io.atomic import write_chunks_atomic, write_text_atomic
from viewcert.io.confine import inner_folder, names_inside, read_inside, remove_inside
from viewcert.io.database import FORMATS
from viewcert.io.tables import csv_text
from viewcert.sanitize import markdown_text
from viewcert.symmetry.labels import LEVELS, crystal_system_of, point_group_of

KINDS = ("published_vs_input", "input_vs_rendered", "rendered_vs_reconstructed")
KIND_TEXT = {"published_vs_input": "published label is not the input cell's symmetry",
             "input_vs_rendered": "standardisation raised the symmetry",
             "rendered_vs_reconstructed": "the views do not determine the label"}
COLUMNS = ("id", "level", "published", "published_from", "input", "rendered", "reconstructed", "kinds")
CSV_NAME, MARKDOWN_NAME = "label_audit.csv", "label_audit.md"


@dataclass(frozen=True)
class AuditRow:
    """One item and level on which the four labels disagree (``KINDS`` that hold, in that order)."""

    id: str
    level: str
    published: str | int
    published_from: str
    input: str | int
    rendered: str | int
    reconstructed: str | int
    kinds: tuple[str, ...]

    def cells(self) -> list:
        return [self.id, self.level, self.published, self.published_from, self.input, self.rendered,
                self.reconstructed, ";".join(self.kinds)]


@dataclass(frozen=True)
class Audit:
    """The audit of a certificate: ``n`` items audited (certified crystals with a published label), the rows and
    the counts {kind: {level: items}}."""

    n: int
    rows: tuple[AuditRow, ...]
    counts: dict


def applies(cert: CeilingCertificate) -> bool:
    """Whether a certificate's input is a database (``io.database.FORMATS``): its outputs carry the audit."""
    return bool(cert.inputs) and cert.inputs.kind in FORMATS


def published_levels(label: dict) -> dict[str, tuple[str | int, str]]:
    """{level: (value, where from)} of a published label: the levels it states ("stated"), and a stated
    space-group number's crystal system and point group ("space_group")."""
    out = {lv: (label[lv], "stated") for lv in LEVELS if lv in label}
    sg = label.get("space_group")
    if sg is not None:
        out.setdefault("crystal_system", (crystal_system_of(sg), "space_group"))
        out.setdefault("point_group", (point_group_of(sg), "space_group"))
    return out


def input_label(it: ItemOutcome) -> dict:
    """The label of the cell as read: the input's where the standardisation raised the symmetry, else the
    rendered cell's (the same at the same tolerances)."""
    raised = it.symmetry_raised
    return raised.input if raised and isinstance(raised.input, dict) else it.label("rendered")


def item_rows(it: ItemOutcome) -> list[AuditRow]:
    """The audit rows of one item (none for an error, a molecule or an item without a published label)."""
    if it.is_error or it.is_molecule or not it.label("dataset"):
        return []
    mine, rendered, recon = input_label(it), it.label("rendered"), it.label("reconstructed")
    rows = []
    for lv, (pub, src) in published_levels(it.label("dataset")).items():
        a, b, c = mine.get(lv, ""), rendered.get(lv, ""), recon.get(lv, "")
        kinds = tuple(k for k, hit in zip(KINDS, (pub != a, a != b, b != c), strict=True) if hit)
        if kinds:
            rows.append(AuditRow(it.id, lv, pub, src, a, b, c, kinds))
    return rows


def audit(items: Iterable[ItemOutcome]) -> Audit:
    """The audit of ``items`` (rows in item order, then level order)."""
    rows: list[AuditRow] = []
    n = 0
    for it in items:
        if not (it.is_error or it.is_molecule) and it.label("dataset"):
            n += 1
            rows += sorted(item_rows(it), key=lambda r: LEVELS.index(r.level))
    counts = {k: {lv: sum(1 for r in rows if r.level == lv and k in r.kinds) for lv in LEVELS} for k in KINDS}
    return Audit(n, tuple(rows), counts)


def audit_csv(a: Audit) -> str:
    """``label_audit.csv``: one row per item and level (cells by the table rule, ``io.tables``)."""
    return csv_text(COLUMNS, [r.cells() for r in a.rows])


def csv_rows(rows: Iterable[AuditRow]) -> str:
    """The lines of ``audit_csv`` after its header, for ``rows``."""
    return csv_text(COLUMNS, [r.cells() for r in rows])[len(csv_text(COLUMNS, [])):]


def audit_lines(a: Audit) -> list[str]:
    """The summary's audit lines: items audited, then per kind the items disagreeing at each level."""
    lines = [f"label audit: {a.n} items with a published label; disagreements (items per level "
             f"{' / '.join(LEVELS)}, every one in {CSV_NAME}):"]
    lines += [f"    {k} ({KIND_TEXT[k]}): " + " / ".join(str(a.counts[k][lv]) for lv in LEVELS) for k in KINDS]
    return lines


def audit_markdown(a: Audit) -> str:
    """``label_audit.md``: the counts, then the disagreement table; every cell escaped (``sanitize``)."""
    return markdown_head(a) + markdown_rows(a.rows)


def markdown_head(a: Audit) -> str:
    """``label_audit.md`` up to its table's rows: the title, the counts, the table's header."""
    out = ["# Label audit", "", f"{a.n} items with a published label.", "",
           "| kind | " + " | ".join(LEVELS) + " |", "|---|" + "---|" * len(LEVELS)]
    out += [f"| {k}: {KIND_TEXT[k]} | " + " | ".join(str(a.counts[k][lv]) for lv in LEVELS) + " |" for k in KINDS]
    out += ["", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    return "\n".join(out) + "\n"


def markdown_rows(rows: Iterable[AuditRow]) -> str:
    """The table rows of ``label_audit.md`` for ``rows``, every cell escaped."""
    return "".join("| " + " | ".join(markdown_text(c) for c in r.cells()) + " |\n" for r in rows)


def merged(audits: Iterable[Audit]) -> Audit:
    """The audit of the items of several audits (shards in order): counts added, rows concatenated."""
    audits = list(audits)
    counts = {k: {lv: sum(a.counts[k][lv] for a in audits) for lv in LEVELS} for k in KINDS}
    return Audit(sum(a.n for a in audits), tuple(r for a in audits for r in a.rows), counts)


class StreamedAudit:
    """The audit of a streamed run, shard by shard (module docstring): ``add`` each shard's items in order (its
    rows written to ``OUT/.audit/``, the counts kept), then ``finish`` writes the two files and returns the counts
    (an ``Audit`` without rows)."""

    PARTS = ".audit"

    def __init__(self, out: str | Path):
        self.out, self.k = Path(out), 0
        inner_folder(self.out / self.PARTS)  # no symlink on the way: refused (one line) before any shard
        self.total = Audit(0, (), {k: dict.fromkeys(LEVELS, 0) for k in KINDS})

    def _part(self, k: int, ext: str) -> Path:
        return self.out / self.PARTS / f"part-{k:06d}.{ext}"

    def add(self, items: Iterable[ItemOutcome]) -> None:
        a = audit(items)
        write_text_atomic(self._part(self.k, "csv"), csv_rows(a.rows))
        write_text_atomic(self._part(self.k, "md"), markdown_rows(a.rows))
        self.total, self.k = merged([self.total, Audit(a.n, (), a.counts)]), self.k + 1

    def _parts(self, ext: str) -> Iterator[str]:
        for k in range(self.k):  # through real folders, O_NOFOLLOW: a link swapped in is refused, never read
            yield read_inside(self._part(k, ext), what="audit part").decode("utf-8")

    def finish(self) -> Audit:
        # the parts read one at a time as the files are written (never all held)
        write_chunks_atomic(self.out / CSV_NAME, itertools.chain([csv_text(COLUMNS, [])], self._parts("csv")))
        write_chunks_atomic(self.out / MARKDOWN_NAME,
                            itertools.chain([markdown_head(self.total)], self._parts("md")))
        parts = self.out / self.PARTS
        for name in names_inside(parts):  # the parts removed one by one, never through a link
            remove_inside(parts / name)
        with contextlib.suppress(OSError):
            os.rmdir(parts)
        return self.total
