"""What a benchmark export depends on: ``ExportSettings`` (recorded in the manifest) and the task names."""

from __future__ import annotations

from dataclasses import dataclass, field

from viewcert import defaults
from viewcert.cameras.resolve import ResolvedProtocol, resolve
from viewcert.constraints import parse_names
from viewcert.errors import InputError

TASKS = ("crystal-system",)
DEFAULT_TILING = defaults.TILING


@dataclass(frozen=True)
class ExportSettings:
    """What the export depends on (recorded in the manifest). size: image width = height (px)."""

    protocol: str = "render-ceiling-5"
    task: str = "crystal-system"
    style: str = "study"
    tiling: tuple[int, int, int] = defaults.TILING
    size: int = 768
    kind: str | None = None  # camera kind; None = the protocol's own (a perspective file's, else orthographic)
    supersample: int = 3
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
        if self.truth not in ("dataset", "rendered"):
            raise InputError(f"truth must be 'dataset' or 'rendered', got {self.truth!r}", field="truth")
        if self.r3_cell not in ("rendered", "input"):
            raise InputError(f"r3_cell must be 'rendered' or 'input', got {self.r3_cell!r}", field="r3_cell")
        t = tuple(int(x) for x in self.tiling)
        if len(t) != 3 or min(t) < 1:
            raise InputError(f"tiling must be three positive integers, got {self.tiling}", field="tiling")
        object.__setattr__(self, "tiling", t)
        object.__setattr__(self, "constraints", parse_names(self.constraints))
        # the protocol resolved once (a file read here; a fibonacci-N name is built after the limits); a
        # perspective protocol file's pinholes are its images' cameras
        rp = resolve(self.protocol)
        object.__setattr__(self, "_resolved", rp)
        own = rp.kind if rp.is_file else "orthographic"
        if self.kind is None:
            object.__setattr__(self, "kind", own)
        elif self.kind not in ("orthographic", "perspective"):
            raise InputError(f"kind must be 'orthographic' or 'perspective', got {self.kind!r}", field="kind")
        elif self.kind != own:  # the certificate uses the protocol's cameras: the images must too
            raise InputError(f"kind = {self.kind!r} disagrees with the protocol's {own} cameras (perspective images "
                             "need a perspective protocol file, whose pinholes certify places too)", field="kind")

    @property
    def resolved(self) -> ResolvedProtocol:
        """The protocol, resolved once when the settings were made (``viewcert.cameras.resolve``)."""
        return self._resolved

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "extra"}
        d["tiling"] = list(self.tiling)
        d["constraints"] = list(self.constraints)
        d.update(self.extra)
        return d
