"""The map of a benchmark (``map.html``): every item one point of a scatter plot (no library, no network): the
frame, ticks and axis names an SVG written here, the points drawn by the page's script on a canvas over it from
the page's own data (one short JSON row an item, ``point_row``), a click on a point opens the item's page. The
writer streams the rows to a file as items come and keeps only the running extent (``Extent``, mergeable), so
its memory does not grow with the items; the page draws 100,000 points without 100,000 DOM nodes.

Axes by plot (``AXES``, the plot of a certificate: ``plot_of``): crystals and molecules δ* (Å, the uniqueness
margin) against the number of atoms of the rendered cell when the certificate records δ* (``certify --margin``),
else (an export, a certify output without it) the atoms the views do not recover against the atoms, the
outcome's colour then the ceiling as that certificate scores it (an export's: as rendered); transformation items
the size of the consistent-answer set against the number of atoms; interaction items the rendered views'
ceiling against the number of bonds. Colour: the item's outcome (correct, incorrect, error); a ring: the item has
phantoms; a δ* map draws the certificate's δ as a dashed line. Items without both values are left out and
counted. Scales are linear from 0 to the largest value (with δ; × 1.05, ``Extent.tops``; a count at least to 1),
in px of a ``WIDTH`` × ``HEIGHT`` plot with ``PAD`` px margins; the point of value
(x, y) sits at u = PAD + x / x_top · (WIDTH − 2 PAD), v = HEIGHT − PAD − y / y_top · (HEIGHT − 2 PAD) (the
page's script, from ``x_top``, ``y_top`` in its data).
"""

from __future__ import annotations

from dataclasses import dataclass

WIDTH, HEIGHT, PAD = 900, 520, 56
#: (x field words, y field words) of each plot; the values come from ``point``
AXES = {"margin": ("atoms in the rendered cell", "δ* (Å)"),
        "missing": ("atoms in the rendered cell", "atoms the views do not recover"),
        "task": ("atoms", "answers the views cannot tell apart"),
        "interaction": ("hydrogen bonds asked", "ceiling of the rendered views")}
#: the plots whose y values are counts (their scale reaches at least 1)
COUNTS = ("missing", "task")
OUTCOME_CLASS = ("item_error", "correct", "incorrect")
#: a point's radius (px of the plot)
RADIUS = 4.5


def _num(x) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) and x == x and abs(x) != float("inf") \
        else None


def plot_of(kind: str, margins: bool) -> str:
    """The plot of a certificate of ``kind`` (``AXES``); ``margins``: whether its items record δ*."""
    if kind == "crystal":
        return "margin" if margins else "missing"
    return kind


def point(plot: str, rec) -> tuple[float | None, float | None]:
    """(x, y) of one typed item on ``plot`` (``AXES``); None where the certificate has no value."""
    if plot == "margin":
        um = rec.uniqueness_margin
        return _num(rec.n_atoms), _num(um.delta_star if um else None)
    if plot == "missing":
        return _num(rec.n_atoms), _num(rec.oracle.n_missing if rec.oracle else None)
    if plot == "task":
        return _num(rec.n_atoms), _num(rec.n_consistent)
    rendered = rec.rendered
    return _num(rec.n_bonds), _num(rendered.ceiling if rendered else None)


def point_row(index: int, shown_id: str, xy: tuple, filters: tuple[str, ...]) -> list | None:
    """One item's row of the map's data: [index, x, y, outcome class (``OUTCOME_CLASS`` or "none"), 1 when it
    has phantoms else 0, its id as shown]; None when it has no point (``point`` gave a None)."""
    x, y = xy
    if x is None or y is None:
        return None
    cls = next((c for c in OUTCOME_CLASS if c in filters), "none")
    return [index, x, y, cls, int("phantoms" in filters), shown_id]


@dataclass(frozen=True)
class Extent:
    """What the map keeps of its items while they stream: how many, how many have no point, the largest x and
    y plotted (0 before any). Mergeable (``merge``): the extent of a union is the merge of the parts'."""

    n: int = 0
    left_out: int = 0
    x_max: float = 0.0
    y_max: float = 0.0

    def add(self, xy: tuple) -> Extent:
        x, y = xy
        if x is None or y is None:
            return Extent(self.n + 1, self.left_out + 1, self.x_max, self.y_max)
        return Extent(self.n + 1, self.left_out, max(self.x_max, x), max(self.y_max, y))

    def merge(self, other: Extent) -> Extent:
        return Extent(self.n + other.n, self.left_out + other.left_out, max(self.x_max, other.x_max),
                      max(self.y_max, other.y_max))

    def tops(self, delta: float | None = None, y_floor: float = 1e-9) -> tuple[float, float]:
        """(x_top, y_top): the scales' ends, 1.05 × the largest value (y: or δ, at least ``y_floor``; x at least 1:
        atoms and bonds are counts)."""
        return max(self.x_max, 1.0) * 1.05, max(self.y_max, y_floor, delta or 0.0) * 1.05


def _ticks(top: float, counts: bool = False) -> list[float]:
    """About five round ticks from 0 to ``top``; ``counts``: whole numbers only (a step of at least 1)."""
    import math

    if top <= 0:
        return [0.0]
    step = max(10 ** math.floor(math.log10(top / 5)), 1 if counts else 0)
    for m in (1, 2, 5, 10):
        if top / (m * step) <= 6:
            step *= m
            break
    return [k * step for k in range(int(top / step) + 1)]


def frame_svg(plot: str, x_top: float, y_top: float, esc, delta: float | None = None) -> str:
    """The SVG under the points: the plot's frame, ticks, axis names (``esc``: the HTML escaper) and, on a δ*
    map, the certificate's δ (Å) as a dashed line (items below it have δ* < δ: the views do not certify them at
    that tolerance)."""
    w, hgt = WIDTH - 2 * PAD, HEIGHT - 2 * PAD
    parts = [f'<rect class="frame" x="{PAD}" y="{PAD}" width="{w}" height="{hgt}"/>']
    for v in _ticks(x_top, counts=True):
        u = PAD + v / x_top * w
        parts.append(f'<line class="tick" x1="{u:.2f}" y1="{HEIGHT - PAD}" x2="{u:.2f}" y2="{HEIGHT - PAD + 5}"/>'
                     f'<text class="tick" x="{u:.2f}" y="{HEIGHT - PAD + 18}">{v:g}</text>')
    for v in _ticks(y_top, counts=plot in COUNTS):
        y = HEIGHT - PAD - v / y_top * hgt
        parts.append(f'<line class="tick" x1="{PAD - 5}" y1="{y:.2f}" x2="{PAD}" y2="{y:.2f}"/>'
                     f'<text class="tick y" x="{PAD - 8}" y="{y + 4:.2f}">{v:.4g}</text>')
    if delta and plot == "margin":
        y = HEIGHT - PAD - delta / y_top * hgt
        parts.append(f'<line class="delta" x1="{PAD}" y1="{y:.2f}" x2="{WIDTH - PAD}" y2="{y:.2f}"/>'
                     f'<text class="delta" x="{WIDTH - PAD - 4}" y="{y - 5:.2f}">δ = {delta:g} Å</text>')
    xl, yl = AXES[plot]
    parts.append(f'<text class="axis" x="{PAD + w / 2}" y="{HEIGHT - 12}">{esc(xl)}</text>'
                 f'<text class="axis y" x="16" y="{PAD + hgt / 2}" transform="rotate(-90 16 {PAD + hgt / 2})">'
                 f"{esc(yl)}</text>")
    return (f'<svg id="map" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
            f'xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg>')
