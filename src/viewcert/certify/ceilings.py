"""The two ceilings of the same views, side by side: the geometric one (observations ``ideal``: every atom by exact
projection, what ``viewcert certify`` reports) and the as-rendered one (``visible``: the atoms the rendered images of
those views show, through their atom-ID buffer), with every item one counts right and the other does not and the
reasons it lost. ``certify`` states both in its summary, ``design`` for its designed views, and an export (whose
certificate is the as-rendered one) both in its report and manifest (``benchmark.export.ceilings``).

certify and design certify the as-rendered ceiling in the same pass over the items as the geometric one
(``CeilingRecords``, mapped by ``certify.run.run_with_as_rendered``): each item is read, standardised, labelled
and framed once (none of it depends on what the views observe), its visible atoms are counted without drawing
the images (``render.raster.visible_pixel_counts``), and an item whose every view shows every atom keeps the
geometric reconstruction (its observations are the same, bit for bit: ``certify.evaluate.same_observations``).
Each outcome is the one a separate ``certify --observe visible`` run gives.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from viewcert.certify.config import AS_RENDERED, GEOMETRIC, CertifyConfig
from viewcert.certify.evaluate import certify_items_under
from viewcert.formats.records import CeilingCertificate

__all__ = ["CeilingRecords", "as_rendered_config", "both_ceilings", "ceiling_lines", "renders"]


def renders(cfg: CertifyConfig) -> bool:
    """Whether ``cfg``'s views have an as-rendered ceiling beside the geometric one: geometric, noise-free
    observations through orthographic views (the rendered ID buffer of perspective views is not compared here)."""
    obs = cfg.observation
    return obs.observe == GEOMETRIC and obs.sigma == 0 and cfg.protocol.kind == "orthographic"


def as_rendered_config(cfg: CertifyConfig) -> CertifyConfig:
    """The as-rendered configuration of ``cfg``'s views: observations ``visible`` (the atoms with ``min_pixels``
    visible pixels in each view's atom-ID buffer at the configuration's image size and style), every other
    setting the same; margins are not searched (they do not depend on the observations).

    Parameters
    ----------
    cfg : CertifyConfig
        The geometric configuration (``renders(cfg)``).

    Returns
    -------
    CertifyConfig
        ``cfg`` observing ``visible``, without margins.
    """
    return cfg.with_(observation=replace(cfg.observation, observe=AS_RENDERED),
                     scoring=replace(cfg.scoring, margin=False))


GEOMETRIC_KEY, AS_RENDERED_KEY = "geometric", "as_rendered"  # a CeilingRecords record's two parts


@dataclass(frozen=True)
class CeilingRecords:
    """What ``certify.run.run_with_as_rendered`` maps: per item ``{"geometric": record, "as_rendered": record}``,
    the records ``certify.evaluate.CertifyRecords`` writes under ``cfg`` and under ``as_rendered_config(cfg)``,
    both from one evaluation (``certify.evaluate.certify_items_under``)."""

    cfg: CertifyConfig

    def __call__(self, item) -> dict:
        return self.map_batch([item])[0]

    def map_batch(self, items) -> list[dict]:
        geometric, rendered = certify_items_under(items, (self.cfg, as_rendered_config(self.cfg)))
        return [{GEOMETRIC_KEY: g.to_dict(), AS_RENDERED_KEY: r.to_dict()}
                for g, r in zip(geometric, rendered, strict=True)]


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
