"""Design commands for the ``viewcert`` CLI: ``design``, ``margin``, ``occlusion`` and ``protocol show``.

Mounted by ``viewcert.cli`` through ``register(app)``; thin wrappers, the work is in ``viewcert.design`` and
``viewcert.cameras.protocol_files``. ``--protocol`` takes a built-in name or a ``.toml``/``.json`` file.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from viewcert.cli.options import check_out, echo, guarded
from viewcert.errors import InputError


def _cells(input_spec: str, subset: str = "eval") -> tuple[list[str], list]:
    """(ids, conventional standard cells) of INPUT, standardised as ``certify`` does (0.01 Å, 5°)."""
    from viewcert.certify import CertifyConfig
    from viewcert.certify.evaluate import prepare
    from viewcert.certify.inputs import load_input

    ds = load_input(input_spec, subset=subset)
    cfg = CertifyConfig()
    ids, cells = [], []
    for item in ds.items:
        p = prepare(item, cfg)
        if p.cell is None:
            echo(f"viewcert: skipped {item.id}: {p.error}", err=True)
            continue
        ids.append(item.id)
        cells.append(p.cell)
    if not cells:
        raise InputError("no structure could be read", source=str(input_spec))
    return ids, cells


def _write_csv(path: Path, rows: list[dict]) -> None:
    from viewcert.io.atomic import write_text_atomic
    from viewcert.io.tables import dict_csv_text

    write_text_atomic(path, dict_csv_text(rows))


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
    import re

    from viewcert.cameras.protocol_files import ProtocolSpec, write_protocol_file
    from viewcert.cameras.resolve import resolve
    from viewcert.design.designer import DesignConfig, design_views
    from viewcert.design.plots import delta_star_plot, stereographic_plot
    from viewcert.io.atomic import write_text_atomic

    camera = camera or "orthographic"
    if camera not in ("orthographic", "perspective"):
        raise InputError(f"must be orthographic or perspective, got {camera!r}", field="--camera")
    m = re.fullmatch(r"fibonacci-(\d+)", candidates.strip())
    if m is None:
        raise InputError(f"--candidates must be fibonacci-N, got {candidates!r}", field="--candidates")
    kept = ()
    if keep.strip():
        base = resolve(keep_protocol).protocol
        kept = base.subset([k.strip() for k in keep.split(",") if k.strip()]).views
    if objective == "legibility":
        if camera != "orthographic" or pareto:
            raise InputError("the legibility objective designs orthographic views only (no --pareto)",
                             field="--objective")
        _legibility(input_spec, views=views, candidates=int(m.group(1)), kept=kept, weight=weight, out=out)
        return
    cfg = DesignConfig(views=views, candidates=int(m.group(1)), objective=objective, kappa_max=kappa_max,
                       occlusion_budget=occlusion_budget, zone_deg=zone_deg, cap=cap, seed=seed, keep=kept,
                       margin=margin, target=target)
    ids, cells = _cells(input_spec, subset)
    if camera == "perspective" and (len(cells) != 1 or cells[0].is_periodic):
        raise InputError(f"perspective positions need exactly one molecule, got {len(cells)} structures"
                         + (" (periodic)" if cells[0].is_periodic else ""), field="--camera")
    d = design_views(cells, cfg)
    spec, measured = ProtocolSpec(d.protocol), None
    if camera == "perspective":
        spec, measured = _placed(d.protocol, cells[0], distance=distance, fov=fov, check_delta=check_delta)
    out = check_out(out)
    out.mkdir(parents=True, exist_ok=True)
    write_protocol_file(spec, out / "protocol.toml")
    _write_csv(out / "margins.csv", [{"id": i, f"margin_{margin}": f"{v:.9g}"} for i, v in zip(ids, d.delta_star,
                                                                                              strict=True)])
    cam = {"kind": camera, **({"fov_deg": fov, "distance_A": distance or "framing rule",
                               "positions_A": [list(p) for p in spec.positions],
                               "note": "directions chosen by the orthographic margin objective",
                               "measured": measured}
                              if camera == "perspective" else {})}
    write_text_atomic(out / "design.json",
                      json.dumps({"input": str(input_spec), **d.to_dict(), "camera": cam}, indent=1) + "\n")
    base = resolve(against).protocol
    base_values, compared = _compare(ids, cells, d, base, cfg, out)
    stereographic_plot({d.protocol.name: d.protocol, base.name: base}, cells, out / "directions.png")
    delta_star_plot({d.protocol.name: d.delta_star, base.name: base_values}, out / "delta_star.png", cap=cap)
    if pareto:
        _pareto(cells, cfg, out)
    echo(f"{d.protocol.name}: worst {margin} margin {_at_cap(d.worst, cap)}, 5th percentile {_at_cap(d.p5, cap)} "
         f"over {len(cells)} structures ({d.evaluations} view sets evaluated); views "
         f"{', '.join(v.name for v in d.protocol.views)}; wrote {out / 'protocol.toml'}")
    echo(compared, one_line=True)
    if measured is not None:
        from viewcert.design.perspective import measure_line

        echo("measured on the molecule (certify): " + "; ".join(measure_line(measured[k])
                                                                    for k in ("perspective", "orthographic")))


def _at_cap(value: float, cap: float) -> str:
    """A margin in Å, saying so when it sits at the search's ``--cap`` (then it is a lower bound)."""
    return f"{value:.4f} Å" + (f" (at --cap {cap:g}: at least this)" if value >= cap - 1e-12 else "")


