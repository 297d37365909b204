"""Figures of the render-ceiling study the tests check against: the certificate's pinned digest and the
published ladder (docs/reference.md)."""

from __future__ import annotations

#: regression pin (viewcert's own output): the 210-item certificate's digest at δ = τ = 0.01 Å, format /3 (every
#: float at its stated resolution, viewcert.resolution), written on an AMD EPYC (AVX2, no AVX-512) on 2026-12-03
#: and the same there with numba compiling for a generic x86-64, numpy's AVX2/FMA3 loops disabled and OpenBLAS's Prescott kernels
#: (tests/contracts/test_determinism_cpu.py). Its /2 predecessor 466fe74d… held one CPU's rounding noise (9.93e-16 Å vs
#: 1.09e-15 Å on another CPU, issue 37); its /1 predecessor of 2026-11-29 was 3375b833…
STUDY_DIGEST = "6b5a5602b0af5e6c9729b135a5a8a01b77a6dc3f26077752b41d157e9e48be4d"


# docs/reference.md, "The ladder on the same 210 items": (R4, R3, no-image); None = unscored or absent
REFERENCE = {
    "google/gemini-3.6-flash": (154, 179, 34),
    "x-ai/grok-4.5": (129, 179, None),
    "anthropic/claude-opus-4.8": (122, 140, 35),
    "qwen/qwen3-vl-235b-a22b-instruct": (70, 114, 30),
    "meta-llama/llama-4-maverick": (93, 104, 29),
    "mistralai/mistral-medium-3.1": (48, 95, 31),
    "mistralai/mistral-small-2603": (31, 95, 34),
    "qwen/qwen3-vl-8b-instruct": (79, 95, 35),
    "openai/gpt-4.1-mini": (77, 87, None),
    "qwen/qwen2.5-vl-72b-instruct": (53, None, 27),
    "google/gemini-2.5-flash": (90, None, None),
}
