"""What a benchmark's images are drawn with, declared once: ``ImageSettings`` (the protocol, already resolved;
the style; the image size; anti-aliasing; the camera kind). The four exporters (crystal, molecule,
transformation task, interaction) and the transformation tasks' ``ViewSetup`` hold one; each field is checked
here and only here, with one message.

The protocol is resolved at the public boundary (``viewcert.api``, the CLI, a reader of a received record):
``ImageSettings.from_options`` takes any form the resolver accepts (``viewcert.cameras.resolve``) and is
the one place below which a protocol is a ``ResolvedProtocol``. Sizes in px.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

from viewcert.cameras.resolve import ResolvedProtocol, resolve
from viewcert.errors import InputError
from viewcert.render.palette import get_style

#: camera kinds an image can be drawn with
KINDS = ("orthographic", "perspective")
#: the smallest image side an export draws (px): below it no atom or label is legible
MIN_SIDE = 16


def check_kind_name(kind, *, field: str = "kind") -> str:
    """``kind`` when it is a camera kind (``KINDS``); InputError naming ``field`` (the option) otherwise."""
    if kind not in KINDS:
        raise InputError(f"{field} must be 'orthographic' or 'perspective', got {kind!r}", field=field)
    return kind


def _check_int(name: str, value, lo: int, unit: str = "") -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lo:
        raise InputError(f"{name} must be an integer ≥ {lo}{unit}, got {value!r}", field=name)


@dataclass(frozen=True)
class ImageSettings:
    """How images are drawn. ``protocol``: the views, resolved once (a file's bytes and SHA-256 with it);
    ``style``: a render style name (``viewcert.render.palette``); ``width`` × ``height``: image size (px, each
    ≥ ``MIN_SIDE``); ``supersample``: anti-aliasing samples per pixel axis (≥ 1); ``kind``: the camera kind
    (orthographic | perspective)."""

    protocol: ResolvedProtocol
    style: str = "study"
    width: int = 768
    height: int = 768
    supersample: int = 3
    kind: str = "orthographic"

    def __post_init__(self) -> None:
        if not isinstance(self.protocol, ResolvedProtocol):
            raise TypeError(f"protocol must be a ResolvedProtocol (ImageSettings.from_options resolves the other "
                            f"forms), got {type(self.protocol).__name__}")
        get_style(self.style)  # an unknown name: one line naming the styles
        for name in ("width", "height"):
            _check_int(name, getattr(self, name), MIN_SIDE, " px")
        _check_int("supersample", self.supersample, 1)
        check_kind_name(self.kind)

    @classmethod
    def from_options(cls, protocol="render-ceiling-5", **options) -> ImageSettings:
        """The boundary: ``protocol`` in any form ``viewcert.cameras.resolve`` accepts (a registry name, a
        ``.toml``/``.json`` path, a ``Protocol``, a ``ProtocolSpec``, a dict, a ``ResolvedProtocol``),
        resolved here, once; ``options``: the other fields."""
        return cls(protocol=resolve(protocol), **options)

    @property
    def size(self) -> int:
        """The side of a square image (px): ``width`` (the exporters of square images check width = height)."""
        return self.width
