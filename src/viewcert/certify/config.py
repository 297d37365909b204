"""Certification settings: every setting that changes an outcome, recorded in every certificate."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

from viewcert import defaults
from viewcert.cameras.framing import DEFAULT_MARGIN_PX
from viewcert.cameras.placement import check_positions
from viewcert.cameras.policy import FramingPolicy
from viewcert.cameras.protocol_files import ProtocolSpec
from viewcert.cameras.protocols import Protocol
from viewcert.cameras.resolve import ResolvedProtocol, resolve
from viewcert.certify.molecule import MOLECULE_LEVELS
from viewcert.constraints import parse_names
from viewcert.errors import InputError
from viewcert.limits import active_limits
from viewcert.observe.project import OBSERVE_MODES, ObservationModel
from viewcert.render.palette import STYLE_NAMES, get_style
from viewcert.symmetry.labels import LEVELS

DEFAULT_DELTA = defaults.DELTA  # Å
#: one ceiling per benchmark: the defaults certify, render and build-benchmark share (``viewcert.defaults``)
DEFAULT_TAU = defaults.TAU
DEFAULT_ANGLE_TOLERANCE = defaults.ANGLE_TOLERANCE
DEFAULT_TILING = defaults.TILING
GEOMETRIC = defaults.GEOMETRIC
AS_RENDERED = defaults.AS_RENDERED
MOLECULE_SCALES = ("common", "per-view")  # FramingPolicy.molecule_scale
#: what the framing holds: the atom centres (certify's rule, every certificate of format /1) or the drawn
#: spheres of ``style`` (the rule of the rendered images: the as-rendered ID buffer of the shipped images)
FRAME_ON = ("centres", "drawn")


def _angle(name: str, v) -> float:
    """An angle tolerance in degrees: (0, 90], or negative for spglib's own rule (recorded as -1)."""
    if not (isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)):
        raise InputError(f"{name} must be a finite number of degrees (-1: spglib's own rule), got {v}", field=name)
    if v < 0:
        return -1.0
    if not 0 < v <= 90:  # 0 matches no float angle; beyond 90 degrees every angle matches
        raise InputError(f"{name} must be in (0, 90] degrees, or negative for spglib's own rule (-1), got {v}",
                         field=name)
    return v


def _repeats(name: str, v) -> tuple[int, int, int]:
    t = tuple(int(x) for x in v)
    if len(t) != 3 or min(t) < 1:
        raise InputError(f"{name} must be three positive integers, got {v}", field=name)
    return t


def _set(obj, name: str, value) -> None:
    object.__setattr__(obj, name, value)


@dataclass(frozen=True)
class OracleSettings:
    """The oracle (``viewcert.oracle.triangulate.reconstruct``): δ (Å), candidate pairs (all | first), merge
    rule (None: the oracle's), periodic_merge (minimum image in the cell; False: Cartesian)."""

    delta: float = DEFAULT_DELTA
    pairs: str = "all"
    merge: str | None = None
    periodic_merge: bool = True

    def __post_init__(self) -> None:
        if not (isinstance(self.delta, int | float) and math.isfinite(self.delta) and self.delta > 0):
            raise InputError(f"delta must be a positive number of Å, got {self.delta}", field="delta")
        _set(self, "delta", float(self.delta))
        if self.pairs not in ("all", "first"):
            raise InputError(f"pairs must be 'all' or 'first', got {self.pairs!r}", field="pairs")


@dataclass(frozen=True)
class SymmetrySettings:
    """The rendered cell and its labels: τ (Å, spglib/moyopy symprec; None: δ, set by CertifyConfig), the angle
    tolerance (°) of the labels, the standardisation (std_*: symprec Å, angle °, orientation), the supercell
    rendered as the cell, the moyopy cross-checks and the label shortcuts (``viewcert.symmetry.reuse``)."""

    tau: float | None = None
    angle_tolerance: float = DEFAULT_ANGLE_TOLERANCE
    standardize: bool = True
    std_symprec: float = 0.01
    std_angle_tolerance: float = DEFAULT_ANGLE_TOLERANCE
    orientation: str = "pymatgen"
    supercell: tuple[int, int, int] = (1, 1, 1)
    cross_check: bool = True
    cross_check_angle: bool = False
    cross_check_reconstruction: bool = False
    label_shortcuts: bool = True  # the spglib-reuse switch (symmetry.reuse.label_cell); False: spglib on every cell

    def __post_init__(self) -> None:
        if self.tau is not None:
            if not (math.isfinite(self.tau) and self.tau > 0):
                raise InputError(f"tau (symprec) must be a positive number of Å, got {self.tau}", field="symprec")
            _set(self, "tau", float(self.tau))
        for name in ("angle_tolerance", "std_angle_tolerance"):
            _set(self, name, _angle(name, getattr(self, name)))
        _set(self, "supercell", _repeats("supercell", self.supercell))


