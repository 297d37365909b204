"""Benchmark export: rendered images + sidecars + question files a harness reads + the ceiling certificate.

``build_benchmark(INPUT, out, protocol=..., task="crystal-system")`` writes into ``out``:

| file | what |
|---|---|
| ``images/qNNNN_vK.png`` | view K of question NNNN (PNG, Pillow, fixed parameters) |
| ``sidecars/qNNNN_vK.json`` | camera (matrices), framing, style, atom-ID code mapping, per drawn atom: cell atom, tile, element, pixel centre, depth, visible pixel count, silhouette pixel count, visible fraction |
| ``benchmark.jsonl`` | one line per question: id (``qNNNN``), source_id, index, images, question (no options: each harness adds its own), task, category (the true crystal system), answer_format (``choice``), answer, choices, answer_letter |
| ``benchmark.tsv``, ``ids.csv``, ``inspect_task.py``, ``lmms_eval/``, ``HARNESSES.md`` | the harness files (``benchmark.harness_files``): VLMEvalKit MCQ TSV, the id table, Inspect and lmms-eval tasks, the steps |
| ``r3_prompts.jsonl`` | the matching geometry-as-text prompts (rung R3): id, source_id, index, question, choices, answer; the same texts are the R3 arm's questions (``benchmark_r3.jsonl``, ``benchmark.arms``) |
| ``manifest.json`` | ``viewcert.export/1`` (``formats.export``): settings, per question the answer's source, the rendered cell's label and any disagreement, occlusion per view, the certificate's digest, SHA-256 of every file |
| ``certificate.json``, ``certificate_items.csv`` | the benchmark's ceiling from ``viewcert.certify`` (same protocol, tiling and image size) |

Questions are ordered by SHA-256 of the item id (not by input order, which for the study is by crystal
system) and files are named by question index and view number only: no file name carries label
information. Question ids are ``qNNNN``; the input's own id (which may encode a label, e.g. an AFLOW
prototype label) is kept as ``source_id`` beside the answer, never in a file name. Every file is deterministic: re-running the export gives identical bytes.

R3 prompts describe the rendered (conventional) cell by default; ``r3_cell="input"`` describes the input
cell instead, which is what the render-ceiling study's ``eval_r3_coords.jsonl`` did (161 of its 210 prompts
are byte-identical to ``r3_prompt`` of the input cell, 43 to that of the conventional cell).

Label (answer) of an item: the dataset's own crystal system when the input carries one
(``truth="dataset"``, the study's scoring) else the rendered (conventional) cell's, by spglib at τ;
disagreements are listed in the manifest, never resolved silently.

Layout: ``settings`` (ExportSettings), ``prompts`` (questions, R3 prompts), ``harness_files`` (JSONL, TSV,
id table, harness tasks),
this module (rendering, sidecars, manifest, certificate).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import numpy as np

from viewcert.benchmark.harness_files import LETTERS, question_record, write_harness_files
from viewcert.benchmark.prompts import (
    R3_PREAMBLE,
    crystal_systems,
    image_question,
    r3_file,
    r3_prompt,
)
from viewcert.benchmark.settings import DEFAULT_TILING, TASKS, ExportSettings
from viewcert.cameras.framing import framing_record
from viewcert.cameras.policy import frame
from viewcert.certify import CertifyConfig, conventional_cell
from viewcert.certify.ceilings import both_ceilings
from viewcert.certify.certificate import write_certificate
from viewcert.certify.inputs import Selection, load_input
from viewcert.certify.run import items_table, run_certification
from viewcert.constraints import with_constraints
from viewcert.defaults import GEOMETRIC
from viewcert.errors import InputError
from viewcert.formats.export import Export, write_export
from viewcert.formats.records import CeilingCertificate
from viewcert.io.atomic import write_text_atomic
from viewcert.io.images import write_buffers, write_png, write_sidecar
from viewcert.numeric import fixed
from viewcert.parallel import map_items
from viewcert.render.raster import build_scene, drawn_policy, render
from viewcert.render.visibility import view_atom_table
from viewcert.resolution import quantize_tree
from viewcert.structures import Structure, tiling_translations
from viewcert.symmetry.labels import analyse_cell

__all__ = ["DEFAULT_TILING", "LETTERS", "R3_PREAMBLE", "TASKS", "ExportSettings",
           "build_benchmark", "ceiling_lines", "ceilings", "crystal_systems", "export_item", "image_question", "projection_matrix", "r3_prompt",
           "view_sidecar"]


def projection_matrix(camera) -> list[list[float]]:
    """3×4 homogeneous world → pixel matrix: [u·w, v·w, w]ᵀ = M [x, y, z, 1]ᵀ (orthographic: w = 1)."""
    r = camera.rotation
    if camera.kind == "orthographic":
        s = camera.scale
        m = np.zeros((3, 4))
        m[0, :3] = s * r[0]
        m[1, :3] = -s * r[1]
        m[0, 3] = 0.5 * camera.width - s * r[0] @ camera.center
        m[1, 3] = 0.5 * camera.height + s * r[1] @ camera.center
        m[2, 3] = 1.0
        return m.tolist()
    # w = depth = −z_cam; u·w = f·x_cam + cx·w, v·w = −f·y_cam + cy·w with cam = R (x − position)
    k = np.array([[camera.focal, 0.0, -camera.cx], [0.0, -camera.focal, -camera.cy], [0.0, 0.0, -1.0]])
    rt = np.concatenate([r, -(r @ camera.position)[:, None]], axis=1)
    return (k @ rt).tolist()


def view_sidecar(result, *, view_name: str, image: str, structure: Structure, framing: dict) -> dict:
    """The JSON sidecar of one rendered view (see module docstring)."""
    tab = view_atom_table(result)
    scene = result.scene
    n_cell = structure.n_atoms
    shifts = None
    if structure.is_periodic:
        shifts = tiling_translations(scene.tiling).astype(int)
    atoms = []
    for k in range(scene.n_atoms):
        row = {
            "id": k,
            "cell_index": int(tab["cell_index"][k]),
            "tile": int(tab["tile"][k]),
            "element": structure.symbols[int(tab["cell_index"][k])],
            "uv": [fixed(tab["uv"][k, 0]), fixed(tab["uv"][k, 1])],
            "depth": fixed(tab["depth"][k]),
            "visible_pixels": int(tab["visible_pixels"][k]),
            "silhouette_pixels": int(tab["silhouette_pixels"][k]),
            "visible_fraction": fixed(tab["visible_fraction"][k]),
        }
        if shifts is not None:
            row["translation"] = shifts[int(tab["tile"][k])].tolist()
        atoms.append(row)
    cam = result.camera
    return {
        "format": "viewcert.render.sidecar/1",
        "view": view_name,
        "image": image,
        "camera": quantize_tree(cam.to_dict()),  # at the certificate's resolutions (viewcert.resolution)
        "projection_matrix": [[fixed(v, 9) for v in row] for row in projection_matrix(cam)],
        "framing": framing,
        "style": scene.style.to_dict(),
        "supersample": int(result.supersample),
        "id_buffer": {
            "codes": {"background": -1, "bond": -2, "edge": -3},
            "atom_id": f"drawn atom id = tile * {n_cell} + cell_index; tiles in C order of the tiling "
                       f"{list(scene.tiling)} (a slowest); translation = the tile's lattice translation",
            "pixel": "pixel (row i, col j) shows what the ray through its centre (j + 0.5, i + 0.5) hits first",
        },
        "structure": {
            "id": structure.identifier,
            "n_cell_atoms": n_cell,
            "lattice": None if structure.lattice is None else [[fixed(v, 9) for v in r] for r in structure.lattice],
            "tiling": list(scene.tiling),
        },
        "atoms": atoms,
        "n_atoms_drawn": scene.n_atoms,
        "n_atoms_visible": int((tab["visible_pixels"] > 0).sum()),
    }


def _order_key(item_id: str) -> str:
    return hashlib.sha256(item_id.encode()).hexdigest()


def export_item(job: tuple) -> dict:
    """Render one question's views and write its PNGs and sidecars (module level: runs in workers)."""
    item, index, settings, out = job
    settings = settings if isinstance(settings, ExportSettings) else ExportSettings.from_options(**settings)
    out = Path(out)
    rec: dict[str, Any] = {"id": item.id, "index": index}
    try:
        s = raw = item.read()
        if not s.is_periodic:
            raise InputError("the crystal-system task needs a periodic structure (this one is a molecule)")
        if settings.standardize:
            s = conventional_cell(s, symprec=settings.std_symprec, angle_tolerance=settings.std_angle_tolerance,
                                  orientation="pymatgen")
        check = analyse_cell(s.lattice, s.frac_coords, s.numbers, symprec=settings.tau,
                             angle_tolerance=settings.std_angle_tolerance, cross_check=True)
        rendered = check.label_dict()
    except Exception as exc:  # noqa: BLE001 - an unreadable item is reported, not fatal
        rec["error"] = f"{type(exc).__name__}: {exc}"
        return rec
    dataset = (item.label or {}).get("crystal_system")
    rendered_cs = None if rendered is None else rendered["crystal_system"]
    if settings.truth == "dataset" and dataset:
        answer, source = dataset, "dataset"
    else:
        answer, source = rendered_cs, "rendered"
    rec.update({"answer": answer, "answer_source": source, "label_dataset": dataset, "label_rendered": rendered,
                "label_mismatch": bool(dataset and rendered_cs and dataset != rendered_cs),
                "cross_check": None if check.agree else check.describe_disagreement(),
                "formula": s.formula, "n_cell_atoms": s.n_atoms,
                "r3_prompt": r3_prompt(s if settings.r3_cell == "rendered" else raw)})

    im = settings.image
    spec = im.protocol.spec  # resolved once at the boundary (perspective: its pinholes)
    proto = spec.protocol
    # the shipped images' framing policy: the one the certificate's as-rendered ID buffer uses (_certify)
    policy = drawn_policy(im.style, tiling=settings.tiling, width=im.width, height=im.height, kind=im.kind)
    cams = frame(im.protocol, s, policy)
    scene = build_scene(s, im.style, tiling=settings.tiling)
    framing = framing_record(policy, s, perspective=spec.kind == "perspective")
    images, occl = [], []
    for v, (view, cam) in enumerate(zip(proto.views, cams, strict=True)):
        res = render(scene, cam, supersample=im.supersample)
        name = f"q{index:04d}_v{v}"
        write_png(out / "images" / f"{name}.png", res.rgb)
        side = view_sidecar(res, view_name=view.name, image=f"images/{name}.png", structure=s, framing=framing)
        write_sidecar(out / "sidecars" / f"{name}.json", side)
        if settings.buffers:
            write_buffers(out / "buffers" / name, res.atom_id, res.depth)
        images.append(f"images/{name}.png")
        hidden = side["n_atoms_drawn"] - side["n_atoms_visible"]
        occl.append({"view": view.name, "n_drawn": side["n_atoms_drawn"], "n_hidden": hidden,
                     "hidden_fraction": fixed(hidden / side["n_atoms_drawn"])})
    rec.update({"images": images, "view_names": [v.name for v in proto.views], "occlusion": occl})
    return rec


