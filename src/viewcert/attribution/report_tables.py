"""The table writers every section of a ladder report shares (:mod:`.report`, :mod:`.report_items`): cells as people
read them, Markdown and HTML tables under their unit line (every cell and header escaped), links into the explorer,
and the page being written (:class:`_Page`: its CSV and PNG files, HTML body, Markdown and provenance)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np
import pandas as pd

from viewcert.io.atomic import write_bytes_atomic, write_text_atomic
from viewcert.io.tables import frame_csv_text
from viewcert.sanitize import console_text, html_text, markdown_text

__all__ = ["SHOWN_IDS", "explorer_link"]

#: item ids shown in one cell of the page (every id is in the CSV)
SHOWN_IDS = 20


def _fmt(x: Any, digits: int = 4) -> str:
    """One cell as people read it: ``—`` for nothing, yes/no, ``digits`` decimals, a list of ids space-joined
    (the first :data:`SHOWN_IDS`), a mapping as ``key: value`` pairs; never a Python repr."""
    if x is None or x is pd.NA or (isinstance(x, (float, np.floating)) and pd.isna(x)):
        return "—"
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (float, np.floating)):
        return f"{x:.{digits}f}"
    if isinstance(x, (list, tuple, np.ndarray)):
        ids = [str(v) for v in x]
        return (" ".join(ids[:SHOWN_IDS]) + (" …" if len(ids) > SHOWN_IDS else "")) if ids else "none"
    if isinstance(x, Mapping):
        return "; ".join(f"{k}: {_fmt(v, digits)}" for k, v in x.items())
    return str(x)


def _p(x: Any) -> str:
    """A p-value to 4 significant digits (1.328e-18, 0.186, 1); ``not tested`` where there is none."""
    return "not tested" if x is None or pd.isna(x) else f"{float(x):.4g}"


def _human(df: pd.DataFrame, headers: Mapping[str, str], pvalues: Sequence[str] = ()) -> pd.DataFrame:
    """The columns of ``headers`` that ``df`` has, in that order, under their human names; the ``pvalues``
    columns written to 4 significant digits. The CSV keeps the machine names."""
    cols = [c for c in headers if c in df.columns]
    out = df[cols].astype(object).copy()
    for c in pvalues:
        if c in out:
            out[c] = [_p(v) for v in out[c]]
    return out.rename(columns=dict(headers))


def _ci(point: Any, lo: Any, hi: Any) -> str:
    if point is None or pd.isna(point):
        return "—"
    return f"{point:.4f} [{lo:.4f}, {hi:.4f}]"



def _md_table(df: pd.DataFrame, unit: str) -> str:
    """A Markdown table under its ``Unit:`` line; every cell and header escaped."""
    head = f"Unit: {markdown_text(unit)}\n\n"
    if df.empty:
        return head + "_(empty)_\n"
    cols = [markdown_text(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(markdown_text(_fmt(v)) for v in r.tolist()) + " |")
    return head + "\n".join(lines) + "\n"


def _md_linked(df: pd.DataFrame, unit: str, hrefs: Mapping[tuple[int, str], str]) -> str:
    """:func:`_md_table` with the cells named in ``hrefs`` ((row position, column) → URL) as links."""
    if not hrefs or df.empty:
        return _md_table(df, unit)
    cols = [markdown_text(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for i, (_, r) in enumerate(df.iterrows()):
        cells = []
        for c, v in zip(df.columns, r.tolist(), strict=True):
            text = markdown_text(_fmt(v))
            cells.append(f"[{text}]({hrefs[(i, c)]})" if (i, c) in hrefs else text)
        lines.append("| " + " | ".join(cells) + " |")
    return f"Unit: {markdown_text(unit)}\n\n" + "\n".join(lines) + "\n"


def _html_linked(df: pd.DataFrame, unit: str, hrefs: Mapping[tuple[int, str], str]) -> str:
    """:func:`_html_table` with the cells named in ``hrefs`` ((row position, column) → URL) as links."""
    if not hrefs or df.empty:
        return _html_table(df, unit)
    head = "".join(f"<th>{html_text(console_text(str(c)))}</th>" for c in df.columns)
    rows = []
    for i, (_, r) in enumerate(df.iterrows()):
        cells = []
        for c, v in zip(df.columns, r.tolist(), strict=True):
            text = html_text(console_text(_fmt(v)))
            href = hrefs.get((i, c))
            cells.append(f'<td><a class="explore" href="{html_text(href)}">{text}</a></td>' if href else f"<td>{text}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<table class="t"><caption>Unit: {html_text(unit)}</caption><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")


def explorer_link(index: str, **conditions: str) -> str:
    """The address of the explorer's index (``index``: its ``index.html`` as a URL relative to the report)
    filtered to ``conditions``, the fragment ``viewcert explore``'s index reads: ``model=NAME`` and a rung's
    verdict (``R4=right``, ``R3=wrong``, ...; keys with ``-`` given as ``_``), or ``item=ID`` (that item's page);
    every value percent-encoded."""
    frag = "&".join(f"{quote(k.replace('_', '-'), safe='')}={quote(str(v), safe='')}" for k, v in conditions.items())
    return f"{index}#{frag}"



def _html_table(df: pd.DataFrame, unit: str) -> str:
    """An HTML table whose caption states its unit; every cell text (console-escaped, then HTML-escaped)."""
    caption = f"<caption>Unit: {html_text(unit)}</caption>"
    if df.empty:
        return f"<p><em>(empty)</em> Unit: {html_text(unit)}</p>"
    df = df.rename(columns=console_text).map(lambda v: console_text(_fmt(v)))
    html = df.to_html(index=False, border=0, classes="t")
    return html.replace(">", ">" + caption, 1)



# ---------------------------------------------------------------------- writer
@dataclass
class _Page:
    """The report being written: files so far (CSV, PNG), HTML body and Markdown blocks, provenance."""

    out: Path
    csvs: dict[str, Path] = field(default_factory=dict)
    figs: dict[str, Path] = field(default_factory=dict)
    body: list[str] = field(default_factory=list)
    md: list[str] = field(default_factory=list)
    prov: dict[str, Any] = field(default_factory=dict)
    explorer: str | None = None  # the explorer's index.html relative to the report (counts and ids link to it)

    def csv(self, name: str, df: pd.DataFrame) -> None:
        self.csvs[name] = write_text_atomic(self.out / f"{name}.csv", frame_csv_text(df))

    def fig(self, name: str, png: bytes) -> bytes:
        self.figs[name] = write_bytes_atomic(self.out / f"{name}.png", png)
        return png


