"""What a benchmark export depends on: ``ExportSettings`` (recorded in the manifest) and the task names."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from viewcert import defaults
from viewcert.certify.config import ScoringSettings, SymmetrySettings
from viewcert.constraints import parse_names
from viewcert.errors import InputError
from viewcert.formats.settings_sections import ExportSettingsRecord
from viewcert.render.image import ImageSettings

TASKS = ("crystal-system",)
DEFAULT_TILING = defaults.TILING


def _default_image() -> ImageSettings:
    return ImageSettings.from_options("render-ceiling-5")


def check_tiling(value) -> tuple[int, int, int]:
    """Cell repetitions a, b, c as three positive integers; InputError (field ``tiling``) otherwise."""
    t = tuple(int(x) for x in value)
    if len(t) != 3 or min(t) < 1:
        raise InputError(f"tiling must be three positive integers, got {value}", field="tiling")
    return t


def check_constraints(value) -> tuple[str, ...]:
    """``value`` when it is already the names ``viewcert.constraints.parse_names`` gives (known, in inventory
    order); InputError (field ``constraints``) otherwise. The settings' ``from_options`` parse the names."""
    if not isinstance(value, tuple) or parse_names(value) != value:
        raise InputError(f"constraints must be parsed names (parse_names), got {str(value)[:60]!r}",
                         field="constraints")
    return value


@dataclass(frozen=True)
class ExportSettings:
    """What the export depends on (recorded in the manifest): ``image`` (protocol, style, size px, supersample,
    camera kind: a perspective protocol file's, else orthographic) and the crystal task's own settings.
    ``ExportSettings.from_options`` builds it from the flat options (``size``: image width = height, px)."""

    image: ImageSettings = field(default_factory=_default_image)
    task: str = "crystal-system"
    tiling: tuple[int, int, int] = defaults.TILING
    standardize: bool = True
    std_symprec: float = 0.01
    std_angle_tolerance: float = defaults.ANGLE_TOLERANCE
    tau: float = defaults.TAU
    truth: str = "dataset"
    r3_cell: str = "rendered"
    buffers: bool = False
    constraints: tuple[str, ...] = ()  # response constraints appended to every prompt (viewcert.constraints)
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise InputError(f"task must be one of {TASKS}, got {self.task!r}", field="task")
        # the shared settings checked by the certify parts they configure (one message each)
        ScoringSettings(truth=self.truth)
        SymmetrySettings(tau=self.tau, std_symprec=self.std_symprec, std_angle_tolerance=self.std_angle_tolerance)
        if self.r3_cell not in ("rendered", "input"):
            raise InputError(f"r3_cell must be 'rendered' or 'input', got {self.r3_cell!r}", field="r3_cell")
        if check_tiling(self.tiling) != self.tiling:
            raise InputError(f"tiling must be a tuple of three integers, got {self.tiling!r}", field="tiling")
        check_constraints(self.constraints)
        own = own_kind(self.image)
        if self.image.kind != own:  # the certificate uses the protocol's cameras: the images must too
            raise InputError(f"kind = {self.image.kind!r} disagrees with the protocol's {own} cameras (perspective "
                             "images need a perspective protocol file, whose pinholes certify places too)",
                             field="kind")
        if self.image.width != self.image.height:
            raise InputError(f"a crystal export draws square images, got {self.image.width}x{self.image.height}",
                             field="size")

    @classmethod
    def from_options(cls, *, protocol="render-ceiling-5", style: str = "study", size: int = 768,
                     kind: str | None = None, supersample: int = 3, tiling=defaults.TILING, constraints=(),
                     **settings) -> ExportSettings:
        """The settings from the flat options: the protocol in any form the resolver accepts (resolved once,
        ``ImageSettings.from_options``), ``size`` px, ``kind`` None = the protocol's own; ``settings``: the
        other fields."""
        image = ImageSettings.from_options(protocol, style=style, width=size, height=size, supersample=supersample)
        image = replace(image, kind=own_kind(image) if kind is None else kind)
        return cls(image=image, tiling=check_tiling(tiling), constraints=parse_names(constraints), **settings)

    def record(self) -> ExportSettingsRecord:
        """The settings as the manifest records them (flat; the protocol as given: a name or a file's path),
        typed. The crystal task's own options (tiling, standardisation, truth, R3 cell, buffers), which no other
        exporter has, are the record's ``extra`` keys, followed by this value's own ``extra``."""
        im = self.image
        return ExportSettingsRecord(
            protocol=im.protocol.label, task=self.task, style=im.style, size=im.size, kind=im.kind,
            supersample=im.supersample, tau=self.tau, constraints=list(self.constraints),
            **{"tiling": list(self.tiling), "standardize": self.standardize, "std_symprec": self.std_symprec,
               "std_angle_tolerance": self.std_angle_tolerance, "truth": self.truth, "r3_cell": self.r3_cell,
               "buffers": self.buffers, **self.extra})  # keys the record does not name, kept

    def to_dict(self) -> dict:
        """The JSON object of :meth:`record`."""
        return self.record().to_dict()


def own_kind(image: ImageSettings) -> str:
    """The camera kind a crystal export's protocol asks for: a perspective protocol file's pinholes, else
    orthographic."""
    return image.protocol.kind if image.protocol.is_file else "orthographic"
