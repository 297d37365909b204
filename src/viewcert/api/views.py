"""Design views before rendering anything (``viewcert design | margin | occlusion``): choose K view directions
maximising the uniqueness margin δ* (Å) and compare them with a protocol item by item, the margins of a
protocol, and the occlusion of each of its views.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from viewcert.api.arguments import OPTIONAL_CALLABLE, validated
from viewcert.api.report import Line, Report, check_out
from viewcert.errors import InputError
from viewcert.io.outputs import claimed
from viewcert.stats import empirical_percentile


@dataclass(frozen=True)
class DesignSettings:
    """What ``design`` searches: ``views`` K; views of ``keep_protocol`` to keep (comma-separated names);
    candidate directions ``fibonacci-N``; the objective (both | worst | p5 | items | legibility) and, for
    legibility, the entry weight (count | misi); ``target`` δ (Å) of the items objective; the margin kind (exact |
    phantom); the largest κ of any view pair; the largest mean informative-occlusion fraction per view; the
    distance from every zone axis (degrees); ``cap`` (Å: δ* above it counts as it); the spiral's turn seed; the
    study layout's subset; the protocol compared with (``against``); a Pareto front (K = 2…6); the camera
    (orthographic | perspective) and, for perspective, its distance (Å, 0 = framing rule), field of view
    (degrees) and the δ (Å) at which the placed cameras are measured."""

    views: int = 5
    keep: str = ""
    keep_protocol: str = "render-ceiling-5"
    candidates: str = "fibonacci-48"
    objective: str = "both"
    weight: str = "count"
    target: float = 0.05
    margin: str = "exact"
    kappa_max: float = 3.0
    occlusion_budget: float = 0.2
    zone_deg: float = 2.0
    cap: float = 0.6
    seed: int = 0
    subset: str = "eval"
    against: str = "render-ceiling-5"
    pareto: bool = False
    camera: str | None = None
    distance: float = 0.0
    fov: float = 30.0
    check_delta: float = 0.01


def cells(input_spec: str, subset: str = "eval", progress: Callable[[str], None] | None = None) -> tuple[list[Any], list[Any]]:
    """(ids, conventional standard cells) of ``input_spec``, standardised as ``certify`` does (0.01 Å, 5°); an
    item that cannot be read is skipped with a line to ``progress``."""
    from viewcert.certify import CertifyConfig  # lazy: loaded when the job runs
    from viewcert.certify.evaluate import prepare  # lazy: loaded when the job runs
    from viewcert.certify.inputs import load_input  # lazy: loaded when the job runs

    ds = load_input(input_spec, subset=subset)
    cfg = CertifyConfig()
    ids, out = [], []
    for item in ds.items:
        p = prepare(item, cfg)
        if p.cell is None:
            if progress is not None:
                progress(f"viewcert: skipped {item.id}: {p.error}")
            continue
        ids.append(item.id)
        out.append(p.cell)
    if not out:
        raise InputError("no structure could be read", source=str(input_spec))
    return ids, out


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    from viewcert.io.atomic import write_text_atomic  # lazy: loaded when the job runs
    from viewcert.io.tables import dict_csv_text  # lazy: loaded when the job runs

    write_text_atomic(path, dict_csv_text(rows))


@validated("design", inputs=("input_spec",), aliases={"margin": "margin"}, progress=OPTIONAL_CALLABLE)
def design(input_spec: str, out: str | Path = "out/design", *, force: bool = False,
           progress: Callable[[str], None] | None = None, **settings: Any) -> Report:
    """Choose K view directions maximising the worst-case and 5th-percentile margin (Å; the exactness margin
    δ_exact by default, the uniqueness margin δ* with margin phantom) over the structures of ``input_spec``
    (``settings``: ``DesignSettings`` fields) and write ``out/protocol.toml``, margins.csv (δ* and δ_exact),
    design.json, comparison.csv (both margins against your protocol; values at the cap written ``>=CAP``) and the
    plots (``delta_star.png``, ``delta_exact.png``); with camera perspective, a
    pinhole along each direction; with objective legibility (``complex:PATH``), the views in which the
    hydrogen-bond entries' labels are legible. The report's value: the design.

    Parameters
    ----------
    input_spec : str
        INPUT: the structures the views are designed for (``complex:PATH`` for the legibility objective).
    out : str or Path
        Output folder.
    force : bool
        Replace the output of another design in ``out``; without it, refused.
    progress : callable, optional
        Called with each progress line (text).
    **settings
        ``DesignSettings`` fields: views K, kept views, candidate directions, objective and weight, target δ
        (Å), margin kind, κ bound, occlusion budget, zone-axis distance (degrees), cap (Å), seed, subset, the
        protocol compared with, Pareto front, camera (orthographic or perspective: distance in Å, field of
        view in degrees).

    Returns
    -------
    Report
        The design's lines; ``value``: the design (views as world→camera rotations, margins in Å).
    """
    from viewcert.cameras.resolve import resolve  # lazy: loaded when the job runs
    from viewcert.design.designer import DesignConfig  # lazy: loaded when the job runs

    st = DesignSettings(**settings)
    base = resolve(st.against).protocol  # checked before the search (a bad name or file: an InputError at once)
    camera = st.camera or "orthographic"
    if camera not in ("orthographic", "perspective"):
        raise InputError(f"must be orthographic or perspective, got {camera!r}", field="--camera")
    m = re.fullmatch(r"fibonacci-(\d+)", st.candidates.strip())
    if m is None:
        raise InputError(f"--candidates must be fibonacci-N, got {st.candidates!r}", field="--candidates")
    kept: tuple[Any, ...] = ()
    if st.keep.strip():
        kept = resolve(st.keep_protocol).protocol.subset([k.strip() for k in st.keep.split(",") if k.strip()]).views
    if st.objective == "legibility" and (camera != "orthographic" or st.pareto):
        raise InputError("the legibility objective designs orthographic views only (no --pareto)",
                         field="--objective")
    with claimed(check_out(out), "design", identity={"input": str(input_spec), "settings": vars(st)},
                 force=force) as claim:  # before the search: a folder of another run is refused at once
        if st.objective == "legibility":
            return _legibility(input_spec, views=st.views, candidates=int(m.group(1)), kept=kept, weight=st.weight,
                               out=claim.shown)
        cfg = DesignConfig(views=st.views, candidates=int(m.group(1)), objective=st.objective,
                           kappa_max=st.kappa_max, occlusion_budget=st.occlusion_budget, zone_deg=st.zone_deg,
                           cap=st.cap, seed=st.seed, keep=kept, margin=st.margin, target=st.target)
        ids, cs = cells(input_spec, st.subset, progress)
        if camera == "perspective" and (len(cs) != 1 or cs[0].is_periodic):
            raise InputError(f"perspective positions need exactly one molecule, got {len(cs)} structures"
                             + (" (periodic)" if cs[0].is_periodic else ""), field="--camera")
        return _designed(input_spec, claim.shown, ids, cs, cfg, st, base)


#: the two margins a design reports, by their one name each (δ* is certify's, the phantom margin)
MARGIN_NAMES = {"delta_star": "δ* (uniqueness margin)", "delta_exact": "δ_exact (exactness margin)"}


def _designed(input_spec: str, out: Path, ids: Any, cs: Any, cfg: Any, st: DesignSettings, base: Any) -> Report:
    """The directions designed, written (protocol, margins, design.json, comparison, plots) and reported: both
    margins, δ* (what certify reports) and δ_exact (the default objective), each named."""
    from viewcert.cameras.protocol_files import (  # lazy: loaded when the job runs
        ProtocolSpec,
        write_protocol_file,
    )
    from viewcert.design.designer import design_views  # lazy: loaded when the job runs
    from viewcert.design.plots import margin_plot, stereographic_plot  # lazy: loaded when the job runs
    from viewcert.io.atomic import write_text_atomic  # lazy: loaded when the job runs

    camera = st.camera or "orthographic"
    d = design_views(cs, cfg)
    spec, measured = ProtocolSpec(d.protocol), None
    if camera == "perspective":
        spec, measured = _placed(d.protocol, cs[0], distance=st.distance, fov=st.fov, check_delta=st.check_delta)
    write_protocol_file(spec, out / "protocol.toml")
    both = _ceilings(input_spec, out / "protocol.toml", st.subset) if camera == "orthographic" else None
    ours = {"delta_star": d.delta_star, "delta_exact": d.delta_exact}
    _write_csv(out / "margins.csv", [{"id": i, **{k: _cell(float(v[n]), st.cap) for k, v in ours.items()}}
                                     for n, i in enumerate(ids)])
    cam = {"kind": camera, **({"fov_deg": st.fov, "distance_A": st.distance or "framing rule",
                               "positions_A": [list(p) for p in spec.positions],
                               "note": "directions chosen by the orthographic margin objective",
                               "measured": measured}
                              if camera == "perspective" else {})}
    write_text_atomic(out / "design.json",
                      json.dumps({"input": str(input_spec), **d.to_dict(), "camera": cam,
                                  **({"ceilings": both[0]} if both else {})}, indent=1) + "\n")
    theirs, compared = _compare(ids, cs, ours, d.protocol.name, base, st.cap, out)
    stereographic_plot({d.protocol.name: d.protocol, base.name: base}, cs, out / "directions.png")
    for key in ours:
        margin_plot({d.protocol.name: ours[key], base.name: theirs[key]}, out / f"{key}.png",
                    quantity=MARGIN_NAMES[key], cap=st.cap)
    objective = "delta_star" if st.margin == "phantom" else "delta_exact"
    said = [_pareto(cs, cfg, out)] if st.pareto else []
    said += [Line(f"{d.protocol.name}: views {', '.join(v.name for v in d.protocol.views)}, maximising the worst "
                  f"case and 5th percentile of {MARGIN_NAMES[objective]} over {len(cs)} structures "
                  f"({d.evaluations} view sets evaluated); wrote {out / 'protocol.toml'}")]
    said += [Line(f"    {MARGIN_NAMES[k]}{', the objective' if k == objective else ''}: worst "
                  f"{_at_cap(float(v.min()), st.cap)}, 5th percentile {_at_cap(empirical_percentile(v, 5), st.cap)}")
             for k, v in ours.items()]
    said += [Line(x, one_line=True) for x in compared]
    if both is not None:
        said += [Line(f"certified through {out / 'protocol.toml'} (viewcert certify's defaults):")]
        said += [Line("    " + x.strip(), one_line=True) for x in both[1]]
    if measured is not None:
        from viewcert.design.perspective import measure_line  # lazy: loaded when the job runs

        said.append(Line("measured on the molecule (certify): " + "; ".join(
            measure_line(measured[k]) for k in ("perspective", "orthographic"))))
    return Report(tuple(said), value=d)


def _ceilings(input_spec: str, protocol: Path, subset: str) -> tuple[dict[str, Any], list[str]]:
    """The designed views' two ceilings, as ``viewcert certify INPUT --protocol FILE`` computes them with its
    defaults: geometric (every atom) and as rendered (the atoms the images show), with the items that differ
    (``certify.ceilings``); (the comparison, its lines)."""
    from viewcert.certify import CertifyConfig  # lazy: loaded when the job runs
    from viewcert.certify.ceilings import both_ceilings, ceiling_lines  # lazy: loaded when it runs
    from viewcert.certify.run import prepared, run_with_as_rendered  # lazy: loaded when the job runs

    cfg = CertifyConfig(protocol=str(protocol), tiling=None)
    dataset = prepared(input_spec, cfg, subset=subset)
    geometric, rendered, _ = run_with_as_rendered(dataset, cfg, progress=False)
    both = both_ceilings(rendered, geometric)
    return both, ceiling_lines(both, image_size=cfg.observation.image_size)


def _at_cap(value: float, cap: float) -> str:
    """A margin in Å, saying so when it sits at the search's ``--cap`` (then it is a lower bound)."""
    return f"{value:.4f} Å" + (f" (at --cap {cap:g}: at least this)" if value >= cap - 1e-12 else "")


