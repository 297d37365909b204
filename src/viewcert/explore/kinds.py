"""What the explorer shows of each certificate kind, one class a kind (:class:`CeilingPages`, :class:`TaskPages`,
:class:`InteractionPages`), picked by the certificate itself (``cert.visit``: ``formats.records.CertificateVisitor``),
so no page switches on a certificate's type or kind: the index's title, columns, row and filters, the map's axes
and point, the counts the certificate states, the legend's layers, the question's key, the item page's record
section and the overlays (what they are drawn from, and each view's marks).

Filters (``outcomes.FILTERS``), counts and points are read from the typed records; a value the record does not
hold is left out, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from viewcert.explore import answers as model_answers
from viewcert.explore import overlays as O
from viewcert.explore import record as R
from viewcert.explore.outcomes import FILTERS, interaction_losses
from viewcert.explore.wording import loss_words, reason_words
from viewcert.formats.item_sections import ItemCeiling, OracleReport, UniquenessMargin
from viewcert.formats.records import CertificateVisitor
from viewcert.formats.summary_sections import PhantomCensus

__all__ = ["CeilingPages", "InteractionPages", "Pages", "Sources", "TaskPages", "pages_of"]


@dataclass(frozen=True)
class Sources:
    """What overlays are drawn from besides the folder: a crystal certificate's item cameras from its inputs
    (``overlays.item_cameras_from_inputs``), an interaction export's complexes ({source id: (structure,
    cameras, ligand atoms)}, ``overlays.interaction_scenes``)."""

    cameras: Callable | None = None
    scenes: dict = field(default_factory=dict)
    answers: model_answers.Answers | None = None  # a ladder output's answers (``explore.answers``)
    undrawn: str = ""  # why the inputs the certificate names were not read (the pages say it)


def _n_missing(rec: Any) -> int:
    n = rec.oracle.n_missing if rec.oracle else None
    return n if isinstance(n, int) and not isinstance(n, bool) else 0


def _num(x: Any) -> float:
    return x if isinstance(x, int | float) and not isinstance(x, bool) else 0


def _point(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) and x == x and abs(x) != float("inf") \
        else None


def _dict(x: Any) -> dict:
    return x.to_dict() if hasattr(x, "to_dict") else x if isinstance(x, dict) else {}


class Pages:
    """The explorer's pages of one certificate kind (module docstring)."""

    #: the index's heading
    TITLE: ClassVar[str] = ""
    #: the index's columns (``row_values`` gives one item's)
    COLUMNS: ClassVar[tuple[str, ...]] = ()
    #: the filters the index offers (``outcomes.FILTERS`` that apply to the kind)
    FILTERS: ClassVar[tuple[str, ...]] = ()
    #: the overlays' layers: (layer, words); a layer is offered only when some view draws it
    LEGEND: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: (x words, y words) of the map (``point`` gives one item's values)
    AXES: tuple[str, str] = ("", "")
    #: the map's y values are counts (its scale reaches at least 1, whole ticks)
    COUNT_AXIS: bool = False
    #: what the map says of its plot, after "Every item one point"
    MAP_NOTE: str = ""
    #: the key of a benchmark.jsonl question that names its certificate item
    QUESTION_KEY: ClassVar[str] = "id"
    #: what an item page says when its overlays cannot be drawn
    OVERLAY_NOTE: ClassVar[str] = ""

    def row_values(self, rec: Any) -> list:
        """The index columns of one typed item (``COLUMNS``)."""
        raise NotImplementedError

    def item_tags(self, rec: Any) -> set[str]:
        raise NotImplementedError

    def tags(self, rec: Any) -> tuple[str, ...]:
        """The filters one typed item belongs to, in ``outcomes.FILTERS`` order."""
        t = self.item_tags(rec)
        return tuple(f for f in FILTERS if f in t)

    def point(self, rec: Any) -> tuple[float | None, float | None]:
        """(x, y) of one typed item on the map (``AXES``); None where the certificate has no value."""
        raise NotImplementedError

    def counts(self, cert: Any) -> dict[str, int]:
        """The counts the certificate's own summary states, by filter (filters it states nothing about left out)."""
        return {}

    def truth_counts(self, rec: Any) -> dict[str, int]:
        """The truth one item's R1 is scored against, counted (``certify.summary.truth_counts``: summary.html's
        words); {} for a kind without one."""
        return {}

    def sidecar_pane(self, sidecar: Any, rec: Any) -> tuple:
        """(the 3D pane's data, the atoms' groups) of an export's item from its first sidecar; (None, None): no
        pane."""
        return None, None

    def map_delta(self, cert: Any) -> float | None:
        """The δ (Å) the map draws as a dashed line; None: none."""
        return None

    def view_names(self, cert: Any) -> list:
        """The names of the protocol's views by position (``protocol.views``), [] when it records none."""
        views = getattr(cert.protocol, "views", None) if cert.protocol else None
        return [v.get("name") for v in views if isinstance(v, dict)] if isinstance(views, list) else []

    def shown_view_names(self, cert: Any) -> list[str]:
        """The names an item page gives its views when the registry names them (interaction exports); []: the
        views keep their own names."""
        return []

    def body(self, folder: Any, rec: Any, shown: Any, question: dict) -> str:
        """The item page's record section (HTML)."""
        raise NotImplementedError

    def sources(self, folder: Any, folder_path: Any, root: Any) -> Any:
        """What the overlays are drawn from besides the folder (``site.Sources``)."""

        return Sources()

    def overlay(self, folder: Any, it: Any, src: Any) -> tuple:
        """(cell, cameras, cfg) or None, the missing atoms, the after view's candidate marks, the views' bond marks
        of one item (each None where it does not apply or cannot be drawn), and a note saying what cannot be
        drawn and why."""
        return None, (), None, None, ""

    def view_marks(self, view: Any, k: int, it: Any, missing: Any, after: Any, bonds: Any, groups: Any = None) -> Any:
        """The marks of view ``k`` of an item (None: none); ``groups``: the atoms' groups of the 3D pane."""
        if after is not None and k == len(it.views) - 1:  # the after view: the consistent answers' poses
            return after
        if bonds is not None and len(bonds) == len(it.views):
            return bonds[k]
        return None


class CeilingPages(Pages):
    """A crystal/molecule certificate's pages (a certify output or a crystal or molecule export). Its map plots δ*
    where the certificate records it (``margins``: ``certify --margin``), else the atoms the views do not recover."""

    def __init__(self, margins: bool = False) -> None:
        self.margins = margins
        self.AXES = ("atoms in the rendered cell", "δ* (Å)" if margins else "atoms the views do not recover")
        self.COUNT_AXIS = not margins
        self.MAP_NOTE = "" if margins else (
            " This certificate records no uniqueness margin δ* (viewcert certify --margin does): each item's atoms "
            "the views do not recover against its atoms, coloured by its outcome as this certificate scores it (an "
            "export's: the ceiling as rendered).")

    TITLE = "certificate"
    COLUMNS = ("formula", "crystal system", "atoms", "outcome", "reasons", "phantoms", "missing", "δ* (Å)")
    FILTERS = ("unique", "phantoms", "missing_atoms", "label_mismatch", "symmetry_raised", "item_error", "correct",
               "incorrect")
    LEGEND = (("atom", "atom seen (a pixel of it in the view)"), ("hidden", "atom with no pixel"),
              ("missing", "atom not recovered"), ("phantom", "phantom point"),
              ("near-miss", "near-miss point of δ*"), ("near-atom", "near-miss tuple's atom"))
    QUESTION_KEY = "source_id"
    OVERLAY_NOTE = ("The missing atoms are not marked: the oracle run again on the inputs did not give the "
                    "certificate's number of missing atoms.")

    def row_values(self, rec: Any) -> list:
        orc, um = rec.oracle or OracleReport(), rec.uniqueness_margin or UniquenessMargin()
        return [rec.formula, R.crystal_system(rec), rec.n_atoms, rec.outcome,
                reason_words(rec.reasons) if rec.reasons else "",
                orc.n_phantoms, orc.n_missing, R.sig4(um.delta_star)]

    def item_tags(self, rec: Any) -> set[str]:
        t: set[str] = set()
        orc = rec.oracle
        t.add("item_error" if rec.outcome == "error" else "correct" if rec.correct is True else "incorrect")
        if rec.unique is True:
            t.add("unique")
        if orc and _num(orc.n_phantoms) > 0:
            t.add("phantoms")
        if orc and _num(orc.n_missing) > 0:
            t.add("missing_atoms")
        if rec.label_mismatch:
            t.add("label_mismatch")
        if rec.symmetry_raised:
            t.add("symmetry_raised")
        return t

    def point(self, rec: Any) -> tuple[float | None, float | None]:
        if not self.margins:
            return _point(rec.n_atoms), _point(rec.oracle.n_missing if rec.oracle else None)
        um = rec.uniqueness_margin
        return _point(rec.n_atoms), _point(um.delta_star if um else None)

    def truth_counts(self, rec: Any) -> dict[str, int]:
        from viewcert.certify.summary import truth_counts  # lazy: as summary.html

        return truth_counts([rec])

    def sidecar_pane(self, sidecar: Any, rec: Any) -> tuple:
        from viewcert.explore.rendered import sidecar_pane  # lazy: start-up (the renderer)

        return sidecar_pane(_dict(sidecar), rec) or (None, None)

    def counts(self, cert: Any) -> dict[str, int]:
        s = cert.summary
        c = s.phantom_census or PhantomCensus()
        listed = cert.summary.label_mismatches if cert.summary.written("label_mismatches") else None
        # a streamed summary states the count of what a JSON summary lists by id
        mismatches = len(listed) if isinstance(listed, list) else getattr(s, "n_label_mismatches", None)
        out = {"unique": c.items_unique, "phantoms": c.items_with_phantoms,
               "missing_atoms": c.items_with_missing_atoms, "label_mismatch": mismatches,
               "symmetry_raised": s.n_symmetry_raised, "item_error": s.n_errors}
        return {k: v for k, v in out.items() if isinstance(v, int) and not isinstance(v, bool)}

    def map_delta(self, cert: Any) -> float | None:
        delta = cert.config.delta if cert.config and self.margins else None
        return delta if isinstance(delta, int | float) and not isinstance(delta, bool) else None

    def body(self, folder: Any, rec: Any, shown: Any, question: dict) -> str:

        config = folder.certificate.config
        delta = config.delta if config else None
        return R.crystal_body(rec, delta, [name for _, _, name in shown.views] or self.view_names(folder.certificate))

    def sources(self, folder: Any, folder_path: Any, root: Any) -> Any:

        lazy = not isinstance(folder.items, tuple)  # a streamed certificate: a certify output, no images
        if lazy or not any(it.views for it in folder.items) or any(_n_missing(it.record) for it in folder.items):
            cams = O.item_cameras_from_inputs(folder.certificate, root, str(Path(folder_path) / "certificate.json"))
            return Sources(cameras=cams, undrawn="" if cams is not None else O.undrawn_reason(folder.certificate, root))
        return Sources()

    def overlay(self, folder: Any, it: Any, src: Any) -> tuple:

        got, missing, note = None, (), ""
        if src.cameras is not None and (not it.views or _n_missing(it.record) > 0):
            got = src.cameras(it.id)
            if got is not None:
                cell, _, cfg = got
                missing = O.missing_atoms(cell, cfg, it.record)
                if missing is None:
                    missing, note = (), self.OVERLAY_NOTE
        return got, missing, None, None, note

    def view_marks(self, view: Any, k: int, it: Any, missing: Any, after: Any, bonds: Any, groups: Any = None) -> Any:
        if view.sidecar is not None:
            return O.sidecar_marks(view, it.record, k, missing, groups)
        return super().view_marks(view, k, it, missing, after, bonds)


class TaskPages(Pages):
    """A transformation-task certificate's pages."""

    TITLE = "transformation-task certificate"
    COLUMNS = ("structure", "truth", "consistent", "exact ceiling", "partial ceiling")
    FILTERS = ("unique", "correct", "incorrect")
    LEGEND = (("candidate", "atoms in a consistent answer's pose"),)
    AXES = ("atoms", "answers the views cannot tell apart")
    COUNT_AXIS = True
    OVERLAY_NOTE = ("The consistent answers' poses are not drawn: the export records no after-view sidecar with "
                    "them (exports written before it did).")

    def row_values(self, rec: Any) -> list:
        return [rec.structure_id, rec.truth, rec.n_consistent, rec.exact_ceiling, rec.partial_ceiling]

    def item_tags(self, rec: Any) -> set[str]:
        t = {"correct" if rec.best_guess == rec.truth else "incorrect"}
        if _num(rec.n_consistent) == 1:
            t.add("unique")
        return t

    def point(self, rec: Any) -> tuple[float | None, float | None]:
        return _point(rec.n_atoms), _point(rec.n_consistent)

    def counts(self, cert: Any) -> dict[str, int]:
        u = cert.summary.all.unique if cert.summary and cert.summary.all else None
        return {"unique": u} if isinstance(u, int) else {}

    def body(self, folder: Any, rec: Any, shown: Any, question: dict) -> str:

        return R.task_body(rec)

    def overlay(self, folder: Any, it: Any, src: Any) -> tuple:
        """The after view's candidate marks, as the export recorded them in its sidecar (the question is never
        rebuilt)."""

        after = O.sidecar_candidate_marks(it.views[-1].sidecar) if it.views else None
        return None, (), after, None, "" if after is not None else self.OVERLAY_NOTE


class InteractionPages(Pages):
    """An interaction certificate's pages."""

    TITLE = "interaction certificate"
    COLUMNS = ("complex", "residue asked", "bonds", "determined (rendered)", "ceiling (rendered)", "ceiling (ideal)",
               "why not determined")
    FILTERS = ("unique", "uncertain_bonds", "illegible_labels", "phantoms", "correct", "incorrect")
    LEGEND = (("bond-det", "hydrogen bond determined by the views"),
              ("bond-undet", "hydrogen bond not determined"),
              ("bond-uncertain", "uncertain bond (within δ of the criterion, not asked)"),
              ("bond-other", "another residue's bond (not asked)"),
              ("donor", "donor atom"), ("acceptor", "acceptor atom"),
              ("residue", "the residue the question names"), ("ligand", "the ligand"))
    AXES = ("hydrogen bonds asked", "ceiling of the rendered views")
    OVERLAY_NOTE = ("The bonds are not drawn over the images: this export has no sidecars (cameras and atom "
                    "projections; exports written before they were added), and the complexes were not found "
                    "(give their folder: viewcert explore DIR --inputs COMPLEXES).")

    def row_values(self, rec: Any) -> list:
        r, i = rec.rendered or ItemCeiling(), rec.ideal or ItemCeiling()
        losses = sorted(interaction_losses(rec))
        return [rec.source_id, R.residue_text(rec.residue) if isinstance(rec.residue, str) else None, rec.n_bonds,
                r.n_determined, r.ceiling, i.ceiling,
                "; ".join(loss_words(x).split(":")[0] for x in losses)]

    def item_tags(self, rec: Any) -> set[str]:
        t: set[str] = set()
        losses = interaction_losses(rec)
        for loss, tag in (("criterion_margin", "uncertain_bonds"), ("label_hidden", "illegible_labels"),
                          ("phantom", "phantoms")):
            if loss in losses:
                t.add(tag)
        rendered = rec.rendered or ItemCeiling()
        n_true, n_det, ceiling = rendered.n_true, rendered.n_determined, rendered.ceiling
        if (isinstance(n_true, int) and n_true == n_det) or (n_det is None and ceiling == 1):
            t.add("unique")
        if isinstance(ceiling, int | float) and not isinstance(ceiling, bool):
            t.add("correct" if ceiling == 1 else "incorrect")  # the views determine the answer, or not
        return t

    def point(self, rec: Any) -> tuple[float | None, float | None]:
        rendered = rec.rendered
        return _point(rec.n_bonds), _point(rendered.ceiling if rendered else None)

    def view_names(self, cert: Any) -> list:
        return []  # an interaction certificate records no protocol views

    def shown_view_names(self, cert: Any) -> list[str]:
        """The view names of the certificate's protocol when it is a registry name (``axes-6``: front, top, ...);
        [] for a protocol file or anything else (the views keep their image names)."""
        from viewcert.cameras.protocols import get_protocol  # lazy: start-up (interaction exports only)
        from viewcert.errors import ViewcertError

        settings = cert.settings
        name = settings.protocol if settings and not settings.protocol_sha256 else None
        try:
            return [v.name for v in get_protocol(name).views] if isinstance(name, str) else []
        except ViewcertError:
            return []

    def body(self, folder: Any, rec: Any, shown: Any, question: dict) -> str:

        sid = rec.source_id
        gt = _dict(folder.certificate.ground_truth).get(sid) if isinstance(sid, str) else None
        return R.interaction_body(rec, _dict(gt), question)

    def sources(self, folder: Any, folder_path: Any, root: Any) -> Any:

        return Sources(scenes=O.interaction_scenes(folder.certificate, root))

    def overlay(self, folder: Any, it: Any, src: Any) -> tuple:

        bonds, note = None, ""
        sid = it.record.source_id if isinstance(it.record.source_id, str) else ""
        truth = _dict(folder.certificate.ground_truth).get(sid)
        gt_bonds = _dict(truth).get("bonds") if isinstance(_dict(truth).get("bonds"), list) else []
        rec = it.record
        verdicts = {entry: cls for entry, _, cls, _, _ in R.mode_rows(rec, rec.rendered or ItemCeiling(), _dict(truth))}
        asked = rec.residue if isinstance(rec.residue, str) else ""
        if sid in src.scenes:
            structure, cams, ligand = src.scenes[sid]
            bonds = O.bond_marks(structure, cams, gt_bonds, verdicts, asked, ligand)
        else:  # the export's sidecars, when they hold every atom's projection
            bonds = O.sidecar_bond_marks(it.views, gt_bonds, verdicts, asked) if it.views else None
            note = self.OVERLAY_NOTE if gt_bonds and bonds is None else ""
        return None, (), None, bonds, note


class _Pick(CertificateVisitor[Pages]):
    def ceiling(self, cert: Any) -> Pages:
        return CeilingPages(margins=bool(cert.config) and cert.config.margin is True)

    def task(self, cert: Any) -> Pages:
        return TaskPages()

    def interaction(self, cert: Any) -> Pages:
        return InteractionPages()


def pages_of(cert: Any) -> Pages:
    """The explorer's pages of ``cert``'s kind (the certificate picks them).

    Parameters
    ----------
    cert : formats.records.Certificate
        A typed certificate (a streamed one included).

    Returns
    -------
    Pages
        Its kind's pages.
    """
    return cert.visit(_Pick())
