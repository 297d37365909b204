"""The forward renderer: ball-and-stick / spacefill images with a per-pixel atom-ID and depth buffer.

- ``scene``       what is drawn (``Scene``, ``build_scene``: spheres, half-bond cylinders, cell edges)
- ``raster``      the ray-caster API (``render``, ``frame_cameras``); numba kernels in ``_kernels_trace``,
                  ``_kernels_pass1`` (z-buffer, IDs) and ``_kernels_pass2`` (anti-aliasing)
- ``palette``     Jmol colours, styles (study, ball-and-stick, spacefill)
- ``bonds``       unique periodic bonds and half-bond cylinders
- ``visibility``  observations from the rendered ID buffer (``observe_as``: ideal | visible | pixel-centroid)
- ``labels``      atom-name / residue labels (DejaVu Sans via Pillow), label-ID buffer, legibility rule
"""

from viewcert.render.palette import STYLE_NAMES, Style, get_style
from viewcert.render.raster import RenderResult, build_scene, frame_cameras, render, render_structure
from viewcert.render.visibility import observe_as, observe_rendered

__all__ = ["STYLE_NAMES", "RenderResult", "Style", "build_scene", "frame_cameras", "get_style", "observe_as",
           "observe_rendered", "render", "render_structure"]