def _compare(ids, cells, d, base, cfg, out: Path):
    """The design against ``base`` item by item: writes comparison.csv; (the base's margins, one line)."""
    import numpy as np

    from viewcert.design.designer import protocol_margins

    b = protocol_margins(cells, base, cfg)
    diff = d.delta_star - b
    _write_csv(out / "comparison.csv", [
        {"id": i, f"{base.name}": f"{x:.9g}", f"{d.protocol.name}": f"{y:.9g}", "change": f"{y - x:+.9g}"}
        for i, x, y in zip(ids, b, d.delta_star, strict=True)])
    k = max(1, int(np.ceil(0.05 * len(b))))
    return b, (f"against {base.name} ({len(base.views)} views): worst {_at_cap(float(b.min()), cfg.cap)} -> "
         f"{_at_cap(d.worst, cfg.cap)}, 5th percentile {_at_cap(float(np.sort(b)[k - 1]), cfg.cap)} -> "
         f"{_at_cap(d.p5, cfg.cap)}; per structure {int(np.sum(diff > 1e-9))} better, "
         f"{int(np.sum(np.abs(diff) <= 1e-9))} the same, {int(np.sum(diff < -1e-9))} worse ({out / 'comparison.csv'})")


def _legibility(input_spec: str, *, views: int, candidates: int, kept, weight: str, out: Path) -> None:
    """``design --objective legibility`` (viewcert.design.legibility): protocol.toml, design.json with the
    coverage and the ceilings certified from the written file."""
    from viewcert.cameras.protocol_files import write_protocol_file
    from viewcert.design import legibility as lg
    from viewcert.io.atomic import write_text_atomic

    cfg = lg.LegibilityConfig(views=views, candidates=candidates, weight=weight, keep=tuple(kept))
    truths = lg.complex_truths(input_spec)
    d = lg.design_legibility(truths, cfg)
    out = check_out(out)
    out.mkdir(parents=True, exist_ok=True)
    path = write_protocol_file(d.spec(), out / "protocol.toml")
    certified = lg.certified_ceilings(truths, path, cfg)
    write_text_atomic(out / "design.json", json.dumps({"input": str(input_spec), **d.to_dict(),
                                                       "certified_from_file": certified}, indent=1) + "\n")
    c = d.checked
    rendered = [r["rendered"]["ceiling"] for r in certified.values() if r["rendered"]["ceiling"] is not None]
    mean = f"{sum(rendered) / len(rendered):.4f}" if rendered else "none (no bond)"
    echo(f"{d.protocol.name}: {c['entries_complete']}/{c['entries']} hydrogen-bond entries with every label legible, "
         f"{c['needed_covered']}/{c['needed_labels']} needed labels, over {len(truths)} complex(es); as-rendered "
         f"pocket-ligand ceiling {mean} (mean, from the file); wrote {out / 'protocol.toml'}")


