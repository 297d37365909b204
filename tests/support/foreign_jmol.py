"""Jmol for tests/support/foreign_render.py: Debian's ``jmol`` (14.32; its headless ``JmolData.jar`` on Java 17),
driven as one long-lived process per test process that reads script lines on its standard input (``-I``), so
a probe pass costs one ``write image``, not a Java start-up.

Camera table (the tool's own statement of it): ``{"tool": "jmol", "moveto": the line ``show orientation``
prints, "perspective": Jmol's ``perspectiveDepth``, "width", "height"}``; with ``state`` (the ``state.spt`` a
PNGJ file embeds) where the image is written as PNGJ. The view is set by that ``moveto`` (time 0) after
``load``; atoms are spheres (``spacefill`` = the given radii, no bonds: ``set autobond false``). Flat mode: black
background, ``ambientPercent 100``, ``diffusePercent 0``, no specular: each sphere's interior is its colour
quantised to 6 bits a channel (Jmol stores colours so: 0..255 → round(⌊v/4⌋·255/63)), so the flat palette is
chosen on those levels (``palette``) and matches exactly; the rim of each disc is blended by Jmol's image
antialiasing and not counted.
"""

from __future__ import annotations

import atexit
import re
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np

JMOL_DATA_JAR = Path("/usr/share/jmol/JmolData.jar")
_SESSION: dict = {}


def unavailable() -> str | None:
    """None when Jmol renders here, else why not."""
    if shutil.which("java") is None:
        return "Jmol needs Java (Debian's default-jre-headless, pulled in by jmol: make foreign-debs)"
    if not JMOL_DATA_JAR.is_file():
        return "Jmol is not installed: Debian's jmol (make foreign-debs)"
    return None


def palette(colours: np.ndarray) -> np.ndarray:
    """``colours`` (uint8) snapped to the 64 levels a channel Jmol draws exactly (distinct levels stay distinct
    while they are more than ~4 apart, as flat_palette's are)."""
    levels = np.round(np.arange(64) * 255 / 63)
    c = np.asarray(colours, dtype=float)
    snapped = levels[np.abs(c[..., None] - levels).argmin(axis=-1)]
    return snapped.astype(np.uint8)