@dataclass(frozen=True)
class ObservationSettings:
    """What the views observe and how they are framed: tiling (cell repetitions observed), σ (``sigma_unit``)
    and its seed, occlusion, observe (ideal | visible | pixel-centroid, with ``min_pixels``), the drawing
    ``style`` of the ID buffer, ``image_size`` (px) and ``frame_on`` (centres | drawn)."""

    tiling: tuple[int, int, int] = (1, 1, 1)
    sigma: float = 0.0
    sigma_unit: str = "px"
    seed: int = 0
    occlusion: bool = False
    observe: str = "ideal"
    min_pixels: int = 1
    style: str = "study"
    image_size: int = 768
    frame_on: str = "centres"

    def __post_init__(self) -> None:
        if self.frame_on not in FRAME_ON:
            raise InputError(f"frame_on must be one of {FRAME_ON}, got {self.frame_on!r}", field="frame_on")
        if not (isinstance(self.sigma, int | float) and math.isfinite(self.sigma) and self.sigma >= 0):
            raise InputError(f"sigma must be a finite number ≥ 0, got {self.sigma}", field="sigma")
        if self.sigma_unit not in ("px", "angstrom"):
            raise InputError(f"sigma_unit must be 'px' or 'angstrom', got {self.sigma_unit!r}", field="sigma_unit")
        _set(self, "tiling", _repeats("tiling", self.tiling))
        if self.style not in STYLE_NAMES:
            raise InputError(f"style must be one of {STYLE_NAMES}, got {self.style!r}", field="style")
        if self.observe not in OBSERVE_MODES:
            raise InputError(f"observe must be one of {OBSERVE_MODES}, got {self.observe!r}", field="observe")
        if int(self.min_pixels) != self.min_pixels or self.min_pixels < 1:
            raise InputError(f"min_pixels must be a positive integer, got {self.min_pixels}", field="min_pixels")


@dataclass(frozen=True)
class ScoringSettings:
    """What R1 counts: the crystal level (crystal_system | point_group | space_group), the truth (dataset |
    rendered), the confidence of its exact bound, whether each item records its margin δ* (Å), and the
    response constraints the benchmark's prompts carry (``viewcert.constraints`` names; an export's
    ``--constraints``, recorded so the certificate states what its questions asked)."""

    score: str = "crystal_system"
    truth: str = "dataset"
    confidence: float = 0.95
    margin: bool = False
    constraints: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.score not in LEVELS:
            raise InputError(f"score must be one of {LEVELS}, got {self.score!r}", field="score")
        if self.truth not in ("dataset", "rendered"):
            raise InputError(f"truth must be 'dataset' or 'rendered', got {self.truth!r}", field="truth")
        if not isinstance(self.margin, bool):
            raise InputError(f"margin must be true or false, got {self.margin!r}", field="margin")
        if not 0 < self.confidence < 1:
            raise InputError(f"confidence must be in (0, 1), got {self.confidence}", field="confidence")
        if isinstance(self.constraints, str) or not all(isinstance(c, str) for c in self.constraints):
            raise InputError(f"constraints must be a list of names, got {str(self.constraints)[:60]!r}",
                             field="constraints")
        _set(self, "constraints", parse_names(list(self.constraints)))


