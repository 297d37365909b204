"""Perspective camera positions for a designed molecule protocol (issue 14, item 4: "camera positions for
perspective molecules").

Rule: the designer (``design.designer.design_views``) chooses the view directions d_k = −R_k[2] with its
orthographic objective (margins of projections along d_k; perspective parallax is not modelled in the
search). Each camera is then a pinhole that looks along d_k at the molecule's bounding-box centre c from
``distance`` Å: position_k = c + distance·R_k[2] (world Å), so c projects to the image centre
(``viewcert.cameras.policy.pinhole_positions``). Without ``distance``, the framing rule of
``cameras.framing.fit_perspective``: the bounding sphere (centre c, radius
= farthest atom + ``pad``) fits the smaller image side minus ``margin_px`` at ``fov_deg`` — the same
distance for every view, since the sphere does not depend on the direction. A given distance must put every
camera outside that sphere. Positions are in the frame of the structure as read; the protocol file records
them (``position`` per view), with kind ``perspective``, ``fov_deg`` and the image size. ``focal_px`` and
``placed_cameras`` live in ``viewcert.cameras.placement`` (re-exported here), where certify uses them too.

``measure(spec, structure, delta=...)``: what the cameras actually achieve, since the search's objective is
orthographic — certify's own outcome (``viewcert.certify.evaluate.certify_item``) for the molecule through
the placed pinholes (real perspective projections, the all-pairs oracle at δ): phantom count, atoms
recovered, uniqueness, point group and handedness; the same for orthographic views of the same directions.
"""

from __future__ import annotations

import dataclasses

from viewcert.cameras.framing import DEFAULT_MARGIN_PX
from viewcert.cameras.placement import focal_px, placed_cameras
from viewcert.cameras.policy import pinhole_positions
from viewcert.cameras.protocol_files import ProtocolSpec
from viewcert.cameras.protocols import Protocol
from viewcert.certify.config import DEFAULT_DELTA, CertifyConfig
from viewcert.certify.digests import cell_digest
from viewcert.certify.evaluate import certify_item
from viewcert.certify.inputs import Item
from viewcert.errors import InputError
from viewcert.formats.item_sections import OracleReport
from viewcert.structures import Structure


def perspective_spec(protocol: Protocol, structure: Structure, *, distance: float | None = None,
                     fov_deg: float = 30.0, width: int = 768, height: int = 768,
                     margin_px: float = DEFAULT_MARGIN_PX, pad: float = 0.0) -> ProtocolSpec:
    """A perspective ProtocolSpec of ``protocol``'s views placed around ``structure`` (module docstring).

    Parameters
    ----------
    protocol : Protocol
        The views (their world→camera rotations give the viewing directions).
    structure : Structure
        The molecule the cameras look at (Cartesian Å, the frame as read).
    distance : float, optional
        Camera distance from the bounding-box centre (Å); None: the framing rule's distance.
    fov_deg : float
        Field of view of the smaller image side (degrees).
    width : int
        Image width (px).
    height : int
        Image height (px).
    margin_px : float
        Margin left around the bounding sphere (px).
    pad : float
        Added to the bounding sphere's radius (Å).

    Returns
    -------
    ProtocolSpec
        A perspective spec with one camera position per view (world Å).
    """
    if structure.is_periodic:
        raise InputError("perspective camera positions are designed for a molecule, not a periodic structure",
                         field="camera")
    free = ProtocolSpec(protocol, kind="perspective", fov_deg=fov_deg, width=width, height=height)
    positions = pinhole_positions(protocol, structure.positions, distance=distance, fov_deg=fov_deg, width=width,
                                  height=height, margin_px=margin_px, pad=pad)
    return dataclasses.replace(free, positions=tuple(tuple(float(x) for x in p) for p in positions))


def measure(spec: ProtocolSpec, structure: Structure, *, delta: float = DEFAULT_DELTA) -> dict:
    """certify's outcome for ``structure`` through ``spec``'s cameras at δ (Å): a perspective spec through
    its placed (or framed) pinholes, an orthographic one through its views framed as certify frames them.
    Keys: camera, delta, outcome, n_atoms, n_recovered, n_phantoms, unique, correct_by_level, reasons,
    error (None unless certify could not run).

    Parameters
    ----------
    spec : ProtocolSpec
        The cameras: perspective (placed or framed pinholes) or orthographic views.
    structure : Structure
        The structure observed (Cartesian Å).
    delta : float
        Oracle tolerance δ (Å).

    Returns
    -------
    dict
        camera, delta, outcome, n_atoms, n_recovered, n_phantoms, unique, correct_by_level, reasons and error
        (None unless certify could not run).
    """
    cfg = CertifyConfig(protocol=spec if spec.kind == "perspective" else spec.protocol, delta=delta)
    out = certify_item(Item(structure.identifier or "design", "structure", structure, cell_digest(structure)), cfg)
    orc = out.oracle or OracleReport()  # a field the record does not have reads as None (or_none)
    return {"camera": spec.kind, "delta": cfg.oracle.delta, "outcome": out.outcome,
            "n_atoms": out.n_atoms, "n_recovered": orc.n_recovered,
            "n_phantoms": orc.n_phantoms, "unique": out.unique,
            "correct_by_level": out.correct_by_level, "reasons": out.reasons or [],
            "error": out.error}


def measure_line(m: dict) -> str:
    """One line of ``measure``'s result: phantoms, atoms recovered and the levels that hold."""
    if m["error"]:
        return f"{m['camera']}: not measured ({m['error']})"
    held = ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in (m["correct_by_level"] or {}).items())
    return (f"{m['camera']}: {m['n_phantoms']} phantoms, {m['n_recovered']}/{m['n_atoms']} atoms recovered at "
            f"δ = {m['delta']:g} Å ({held})")


__all__ = ["focal_px", "measure", "measure_line", "perspective_spec", "placed_cameras"]
