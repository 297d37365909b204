"""Option parsers shared by every command group (one tiling syntax everywhere)."""

from __future__ import annotations

import re

import typer


def parse_tiling(text: str) -> tuple[int, int, int]:
    parts = [p for p in re.split(r"[,x×\s]+", text.strip()) if p]
    if len(parts) == 1:
        parts = parts * 3
    try:
        t = tuple(int(p) for p in parts)
    except ValueError:
        raise typer.BadParameter(f"tiling must be like 2,2,2 or 2x2x2, got {text!r}") from None
    if len(t) != 3 or min(t) < 1:
        raise typer.BadParameter(f"tiling must be three positive integers, got {text!r}")
    return t  # type: ignore[return-value]
