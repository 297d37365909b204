"""The forward renderer: ball-and-stick / spacefill images with a per-pixel atom-ID and depth buffer.

- ``raster``      scene building and the numba ray-caster (``build_scene``, ``render``, ``frame_cameras``)
- ``palette``     Jmol colours, styles (study, ball-and-stick, spacefill)
- ``bonds``       unique periodic bonds and half-bond cylinders
- ``visibility``  observations from the rendered ID buffer (``observe_as``: ideal | visible | pixel-centroid)
"""

from viewcert.render.palette import STYLE_NAMES, Style, get_style
from viewcert.render.raster import RenderResult, build_scene, frame_cameras, render, render_structure
from viewcert.render.visibility import observe_as, observe_rendered

__all__ = ["STYLE_NAMES", "RenderResult", "Style", "build_scene", "frame_cameras", "get_style", "observe_as",
           "observe_rendered", "render", "render_structure"]
