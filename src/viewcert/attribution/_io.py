"""Atomic writes for attribution outputs.

Uses :mod:`viewcert.io.atomic` (``write_bytes_atomic``, ``write_text_atomic``, ``write_json_atomic``);
when that module is not importable, falls back to the same temp-file-plus-``os.replace`` pattern here.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

try:  # the project's writers
    from viewcert.io.atomic import write_bytes_atomic, write_json_atomic, write_text_atomic
except ImportError:  # pragma: no cover - exercised only before io.atomic exists

    def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return target

    def write_text_atomic(path: str | os.PathLike, text: str, *, encoding: str = "utf-8") -> Path:
        return write_bytes_atomic(path, text.encode(encoding))

    def write_json_atomic(path: str | os.PathLike, obj: Any, *, indent: int | None = 1,
                          allow_nan: bool = False) -> Path:
        return write_text_atomic(path, json.dumps(obj, sort_keys=True, indent=indent, allow_nan=allow_nan,
                                                  default=str) + "\n")


def jsonable(obj: Any) -> Any:
    """Plain-JSON version of report data: NaN -> None, numpy -> Python, Fractions -> str."""
    from fractions import Fraction

    import numpy as np

    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return None if not math.isfinite(x) else x
    if isinstance(obj, Fraction):
        return str(obj)
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [jsonable(v) for v in (obj.tolist() if isinstance(obj, np.ndarray) else obj)]
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    return str(obj)


__all__ = ["jsonable", "write_bytes_atomic", "write_json_atomic", "write_text_atomic"]