def _usable_items(dataset) -> tuple[list, list[dict]]:
    """The dataset's items in SHA-256 order of their ids, split into crystals (usable) and skipped ones
    (molecules and unreadable items get no question number) with the reason."""
    items = sorted(dataset.items, key=lambda it: _order_key(it.id))
    skipped = []
    usable = []
    for it in items:
        try:
            periodic = it.read().is_periodic
        except Exception as exc:  # noqa: BLE001 - reported in the manifest
            skipped.append({"id": it.id, "error": f"{type(exc).__name__}: {exc}"})
            continue
        if not periodic:
            skipped.append({"id": it.id, "error": "a molecule has no crystal system (no lattice)"})
            continue
        usable.append(it)
    return usable, skipped


def build_benchmark(
    input_spec: str | os.PathLike,
    out: str | os.PathLike,
    *,
    settings: ExportSettings | None = None,
    subset: str = "eval",
    ids: list[str] | None = None,
    limit: int | None = None,
    certify: bool = True,
    delta: float = 0.01,
    n_workers: int | None = 1,
    progress: bool | None = None,
) -> Export:
    """Export a benchmark (see module docstring); returns it (``formats.export.Export``). ``ids``/``limit`` restrict the
    input items (``limit``: the first n in the SHA-256 order, so a prefix is not biased by input order).

    Parameters
    ----------
    input_spec : str or PathLike
        INPUT (see ``certify.inputs``).
    out : str or PathLike
        The export folder.
    settings : ExportSettings, optional
        Protocol, style, image size (px), tiling, framing, arms, constraints; default ``ExportSettings()``.
    subset : str
        The study layout's subset (``eval`` or ``all``).
    ids : list of str, optional
        Only these item ids.
    limit : int, optional
        The first n items in SHA-256 order of their ids.
    certify : bool
        Certify the shown items (the as-rendered and geometric ceilings).
    delta : float
        δ (Å) of the certificate.
    n_workers : int, optional
        Worker processes (None: every core).
    progress : bool, optional
        Show a progress bar (None: when the console is a terminal).

    Returns
    -------
    Export
        The export as written (manifest, items, files, certificate).
    """
    settings = settings or ExportSettings()
    out = Path(out)
    dataset = load_input(str(input_spec), subset=subset)
    if ids is not None:
        dataset = dataset.select(ids)
    items, skipped = _usable_items(dataset)
    if limit is not None:
        items = items[: int(limit)]
    dataset = dataset.select([it.id for it in items])
    jobs = [(it, k, settings, str(out)) for k, it in enumerate(items)]  # the resolved protocol rides along
    run = map_items(export_item, jobs, keys=[it.id for it in items], n_workers=n_workers, progress=progress,
                    description=f"render {len(items)} questions")
    records = list(run.results)
    errors = [r for r in records if "error" in r]
    good = [r for r in records if "error" not in r and r.get("answer")]
    choices = crystal_systems()
    question = image_question(settings, settings.image.protocol.view_names)
    questions = [with_constraints(question_record(r["index"], r["id"], r["images"], question, settings.task,
                                                  r["answer"], choices=choices), settings.constraints) for r in good]
    harness = write_harness_files(questions, out, settings.task, r3=[r["r3_prompt"] for r in good])
    write_text_atomic(out / "r3_prompts.jsonl", r3_file(good, choices, settings.task))
    cert, both = None, None
    if certify and good:
        cert, geometric = _certify(dataset.select([r["id"] for r in good]), settings, delta, out, n_workers)
        both = ceilings(cert, geometric)
    return write_export(out, "crystal", {
        "task": settings.task, "input": dataset.to_dict(), "settings": settings.record(),
        "n_questions": len(good),
        "items": [{k: r.get(k) for k in ("id", "index", "answer", "answer_source", "label_dataset",
                                         "label_rendered", "label_mismatch", "cross_check", "formula",
                                         "n_cell_atoms", "occlusion", "error")} for r in records],
        "errors": skipped + [{"id": r["id"], "error": r["error"]} for r in errors],
        "label_mismatches": [r["id"] for r in good if r.get("label_mismatch")],
        "details": {"question": question, "choices": list(choices), **({"ceilings": both} if both else {}),
                    "constraints": {q["id"]: {"applied": [c["name"] for c in q["constraints"]],
                                              "skipped": q["constraints_skipped"]} for q in questions}},
        "harness_files": harness}, cert)