def _placed(protocol, cell, *, distance: float, fov: float, check_delta: float):
    """(perspective spec, measured) of designed directions placed around one molecule: the search's objective
    is orthographic, so say what the placed pinholes achieve, beside the same directions as orthographic
    views, through certify's own pipeline."""
    from viewcert.cameras.protocol_files import ProtocolSpec
    from viewcert.design.perspective import measure, perspective_spec

    spec = perspective_spec(protocol, cell, distance=distance or None, fov_deg=fov)
    return spec, {"perspective": measure(spec, cell, delta=check_delta),
                  "orthographic": measure(ProtocolSpec(protocol), cell, delta=check_delta)}


def _pareto(cells, cfg, out: Path) -> None:
    from dataclasses import replace

    from viewcert.cameras.protocols import get_protocol
    from viewcert.design.designer import design_views
    from viewcert.design.pareto import BASELINES, flat_row, protocol_row
    from viewcert.io.atomic import write_text_atomic

    protos = [design_views(cells, replace(cfg, views=k), name=f"designed-{k}").protocol
              for k in range(max(2, len(cfg.keep)), 7)]
    protos += [get_protocol(n) for n in BASELINES]
    rows = [protocol_row(cells, p, cap=cfg.cap) for p in protos]
    _write_csv(out / "pareto.csv", [flat_row(r) for r in rows])
    write_text_atomic(out / "pareto.json", json.dumps({"config": cfg.to_dict(), "rows": rows, "protocols": {
        p.name: p.to_dict() for p in protos}}, indent=1) + "\n")
    echo(f"wrote {out / 'pareto.csv'} ({len(rows)} protocols)")


def margin_cmd(
    input_spec: str = typer.Argument(..., metavar="INPUT", help="structure file, folder, study layout or builtin:NAME"),
    protocol: str = typer.Option("render-ceiling-5", help="protocol name or .toml/.json file"),
    out: Path = typer.Option(Path("out/margin"), "--out", "-o", help="output folder"),
    subset: str = typer.Option("eval", help="study layout: eval | all"),
) -> None:
    """Uniqueness margin δ* per structure (items CSV with the near-miss tuple) and its distribution plot."""
    import numpy as np

    from viewcert.cameras.resolve import resolve
    from viewcert.design.plots import delta_star_plot
    from viewcert.oracle.margin import uniqueness_margin

    p = resolve(protocol).protocol
    rots = np.array([v.rotation for v in p.views])
    ids, cells = _cells(input_spec, subset)
    rows = []
    for i, s in zip(ids, cells, strict=True):
        m = uniqueness_margin(s, rots)
        rows.append({"id": i, "delta_star": f"{m.delta_star:.9g}", "bound": m.bound,
                     "delta_exact": f"{m.delta_exact:.9g}", "d_min": f"{m.d_min:.9g}",
                     "near_miss": "" if m.near_miss is None else " ".join(map(str, m.near_miss)),
                     "near_miss_label": "" if m.label is None else m.label})
    out = check_out(out)
    out.mkdir(parents=True, exist_ok=True)
    _write_csv(out / "margins.csv", rows)
    v = np.array([float(r["delta_star"]) for r in rows])
    delta_star_plot({p.name: v}, out / "delta_star.png")
    echo(f"{p.name}: δ* min {v.min():.4f} Å, median {np.median(v):.4f} Å over {len(v)} structures; "
         f"wrote {out / 'margins.csv'}")


def occlusion_cmd(
    input_spec: str = typer.Argument(..., metavar="INPUT", help="structure file, folder, study layout or builtin:NAME"),
    protocol: str = typer.Option("render-ceiling-5", help="protocol name or .toml/.json file"),
    subset: str = typer.Option("eval", help="study layout: eval | all"),
) -> None:
    """Per view: mean occluded / redundant / informative fractions (the study's definitions, 2×2×2 drawn)."""
    from viewcert.cameras.resolve import resolve
    from viewcert.design.occlusion import protocol_occlusion

    p = resolve(protocol).protocol
    _, cells = _cells(input_spec, subset)
    table = protocol_occlusion(cells, p)
    echo(f"{'view':<16} occluded  redundant  informative   ({len(cells)} structures, {p.name})")
    for name, r in table.items():
        echo(f"{name:<16} {r['occluded']:.4f}    {r['redundant']:.4f}     {r['informative']:.4f}")


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
