"""Design commands for the ``viewcert`` CLI: ``design``, ``margin``, ``occlusion`` and ``protocol show``.

Mounted by ``viewcert.cli`` through ``register(app)``; each prints the report of ``viewcert.api.views`` (or
``viewcert.cameras``' protocol text). ``--protocol`` takes a built-in name or a ``.toml``/``.json`` file.
"""

from __future__ import annotations

from pathlib import Path

import typer

from viewcert.cli.options import echo, guarded, show


def design_cmd(
    input_spec: str = typer.Argument(..., metavar="INPUT", help="structure file, folder, study layout or builtin:NAME"),
    views: int = typer.Option(5, "--views", help="number of views K to choose"),
    out: Path = typer.Option(Path("out/design"), "--out", "-o", help="output folder"),
    keep: str = typer.Option("", help="views of --keep-protocol to keep, comma-separated (e.g. axis_c)"),
    keep_protocol: str = typer.Option("render-ceiling-5", help="protocol (name or file) the kept views come from"),
    candidates: str = typer.Option("fibonacci-48", help="candidate directions: fibonacci-N"),
    objective: str = typer.Option("both", help="both (worst case, then 5th percentile) | worst | p5 | items "
                                                "(fewest structures with margin below --target) | legibility "
                                                "(complex:PATH: labels of the hydrogen-bond entries legible)"),
    weight: str = typer.Option("count", help="legibility: count (entries) | misi (each complex's entries "
                                             "weighted 1/true entries, MiSI's list score)"),
    target: float = typer.Option(0.05, help="δ (Å) of the items objective"),
    margin: str = typer.Option("exact", "--margin-kind", help="exact (no false candidate) | phantom (δ*, no phantom point)"),
    kappa_max: float = typer.Option(3.0, help="largest κ allowed for any view pair"),
    occlusion_budget: float = typer.Option(0.2, help="largest mean informative-occlusion fraction per view"),
    zone_deg: float = typer.Option(2.0, help="keep views this many degrees from every zone axis"),
    cap: float = typer.Option(0.6, help="δ* above this (Å) counts as this"),
    seed: int = typer.Option(0, help="turns the candidate spiral (0: not turned)"),
    subset: str = typer.Option("eval", help="study layout: eval | all"),
    against: str = typer.Option("render-ceiling-5", help="your current protocol (name or file): the design is "
                                                         "compared with it item by item (comparison.csv)"),
    pareto: bool = typer.Option(False, help="also design K = 2…6 and write pareto.csv/json beside "
                                            "render-ceiling-5, its off-axis variant, axes-3 and axes-6"),
    camera: str = typer.Option(None, help="orthographic (directions, the default) | perspective (one molecule: "
                                          "camera positions looking at its bounding-box centre)"),
    distance: float = typer.Option(0.0, help="perspective: camera distance from the centre, Å (0: framing rule)"),
    fov: float = typer.Option(30.0, help="perspective: field of view of the smaller image side, degrees"),
    check_delta: float = typer.Option(0.01, help="perspective: δ (Å) at which the placed cameras are measured "
                                                 "(certify's outcome: phantoms, atoms, point group, handedness)"),
) -> None:
    """Choose K view directions maximising the worst-case and 5th-percentile uniqueness margin δ*; with
    --camera perspective, place a pinhole camera along each (viewcert.design.perspective); with --objective
    legibility (INPUT complex:PATH), the views in which the hydrogen-bond entries' labels are legible
    (viewcert.design.legibility)."""
    from viewcert.api.views import design
    from viewcert.cli.options import progress

    show(design(input_spec, out, progress=progress, views=views, keep=keep, keep_protocol=keep_protocol,
                candidates=candidates, objective=objective, weight=weight, target=target, margin=margin,
                kappa_max=kappa_max, occlusion_budget=occlusion_budget, zone_deg=zone_deg, cap=cap, seed=seed,
                subset=subset, against=against, pareto=pareto, camera=camera, distance=distance, fov=fov,
                check_delta=check_delta))


def margin_cmd(
    input_spec: str = typer.Argument(..., metavar="INPUT", help="structure file, folder, study layout or builtin:NAME"),
    protocol: str = typer.Option("render-ceiling-5", help="protocol name or .toml/.json file"),
    out: Path = typer.Option(Path("out/margin"), "--out", "-o", help="output folder"),
    subset: str = typer.Option("eval", help="study layout: eval | all"),
) -> None:
    """Uniqueness margin δ* per structure (items CSV with the near-miss tuple) and its distribution plot."""
    from viewcert.api.views import margins
    from viewcert.cli.options import progress

    show(margins(input_spec, out, protocol=protocol, subset=subset, progress=progress))


def occlusion_cmd(
    input_spec: str = typer.Argument(..., metavar="INPUT", help="structure file, folder, study layout or builtin:NAME"),
    protocol: str = typer.Option("render-ceiling-5", help="protocol name or .toml/.json file"),
    subset: str = typer.Option("eval", help="study layout: eval | all"),
) -> None:
    """Per view: mean occluded / redundant / informative fractions (the study's definitions, 2×2×2 drawn)."""
    from viewcert.api.views import occlusion
    from viewcert.cli.options import progress

    show(occlusion(input_spec, protocol=protocol, subset=subset, progress=progress))


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
    from viewcert.cli.settings import rarely_changed

    app.command("design")(guarded(rarely_changed(
        design_cmd, "occlusion_budget", "zone_deg", "seed", "subset", "distance", "fov", "check_delta")))
    app.command("margin")(guarded(margin_cmd))
    app.command("occlusion")(guarded(occlusion_cmd))
    protocol_app.command("list")(guarded(protocol_list_cmd))
    protocol_app.command("show")(guarded(protocol_show_cmd))
    app.add_typer(protocol_app, name="protocol")
