"""Shared by the explorer tests: a small crystal export with phantoms (two zone-axis views of three prototypes,
ID buffers written), a certify output of crystals whose file names are hostile, and their sites."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from tests.support.export_fixtures import CHFCLBR_XYZ
from tests.support.hostile.corpus import GOOD_CIF, GOOD_CIF_2

#: two views along lattice vectors a and b: graphite (aflow:A_hP4_194_bc) has phantoms in them
TWO_VIEWS = {"views": [{"name": "axis_a", "ase": "0x,-90y,0z"}, {"name": "axis_b", "ase": "-90x,0y,0z"}]}
PHANTOM_IDS = ("aflow:A_hP4_194_bc", "aflow:A_cF4_225_a", "aflow:A_hP2_194_c")
#: item ids (file stems) that would run script or inject elements if written unescaped
HOSTILE_STEMS = ('<img src=x onerror="window.__pwned=1">', "<svg onload=window.__pwned=2>x",
                 "a\u202eevil\u2066 \x1b[31m&amp;'\"><b>bold<\\b>")
#: an id no file can be named (it holds "/"): written into the certificate itself, which is received too
SCRIPT_ID = "</script><script>window.__pwned=3</script>"


@pytest.fixture(scope="session")
def phantom_export(tmp_path_factory) -> Path:
    from viewcert.benchmark.export import ExportSettings, build_benchmark

    d = tmp_path_factory.mktemp("explore_export")
    proto = d / "ab.json"
    proto.write_text(json.dumps(TWO_VIEWS))
    out = d / "export"
    build_benchmark("builtin:prototypes", out, ids=list(PHANTOM_IDS),
                    settings=ExportSettings.from_options(protocol=str(proto), size=160, supersample=1, buffers=True))
    return out


@pytest.fixture(scope="session")
def phantom_site(phantom_export) -> Path:
    from viewcert.explore import write_site

    write_site(phantom_export, phantom_export.parent / "site")
    return phantom_export.parent / "site"


@pytest.fixture(scope="session")
def hostile_certify(tmp_path_factory) -> Path:
    """A certify output (margin on, two zone-axis views) of NaCl and CsCl saved under hostile file names."""
    from viewcert.certify import CertifyConfig
    from viewcert.certify.certificate import write_certificate
    from viewcert.certify.run import certify
    from viewcert.formats.records import sealed

    d = tmp_path_factory.mktemp("explore_hostile")
    src = d / "in"
    src.mkdir()
    for stem, text in zip(HOSTILE_STEMS, (GOOD_CIF, GOOD_CIF_2, GOOD_CIF), strict=True):
        (src / f"{stem}.cif").write_text(text)
    proto = d / "ab.json"
    proto.write_text(json.dumps(TWO_VIEWS))
    certify(str(src), CertifyConfig(protocol=str(proto), margin=True), out=d / "cert", subset="all", n_workers=1,
            progress=False)
    cert = d / "cert" / "certificate.json"  # the certificate is received: a hostile id in it, not only in names
    doc = json.loads(cert.read_text())
    doc["items"][1]["id"] = SCRIPT_ID
    write_certificate(cert, sealed(doc))  # re-digested: a certificate with a stale digest is refused (issue 26)
    return d / "cert"


@pytest.fixture(scope="session")
def hostile_site(hostile_certify) -> Path:
    from viewcert.explore import write_site

    write_site(hostile_certify, hostile_certify.parent / "site", inputs=hostile_certify.parent)  # trusted: its inputs
    return hostile_certify.parent / "site"


@pytest.fixture(scope="session")
def zoom_export(tmp_path_factory) -> Path:
    """A zoom export of CHFClBr (orthographic axes-3, 240 × 180 px): every one of its 21 answers draws the same
    after view, so all 21 are in its consistent-answer set (docs/tasks.md)."""
    from tests.support.export_fixtures import SMALL, chiral_xyz
    from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark

    d = tmp_path_factory.mktemp("explore_zoom")
    build_task_benchmark(chiral_xyz(d), d / "export", TaskExportSettings.from_options(task="zoom", seed=1, **SMALL))
    return d / "export"


@pytest.fixture(scope="session")
def zoom_site(zoom_export) -> Path:
    from viewcert.explore import write_site

    write_site(zoom_export, zoom_export.parent / "site", inputs=zoom_export.parent)  # trusted: its input
    return zoom_export.parent / "site"


@pytest.fixture(scope="session")
def pocket_ligand_export(tmp_path_factory) -> Path:
    """The pocket-ligand export of 1pwc (ligand PNM, axes-6 at MiSI's 1160 × 803 px); skips without hydride or
    the complexes."""
    pytest.importorskip("hydride", reason="the interactions extra (hydride) is not installed")
    from tests.support.complex_data import COMPLEXES

    if not COMPLEXES.is_dir():
        pytest.skip(f"complexes not found at {COMPLEXES}")
    from viewcert.benchmark.interaction_export import InteractionExportSettings, build_interaction_benchmark

    out = tmp_path_factory.mktemp("explore_pocket") / "export"
    build_interaction_benchmark([(COMPLEXES / "1pwc", "PNM")], out,
                                InteractionExportSettings.from_options(task="pocket-ligand", n_boot=200))
    return out


@pytest.fixture(scope="session")
def pocket_ligand_site(pocket_ligand_export) -> Path:
    """Its explorer, with the complexes folder as ``inputs`` (the bonds drawn over the images)."""
    from tests.support.complex_data import COMPLEXES
    from viewcert.explore import write_site

    write_site(pocket_ligand_export, pocket_ligand_export.parent / "site", inputs=COMPLEXES)
    return pocket_ligand_export.parent / "site"


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def start_tags(html: str) -> list[tuple[str, dict]]:
    """Every start tag of ``html`` with its attributes, in document order."""
    p = _Tags()
    p.feed(html)
    return p.tags


#: CHFClBr as the zoom export reads it (export_fixtures.CHFCLBR_XYZ): atomic numbers and positions, Å
CHFCLBR_Z = [6, 1, 9, 17, 35]


def chfclbr_xyz() -> np.ndarray:
    return np.asarray([[float(x) for x in line.split()[1:]] for line in CHFCLBR_XYZ.splitlines()[2:]])


def project(camera: dict, xyz: np.ndarray) -> np.ndarray:
    """Orthographic pixel (u right, v down) of world points by the definition (docs/conventions.md): the
    camera frame's x, y scaled about the image centre."""
    r = np.asarray(camera["rotation"], dtype=float)
    cam = (np.asarray(xyz, dtype=float) - np.asarray(camera["center"], dtype=float)) @ r.T
    s = camera["scale_px_per_angstrom"]
    return np.stack([0.5 * camera["width"] + s * cam[:, 0], 0.5 * camera["height"] - s * cam[:, 1]], axis=1)


def assert_bonds_are_their_distance_apart(page: str, bonds: list) -> None:
    """Each bond's line ends, in six orthographic views, triangulate (least squares, the definition's projection)
    to two points the certificate's donor–acceptor distance ``d_da_A`` apart: the lines join the bond's atoms
    as the images were drawn."""
    tags = start_tags(page)
    cams = [json.loads(a["data-camera"]) for t, a in tags if t == "svg" and "overlay" in a.get("class", "").split()]
    lines = [a for t, a in tags if t == "line" and "mk" in a.get("class", "").split()]
    assert len(cams) == 6
    for b in bonds:
        ends = [a for a in lines if a["data-group"] == b["entry"]]
        assert len(ends) == len(cams)
        pts = []
        for which in ("1", "2"):
            rows, rhs = [], []
            for cam, a in zip(cams, ends, strict=True):
                r, c, s = np.asarray(cam["rotation"]), np.asarray(cam["center"]), cam["scale_px_per_angstrom"]
                u, v = float(a["x" + which]), float(a["y" + which])
                rows += [s * r[0], -s * r[1]]
                rhs += [u - 0.5 * cam["width"] + s * r[0] @ c, v - 0.5 * cam["height"] - s * r[1] @ c]
            x, *_ = np.linalg.lstsq(np.asarray(rows), np.asarray(rhs), rcond=None)
            assert np.abs(np.asarray(rows) @ x - rhs).max() <= 1e-3  # one point seen consistently by six views
            pts.append(x)
        assert abs(np.linalg.norm(pts[0] - pts[1]) - b["d_da_A"]) <= 1e-4  # 3-decimal px at ~24 px/Å


#: e3 items with phantoms under the released oracle's settings (δ = 0.15 Å, first pair, greedy merge; 4 and 2)
E3_PHANTOM_IDS = ("mp-560151", "mp-8110")


@pytest.fixture(scope="session")
def e3_phantom_certify(tmp_path_factory) -> Path:
    """A certify output (no images) of two e3 items with phantoms, five views (render-ceiling-5), the released
    oracle's settings, framed on the drawn spheres (so the cameras its items record draw the images) and with
    δ*; skips without the study's data."""
    from tests.conftest import E3, SHARED_DATA
    from viewcert.certify import CertifyConfig
    from viewcert.certify.inputs import load_input
    from viewcert.certify.run import certify

    if not (E3 / "structures.json").is_file():
        pytest.skip(f"shared data absent: {SHARED_DATA} (the render-ceiling study data) is not beside the repo")
    d = tmp_path_factory.mktemp("explore_e3_views")
    ds = load_input(str(E3), subset="all").select(list(E3_PHANTOM_IDS))
    cfg = CertifyConfig(delta=0.15, tau=0.01, pairs="first", merge="greedy", periodic_merge=False, frame_on="drawn",
                        margin=True)
    certify(ds, cfg, out=d / "cert", n_workers=1, progress=False)
    return d / "cert"


@pytest.fixture(scope="session")
def e3_phantom_site(e3_phantom_certify) -> Path:
    from tests.conftest import E3
    from viewcert.explore import write_site

    write_site(e3_phantom_certify, e3_phantom_certify.parent / "site", inputs=E3)  # trusted: its inputs
    return e3_phantom_certify.parent / "site"


@pytest.fixture(scope="session")
def residue_ligand_export(tmp_path_factory) -> Path:
    """The residue-ligand export of 1pwc (ligand PNM, axes-6); skips without hydride or the complexes."""
    pytest.importorskip("hydride", reason="the interactions extra (hydride) is not installed")
    from tests.support.complex_data import COMPLEXES

    if not COMPLEXES.is_dir():
        pytest.skip(f"complexes not found at {COMPLEXES}")
    from viewcert.benchmark.interaction_export import InteractionExportSettings, build_interaction_benchmark

    out = tmp_path_factory.mktemp("explore_residue") / "export"
    build_interaction_benchmark([(COMPLEXES / "1pwc", "PNM")], out,
                                InteractionExportSettings.from_options(task="residue-ligand", n_boot=200))
    return out


@pytest.fixture(scope="session")
def residue_ligand_site(residue_ligand_export) -> Path:
    from tests.support.complex_data import COMPLEXES
    from viewcert.explore import write_site

    write_site(residue_ligand_export, residue_ligand_export.parent / "site", inputs=COMPLEXES)
    return residue_ligand_export.parent / "site"


def write_table_folder(template: dict, items, out: Path, shard_items: int) -> Path:
    """A streamed certify output (``certify.stream``'s layout) at ``out`` of ``items`` (an iterable of item
    dicts, consumed ``shard_items`` at a time: nothing of the items is held beyond one shard) with the settings of
    the JSON certificate ``template``: Parquet shards, the summary from mergeable counts, the chain and digest made
    as ``certify.stream`` makes them (what ``bench_explore_big.py`` measures and the big-site tests read)."""
    from itertools import islice

    from viewcert.certify import stream as T
    from viewcert.certify.config import CertifyConfig
    from viewcert.formats.records import digest_record, outcomes_of
    from viewcert.resolution import quantize_tree, resolution_record

    cfg = CertifyConfig.from_dict(template["config"])
    (out / T.TABLE_DIR).mkdir(parents=True, exist_ok=True)
    tally, shards, it = T.Tally(), [], iter(items)
    while chunk := list(islice(it, shard_items)):
        name = f"part-{len(shards):06d}.parquet"
        (out / T.TABLE_DIR / name).write_bytes(T.shard_bytes(chunk, "test"))
        tally = tally.merge(T.Tally.of(outcomes_of(chunk), cfg.molecules.molecule_levels))
        shards.append({"name": name, "n": len(chunk), "sha256": T.shard_sha256(chunk)})
    body = {key: template[key] for key in ("inputs", "config", "protocol", "observation_model", "tolerances",
                                           "oracle", "scoring", "libraries")}
    body.update(format=T.CERTIFICATE_FORMAT, summary=T.tally_summary(tally, cfg),
                items_table={"format": T.TABLE_FORMAT, "folder": T.TABLE_DIR, "shard_items": shard_items,
                             "n_items": sum(s["n"] for s in shards), "shards": shards,
                             "chain": T.chain(s["sha256"] for s in shards)})
    body = {**quantize_tree(body), "resolution": resolution_record()}
    (out / "certificate.json").write_text(json.dumps({**body, "digest": digest_record(body)}))
    return out


def varied_items(template_items: list[dict], n: int):
    """``n`` items made from ``template_items`` (a certificate's items, repeated) under new ids (``<id>-NNNNNN``),
    their plotted and filtered fields varied by index k so that neighbours differ: atoms 2 + k mod 29, δ* (k · 37
    mod 1000 + 1) / 1000 Å, phantoms k mod 3 (each listed: carbon, Z = 6, at (k, 0, 0.5) Å; unique only without), correct unless
    k mod 4 = 1 (then the reason "phantoms"). Yielded one at a time."""
    for k in range(n):
        it = json.loads(json.dumps(template_items[k % len(template_items)]))
        n_ph, ok = k % 3, k % 4 != 1
        it.update(id=f"{it['id']}-{k:06d}", n_atoms=2 + k % 29, unique=n_ph == 0, correct=ok,
                  outcome="correct" if ok else "incorrect", reasons=[] if ok else ["phantoms"],
                  phantoms=[[6, float(k), 0.0, 0.5]] * n_ph or None)
        it["oracle"] = dict(it["oracle"], n_phantoms=n_ph)
        it["uniqueness_margin"] = dict(it["uniqueness_margin"], delta_star=(k * 37 % 1000 + 1) / 1000)
        yield it
