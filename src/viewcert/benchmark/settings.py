"""What a benchmark export depends on: ``ExportSettings`` (recorded in the manifest) and the task names."""

from __future__ import annotations

from dataclasses import dataclass, field

from viewcert.errors import InputError

TASKS = ("crystal-system",)
DEFAULT_TILING = (2, 2, 2)


@dataclass(frozen=True)
class ExportSettings:
    """What the export depends on (recorded in the manifest). size: image width = height (px)."""

    protocol: str = "render-ceiling-5"
    task: str = "crystal-system"
    style: str = "study"
    tiling: tuple[int, int, int] = DEFAULT_TILING
    size: int = 768
    kind: str = "orthographic"
    supersample: int = 3
    standardize: bool = True
    std_symprec: float = 0.01
    std_angle_tolerance: float = 5.0
    tau: float = 0.01
    truth: str = "dataset"
    r3_cell: str = "rendered"
    buffers: bool = False
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

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "extra"}
        d["tiling"] = list(self.tiling)
        d.update(self.extra)
        return d
