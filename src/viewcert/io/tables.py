"""CSV for people and spreadsheets: the one place viewcert's report tables become CSV text.

Every string cell and header goes through ``viewcert.sanitize.csv_cell`` (OWASP's CSV-injection rule: a cell
starting with ``= + - @``, tab or CR gets a leading ``'``; control characters escaped), so a received name
(item id, model, file) is never read as a formula. A string that is exactly a decimal number (``-0.5``,
``1e-3``) is a number, not text, and is left as it is; non-string cells are untouched. Output is deterministic:
``\\n`` line ends, the ``csv`` module's minimal quoting (pandas' for frames).

Machine-read formats that viewcert or a harness reads back (the native result table, VLMEvalKit TSVs) are
not written through here: their cells are data, not spreadsheet text.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from viewcert.sanitize import csv_cell

__all__ = ["safe_cell", "csv_text", "dict_csv_text", "frame_csv_text"]

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def safe_cell(value: Any) -> Any:
    """``csv_cell`` except that a string holding exactly a decimal number stays as it is."""
    if isinstance(value, str) and _NUMBER.fullmatch(value):
        return value
    return csv_cell(value)


def csv_text(header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> str:
    """CSV text of a header and rows of cells (None is written as the empty cell)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
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


def frame_csv_text(df: Any, *, index: bool = False) -> str:
    """``DataFrame.to_csv`` text (``\\n`` line ends) with every string cell and column name made safe."""
    safe = df.rename(columns=safe_cell).map(safe_cell)
    return safe.to_csv(index=index, lineterminator="\n")
