"""The forward renderer: ball-and-stick / spacefill images with a per-pixel atom-ID and depth buffer.

- ``scene``       what is drawn (``Scene``, ``build_scene``: spheres, half-bond cylinders, cell edges)
- ``raster``      the ray-caster API (``render``, ``frame_cameras``); numba kernels in ``_kernels_trace``,
                  ``_kernels_pass1`` (z-buffer, IDs) and ``_kernels_pass2`` (anti-aliasing)
- ``palette``     Jmol colours, styles (study, ball-and-stick, spacefill)
- ``bonds``       unique periodic bonds and half-bond cylinders
- ``visibility``  observations from the rendered ID buffer (``observe_as``: ideal | visible | pixel-centroid)
- ``labels``      atom-name / residue labels (DejaVu Sans via Pillow), label-ID buffer, legibility rule
- ``image``       ``ImageSettings``: what images are drawn with (resolved protocol, style, size, supersample, kind)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from viewcert import lazy_face

if TYPE_CHECKING:  # the names below, for readers and type checkers; at run time each loads at its first use
    from viewcert.render.image import ImageSettings
    from viewcert.render.palette import STYLE_NAMES, Style, get_style
    from viewcert.render.raster import RenderResult, build_scene, frame_cameras, render, render_structure
    from viewcert.render.visibility import observe_as, observe_rendered

#: the package's face, name -> its module, loaded at first use (``viewcert.lazy_face``)
_FACE = {
    "get_style": "palette", "Style": "palette", "STYLE_NAMES": "palette", "build_scene": "raster",
    "frame_cameras": "raster", "render": "raster", "render_structure": "raster", "RenderResult": "raster",
    "observe_as": "visibility", "observe_rendered": "visibility", "ImageSettings": "image",
}
lazy_face(__name__, _FACE)

__all__ = ["STYLE_NAMES", "ImageSettings", "RenderResult", "Style", "build_scene", "frame_cameras", "get_style", "observe_as",
           "observe_rendered", "render", "render_structure"]
