"""Reading one field of a camera table as another tool states it (issue 53): each reader names the field it
rejects (``viewcert.errors.InputError`` with ``field="camera.<name>"``), so a bad ``images.toml`` entry is one
line naming the file and the field. Shared by the per-tool importers (``tool_cameras``, ``tool_matplotlib``)."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from viewcert.errors import InputError

__all__ = ["TableReader"]

#: a rotation read from a tool's text (printed to ~7 digits) is accepted when ‖RᵀR − I‖ is below this
ROTATION_ATOL = 1e-4


class TableReader:
    """Typed access to a camera table, every error naming ``camera.<key>`` and the place ``where``."""

    def __init__(self, table: Mapping, where: str | None):
        if not isinstance(table, Mapping):
            raise InputError(f"a camera must be a table of fields, got {type(table).__name__}", source=where,
                             field="camera")
        self.table = table
        self.where = where

    def error(self, key: str, message: str) -> InputError:
        return InputError(message, source=self.where, field=f"camera.{key}")

    def has(self, key: str) -> bool:
        return key in self.table and self.table[key] is not None

    def raw(self, key: str):
        if not self.has(key):
            raise self.error(key, "is missing")
        return self.table[key]

    def number(self, key: str, default: float | None = None, *, positive: bool = False) -> float:
        if not self.has(key):
            if default is None:
                raise self.error(key, "is missing")
            return float(default)
        v = self.table[key]
        if isinstance(v, bool):
            raise self.error(key, f"must be a number, got {v!r}")
        try:
            x = float(v)
        except (TypeError, ValueError):
            raise self.error(key, f"must be a number, got {str(v)[:40]!r}") from None
        if not math.isfinite(x):
            raise self.error(key, f"must be finite, got {x}")
        if positive and x <= 0:
            raise self.error(key, f"must be > 0, got {x}")
        return x

    def numbers(self, key: str, n: int, default=None) -> np.ndarray:
        if not self.has(key):
            if default is None:
                raise self.error(key, "is missing")
            return np.asarray(default, dtype=np.float64)
        v = self.table[key]
        if isinstance(v, str):
            parts = [p for p in v.replace(",", " ").replace("[", " ").replace("]", " ").split() if p]
        elif isinstance(v, (list, tuple, np.ndarray)):
            parts = list(np.ravel(np.asarray(v, dtype=object)))
        else:
            raise self.error(key, f"must be {n} numbers, got {type(v).__name__}")
        if len(parts) != n:
            raise self.error(key, f"must be {n} numbers, got {len(parts)}")
        try:
            arr = np.array([float(p) for p in parts if not isinstance(p, bool)], dtype=np.float64)
        except (TypeError, ValueError):
            raise self.error(key, "has a non-number") from None
        if arr.size != n:
            raise self.error(key, "has a non-number")
        if not np.isfinite(arr).all():
            raise self.error(key, "has a non-finite number (NaN or infinity)")
        return arr

    def text(self, key: str, default: str | None = None) -> str:
        if not self.has(key):
            if default is None:
                raise self.error(key, "is missing")
            return default
        v = self.table[key]
        if not isinstance(v, str):
            raise self.error(key, f"must be text, got {type(v).__name__}")
        return v

    def choice(self, key: str, choices: Mapping[str, str], default: str | None = None) -> str:
        v = self.text(key, default).strip().lower()
        if v not in choices:
            raise self.error(key, f"must be one of {sorted(choices)}, got {v[:40]!r}")
        return choices[v]

    def rotation(self, key: str, r: np.ndarray) -> np.ndarray:
        """r if it is a proper rotation within ROTATION_ATOL (made exactly orthonormal), else an error."""
        if not np.isfinite(r).all():
            raise self.error(key, "has a non-finite number (NaN or infinity)")
        err = float(np.abs(r @ r.T - np.eye(3)).max())
        det = float(np.linalg.det(r))
        if err > ROTATION_ATOL or det < 0:
            what = "singular" if abs(det) < 1e-6 else ("a reflection" if det < 0 else "not orthonormal")
            raise self.error(key, f"is not a rotation ({what}: |RᵀR − I| = {err:.2g}, det = {det:.4g})")
        u, _, vt = np.linalg.svd(r)
        return u @ vt

    def size(self, image_size) -> tuple[int, int]:
        """(width, height) px: the table's ``width``/``height`` and the image's own size must agree where both
        are known; at least one must be."""
        stated = None
        if self.has("width") or self.has("height"):
            w, h = self.number("width", positive=True), self.number("height", positive=True)
            if w != int(w) or h != int(h):
                raise self.error("width", f"image size must be whole pixels, got {w}×{h}")
            stated = (int(w), int(h))
        if image_size is not None:
            try:
                got = (int(image_size[0]), int(image_size[1]))
            except (TypeError, ValueError, IndexError):
                raise self.error("width", f"bad image size {image_size!r}") from None
            if stated is not None and stated != got:
                raise self.error("width", f"the camera states {stated[0]}×{stated[1]} px but the image is "
                                          f"{got[0]}×{got[1]} px")
            return got
        if stated is None:
            raise self.error("width", "is missing (and no image size was given)")
        return stated
