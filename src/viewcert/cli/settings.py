"""``--settings FILE``: the options a user rarely changes, set in a TOML file, one table per command::

    [certify]
    pairs = "first"
    cartesian-merge = true

    [build-benchmark]
    per-structure = 3

Keys are option names (``-`` or ``_``); a file's value replaces the option's default, and an option given on
the command line still wins (click's ``default_map``). Those options are hidden from ``--help`` so that no command
shows more than about 15; ``viewcert settings show [COMMAND]`` prints every one with its default and help, as a
settings file. An unknown table or key is one line naming the file and the key, exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from viewcert.cli.options import echo, guarded

settings_app = typer.Typer(add_completion=False, no_args_is_help=True,
                           help="the settings file (--settings FILE): the rarely changed options")


def rarely_changed(fn, *names: str):
    """Mark options of the command function ``fn`` as settings-file options: hidden from ``--help``, still
    accepted on the command line and from ``--settings FILE``. Returns ``fn``."""
    import inspect

    params = inspect.signature(fn).parameters
    for name in names:
        info = params[name].default  # a typer OptionInfo (KeyError for a name fn does not have)
        info.hidden = True
    return fn


def leaf_commands(root) -> dict:
    """``{name: click command}`` of the root's commands that take options (a group's commands as ``group name``)."""
    out = {}
    for name, cmd in root.commands.items():
        subs = getattr(cmd, "commands", None)
        for sub, c in (subs.items() if subs is not None else [(None, cmd)]):
            out[name if sub is None else f"{name} {sub}"] = c
    return out


def _option(cmd, key: str):
    """The option of ``cmd`` a settings key names (``angle-tolerance``, ``angle_tolerance``), or None."""
    want = key.strip().lower().replace("_", "-")
    for p in cmd.params:
        if p.param_type_name == "option" and (p.name.replace("_", "-") == want
                                              or f"--{want}" in p.opts + p.secondary_opts):
            return p
    return None


def load_settings(path: Path, root) -> dict:
    """The ``default_map`` of a settings file: ``{command: {parameter: value}}``; unknown tables and keys are
    refused (InputError naming the file and the key)."""
    from viewcert.errors import InputError, did_you_mean
    from viewcert.io.received import loads_toml, read_received_text

    src = str(path)
    data = loads_toml(read_received_text(path, what="settings file"), source=src)
    commands = leaf_commands(root)
    out: dict = {}
    for table, values in data.items():
        name = table.strip().lower().replace("_", "-")
        if name not in commands or not isinstance(values, dict):
            raise InputError(f"unknown command table [{table}]{did_you_mean(name, commands)} (a table per command: "
                             "viewcert settings show)", source=src, field=table)
        cmd = commands[name]
        for key, value in values.items():
            p = _option(cmd, key)
            if p is None:
                names = [q.name.replace("_", "-") for q in cmd.params if q.param_type_name == "option"]
                raise InputError(f"unknown key {key!r} of [{table}]{did_you_mean(key, names)}", source=src,
                                 field=f"{table}.{key}")
            target = out
            for part in name.split():  # "protocol show" nests as click's default_map does
                target = target.setdefault(part, {})
            target[p.name] = value
    return out


def _toml_value(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) or '""' for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def settings_text(root, command: str | None = None) -> str:
    """Every settings-file option (a hidden option) of ``command`` (every command if None) as a settings file:
    its help as a comment, then ``key = default`` (commented out when it has no default)."""
    from viewcert.errors import InputError, did_you_mean

    commands = leaf_commands(root)
    if command is not None and command not in commands:
        raise InputError(f"unknown command {command!r}{did_you_mean(command, commands)}", field="COMMAND")
    lines = []
    for name, cmd in commands.items():
        hidden = [p for p in cmd.params if p.param_type_name == "option" and p.hidden]
        if (command is not None and name != command) or not hidden:
            continue
        lines.append(f"[{name}]")
        for p in hidden:
            lines.append(f"# {' '.join((p.help or '').split())}")
            value = _toml_value(p.default)
            key = p.name.replace("_", "-")
            lines.append(f"{key} = {value}" if value is not None else f"# {key} =")
        lines.append("")
    return "\n".join(lines)


def settings_show_cmd(
    ctx: typer.Context,
    command: str = typer.Argument(None, help="one command (default: every command)"),
) -> None:
    """Print the options a settings file sets (those --help leaves out), with their defaults, as a settings
    file: save it, edit it, pass it as viewcert --settings FILE (before or after the command)."""
    echo(settings_text(ctx.find_root().command, command), nl=False)


def register(app: typer.Typer) -> None:
    """Add ``settings show`` to ``app``."""
    settings_app.command("show")(guarded(settings_show_cmd))
    app.add_typer(settings_app, name="settings")
