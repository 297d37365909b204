"""Item-id files: one item id per line (UTF-8), the list ``viewcert ladder --subset-size N`` writes and
``viewcert ladder --ids FILE`` / ``viewcert build-benchmark --ids FILE`` read. Blank lines and lines starting with
``#`` are skipped; surrounding whitespace is stripped; a repeated id is refused, naming its line."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from viewcert.errors import InputError
from viewcert.io.atomic import write_text_atomic
from viewcert.io.received import read_received_text


def read_ids(path: str | Path) -> tuple[str, ...]:
    """The ids of an id file, in file order (a regular file within the JSON size limit)."""
    src = str(path)
    if not Path(path).exists():
        raise InputError("id file not found", source=src)
    seen: dict[str, int] = {}
    for n, line in enumerate(read_received_text(path, what="id file").splitlines(), start=1):
        iid = line.strip()
        if not iid or iid.startswith("#"):
            continue
        if iid in seen:
            raise InputError(f"line {n}: id {iid[:80]!r} repeats line {seen[iid]}", source=src, field="id")
        seen[iid] = n
    if not seen:
        raise InputError("no item id in the file", source=src, field="id")
    return tuple(seen)


def write_ids(path: str | Path, ids: Sequence[str], *, comment: str = "") -> Path:
    """Write ``ids`` one per line (atomically), after an optional ``#`` comment line; an id holding a line break
    (any character ``str.splitlines`` splits at, as ``read_ids`` reads by it: U+2028, U+0085, form feed, …) or
    starting with ``#`` cannot be written as a line and is refused."""
    bad = [i for i in ids if not i.strip() or len(i.splitlines()) != 1 or i.splitlines()[0] != i
           or i.strip().startswith("#") or i != i.strip()]
    if bad:
        raise InputError(f"item id {bad[0][:80]!r} cannot be written one per line", field="id")
    head = "".join(f"# {line}\n" for line in comment.splitlines())
    return write_text_atomic(Path(path), head + "".join(f"{i}\n" for i in ids))


__all__ = ["read_ids", "write_ids"]
