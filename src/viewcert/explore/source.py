"""What the explorer reads from a folder (the one place that reads certificates for it: swap the readers here).

A folder is a ``viewcert certify`` output (``certificate.json``, ``items.csv``, plots) or an export
(``benchmark.jsonl``, ``images/``, ``sidecars/``, ``buffers/``, ``manifest.json``, ``certificate.json``) of any
kind: crystal (``viewcert-certificate``), transformation task (``viewcert.tasks.certificate``) or interaction
(``viewcert-interaction-benchmark``). Everything here is received: files are read only inside the folder (no
symlink or ``..`` out of it), as regular files within the limits, JSON with no duplicate key; a value of the
wrong type is an :class:`InputError` naming the file and the field. The certificate is read through the typed
records (``formats.records``): its format, item ids and digest checked, then typed; the rest of the explorer reads
the typed values, never a field by key. A streamed certificate (``certify.stream``: an item table beside a small
``certificate.json``) is read through ``formats.table``: its checks before any item, then its items one shard
at a time (``TableItems``), so a site of any size holds one shard of records.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from viewcert.errors import InputError
from viewcert.explore.kinds import Pages, pages_of
from viewcert.formats import records
from viewcert.formats.reader import read
from viewcert.formats.records import CertificateVisitor
from viewcert.formats.table import StreamedCertificate
from viewcert.io.received import loads_json_line, loads_json_strict, read_received_bytes, read_received_text

#: plots a certify run writes beside its certificate (``certify.run.write_outputs``)
PLOTS = ("ceiling_by_system.png", "phantoms.png", "delta_star.png")
#: where a ladder report may sit beside the folder (``viewcert ladder --out``: report.html)
LADDER_PLACES = ("report.html", "ladder/report.html", "../ladder/report.html")


@dataclass(frozen=True)
class View:
    """One image of an item: its name, the PNG and sidecar inside the folder (None when absent) and the sidecar's
    content (camera, drawn atoms with pixel centres)."""

    name: str
    image: Path | None = None
    sidecar: dict | None = None
    ids: Path | None = None  # the ID buffer (``buffers/<stem>.ids.npy``) when the export wrote one


@dataclass(frozen=True)
class Item:
    """One certificate item (``record``: its typed record, ``records.ItemOutcome``, ``TaskItemRecord`` or
    ``InteractionItemRecord`` by kind) and its views."""

    index: int
    id: str
    record: Any
    views: tuple[View, ...] = ()
    question: dict | None = None  # the benchmark.jsonl record of an export's question


@dataclass(frozen=True)
class Folder:
    """A folder read for the explorer: its kind, typed certificate (``records.Certificate``), items, plots and
    ladder report."""

    path: Path
    certificate: records.Certificate
    pages: Pages  # what the explorer shows of its certificate's kind (``explore.kinds``)
    items: tuple[Item, ...] | TableItems
    plots: tuple[Path, ...] = ()
    ladder: Path | None = None
    summary_text: str | None = None
    extra: dict = field(default_factory=dict)


def inside(folder: Path, rel: Any, what: str) -> Path | None:
    """``folder / rel`` when ``rel`` is a relative path naming a regular file inside ``folder`` (no ``..``, no
    symlink out); None when there is no such file; InputError when ``rel`` is not text or leaves the folder."""
    if not isinstance(rel, str) or not rel or "\x00" in rel:
        raise InputError(f"{what} must be a relative path, got {type(rel).__name__}", field=what)
    p = Path(rel)
    if p.is_absolute() or ".." in p.parts:
        raise InputError(f"{what} leaves the folder: {rel[:200]!r}", field=what)
    full = folder / p
    try:
        real = full.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not real.is_relative_to(folder.resolve()) or not real.is_file():
        return None
    return full


def _json(path: Path, what: str) -> Any:
    raw = read_received_bytes(path, what=what)
    try:
        return loads_json_strict(raw.decode("utf-8"), source=str(path))
    except InputError:
        raise
    except (ValueError, RecursionError) as exc:
        raise InputError(f"cannot read {what}: {str(exc)[:200]}", source=str(path)) from None


class TableItems:
    """The items of a streamed certificate as a sequence read lazily: ``len``, iteration shard by shard and
    ``items[i]`` (the shard holding item ``i`` read whole and checked, ``StreamedCertificate.shard``; the last shard
    read is kept, so items taken in order read each shard once)."""

    def __init__(self, cert: StreamedCertificate):
        self.cert = cert
        self._shard: tuple[int, list[Item]] = (-1, [])

    def __len__(self) -> int:
        return self.cert.n_items

    def _items_of(self, k: int) -> list[Item]:
        if self._shard[0] != k:
            start = self.cert.offsets[k]
            recs = self.cert.shard(k)
            self._shard = (k, [Item(index=start + j, id=rec.id, record=rec) for j, rec in enumerate(recs)])
        return self._shard[1]

    def __getitem__(self, i: int) -> Item:
        if not 0 <= i < len(self):
            raise IndexError(i)
        k = bisect.bisect_right(self.cert.offsets, i) - 1
        return self._items_of(k)[i - self.cert.offsets[k]]

    def __iter__(self):
        for k in range(len(self.cert.shards)):
            yield from self._items_of(k)


def _certificate(path: Path) -> records.Certificate:
    """(kind, typed certificate) of ``path`` through the one reader (``formats.reader.receive``: strict JSON,
    its format one of ``formats.records``' kinds or a streamed certificate, its digest checked, its record typed;
    a streamed certificate's items are read later, lazily). Every item's text id is checked before the digest (a
    refusal names the item), and a crystal or molecule certificate's shape as ``verify`` needs it."""
    try:
        cert = read(path, streamed=True)  # its digest holds (a stale one: one line)
    except InputError as exc:
        if exc.field != "format":  # a stale digest, a malformed field: as the reader says
            raise
        raise InputError(f"not a certificate the explorer knows: {exc.message}", source=str(path),
                         field=exc.field) from None
    return cert


def _questions(folder: Path, key_name: str) -> dict[str, dict]:
    """benchmark.jsonl by the certificate's item id (under ``key_name``: a crystal export's ``source_id``, else
    ``id``)."""
    p = inside(folder, "benchmark.jsonl", "benchmark.jsonl")
    if p is None:
        return {}
    out: dict[str, dict] = {}
    for n, line in enumerate(read_received_text(p, what="benchmark.jsonl").splitlines(), 1):
        if not line.strip():
            continue
        try:
            q = loads_json_line(line, n, source=str(p))
        except InputError:
            raise
        except (ValueError, RecursionError) as exc:
            raise InputError(f"line {n} is not JSON: {str(exc)[:120]}", source=str(p), field=f"line {n}") from None
        if not isinstance(q, dict):
            raise InputError(f"line {n} is not an object", source=str(p), field=f"line {n}")
        key = q.get(key_name)
        if isinstance(key, str):
            out.setdefault(key, q)
    return out


def _views(folder: Path, question: dict | None, names: list) -> tuple[View, ...]:
    if not question:
        return ()
    images = question.get("images")
    if not isinstance(images, list):
        raise InputError("benchmark.jsonl: images must be a list", field="images")
    views = []
    for k, rel in enumerate(images):
        img = inside(folder, rel, "images[]")
        stem = Path(rel).stem
        side_p = inside(folder, f"sidecars/{stem}.json", "sidecar")
        side = _json(side_p, "sidecar") if side_p else None
        if side is not None and not isinstance(side, dict):
            raise InputError("sidecar is not an object", source=str(side_p))
        name = side.get("view") if side and isinstance(side.get("view"), str) else (
            names[k] if k < len(names) and isinstance(names[k], str) else stem)
        views.append(View(name=name, image=img, sidecar=side, ids=inside(folder, f"buffers/{stem}.ids.npy", "ids")))
    return tuple(views)


def _ladder(folder: Path) -> Path | None:
    for rel in LADDER_PLACES:
        p = folder / rel
        if p.is_file() and not p.is_symlink():
            return p
    return None


def read_folder(folder: str | os.PathLike) -> Folder:
    """The folder's certificate, items with their views, plots and ladder report (module docstring)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("not a folder", source=str(folder))
    cert_p = inside(folder, "certificate.json", "certificate.json")
    if cert_p is None:
        raise InputError("no certificate.json in the folder (a certify output or an export)", source=str(folder))
    cert = _certificate(cert_p)
    pages = pages_of(cert)
    plots = tuple(p for name in PLOTS if (p := inside(folder, name, name)) is not None)
    summary_p = inside(folder, "summary.txt", "summary.txt")
    summary = read_received_text(summary_p, what="summary.txt") if summary_p else None
    return Folder(path=folder, certificate=cert, pages=pages, items=cert.visit(_Items(folder, pages)), plots=plots,
                  ladder=_ladder(folder), summary_text=summary)


@dataclass(frozen=True)
class _Items(CertificateVisitor):
    """The items of each kind: a streamed certificate's read lazily (a certify output: no questions, no images),
    a JSON certificate's with their questions and views."""

    folder: Path
    pages: Pages

    def streamed(self, cert: StreamedCertificate) -> TableItems:
        return TableItems(cert)

    def ceiling(self, cert: records.Certificate) -> tuple[Item, ...]:
        questions = _questions(self.folder, self.pages.QUESTION_KEY)
        names = self.pages.view_names(cert)
        items = []
        for k, rec in enumerate(cert.items):
            q = questions.get(rec.id)
            items.append(Item(index=k, id=rec.id, record=rec, views=_views(self.folder, q, names), question=q))
        return tuple(items)

    task = interaction = ceiling