def _cell(value: float, cap: float) -> str:
    """A margin's CSV cell (Å): ``>=CAP`` when it sits at the search's cap (a lower bound), else its value."""
    return f">={cap:g}" if value >= cap - 1e-12 else f"{value:.9g}"


def _change(before: float, after: float, cap: float) -> str:
    """after − before (Å) as a CSV cell: bounded (``>=``/``<=``) when one side is at the cap, "" when both are."""
    low, high = before >= cap - 1e-12, after >= cap - 1e-12
    if low and high:
        return ""
    return (">=" if high else "<=" if low else "") + f"{after - before:+.9g}"


def _compare(ids: Any, cs: Any, ours: dict[str, Any], name: str, base: Any, cap: float, out: Path) -> Any:
    """The design against ``base`` item by item, both margins measured the same way: writes comparison.csv;
    ({margin: the base's values}, one line per margin)."""
    import numpy as np

    from viewcert.design.designer import both_margins  # lazy: loaded when the job runs

    star, exact = both_margins(cs, np.array([v.rotation for v in base.views]), cap)
    theirs = {"delta_star": star, "delta_exact": exact}
    rows = []
    for n, i in enumerate(ids):
        row = {"id": i}
        for k in ours:
            x, y = float(theirs[k][n]), float(ours[k][n])
            row |= {f"{k} {base.name}": _cell(x, cap), f"{k} {name}": _cell(y, cap), f"{k} change": _change(x, y, cap)}
        rows.append(row)
    _write_csv(out / "comparison.csv", rows)
    lines = []
    for k in ours:
        b, a = theirs[k], ours[k]
        at = (b >= cap - 1e-12) & (a >= cap - 1e-12)
        better, worse = (a > b + 1e-9) & ~at, (a < b - 1e-9) & ~at
        lines.append(f"against {base.name} ({len(base.views)} views), {MARGIN_NAMES[k]}: worst "
                     f"{_at_cap(float(b.min()), cap)} -> {_at_cap(float(a.min()), cap)}, 5th percentile "
                     f"{_at_cap(empirical_percentile(b, 5), cap)} -> {_at_cap(empirical_percentile(a, 5), cap)}; "
                     f"per structure {int(better.sum())} better, {int((~better & ~worse & ~at).sum())} the same, "
                     f"{int(worse.sum())} worse, {int(at.sum())} at --cap under both ({out / 'comparison.csv'})")
    return theirs, lines


