"""The main job behind ``make run``: observe the built-in sample through ``render-ceiling-5`` and write the
observations (JSON, one file per structure, written atomically) plus a summary table."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from viewcert.cameras.conditioning import protocol_kappa, zone_axis_warnings
from viewcert.cameras.policy import FramingPolicy, frame
from viewcert.cameras.resolve import resolve
from viewcert.limits import DEFAULT_LIMITS, Limits
from viewcert.observe.project import ObservationModel, observe
from viewcert.structures import Structure
from viewcert.symmetry.standardize import conventional_standard_cell


@dataclass(frozen=True)
class ObservedItem:
    identifier: str
    formula: str
    periodic: bool
    n_atoms: int
    points_per_view: tuple[int, ...]
    zone_axis_views: tuple[str, ...]
    path: Path


def prepare(structure: Structure) -> Structure:
    """Crystals go to the conventional standard cell in pymatgen's orientation (the study's frame)."""
    return conventional_standard_cell(structure) if structure.is_periodic else structure


def observe_sample(
    structures: list[Structure],
    out_dir: Path,
    *,
    protocol_name: str = "render-ceiling-5",
    tiling: tuple[int, int, int] = (1, 1, 1),
    limits: Limits = DEFAULT_LIMITS,
) -> list[ObservedItem]:
    """Write ``out_dir/observations/<n>.json`` for each structure; return one summary row per structure."""
    from viewcert.io.atomic import write_json_atomic

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
        write_json_atomic(
            path,
            {
                "structure": s.to_dict(),
                "protocol": spec.to_dict() if spec.kind == "perspective" else protocol.to_dict(),
                "kappa": protocol_kappa(protocol),
                "observations": obs.to_dict(),
            },
        )
        rows.append(
            ObservedItem(
                identifier=s.identifier,
                formula=s.formula,
                periodic=s.is_periodic,
                n_atoms=s.n_atoms,
                points_per_view=tuple(len(v) for v in obs.views),
                zone_axis_views=tuple(sorted({w.view for w in zone_axis_warnings(s, protocol)})),
                path=path,
            )
        )
    return rows
