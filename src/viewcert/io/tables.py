"""CSV and TSV text: the one place viewcert's tables become text, and the one cell rule they all follow.

Every string cell and header of every table viewcert writes (the reports' CSVs, ``items.csv``, the export's
``benchmark.tsv`` and ``ids.csv``, native result files) goes through ``safe_cell``: OWASP's CSV-injection
rule (a cell starting with ``= + - @``, tab or CR gets a leading ``'``; one starting with ``'`` gets one
more) with control characters escaped (``viewcert.sanitize.csv_cell``), so a received name (item id,
model, file) is never read as a formula nor breaks a line. A string that is exactly a decimal number
(``-0.5``, ``1e-3``) is a number, not text, and is left as it is; non-string cells are untouched. The rule
is exactly reversible: a reader that must map ids back (``ids.csv``, a harness's copy of the TSV, a native
file) takes each text cell through ``cell_value``. Output is deterministic: ``\\n`` line ends, the ``csv``
module's minimal quoting (pandas' for frames).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from viewcert.sanitize import csv_cell, csv_cell_value

__all__ = ["safe_cell", "cell_value", "csv_text", "dict_csv_text", "frame_csv_text"]

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def safe_cell(value: Any, *, keep_newlines: bool = False) -> Any:
    """The cell rule: ``csv_cell`` except that a string holding exactly a decimal number stays as it is.
    ``keep_newlines``: multi-line text (a question a harness shows as it is) keeps its line breaks."""
    if isinstance(value, str) and _NUMBER.fullmatch(value):
        return value
    return csv_cell(value, keep_newlines=keep_newlines)


def cell_value(value: Any) -> Any:
    """The inverse of ``safe_cell``: the text a cell was made from (non-strings unchanged). A decimal number
    was left as it is, and reads back as it is."""
    return csv_cell_value(value)


def csv_text(header: Sequence[Any], rows: Iterable[Sequence[Any]], *, sep: str = ",") -> str:
    """CSV (``sep=","``) or TSV (``"\\t"``) text of a header and rows of cells (None is the empty cell)."""
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=sep, lineterminator="\n")
    w.writerow([safe_cell(h) for h in header])
    for row in rows:
        w.writerow([safe_cell("" if v is None else v) for v in row])
    return buf.getvalue()


def dict_csv_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """CSV text of dict rows, columns in the first row's key order; empty text for no rows."""
    if not rows:
        return ""
    header = list(rows[0])
    return csv_text(header, ([r.get(k) for k in header] for r in rows))


def frame_csv_text(df: Any, *, index: bool = False, sep: str = ",", multiline: Sequence[str] = ()) -> str:
    """``DataFrame.to_csv`` text (``\\n`` line ends; ``sep="\\t"`` for TSV) with every string cell and column
    name made safe; the columns named in ``multiline`` keep their line breaks (quoted by pandas)."""
    safe = df.map(safe_cell)
    for col in multiline:
        safe[col] = df[col].map(lambda v: safe_cell(v, keep_newlines=True))
    safe = safe.rename(columns=safe_cell)
    return safe.to_csv(index=index, sep=sep, lineterminator="\n")