@dataclass(frozen=True)
class MoleculeSettings:
    """Molecules (``viewcert.certify.molecule``): the levels scored, pymatgen's point-group cross-check, and the
    framing scale (common: one Å-per-pixel scale across views | per-view)."""

    molecule_levels: tuple[str, ...] = MOLECULE_LEVELS
    molecule_cross_check: bool = True
    molecule_scale: str = "common"

    def __post_init__(self) -> None:
        levels = tuple(str(x) for x in self.molecule_levels)
        if not levels or any(lv not in MOLECULE_LEVELS for lv in levels):
            raise InputError(f"molecule levels must be among {MOLECULE_LEVELS}, got {levels}", field="score")
        _set(self, "molecule_levels", levels)
        if self.molecule_scale not in MOLECULE_SCALES:
            raise InputError(f"molecule_scale must be one of {MOLECULE_SCALES}, got {self.molecule_scale!r}",
                             field="molecule_scale")


#: the parts of a configuration (``CertifyConfig.oracle`` ...), in the order they are checked
PARTS = {"oracle": OracleSettings, "symmetry": SymmetrySettings, "observation": ObservationSettings,
         "scoring": ScoringSettings, "molecules": MoleculeSettings}
#: every setting's name in the serialised (flat) form -> the part that holds it
SETTING_PART = {f.name: name for name, cls in PARTS.items() for f in fields(cls)}


def _parts_of(given: dict, settings: dict, *, tau: float | None = None) -> dict:
    """The five parts: ``given`` parts (a part left out: its defaults) with the flat ``settings`` applied; τ left
    out is ``tau`` (a study protocol's, Å) or else the oracle's δ."""
    bad = sorted(set(settings) - set(SETTING_PART))
    if bad:
        raise TypeError(f"unknown setting {bad[0]!r}")
    parts = {}
    for name, cls in PARTS.items():
        part = given.get(name)
        if part is not None and not isinstance(part, cls):
            raise InputError(f"{name} must be a {cls.__name__}, got {type(part).__name__}", field=name)
        kw = {k: v for k, v in settings.items() if SETTING_PART[k] == name}
        if name == "symmetry" and getattr(part, "tau", None) is None and kw.get("tau") is None:
            kw["tau"] = parts["oracle"].delta if tau is None else tau  # τ defaults to the study's, else δ
        parts[name] = cls(**kw) if part is None else replace(part, **kw) if kw else part
    return parts


