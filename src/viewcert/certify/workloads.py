"""certify's warm-up workloads (``viewcert.kernels.register``; ``viewcert warmup`` runs them): certify one small
built-in prototype and one built-in molecule under the configurations real runs use, which reaches the
oracle's, the observation's and the renderer's ID-buffer kernels with the argument types they get."""

from __future__ import annotations

from viewcert.certify.config import CertifyConfig
from viewcert.certify.evaluate import certify_item
from viewcert.certify.inputs import load_input
from viewcert.kernels import register
from viewcert.oracle.jit import compiling_stages

__all__ = ["certify_main_workload", "certify_workloads"]


def _smallest(spec: str):
    """The built-in item of ``spec`` with the fewest atoms (then the first id)."""
    return min(load_input(spec).items, key=lambda it: (len(it.read().numbers), it.id))


@register("certify", order=10)
def certify_workloads() -> None:
    """A crystal and a molecule under the default configuration, the study's first-pair Cartesian greedy merge,
    noisy observations, observations from the rendered ID buffer and analytic occlusion."""
    crystal, molecule = _smallest("builtin:prototypes"), _smallest("builtin:molecules")
    configs = (
        CertifyConfig(),
        CertifyConfig(pairs="first", periodic_merge=False, merge="greedy", delta=0.15),
        CertifyConfig(sigma=0.3, seed=1, delta=0.05),
        CertifyConfig(observe="pixel-centroid", image_size=128),
        CertifyConfig(occlusion=True),
    )
    for cfg in configs:
        for item in (crystal, molecule):
            certify_item(item, cfg)


@register("certify main", order=40)
def certify_main_workload() -> None:
    """The main job's certification kernels: one small built-in crystal and molecule at the default settings."""
    for spec in ("builtin:prototypes", "builtin:molecules"):
        certify_item(_smallest(spec), CertifyConfig())


@register("oracle seeding", selections=(), order=50)
def oracle_seeding_workload() -> None:
    """:func:`certify_main_workload` with the oracle's batch kernel interpreted and the seeding half of its
    stages compiled (``viewcert.oracle.jit.compiling_stages``; a side-by-side lane of ``api.prestage``)."""
    with compiling_stages("seeding"):
        certify_main_workload()


@register("oracle rest", selections=(), order=60)
def oracle_rest_workload() -> None:
    """:func:`certify_main_workload` with the other half of the oracle's stages compiled (as above)."""
    with compiling_stages("rest"):
        certify_main_workload()
