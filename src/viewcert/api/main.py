"""The main job behind ``make run`` (``viewcert run``) and ``viewcert observe``: observe structures through a
protocol and write the observations (JSON, one file per structure, written atomically) with a summary table;
the main job adds the certified render ceiling of the built-in prototypes, a gallery and the explorer.

Imports of the numerical layers sit inside the functions: the main job compiles a cold numba cache side by
side first (``api.prestage.prestage``), before any module that compiles kernels at import is loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from viewcert.api.arguments import LIMITS, OPTIONAL_CALLABLE, TILING, validated
from viewcert.api.report import Line, Report, Table, one_line, parse_tiling
from viewcert.errors import ViewcertError
from viewcert.io.outputs import claimed
from viewcert.limits import Limits, active_limits, using_limits


@dataclass(frozen=True)
class ObservedItem:
    """One structure observed: its id, formula, kind, atoms, points per view and the views near a zone axis."""

    identifier: str
    formula: str
    periodic: bool
    n_atoms: int
    points_per_view: tuple[int, ...]
    zone_axis_views: tuple[str, ...]
    path: Path


def prepare(structure: Any) -> Any:
    """Crystals go to the conventional standard cell in pymatgen's orientation (the study's frame)."""
    from viewcert.symmetry.standardize import conventional_standard_cell  # lazy: see the module docstring

    return conventional_standard_cell(structure) if structure.is_periodic else structure


def observe_sample(structures: list[Any], out_dir: Path, *, protocol_name: str = "render-ceiling-5",
                   tiling: tuple[int, int, int] = (1, 1, 1)) -> list[ObservedItem]:
    """Write ``out_dir/observations/<n>.json`` for each structure; return one summary row per structure."""
    from viewcert.cameras.conditioning import protocol_kappa, zone_axis_warnings  # lazy: see the docstring
    from viewcert.cameras.policy import FramingPolicy, frame  # lazy: see the docstring
    from viewcert.cameras.resolve import resolve  # lazy: see the docstring
    from viewcert.io.atomic import write_json_atomic  # lazy: see the docstring
    from viewcert.observe.project import ObservationModel, observe  # lazy: see the docstring

    limits = active_limits()
    limits.check_protocol_name(protocol_name)
    rp = resolve(protocol_name)  # a name or a .toml/.json protocol file (perspective: its pinholes), once
    spec = rp.spec
    protocol = spec.protocol
    limits.check_views(len(protocol.views))
    folder = Path(out_dir) / "observations"
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for k, raw in enumerate(structures):
        s = prepare(raw)
        t = tiling if s.is_periodic else (1, 1, 1)  # molecules are never tiled
        limits.check_observations(s.n_atoms * t[0] * t[1] * t[2] * len(protocol.views), source=s.identifier)
        cams = frame(rp, s, FramingPolicy(tiling=t, molecule_scale="per-view"))  # atom centres, every view fitted
        obs = observe(s, cams, ObservationModel(tiling=t))
        path = folder / f"{k:03d}.json"
        write_json_atomic(path, {
            "structure": s.to_dict(),
            "protocol": spec.to_dict() if spec.kind == "perspective" else protocol.to_dict(),
            "kappa": protocol_kappa(protocol),
            "observations": obs.to_dict(),
        })
        rows.append(ObservedItem(
            identifier=s.identifier, formula=s.formula, periodic=s.is_periodic, n_atoms=s.n_atoms,
            points_per_view=tuple(len(v) for v in obs.views),
            zone_axis_views=tuple(sorted({w.view for w in zone_axis_warnings(s, protocol)})), path=path))
    return rows


def read_structures(source: str) -> tuple[list[Any], list[str]]:
    """(structures of ``source`` that could be read, one line per item that could not)."""
    from viewcert.certify.inputs import load_input  # lazy: see the module docstring

    good, failed = [], []
    for it in load_input(source, subset="all" if not source.startswith("builtin:") else "eval").items:
        try:
            good.append(it.read())
        except (ViewcertError, ValueError, OSError) as exc:
            failed.append(f"item {it.id}: {one_line(exc)}")
    return good, failed


@validated("observe", inputs=("source",), tiling=TILING, limits=LIMITS)
def observe(source: str = "builtin:sample", out: str | Path = "out/observe", *, protocol: str = "render-ceiling-5",
            tiling: str | tuple[int, int, int] = (1, 1, 1), force: bool = False,
            limits: Limits | None = None) -> Report:
    """Project the structures of ``source`` through ``protocol`` (cell repetitions ``tiling``, e.g. (2, 2, 2) or
    "2x2x2"; a molecule is never tiled) and write per-view observations (points in px, depths in Å) under
    ``out/observations``. The report's value: one ``ObservedItem`` per structure.

    Parameters
    ----------
    source : str
        INPUT (default ``builtin:sample``).
    out : str or Path
        Output folder (default ``out/observe``); observations go to ``out/observations``.
    protocol : str
        A protocol name or file: the cameras.
    tiling : str or tuple of int
        Cell repetitions along a, b, c (``(2, 2, 2)`` or ``"2x2x2"``); molecules are never tiled.
    force : bool
        Replace the output of another observe run in ``out``; without it, refused.
    limits : Limits, optional
        Resource limits in force for the call, checked before any work (default: those in force).

    Returns
    -------
    Report
        One line per structure; ``value``: one ``ObservedItem`` per structure.
    """
    with using_limits(limits) as limits:  # in force for the call and below
        shown = tiling if isinstance(tiling, str) else ",".join(map(str, tiling))
        reps = parse_tiling(tiling) if isinstance(tiling, str) else cast("tuple[int, int, int]", tuple(tiling))
        limits.check_tiling(reps)
        limits.check_protocol_name(protocol)
        identity = {"source": str(source), "protocol": protocol, "tiling": list(reps)}
        with claimed(out, "observe", identity=identity, force=force) as claim:
            return _observed(source, claim.shown, protocol, reps, shown)


def _observed(source: str, out: Path, protocol: str, tiling: tuple[int, int, int], shown: str) -> Report:
    """``observe`` into the folder ``out`` (claimed by the caller)."""
    structures, failed = read_structures(source)
    rows = observe_sample(structures, out, protocol_name=protocol, tiling=tiling)
    table = Table(f"observations: {source} through {protocol} (tiling {shown})",
                  ("id", "formula", "kind", "atoms", "points per view", "zone-axis views"),
                  tuple((r.identifier, r.formula, "crystal" if r.periodic else "molecule", str(r.n_atoms),
                         " ".join(map(str, r.points_per_view)), ",".join(r.zone_axis_views) or "-") for r in rows))
    return Report((table, Line(f"wrote {len(rows)} observation files to {Path(out) / 'observations'}")),
                  failures=tuple(failed), value=rows)


@validated("run", progress=OPTIONAL_CALLABLE)
def main_job(out: str | Path = "out/run", *, workers: int = 1, force: bool = False,
             progress: Callable[[str], None] | None = None) -> Report:
    """The main job on built-in data (``make run``): observations of the built-in sample, the certified render
    ceiling of the built-in prototypes under render-ceiling-5 (δ = τ = 0.01 Å), a gallery contact sheet and the
    certificate's explorer (``out/explore/index.html``). The report's value: the certificate (a dict).

    Parameters
    ----------
    out : str or Path
        Output folder (default ``out/run``; ``make run``: ``out``).
    workers : int
        Worker processes of the certification.
    force : bool
        Replace the output of another main job in ``out``; without it, refused.
    progress : callable, optional
        Called with each progress line (text).

    Returns
    -------
    Report
        The job's lines; ``value``: the certificate (a dict).
    """
    from viewcert.api.prestage import prestage  # lazy: loaded when the job runs

    say = progress or (lambda line: None)
    # a cold numba cache (a fresh install): the oracle's and the renderer's kernels compile side by side first,
    # before the imports below (some of their modules compile kernels with explicit signatures at import)
    if prestage("main-job", say):
        say("viewcert: first run — compiled the oracle's and the renderer's kernels side by side (cached)")
    from viewcert.benchmark.gallery import write_gallery  # lazy: after the side-by-side compilation
    from viewcert.certify import CertifyConfig  # lazy: after the side-by-side compilation
    from viewcert.certify.run import certify, summary_text  # lazy: after the side-by-side compilation
    from viewcert.explore import write_site  # lazy: after the side-by-side compilation

    with claimed(out, "run", identity={"workers": None}, force=force) as claim:  # one run: any workers
        out = claim.shown
        observed = _observed("builtin:sample", out, "render-ceiling-5", (1, 1, 1), "1,1,1")
        cert = certify("builtin:prototypes", CertifyConfig(protocol="render-ceiling-5"), out=out, n_workers=workers)
        gallery = write_gallery(out / "gallery.png")
        site = write_site(out, out / "explore")  # the certificate's explorer (viewcert explore OUT)
    return Report(observed.blocks + (Line(summary_text(cert), nl=False), Line(
        f"wrote {out / 'certificate.json'}, {out / 'items.csv'}, plots, {gallery} and the explorer {site}")),
        failures=observed.failures, value=cert)