@dataclass(frozen=True, init=False)
class CertifyConfig:
    """Every setting that changes an outcome; all of it is recorded in a certificate.

    The protocol and its ``views``, and five parts (:data:`PARTS`), each a frozen value that checks its own
    settings: ``oracle`` (δ, candidate pairs, merge), ``symmetry`` (τ, angle tolerances, standardisation,
    supercell, cross-checks), ``observation`` (tiling, noise, visibility, style, image size, framing),
    ``scoring`` (level, truth, confidence, δ* margin, constraints) and ``molecules``; read them as
    ``cfg.oracle.delta``. The constructor takes the parts (``oracle=OracleSettings(...)``; a part left out keeps
    its defaults) and, as a shorthand, any setting by its flat name (``delta=0.05``; the names ``to_dict`` and
    ``from_dict`` use, so certificates do not change), applied to its part.

    The settings (documented on each part): δ (Å) the oracle's extraction/merge tolerance; τ (Å) spglib/moyopy
    symprec for both the rendered cell and the reconstruction (None → δ); angle tolerances (°; negative:
    spglib's own rule, recorded as -1); std_*: the conventional-cell standardization (the study: 0.01 Å, 5°,
    pymatgen orientation). periodic_merge: give the oracle the cell (required for tiled observations); False
    merges in Cartesian space like the study's released oracle. supercell: render and reconstruct this
    repetition of the standardized cell as if it were the cell (the study's tiled arm); ``tiling`` instead
    observes the tiles of the one cell. observe: "ideal", "visible" (atoms with at least ``min_pixels`` visible
    pixels in the rendered atom-ID buffer) or "pixel-centroid" (a perfect detector). label_shortcuts:
    the spglib-reuse switch (``viewcert.symmetry.reuse.label_cell``, the one place that decides; False calls
    spglib on every cell; the records are the same either way, tests/symmetry/test_reuse_switch.py). margin: record each item's uniqueness margin δ* (Å; ``viewcert.oracle.margin``;
    perspective protocols record that δ* is not defined for them). protocol: a perspective protocol certifies
    through pinhole cameras (``viewcert.cameras.placement``) placed at the file's positions or framed on the
    drawn points; its own fov and image size set the focal length. The protocol is resolved once, here
    (``viewcert.cameras.resolve``): ``protocol`` is then a ``ResolvedProtocol`` and no later use reads the file
    again. frame_on: the framing holds the atom centres or the spheres drawn in ``style``
    (``framing_policy()``). constraints: the response constraints an exported benchmark's prompts carry; they
    change no outcome here and are recorded only when given."""

    protocol: ResolvedProtocol
    views: tuple[str, ...] | None
    oracle: OracleSettings
    symmetry: SymmetrySettings
    observation: ObservationSettings
    scoring: ScoringSettings
    molecules: MoleculeSettings

    def __init__(self, protocol: str | Protocol | ProtocolSpec | ResolvedProtocol = "render-ceiling-5",
                 views: tuple[str, ...] | None = None, *, oracle: OracleSettings | None = None,
                 symmetry: SymmetrySettings | None = None, observation: ObservationSettings | None = None,
                 scoring: ScoringSettings | None = None, molecules: MoleculeSettings | None = None,
                 **settings) -> None:
        # protocol: a registry name, a .toml/.json protocol file (read here, once), a Protocol, a ProtocolSpec,
        # a dict (to_dict's) or a ResolvedProtocol: one resolved value, restricted to ``views``
        views = None if views is None else tuple(views)
        _set(self, "views", views)
        _set(self, "protocol", resolve(protocol).select(views))
        if self.protocol.given is not None:  # a fibonacci-N name is built after the view limit (check_limits)
            check_protocol_spec(self.protocol.full)
        if "tiling" in settings and settings["tiling"] is None:  # the protocol's: a study's, else the exports'
            settings["tiling"] = self.protocol_tiling
        given = {"oracle": oracle, "symmetry": symmetry, "observation": observation, "scoring": scoring,
                 "molecules": molecules}
        study = self.protocol.study
        for name, part in _parts_of(given, settings, tau=None if study is None else study.tau).items():
            _set(self, name, part)
        obs = self.observation
        if not self.oracle.periodic_merge and obs.tiling != (1, 1, 1):
            raise InputError("tiled observations need periodic_merge=True (the oracle needs the cell)",
                             field="periodic_merge")
        if obs.observe != "ideal" and obs.sigma != 0:
            raise InputError("rendered observations (observe=visible|pixel-centroid) are noise-free: use sigma=0",
                             field="sigma")

    @property
    def protocol_tiling(self) -> tuple[int, int, int]:
        """The tiling ``tiling=None`` stands for: a named study protocol's (``render-ceiling-5``: 1,1,1, the study's
        single cell), else the tiling an export draws (``defaults.TILING``, 2,2,2)."""
        study = self.protocol.study
        return DEFAULT_TILING if study is None else study.tiling

    def settings(self) -> dict:
        """Every setting by its flat name (the parts' fields)."""
        return {f.name: getattr(getattr(self, name), f.name) for name in PARTS
                for f in fields(getattr(self, name))}

    def to_dict(self) -> dict:
        """The serialised configuration (flat, as every certificate records it)."""
        d = self.settings()
        d.update(protocol_setting(self.protocol))
        d["views"] = None if self.views is None else list(self.views)
        for k in ("tiling", "supercell", "molecule_levels", "constraints"):
            d[k] = list(d[k])
        if d["style"] == "study":  # the default is left out so certificates written before the field keep digests
            del d["style"]
        for k, default in (("molecule_levels", list(MOLECULE_LEVELS)), ("molecule_cross_check", True),
                           ("margin", False), ("molecule_scale", "common"), ("constraints", [])):
            if d[k] == default:  # defaults left out: certificates written before these fields keep digests
                del d[k]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> CertifyConfig:
        if not isinstance(d, dict):
            raise InputError("config must be an object", field="config")
        names = {"protocol", "views", *SETTING_PART}
        kw = {k: v for k, v in d.items() if k in names}
        try:
            if kw.get("views") is not None:
                kw["views"] = tuple(str(v) for v in kw["views"])
            if isinstance(kw.get("constraints"), list):
                kw["constraints"] = tuple(kw["constraints"])
            for k in ("tiling", "supercell", "molecule_levels"):
                if k in kw:
                    kw[k] = tuple(kw[k])
            return cls(**kw)
        except InputError:
            raise
        except (TypeError, ValueError) as exc:
            raise InputError(f"invalid setting: {str(exc)[:200]}", field="config") from None

    def points_per_atom(self) -> int:
        """Observed points per atom of the cell as read: views × tiling × supercell repetitions."""
        n = len(self.protocol.view_names)
        for t in (*self.observation.tiling, *self.symmetry.supercell):
            n *= int(t)
        return n

    def check_limits(self) -> None:
        """The limits in force against what this configuration asks for (views, tiling, image pixels), before any
        work."""
        limits = active_limits()
        if self.protocol.origin == "name":
            limits.check_protocol_name(self.protocol.label)
        tiling, supercell = self.observation.tiling, self.symmetry.supercell
        limits.check_tiling(tiling, what="tiling")
        limits.check_tiling(supercell, what="supercell")
        limits.check_tiling(tuple(a * b for a, b in zip(tiling, supercell, strict=True)),
                            what="tiling x supercell")
        limits.check_pixels(self.observation.image_size, self.observation.image_size)
        spec = self.protocol.spec
        if spec.kind == "perspective":  # perspective cameras keep the protocol's own image size
            limits.check_pixels(spec.width, spec.height, source=spec.source)
        limits.check_views(len(spec.protocol.views))

    def framing_policy(self) -> FramingPolicy:
        """How this configuration's cameras are framed (``viewcert.cameras.policy.frame``): crystals per
        view, molecules at ``molecule_scale``, ``image_size`` px, ``tiling``, the drawn box, margin
        ``DEFAULT_MARGIN_PX``; with ``frame_on = "drawn"`` every point grown by the largest radius drawn in
        ``style`` (as the rendered images are framed)."""
        obs = self.observation
        st = get_style(obs.style)
        drawn = obs.frame_on == "drawn"
        return FramingPolicy(atom_radius_scale=st.radius_scale if drawn and st.radius is None else None,
                             atom_radius=st.radius if drawn else None, margin_px=DEFAULT_MARGIN_PX,
                             molecule_scale=self.molecules.molecule_scale, tiling=obs.tiling, width=obs.image_size,
                             height=obs.image_size)

    def with_(self, **kw) -> CertifyConfig:
        """This configuration with some parts or settings (by flat name) changed."""
        return replace(self, **kw)

    @property
    def visibility(self) -> str:
        return "occlusion" if self.observation.occlusion else "strict"

    def observation_model(self):
        # the seed rule of viewcert.oracle.noise.noise_sweep for one structure (seed·1,000,003 + 0), so a
        # noisy certification and the oracle's Monte Carlo see the same draws
        obs = self.observation
        return ObservationModel(tiling=obs.tiling, sigma=obs.sigma, sigma_unit=obs.sigma_unit,
                                seed=int(obs.seed) * 1_000_003, occlusion=obs.occlusion,
                                radius_scale=get_style(obs.style).radius_scale)  # the drawn radius of the style


def check_protocol_spec(spec: ProtocolSpec) -> None:
    """What certify refuses in a protocol before any work: a perspective protocol needs at least two views
    (a pinhole pair is the least that can triangulate) and a position for every view or for none."""
    if spec.kind != "perspective":
        return
    if len(spec.protocol) < 2:
        raise InputError(f"a perspective protocol needs at least two views to triangulate, got {len(spec.protocol)}",
                         source=spec.source, field="views")
    check_positions(spec)


def protocol_setting(rp: ResolvedProtocol) -> dict:
    """How a configuration records its protocol (the unrestricted protocol; ``views`` is its own field): a
    registry name as the name; a file by its name (location-free) and the SHA-256 of the bytes the items use;
    a Protocol or an orthographic ProtocolSpec in full in rotation form; a perspective ProtocolSpec in full
    with kind, fov, size and positions."""
    if rp.origin == "name":
        return {"protocol": rp.label}
    if rp.origin == "file":  # the file's bytes: shard fingerprints and verify see an edit
        return {"protocol": rp.file_name, "protocol_sha256": rp.sha256}
    full = rp.full
    return {"protocol": full.to_dict() if full.kind == "perspective" else ProtocolSpec(full.protocol).to_dict()}