def _legibility(input_spec: str, *, views: int, candidates: int, kept: Any, weight: str, out: Path) -> Report:
    """``design`` with objective legibility (viewcert.design.legibility): protocol.toml, design.json with the
    coverage and the ceilings certified from the written file."""
    from viewcert.cameras.protocol_files import write_protocol_file  # lazy: loaded when the job runs
    from viewcert.design import legibility as lg  # lazy: loaded when the job runs
    from viewcert.io.atomic import write_text_atomic  # lazy: loaded when the job runs

    cfg = lg.LegibilityConfig(views=views, candidates=candidates, weight=weight, keep=tuple(kept))
    truths = lg.complex_truths(input_spec)
    d = lg.design_legibility(truths, cfg)
    path = write_protocol_file(d.spec(), out / "protocol.toml")
    certified = lg.certified_ceilings(truths, path, cfg)
    write_text_atomic(out / "design.json", json.dumps({"input": str(input_spec), **d.to_dict(),
                                                       "certified_from_file": certified}, indent=1) + "\n")
    c = d.checked
    rendered = [r["rendered"]["ceiling"] for r in certified.values() if r["rendered"]["ceiling"] is not None]
    mean = f"{sum(rendered) / len(rendered):.4f}" if rendered else "none (no bond)"
    return Report((Line(
        f"{d.protocol.name}: {c['entries_complete']}/{c['entries']} hydrogen-bond entries with every label legible, "
        f"{c['needed_covered']}/{c['needed_labels']} needed labels, over {len(truths)} complex(es); as-rendered "
        f"pocket-ligand ceiling {mean} (mean, from the file); wrote {out / 'protocol.toml'}"),), value=d)


