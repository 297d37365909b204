"""The renderer's warm-up workloads (``viewcert.kernels.register``; ``viewcert warmup`` runs them): one small
built-in prototype drawn to RGB and PNG, as the main job draws it and in every mode the package uses."""

from __future__ import annotations

from viewcert.io.builtin import builtin_prototypes
from viewcert.io.images import encode_render_png
from viewcert.kernels import register
from viewcert.render.raster import (
    build_scene,
    frame_cameras,
    render,
    silhouette_pixel_counts,
    visible_pixel_counts,
)

__all__ = ["render_main_workload", "render_workload"]


def _smallest():
    return min(builtin_prototypes(), key=lambda s: (len(s.numbers), s.identifier))


@register("render", order=20)
def render_workload() -> None:
    """Orthographic and perspective, serial and on numba's threads, the silhouette pixel counts and the visible
    pixel counts certify's as-rendered ceiling traces (the anti-aliasing, shading and visibility kernels)."""
    s = _smallest()
    scene = build_scene(s, "study")
    for kind in ("orthographic", "perspective"):
        cam = frame_cameras(s, "render-ceiling-5", width=96, height=96, kind=kind)[0]
        for parallel in (False, True):
            encode_render_png(render(scene, cam, parallel=parallel).rgb)
        silhouette_pixel_counts(scene, cam)
        visible_pixel_counts(scene, cam, limit=1)


@register("render main", selections=(), order=70)
def render_main_workload() -> None:
    """The renderer's kernels as the main job calls them: serial (its images are small), to RGB and PNG (a
    side-by-side lane of ``api.prestage``)."""
    s = _smallest()
    cam = frame_cameras(s, "render-ceiling-5", width=96, height=96)[0]
    encode_render_png(render(build_scene(s, "study"), cam).rgb)
