"""Issue 53, acceptance "Projection": 40 images per tool rendered by the real tool (PyMOL orthographic and
perspective, matplotlib, ASE's PNG and POV-Ray writers, OVITO, Jmol), each atom's centre as the tool placed it
against the resolved projection; per tool the median and maximum distance (px), the images whose every atom is
within 0.5 px and the atoms within 0.5 px → benchmarks/results/tool_cameras.json. Run:
`python benchmarks/bench_tool_cameras.py [LABEL ...]` (`make bench` runs every group; ~12 min here, POV-Ray the
slowest at ~7 s an image)."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.foreign_render import available  # noqa: E402
from tests.support.tool_corpus import GROUPS, measure, structures  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "tool_cameras.json"


def main(labels: list[str]) -> None:
    corpus = structures()
    previous = json.loads(OUT.read_text())["results"] if OUT.is_file() else {}
    results = {k: v for k, v in previous.items() if k not in labels}
    with tempfile.TemporaryDirectory() as tmp:
        for label, tool, kind in GROUPS:
            if label not in labels:
                continue
            reason = available(tool)
            if reason:
                results[label] = {"skipped": reason}
                continue
            n = 40
            t0 = time.perf_counter()
            dists, images, kinds = [], [], []
            for i in range(n):
                name, xyz, elements = corpus[i % len(corpus)]
                m = measure(tool, kind, name, xyz, elements, Path(tmp), 100 + i)
                dists.append(m.pop("distances"))
                kinds.append(m["kind"])
                images.append(m)
            d = np.concatenate(dists)
            per_image_max = [m["max_px"] for m in images]
            results[label] = {
                "images": n, "kinds": {k: kinds.count(k) for k in sorted(set(kinds))},
                "atoms_measured": int(d.size), "median_px": round(float(np.median(d)), 4),
                "max_px": round(float(d.max()), 4),
                "images_within_0.5px": int(sum(x <= 0.5 for x in per_image_max)),
                "atoms_within_0.5px": int((d <= 0.5).sum()),
                "seconds": round(time.perf_counter() - t0, 1)}
            print(label, results[label], flush=True)
            _write(results)


def _deb_version(package: str) -> str | None:
    import subprocess
    try:
        done = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package], capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None


def _write(results: dict) -> None:
    from importlib.metadata import version
    doc = {"what": "issue 53 Projection: resolved P vs the tool's own per-atom centres (tests/support/foreign_render)",
           "truth": {"pymol": "probe", "ovito": "probe", "ase-povray": "probe", "jmol": "probe",
                     "matplotlib": "transform", "ase": "transform"},
           "versions": {**{p: version(p) for p in ("pymol-open-source", "ovito", "matplotlib", "ase")},
                        **{d: _deb_version(d) for d in ("jmol", "povray")}},
           "image_size": [320, 240], "missing": [g[0] for g in GROUPS if g[0] not in results],
           "results": {g[0]: results[g[0]] for g in GROUPS if g[0] in results}}
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    # python benchmarks/bench_tool_cameras.py [LABEL ...]: the groups named (default all); the others already in
    # the results file are kept
    main(sys.argv[1:] or [g[0] for g in GROUPS])
