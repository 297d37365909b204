"""The settings file (``viewcert --settings FILE``): the options a user rarely changes, set in a TOML file, one
table per command::

    [certify]
    pairs = "first"
    cartesian-merge = true

    [build-benchmark]
    per-structure = 3

Keys are option names (``-`` or ``_``); a file's value replaces the option's default, and an option given on the
command line still wins. ``settings_text`` prints every settings-file option with its default and help as such a
file. An unknown table or key is one line naming the file and the key (InputError).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from viewcert.errors import InputError, did_you_mean
from viewcert.io.received import loads_toml, read_received_text


@dataclass(frozen=True)
class Setting:
    """One option of a command: its parameter ``name``, spellings (``--angle-tolerance``), default and help;
    ``rare``: a settings-file option (left out of the command's ``--help``)."""

    name: str
    flags: tuple[str, ...]
    default: Any
    help: str
    rare: bool


def _key(text: str) -> str:
    return str(text).strip().lower().replace("_", "-")


def _setting(options: list[Setting], key: str) -> Setting | None:
    """The option a settings key names (``angle-tolerance``, ``angle_tolerance``), or None."""
    want = _key(key)
    return next((s for s in options if _key(s.name) == want or f"--{want}" in s.flags), None)


def read_settings(path: str | Path, commands: dict[str, list[Setting]]) -> dict[str, Any]:
    """The settings file at ``path`` as ``{command: {parameter: value}}`` (a command of a group, ``"protocol
    show"``, nested as ``{"protocol": {"show": ...}}``) for the options ``commands`` take; an unknown table or key
    is an InputError naming the file and the key."""
    src = str(path)
    data = loads_toml(read_received_text(Path(path), what="settings file"), source=src)
    out: dict[str, Any] = {}
    for table, values in data.items():
        name = _key(table)
        if name not in commands or not isinstance(values, dict):
            raise InputError(f"unknown command table [{table}]{did_you_mean(name, commands)} (a table per command: "
                             "viewcert settings show)", source=src, field=table)
        for key, value in values.items():
            s = _setting(commands[name], key)
            if s is None:
                known = [_key(o.name) for o in commands[name]]
                raise InputError(f"unknown key {key!r} of [{table}]{did_you_mean(key, known)}", source=src,
                                 field=f"{table}.{key}")
            target = out
            for part in name.split():
                target = target.setdefault(part, {})
            target[s.name] = value
    return out


def _toml_value(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) or '""' for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def settings_text(commands: dict[str, list[Setting]], command: str | None = None) -> str:
    """Every settings-file option of ``command`` (every command if None) as a settings file: its help as a
    comment, then ``key = default`` (commented out when it has no default)."""
    if command is not None and command not in commands:
        raise InputError(f"unknown command {command!r}{did_you_mean(command, commands)}", field="COMMAND")
    lines = []
    for name, options in commands.items():
        rare = [s for s in options if s.rare]
        if (command is not None and name != command) or not rare:
            continue
        lines.append(f"[{name}]")
        for s in rare:
            value, key = _toml_value(s.default), _key(s.name)
            lines += [f"# {' '.join(s.help.split())}", f"{key} = {value}" if value is not None else f"# {key} ="]
        lines.append("")
    return "\n".join(lines)
