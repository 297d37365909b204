"""``--settings FILE`` and ``viewcert settings show [COMMAND]``: the rarely changed options (hidden from
``--help``) set in a TOML file, one table per command (``viewcert.api.settings``); a file's values become the
commands' defaults (click's ``default_map``), and an option given on the command line still wins."""

from __future__ import annotations

from pathlib import Path

import typer

from viewcert.cli.options import echo, guarded

settings_app = typer.Typer(add_completion=False, no_args_is_help=True,
                           help="the settings file (--settings FILE): the rarely changed options")


def leaf_commands(root) -> dict:
    """``{name: click command}`` of the root's commands that take options (a group's commands as ``group name``)."""
    out = {}
    for name, cmd in root.commands.items():
        subs = getattr(cmd, "commands", None)
        for sub, c in (subs.items() if subs is not None else [(None, cmd)]):
            out[name if sub is None else f"{name} {sub}"] = c
    return out


def described(root) -> dict:
    """``{command: [Setting]}``: every option of every command of ``root`` (its hidden ones the settings-file's)."""
    from viewcert.api.settings import Setting

    return {name: [Setting(p.name, tuple(p.opts + p.secondary_opts), p.default, p.help or "", p.hidden)
                   for p in cmd.params if p.param_type_name == "option"]
            for name, cmd in leaf_commands(root).items()}


def load_settings(path: Path, root) -> dict:
    """The ``default_map`` of the settings file at ``path`` for the commands of ``root``."""
    from viewcert.api.settings import read_settings

    return read_settings(path, described(root))


def settings_show_cmd(
    ctx: typer.Context,
    command: str = typer.Argument(None, help="one command (default: every command)"),
) -> None:
    """Print the options a settings file sets (those --help leaves out), with their defaults, as a settings
    file: save it, edit it, pass it as viewcert --settings FILE (before or after the command)."""
    from viewcert.api.settings import settings_text

    echo(settings_text(described(ctx.find_root().command), command), nl=False)


def register(app: typer.Typer) -> None:
    """Add ``settings show`` to ``app``."""
    settings_app.command("show")(guarded(settings_show_cmd))
    app.add_typer(settings_app, name="settings")