def _placed(protocol: Any, cell: Any, *, distance: float, fov: float, check_delta: float) -> Any:
    """(perspective spec, measured) of designed directions placed around one molecule: the search's objective
    is orthographic, so say what the placed pinholes achieve, beside the same directions as orthographic
    views, through certify's own pipeline."""
    from viewcert.cameras.protocol_files import ProtocolSpec  # lazy: loaded when the job runs
    from viewcert.design.perspective import measure, perspective_spec  # lazy: loaded when the job runs

    spec = perspective_spec(protocol, cell, distance=distance or None, fov_deg=fov)
    return spec, {"perspective": measure(spec, cell, delta=check_delta),
                  "orthographic": measure(ProtocolSpec(protocol), cell, delta=check_delta)}


def _pareto(cs: Any, cfg: Any, out: Path) -> Line:
    from dataclasses import replace

    from viewcert.cameras.protocols import get_protocol  # lazy: loaded when the job runs
    from viewcert.design.designer import design_views  # lazy: loaded when the job runs
    from viewcert.design.pareto import BASELINES, flat_row, protocol_row  # lazy: loaded when the job runs
    from viewcert.io.atomic import write_text_atomic  # lazy: loaded when the job runs

    protos = [design_views(cs, replace(cfg, views=k), name=f"designed-{k}").protocol
              for k in range(max(2, len(cfg.keep)), 7)]
    protos += [get_protocol(n) for n in BASELINES]
    rows = [protocol_row(cs, p, cap=cfg.cap) for p in protos]
    _write_csv(out / "pareto.csv", [flat_row(r) for r in rows])
    write_text_atomic(out / "pareto.json", json.dumps({"config": cfg.to_dict(), "rows": rows, "protocols": {
        p.name: p.to_dict() for p in protos}}, indent=1) + "\n")
    return Line(f"wrote {out / 'pareto.csv'} ({len(rows)} protocols)")