#: how a crystal export chose its questions, recorded in the certificate (``inputs.selection``) with their ids
SELECTION_RULE = ("the export's questions: the input's crystals that were read, rendered and given an answer, "
                  "in SHA-256 order of the item id, the first --limit of them (limit = n); ids in input order")


def ceilings(as_rendered: CeilingCertificate, geometric: CeilingCertificate) -> dict:
    """Both ceilings of an export, labelled: the as-rendered one (its certificate: the atoms the shipped images
    show) and the geometric one (every atom, exact projection, as ``viewcert certify`` computes by default; the
    same cell, cameras, tiling, δ and τ), each ``correct``/``n``, and, where they differ, every item one counts
    right and the other does not, with the reasons it lost in each (``certify.ceilings.both_ceilings``)."""
    return both_ceilings(as_rendered, geometric)


def ceiling_lines(both: dict, digest: str) -> list[str]:
    """The report of an export's ceilings (``ceilings``): one line when they agree, else both, labelled, and one
    line per item that counts in one and not the other, with the reasons it lost."""
    ren, geo = both["as_rendered"], both["geometric"]
    head = (f"ceiling R1 = {ren['correct']}/{ren['n']} as rendered (the atoms the shipped images show), certificate "
            f"sha256:{digest}")
    if not both["differ"]:
        return [head + "; the geometric ceiling (every atom, exact projection: `viewcert certify` with the same "
                "settings) is the same"]
    lines = [head, f"geometric ceiling R1 = {geo['correct']}/{geo['n']} (every atom, exact projection: what "
                   "`viewcert certify` reports with the same settings); they differ on:"]
    for d in both["differ"]:
        lost, won = ("as rendered", "geometric") if d["correct_geometric"] else ("geometric", "as rendered")
        why = d["as_rendered"] if lost == "as rendered" else d["geometric"]
        lines.append(f"  {d['id']}: right {won}, lost {lost} ({', '.join(why) or 'no reason recorded'})")
    return lines


