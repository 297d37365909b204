"""The map of a benchmark (``map.html``): every item one point of a scatter plot drawn as SVG on the server (no
library, no network), a click on a point opens the item's page.

Axes by kind (``AXES``): crystals and molecules δ* (Å, the uniqueness margin) against the number of atoms of the
rendered cell; transformation items the size of the consistent-answer set against the number of atoms;
interaction items the rendered views' ceiling against the number of bonds. Colour: the item's outcome (correct,
incorrect, error); a ring: the item has phantoms; a crystal map draws the certificate's δ as a dashed line.
Items without both values are left out and counted. Scales are linear from 0 to the largest value (with δ;
× 1.05), in px of a ``WIDTH`` × ``HEIGHT`` plot with ``PAD`` px
margins; the point of value (x, y) sits at u = PAD + x / x_max · (WIDTH − 2 PAD), v = HEIGHT − PAD − y / y_max ·
(HEIGHT − 2 PAD) (``data-x``, ``data-y`` hold the values, ``cx``, ``cy`` the pixels).
"""

from __future__ import annotations

WIDTH, HEIGHT, PAD = 900, 520, 56
#: (x field words, y field words) of the plot by kind; the values come from ``point``
AXES = {"crystal": ("atoms in the rendered cell", "δ* (Å)"),
        "task": ("atoms", "answers the views cannot tell apart"),
        "interaction": ("hydrogen bonds asked", "ceiling of the rendered views")}
OUTCOME_CLASS = ("item_error", "correct", "incorrect")


def _num(x) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) and x == x and abs(x) != float("inf") \
        else None


def point(kind: str, rec) -> tuple[float | None, float | None]:
    """(x, y) of one typed item on the map of its kind (``AXES``); None where the certificate has no value."""
    if kind == "crystal":
        um = rec.uniqueness_margin if isinstance(rec.uniqueness_margin, dict) else {}
        return _num(rec.n_atoms), _num(um.get("delta_star"))
    if kind == "task":
        return _num(rec.n_atoms), _num(rec.n_consistent)
    rendered = rec.rendered if isinstance(rec.rendered, dict) else {}
    return _num(rec.n_bonds), _num(rendered.get("ceiling"))


def _ticks(top: float) -> list[float]:
    """About five round ticks from 0 to ``top``."""
    import math

    if top <= 0:
        return [0.0]
    step = 10 ** math.floor(math.log10(top / 5))
    for m in (1, 2, 5, 10):
        if top / (m * step) <= 6:
            step *= m
            break
    return [k * step for k in range(int(top / step) + 1)]


def map_svg(kind: str, pts, esc, href, delta: float | None = None) -> tuple[str, int]:
    """(the SVG of the map, the number of items left out); ``pts``: (index, id, (x, y) of ``point``, filters) per
    item; ``esc``: the HTML escaper; ``href(index)``: the item page's address; ``delta``: the certificate's δ (Å),
    drawn as a dashed line on a crystal map (items below it have δ* < δ: the views do not certify them at that
    tolerance)."""
    shown = [(i, iid, xy, t) for i, iid, xy, t in pts if xy[0] is not None and xy[1] is not None]
    x_max = max([xy[0] for _, _, xy, _ in shown] + [1e-9]) * 1.05
    y_max = max([xy[1] for _, _, xy, _ in shown] + [1e-9] + ([delta] if delta else [])) * 1.05
    w, hgt = WIDTH - 2 * PAD, HEIGHT - 2 * PAD
    parts = [f'<rect class="frame" x="{PAD}" y="{PAD}" width="{w}" height="{hgt}"/>']
    for v in _ticks(x_max):
        u = PAD + v / x_max * w
        parts.append(f'<line class="tick" x1="{u:.2f}" y1="{HEIGHT - PAD}" x2="{u:.2f}" y2="{HEIGHT - PAD + 5}"/>'
                     f'<text class="tick" x="{u:.2f}" y="{HEIGHT - PAD + 18}">{v:g}</text>')
    for v in _ticks(y_max):
        y = HEIGHT - PAD - v / y_max * hgt
        parts.append(f'<line class="tick" x1="{PAD - 5}" y1="{y:.2f}" x2="{PAD}" y2="{y:.2f}"/>'
                     f'<text class="tick y" x="{PAD - 8}" y="{y + 4:.2f}">{v:.4g}</text>')
    if delta and kind == "crystal":
        y = HEIGHT - PAD - delta / y_max * hgt
        parts.append(f'<line class="delta" x1="{PAD}" y1="{y:.2f}" x2="{WIDTH - PAD}" y2="{y:.2f}"/>'
                     f'<text class="delta" x="{WIDTH - PAD - 4}" y="{y - 5:.2f}">δ = {delta:g} Å</text>')
    xl, yl = AXES[kind]
    parts.append(f'<text class="axis" x="{PAD + w / 2}" y="{HEIGHT - 12}">{esc(xl)}</text>'
                 f'<text class="axis y" x="16" y="{PAD + hgt / 2}" transform="rotate(-90 16 {PAD + hgt / 2})">'
                 f"{esc(yl)}</text>")
    for index, iid, (x, y), t in shown:
        u, v = PAD + x / x_max * w, HEIGHT - PAD - y / y_max * hgt
        cls = " ".join([next((c for c in OUTCOME_CLASS if c in t), "none")] + (["ph"] if "phantoms" in t else []))
        parts.append(f'<a href="{esc(href(index))}" class="pt-link"><circle class="pt {cls}" data-index="{index}"'
                     f' data-x="{x!r}" data-y="{y!r}" cx="{u:.3f}" cy="{v:.3f}" r="4.5"><title>{esc(iid)}: '
                     f"{esc(xl)} {x:g}, {esc(yl)} {y:.4g}</title></circle></a>")
    svg = (f'<svg id="map" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
           f'xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg>')
    return svg, len(pts) - len(shown)
