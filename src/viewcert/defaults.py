"""One ceiling per benchmark: the defaults ``certify``, ``render`` and ``build-benchmark`` share, defined here
once (the library's settings and every command read them; no import, so ``viewcert --help`` stays fast).

The geometric ceiling observes every atom by exact projection (``viewcert certify``'s default); the as-rendered
ceiling observes the atoms the shipped images show (an export's certificate). Both use the same cell, cameras,
tiling, δ, τ and angle tolerance, so where they differ, only what the images hide or merge differs.
"""

__all__ = ["ANGLE_TOLERANCE", "AS_RENDERED", "DELTA", "GEOMETRIC", "LEVEL_HELP", "TAU", "TILING", "TILING_TEXT"]

#: oracle tolerance δ (Å)
DELTA = 0.01
#: symmetry tolerance τ (Å, spglib/moyopy symprec): τ = δ
TAU = DELTA
#: angle tolerance (°) of the labels and the standardisation
ANGLE_TOLERANCE = 5.0
#: cell repetitions a, b, c drawn and observed (a molecule is never tiled); ``certify`` through a named study
#: protocol observes the study's instead (``cameras.protocols.STUDY_SETTINGS``: render-ceiling-5, 1,1,1)
TILING = (2, 2, 2)
TILING_TEXT = ",".join(str(t) for t in TILING)
#: the observation model of each ceiling
GEOMETRIC = "ideal"
AS_RENDERED = "visible"

#: the levels R1 scores (``--score``; the help and the error of an unknown level)
LEVEL_HELP = ("levels R1 scores, comma-separated: crystals crystal_system | point_group | space_group; molecules "
              "uniqueness | point_group | handedness (default all three)")
