"""The two ceilings of the same views, side by side: the geometric one (observations ``ideal``: every atom by exact
projection, what ``viewcert certify`` reports) and the as-rendered one (``visible``: the atoms the rendered images of
those views show, through their atom-ID buffer), with every item one counts right and the other does not and the
reasons it lost. ``certify`` states both in its summary, ``design`` for its designed views, and an export (whose
certificate is the as-rendered one) both in its report and manifest (``benchmark.export.ceilings``).
"""

from __future__ import annotations

from dataclasses import replace

from viewcert.certify.config import AS_RENDERED, GEOMETRIC, CertifyConfig
from viewcert.certify.inputs import Dataset
from viewcert.certify.run import run_certification
from viewcert.formats.records import CeilingCertificate

__all__ = ["as_rendered_of", "both_ceilings", "ceiling_lines", "renders"]


def renders(cfg: CertifyConfig) -> bool:
    """Whether ``cfg``'s views have an as-rendered ceiling beside the geometric one: geometric, noise-free
    observations through orthographic views (the rendered ID buffer of perspective views is not compared here)."""
    obs = cfg.observation
    return obs.observe == GEOMETRIC and obs.sigma == 0 and cfg.protocol.kind == "orthographic"


def as_rendered_of(dataset: Dataset, cfg: CertifyConfig, *, n_workers: int | None = None,
                   scheduler=None) -> CeilingCertificate:
    """The as-rendered certificate of ``cfg``'s views (observations ``visible``: the atoms with a visible pixel in
    each view's rendered atom-ID buffer at the configuration's image size and style), every other setting the
    same; margins are not searched again (they do not depend on the observations). Not written.

    Parameters
    ----------
    dataset : Dataset
        The items certified.
    cfg : CertifyConfig
        The geometric configuration (``renders(cfg)``).
    n_workers : int, optional
        Worker processes (default: every core).
    scheduler : str, optional
        A Dask scheduler address.

    Returns
    -------
    CeilingCertificate
        The as-rendered certificate, in memory.
    """
    visible = cfg.with_(observation=replace(cfg.observation, observe=AS_RENDERED),
                        scoring=replace(cfg.scoring, margin=False))
    cert, _ = run_certification(dataset, visible, n_workers=n_workers, scheduler=scheduler, progress=False)
    return cert


def both_ceilings(as_rendered: CeilingCertificate, geometric: CeilingCertificate) -> dict:
    """Both ceilings of the same views, labelled: each ``correct``/``n`` with its observation model, and, where they
    differ, every item one counts right and the other does not, with the reasons it lost in each (ids in order).

    Parameters
    ----------
    as_rendered : CeilingCertificate
        Observations ``visible``.
    geometric : CeilingCertificate
        Observations ``ideal``, the same items and settings.

    Returns
    -------
    dict
        ``{"as_rendered": {observe, correct, n}, "geometric": {...}, "differ": [{id, as_rendered, geometric,
        correct_as_rendered, correct_geometric}]}``.
    """
    typed = {"as_rendered": as_rendered, "geometric": geometric}

    def by_id(cert) -> dict:
        return {it.id: it for it in cert.items if it.outcome != "error"}

    ren, geo = by_id(typed["as_rendered"]), by_id(typed["geometric"])
    lost = [{"id": i, "as_rendered": list(ren[i].reasons or []), "geometric": list(geo[i].reasons or []),
             "correct_as_rendered": bool(ren[i].correct), "correct_geometric": bool(geo[i].correct)}
            for i in sorted(set(ren) & set(geo)) if ren[i].correct != geo[i].correct]
    count = {k: {"observe": mode, "correct": typed[k].summary.correct, "n": typed[k].summary.n}
             for k, mode in (("as_rendered", AS_RENDERED), ("geometric", GEOMETRIC))}
    return {**count, "differ": lost}


def ceiling_lines(both: dict, *, image_size: int, max_list: int = 30) -> list[str]:
    """certify's and design's lines for ``both_ceilings``: the geometric ceiling (R1 above it) and the as-rendered
    one of the same views, and each item that counts in one and not the other with the reasons it lost (received
    ids are escaped by the summary's writer).

    Parameters
    ----------
    both : dict
        ``both_ceilings``' result.
    image_size : int
        The rendered images' side (px).
    max_list : int
        Items listed at most.

    Returns
    -------
    list of str
        The lines.
    """
    ren, geo = both["as_rendered"], both["geometric"]
    head = (f"R1 geometric (observe ideal: every atom, exact projection) {geo['correct']}/{geo['n']}; as rendered "
            f"(observe visible: the atoms the {image_size} px images of the same views show) {ren['correct']}/"
            f"{ren['n']}")
    if not both["differ"]:
        return [head + ": the same items"]
    lines = [head + f"; they differ on {len(both['differ'])} items:"]
    for d in both["differ"][:max_list]:
        lost, won = ("as rendered", "geometric") if d["correct_geometric"] else ("geometric", "as rendered")
        why = d["as_rendered"] if lost == "as rendered" else d["geometric"]
        lines.append(f"    {d['id']}: right {won}, lost {lost} ({', '.join(why) or 'no reason recorded'})")
    if len(both["differ"]) > max_list:
        lines.append(f"    ... and {len(both['differ']) - max_list} more")
    return lines