def _certify(dataset, settings: ExportSettings, delta: float, out: Path, n_workers) -> tuple:
    """The benchmark's ceiling through ``viewcert.certify`` (same protocol, tiling, image size) on exactly the
    questions' items, recorded as the certificate's selection so that ``verify`` recomputes that part: (the
    certificate written, observations ``visible``: the shipped images' ID buffer; the geometric ceiling of the
    same settings, observations ``ideal``, as ``viewcert certify`` computes it, not written)."""
    dataset = dataset.with_selection(Selection(SELECTION_RULE, tuple(it.id for it in dataset.items)))
    kw: dict[str, Any] = {"protocol": settings.image.protocol, "delta": delta, "tau": settings.tau,
                          "tiling": settings.tiling, "image_size": settings.image.size, "truth": settings.truth,
                          "std_symprec": settings.std_symprec, "std_angle_tolerance": settings.std_angle_tolerance,
                          "standardize": settings.standardize,
                          # the as-rendered ceiling: the ID buffer of the shipped images (their style, and their
                          # framing policy: the drawn spheres, drawn_policy), recorded in the certificate
                          "observe": "visible", "style": settings.image.style, "frame_on": "drawn",
                          "constraints": settings.constraints}  # what the prompts ask (recorded when any)
    cert, _ = run_certification(dataset, CertifyConfig(**kw), n_workers=n_workers, progress=False)
    write_certificate(out / "certificate.json", cert.to_dict())
    write_text_atomic(out / "certificate_items.csv", items_table(cert))
    geo = {k: v for k, v in kw.items() if k not in ("image_size", "style", "frame_on")}
    geometric, _ = run_certification(dataset, CertifyConfig(**{**geo, "observe": GEOMETRIC}), n_workers=n_workers,
                                     progress=False)
    return cert, geometric
