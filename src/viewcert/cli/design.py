"""Design commands for the ``viewcert`` CLI: ``design``, ``margin``, ``occlusion`` and ``protocol show``.

Mounted by ``viewcert.cli`` through ``register(app)``; each prints the report of ``viewcert.api.views`` (or
``viewcert.cameras``' protocol text). ``--protocol`` takes a built-in name or a ``.toml``/``.json`` file.
"""

from __future__ import annotations

import typer

from viewcert.cli.options import echo, guarded, progress, show
from viewcert.cli.vocabulary import mount


def design_cmd(o) -> None:
    """Choose K view directions maximising the worst-case and 5th-percentile exactness margin δ_exact (or, with
    --margin-kind phantom, the uniqueness margin δ*), reporting both, as certify states them; with
    --camera perspective, place a pinhole camera along each (viewcert.design.perspective); with --objective
    legibility (INPUT complex:PATH), the views in which the hydrogen-bond entries' labels are legible
    (viewcert.design.legibility)."""
    from viewcert.api.views import design

    settings = dict(vars(o))
    show(design(settings.pop("input_spec"), settings.pop("out"), progress=progress, **settings))


def margin_cmd(o) -> None:
    """Uniqueness margin δ* per structure (items CSV with the near-miss tuple) and its distribution plot."""
    from viewcert.api.views import margins

    show(margins(o.input_spec, o.out, protocol=o.protocol, subset=o.subset, force=o.force, progress=progress))


def occlusion_cmd(o) -> None:
    """Per view: mean occluded / redundant / informative fractions (the study's definitions, 2×2×2 drawn)."""
    from viewcert.api.views import occlusion

    show(occlusion(o.input_spec, protocol=o.protocol, subset=o.subset, progress=progress))


protocol_app = typer.Typer(add_completion=False, no_args_is_help=True, help="protocol files")


def protocol_show_cmd(
    name: str = typer.Argument(..., help="built-in protocol name (or a .toml/.json file)"),
    fmt: str = typer.Option("toml", "--format", help="toml | json"),
) -> None:
    """Print a protocol as a protocol file (write it with > my_views.toml, edit, pass it as --protocol)."""
    from viewcert.cameras.resolve import format_protocol

    echo(format_protocol(name, fmt), nl=False)


def protocol_list_cmd() -> None:
    """List the named view protocols, one line each: name, views, what they are (files: docs/protocols.md)."""
    from viewcert.cameras.protocols import PROTOCOL_NAMES, get_protocol

    for name in PROTOCOL_NAMES:
        p = get_protocol(name)
        echo(f"{name:<26} {len(p.views):>2} views  {p.description}: {', '.join(p.view_names)}")
    echo(f"{'fibonacci-N':<26}  N views  N near-uniform view directions on a hemisphere (golden-angle spiral)")


def register(app: typer.Typer) -> None:
    """Add ``design``, ``margin``, ``occlusion``, ``protocol list`` and ``protocol show`` to ``app``."""
    mount(app, {"design": design_cmd, "margin": margin_cmd, "occlusion": occlusion_cmd})
    protocol_app.command("list")(guarded(protocol_list_cmd))
    protocol_app.command("show")(guarded(protocol_show_cmd))
    app.add_typer(protocol_app, name="protocol")