class _Jmol:
    """One JmolData process; ``run(script)`` sends the lines and returns what Jmol printed until a marker."""

    def __init__(self):
        self.proc = subprocess.Popen(
            ["java", "-Xmx512m", "-jar", str(JMOL_DATA_JAR), "-o", "-n", "-I", "-g", "320x240"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.count = 0
        self.lock = threading.Lock()
        atexit.register(self.close)

    def run(self, script: str, timeout: float = 120.0) -> list[str]:
        with self.lock:
            self.count += 1
            tag = f"VIEWCERT-DONE-{self.count}"
            timer = threading.Timer(timeout, self.proc.kill)
            timer.start()
            try:
                self.proc.stdin.write(script + f'\nprint "{tag}"\n')
                self.proc.stdin.flush()
                out = []
                while True:
                    line = self.proc.stdout.readline()
                    if not line:
                        raise RuntimeError("Jmol stopped: " + "".join(out[-20:]))
                    if line.strip() == tag:
                        return out
                    out.append(line)
            finally:
                timer.cancel()

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("exitJmol\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()


def session() -> _Jmol:
    s = _SESSION.get("jmol")
    if s is None or s.proc.poll() is not None:
        s = _SESSION["jmol"] = _Jmol()
    return s


def _hex(c) -> str:
    return "[x" + "".join(f"{int(v):02x}" for v in c) + "]"


def _scene(pos, elements, radii, colours, camera, workdir: Path, flat: bool, subset) -> str:
    """The Jmol script that loads the atoms, styles them and sets the camera's view."""
    xyz = Path(workdir) / "jmol-model.xyz"
    lines = [str(len(pos)), "viewcert"] + [f"{e} {x:.6f} {y:.6f} {z:.6f}"
                                           for e, (x, y, z) in zip(elements, pos, strict=False)]
    xyz.write_text("\n".join(lines) + "\n")
    sel = range(len(pos)) if subset is None else subset
    s = ["zap", "set autobond false", f'load "{xyz.resolve()}"', "set frank off", "wireframe off",
         "spacefill off", "set perspectiveDepth " + ("true" if camera.get("perspective", True) else "false")]
    for i in sel:
        s.append(f"select atomno={i + 1}; spacefill {float(radii[i]):.4f}")
        if colours is not None:
            s.append(f"color atoms {_hex(colours[i])}")
    s.append("select none")
    if flat:
        s += ["background black", "set ambientPercent 100", "set diffusePercent 0", "set specular off",
              "set specularPercent 0"]
    else:
        s.append("background white")
    s.append(_moveto(camera["moveto"]))
    return "\n".join(s)


def _moveto(text: str) -> str:
    """The ``moveto`` line of a table (``show orientation``'s, comments and all), run at once (time 0)."""
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("moveto"))
    line = re.sub(r"/\*.*?\*/", " ", line).strip().rstrip(";")
    parts = line.split(None, 2)
    return f"moveto 0 {parts[2]}"


def draw(pos, elements, radii, colours, camera, path, flat, subset):
    """Render with Jmol into ``path`` (PNG, ``camera``'s width × height)."""
    path = Path(path)
    script = _scene(pos, elements, radii, colours, camera, path.parent, flat, subset)
    w, h = int(camera["width"]), int(camera["height"])
    session().run(script + f'\nwrite image {w} {h} png "{path.resolve()}"')


def stated_camera(pos, elements, radii, camera, workdir: Path, pngj: Path | None = None) -> dict:
    """The camera as Jmol states it for this scene: ``show orientation``'s moveto line (and, with ``pngj``,
    the state a PNGJ file written there embeds)."""
    script = _scene(pos, elements, radii, None, camera, workdir, False, None)
    w, h = int(camera["width"]), int(camera["height"])
    extra = f'\nwrite image {w} {h} pngj "{Path(pngj).resolve()}"' if pngj is not None else ""
    out = session().run(script + "\nshow orientation" + extra)
    line = next(ln.strip() for ln in out if ln.strip().startswith("moveto"))
    table = {"tool": "jmol", "moveto": line, "perspective": bool(camera.get("perspective", True)),
             "width": w, "height": h}
    if pngj is not None:
        import zipfile
        with zipfile.ZipFile(pngj) as z:
            table["state"] = z.read("state.spt").decode("utf-8")
    return table


def example_camera(positions, radii, rng, size, kind) -> dict:
    """A Jmol view of ``positions`` at a random orientation: a ``moveto`` in Jmol's own printed precision
    (axis ×1000 as integers, angle, zoom and translations to 0.01), perspective or not."""
    pos = np.asarray(positions, float)
    centre = 0.5 * (pos.min(0) + pos.max(0))
    rad = float(np.max(np.linalg.norm(pos - centre, axis=1) + radii)) + 0.5
    axis = rng.normal(size=3)
    axis = np.round(1000 * axis / np.linalg.norm(axis)).astype(int)
    angle = round(float(rng.uniform(5, 175)), 2)
    zoom = round(float(rng.uniform(70, 110)), 2)
    xt, yt = (round(float(x), 2) for x in rng.uniform(-6, 6, 2))
    depth = 3.0 if rng.random() < 0.5 else round(float(rng.uniform(1.5, 6.0)), 2)
    c = " ".join(f"{x:.4f}" for x in centre)
    line = (f"moveto 1.0 {{{axis[0]} {axis[1]} {axis[2]} {angle}}} {zoom} {xt} {yt} {{{c}}} {rad:.4f} "
            f"{{0 0 0}} 0 0 0 {depth} 0.0 0.0;")
    return {"tool": "jmol", "moveto": line, "perspective": kind == "perspective",
            "width": int(size[0]), "height": int(size[1])}


__all__ = ["JMOL_DATA_JAR", "draw", "example_camera", "palette", "session", "stated_camera",
           "unavailable"]