@validated("margin", inputs=("input_spec",), progress=OPTIONAL_CALLABLE)
def margins(input_spec: str, out: str | Path = "out/margin", *, protocol: str = "render-ceiling-5",
            subset: str = "eval", force: bool = False, progress: Callable[[str], None] | None = None) -> Report:
    """Uniqueness margin δ* (Å) per structure under ``protocol`` (``out/margins.csv`` with the near-miss tuple)
    and its distribution plot. The report's value: the rows written.

    Parameters
    ----------
    input_spec : str
        INPUT: the structures measured.
    out : str or Path
        Output folder (``margins.csv`` and the plot).
    protocol : str
        A protocol name or file: the views measured.
    subset : str
        The study layout's subset (``eval`` or ``all``).
    force : bool
        Replace the output of another margin run in ``out``; without it, refused.
    progress : callable, optional
        Called with each progress line (text).

    Returns
    -------
    Report
        The margins' summary lines; ``value``: the rows written (δ* in Å per structure).
    """
    import numpy as np

    from viewcert.cameras.resolve import resolve  # lazy: loaded when the job runs

    p = resolve(protocol).protocol
    rots = np.array([v.rotation for v in p.views])
    with claimed(check_out(out), "margin", identity={"input": str(input_spec), "protocol": protocol,
                                                      "subset": subset}, force=force) as claim:
        return _margins(input_spec, claim.shown, p, rots, subset, progress)


def _margins(input_spec: str, out: Path, p: Any, rots: Any, subset: str, progress: Any) -> Report:
    """``margins`` into the claimed folder ``out``."""
    import numpy as np

    from viewcert.design.plots import delta_star_plot  # lazy: loaded when the job runs
    from viewcert.oracle.margin import uniqueness_margin  # lazy: loaded when the job runs

    ids, cs = cells(input_spec, subset, progress)
    rows = []
    for i, s in zip(ids, cs, strict=True):
        m = uniqueness_margin(s, rots)
        rows.append({"id": i, "delta_star": f"{m.delta_star:.9g}", "bound": m.bound,
                     "delta_exact": f"{m.delta_exact:.9g}", "d_min": f"{m.d_min:.9g}",
                     "near_miss": "" if m.near_miss is None else " ".join(map(str, m.near_miss)),
                     "near_miss_label": "" if m.label is None else m.label})
    _write_csv(out / "margins.csv", rows)
    v = np.array([float(r["delta_star"]) for r in rows])
    delta_star_plot({p.name: v}, out / "delta_star.png")
    return Report((Line(f"{p.name}: δ* min {v.min():.4f} Å, median {np.median(v):.4f} Å over {len(v)} structures; "
                        f"wrote {out / 'margins.csv'}"),), value=rows)


@validated("occlusion", inputs=("input_spec",), progress=OPTIONAL_CALLABLE)
def occlusion(input_spec: str, *, protocol: str = "render-ceiling-5", subset: str = "eval",
              progress: Callable[[str], None] | None = None) -> Report:
    """Per view of ``protocol``: the mean occluded / redundant / informative fractions (the study's definitions,
    2×2×2 drawn). The report's value: ``{view: {fraction: value}}``.

    Parameters
    ----------
    input_spec : str
        INPUT: the structures measured.
    protocol : str
        A protocol name or file: the views measured.
    subset : str
        The study layout's subset (``eval`` or ``all``).
    progress : callable, optional
        Called with each progress line (text).

    Returns
    -------
    Report
        One line per view; ``value``: ``{view: {fraction: value}}`` (fractions of the drawn atoms, 0–1).
    """
    from viewcert.cameras.resolve import resolve  # lazy: loaded when the job runs
    from viewcert.design.occlusion import protocol_occlusion  # lazy: loaded when the job runs

    p = resolve(protocol).protocol
    _, cs = cells(input_spec, subset, progress)
    table = protocol_occlusion(cs, p)
    return Report((Line(f"{'view':<16} occluded  redundant  informative   ({len(cs)} structures, {p.name})"),) + tuple(
        Line(f"{name:<16} {r['occluded']:.4f}    {r['redundant']:.4f}     {r['informative']:.4f}")
        for name, r in table.items()), value=table)
