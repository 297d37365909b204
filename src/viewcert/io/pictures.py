"""Published images read safely: a PNG or JPEG file to 8-bit RGB, its declared size checked before decoding.

``read_picture(path, name=...)`` reads a received image (``io.received``: a regular file, at most
``max_json_bytes``), checks what its header declares, then decodes it with Pillow:

- **PNG**: the header (IHDR) is read by hand (16 bytes); an 8-bit palette image (colour type 3: its colours may
  have been quantised, so an element's colour cannot be trusted) and a 16-bit image are refused, each with one
  line naming the file and saying how to convert it; greyscale is read as grey RGB; an alpha channel is composited
  over white (``ALPHA_OVER``), what a viewer shows for a transparent background.
- **JPEG**: the size from Pillow's header read (``Image.open`` decodes no pixel); RGB or greyscale; CMYK refused.
- Anything else (GIF, BMP, TIFF, WebP, ...) is refused: ``only PNG and JPEG images are read``.

The declared width × height is checked against ``max_pixels`` of the limits in force **before** any pixel is
decoded (a 40,000 × 40,000 PNG of a few kB is one line, exit 2). The SHA-256 of the bytes read is returned with
the pixels, so a certificate records exactly the bytes it certified.
"""

from __future__ import annotations

import hashlib
import io
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from viewcert.errors import InputError
from viewcert.io.received import read_received_bytes
from viewcert.limits import active_limits

__all__ = ["ALPHA_OVER", "Picture", "picture_header", "read_picture"]

#: a transparent pixel is composited over this colour (white: what a viewer shows)
ALPHA_OVER = (255, 255, 255)
_PNG = b"\x89PNG\r\n\x1a\n"
_PNG_COLOUR = {0: "grey", 2: "RGB", 3: "palette", 4: "grey+alpha", 6: "RGBA"}
_CONVERT = "convert it to 8-bit RGB first (Pillow: Image.open(f).convert('RGB').save(f))"


@dataclass(frozen=True)
class Picture:
    """What a published image declares and what was read: format (``png`` | ``jpeg``), width and height (px),
    colour (``RGB``, ``RGBA``, ``grey``, ...), bit depth, the SHA-256 of the file's bytes and whether an alpha
    channel was composited over ``ALPHA_OVER``."""

    format: str
    width: int
    height: int
    colour: str
    bit_depth: int
    sha256: str
    alpha: bool = False

    def to_dict(self) -> dict:
        return {"format": self.format, "width": self.width, "height": self.height, "colour": self.colour,
                "bit_depth": self.bit_depth, "sha256": self.sha256, "alpha_over_white": self.alpha}


def picture_header(data: bytes, *, source: str) -> tuple[str, int, int, str, int]:
    """(format, width, height, colour, bit depth) of an image's bytes, from its header only; InputError naming
    ``source`` (field ``image``) for a format or colour model that is not read (module docstring).

    Parameters
    ----------
    data : bytes
        The file's bytes.
    source : str
        The file's name, as the input names it.

    Returns
    -------
    tuple
        ``("png" | "jpeg", width px, height px, colour, bit depth)``.

    Raises
    ------
    InputError
        Not a PNG or JPEG, a palette or 16-bit PNG, a CMYK JPEG, a header that cannot be read.
    """
    if data[:8] == _PNG:
        if len(data) < 33 or data[12:16] != b"IHDR":
            raise InputError("a PNG without its IHDR header", source=source, field="image")
        width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
        kind = _PNG_COLOUR.get(colour)
        if kind is None:
            raise InputError(f"a PNG of unknown colour type {colour}", source=source, field="image")
        if kind == "palette":
            raise InputError(f"an 8-bit palette PNG (colour type 3): its colours may have been quantised, so an "
                             f"atom's colour cannot be read from it; {_CONVERT}", source=source, field="image")
        if depth == 16:
            raise InputError(f"a 16-bit PNG; {_CONVERT}", source=source, field="image")
        if depth != 8 and kind != "grey":
            raise InputError(f"a PNG of bit depth {depth}; {_CONVERT}", source=source, field="image")
        return "png", int(width), int(height), kind, int(depth)
    if data[:3] == b"\xff\xd8\xff":
        from PIL import Image  # lazy: start-up (Pillow only where an image is read)

        try:
            with Image.open(io.BytesIO(data)) as im:  # reads the header only
                width, height, mode = im.size[0], im.size[1], im.mode
        except (OSError, ValueError, Image.DecompressionBombError, struct.error):
            raise InputError("a JPEG whose header cannot be read", source=source, field="image") from None
        if mode not in ("RGB", "L"):
            raise InputError(f"a JPEG in colour mode {mode}; {_CONVERT}", source=source, field="image")
        return "jpeg", int(width), int(height), "RGB" if mode == "RGB" else "grey", 8
    raise InputError("only PNG and JPEG images are read", source=source, field="image")


def read_picture(path: str | Path, *, name: str | None = None) -> tuple[np.ndarray, Picture]:
    """The pixels (H, W, 3) uint8 RGB of the published image at ``path`` and what it declares.

    Parameters
    ----------
    path : str or Path
        The image file (a regular file; its size at most ``max_json_bytes``).
    name : str, optional
        The file's name as the input names it (errors show it, never where it lies); default ``path``.

    Returns
    -------
    tuple of (numpy.ndarray, Picture)
        The pixels (row 0 at the top, 8-bit RGB; alpha composited over white) and the header, with the SHA-256
        of the bytes read.

    Raises
    ------
    InputError
        Not a regular file, too large, a format or colour model not read, more pixels than ``max_pixels`` (a
        ``LimitError``, checked before decoding), or bytes Pillow cannot decode; naming the file and field.
    """
    source = name or str(path)
    try:
        data = read_received_bytes(path, what="image")
    except InputError as exc:
        raise InputError(exc.message.replace(str(path), source), source=source, field="image") from None
    fmt, width, height, colour, depth = picture_header(data, source=source)
    active_limits().check_pixels(width, height, source=source, field="image")
    from PIL import Image  # lazy: start-up (Pillow only where an image is read)

    try:
        with Image.open(io.BytesIO(data)) as im:
            im.load()
            if im.size != (width, height):
                raise InputError(f"the decoded image is {im.size[0]}x{im.size[1]}, its header says "
                                 f"{width}x{height}", source=source, field="image")
            alpha = im.mode in ("RGBA", "LA") or (im.mode == "P" and "transparency" in im.info)
            if alpha:
                rgba = np.asarray(im.convert("RGBA"), dtype=np.float64)
                a = rgba[..., 3:] / 255.0
                rgb = np.rint(rgba[..., :3] * a + np.asarray(ALPHA_OVER, dtype=np.float64) * (1.0 - a))
                pixels = np.clip(rgb, 0, 255).astype(np.uint8)
            else:
                pixels = np.asarray(im.convert("RGB"), dtype=np.uint8)
    except InputError:
        raise
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError, struct.error) as exc:
        raise InputError(f"cannot decode the image: {str(exc)[:120]}", source=source, field="image") from None
    picture = Picture(fmt, width, height, colour, depth, hashlib.sha256(data).hexdigest(), alpha=bool(alpha))
    return np.ascontiguousarray(pixels), picture
