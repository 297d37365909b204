"""End-to-end entry points used by the CLI and the notebook: manifest (or study folder) -> ladder ->
report, and atom lists + structures -> extraction audit -> report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from viewcert import stats as st
from viewcert.attribution.adherence import read_item_constraints
from viewcert.attribution.diagnostics import Diagnostics, diagnose, read_prompts
from viewcert.attribution.discover import manifest_from_export
from viewcert.attribution.evidence import item_evidence
from viewcert.attribution.extraction import (
    DEFAULT_NULL_DRAWS,
    DEFAULT_TOLERANCES,
    HEADLINE_TOLERANCE,
    ExtractionAudit,
    audit_extraction,
    check_lattices,
    read_emitted,
    true_cells_from_structures_json,
)
from viewcert.attribution.ladder import (
    DEFAULT_THRESHOLD,
    Ceiling,
    Ladder,
    build_ladder,
    ceiling_from_certificate,
    ceiling_from_number,
)
from viewcert.attribution.readers import manifest_benchmark, read_manifest
from viewcert.attribution.report import Report, write_report
from viewcert.attribution.shipped import task_parser
from viewcert.attribution.table import (
    InputRecord,
    Manifest,
    ResultTable,
    load_manifest,
    manifest_from_study_dir,
    restrict_items,
    sha256_file,
)
from viewcert.attribution.task_scores import (
    harness_agreement,
    interaction_command_scale,
    interaction_command_scores,
    list_scale,
    list_scores,
    misi_scale,
    misi_scores,
)
from viewcert.errors import InputError
from viewcert.formats.reader import receive
from viewcert.formats.records import CertificateVisitor
from viewcert.io.idlist import read_ids

#: the study's two ceilings (docs/reference.md): R1 = 210/210 at δ = τ = 0.01 Å (five views), and 200/210 for the
#: released first-pair oracle at δ = 0.15 Å
STUDY_R1 = ("1@0.01", "200/210@0.15")
STUDY_R1_SOURCE = "render-ceiling study oracle on data/e3 eval (docs/reference.md)"


def run_ladder(
    *,
    manifest: str | Path | Manifest | None = None,
    study_dir: str | Path | None = None,
    export: str | Path | None = None,
    results: Sequence[str | Path] = (),
    r1: Sequence[str | float] = (),
    certificate: str | Path | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    tie_rule: str = "first",
    scoring: str = "vote",
    bootstrap: st.BootstrapSettings = st.BootstrapSettings(),
    allow_stale_certificate: bool = False,
    ids: str | Path | None = None,
) -> tuple[Ladder, ResultTable, Manifest]:
    """Read the inputs, resolve the ceilings (certificate, numbers, or the manifest's own; the study
    folder defaults to R1 = 1 and 200/210) and build the ladder. ``export``: a benchmark export whose harness
    results are found inside it, or in the files and folders ``results`` names (``attribution.discover``; its
    certificate gives R1). A viewcert certificate whose digest does not match its content is refused
    (``records.StaleCertificate``) unless ``allow_stale_certificate`` (then the ceiling's source says DIGEST
    MISMATCH). ``ids``: an id file (one id per line, ``io.idlist``): only its items, each of which must be among
    the results' items; an R1 given as a number is kept as given.

    Parameters
    ----------
    manifest : str, Path or Manifest, optional
        A TOML manifest of the result files.
    study_dir : str or Path, optional
        The study's folder (its own manifest).
    export : str or Path, optional
        A benchmark export folder.
    results : sequence of str or Path
        Files and folders holding an export's harness results (default: inside the export).
    r1 : sequence of str or float
        Ceilings given as numbers (``ceiling_from_number``).
    certificate : str or Path, optional
        A certificate giving R1.
    threshold : float
        An arm is unscored when its API-error samples / samples or its items without an answer / items
        exceed it (a fraction in [0, 1), strict >).
    tie_rule : str
        Majority-vote tie rule: ``first``, ``alphabetical`` or ``none``.
    scoring : str
        ``"vote"`` (the majority answer per item) or ``"harness"`` (the mean of the harness's scores over repeats).
    bootstrap : stats.BootstrapSettings
        Seed, resamples, α and share cutoff of the bootstrap intervals, as one value.
    allow_stale_certificate : bool
        Accept a certificate whose digest does not match (its ceiling's source says DIGEST MISMATCH).
    ids : str or Path, optional
        An id file restricting the items.

    Returns
    -------
    tuple of (Ladder, ResultTable, Manifest)
        The ladder, the table it was built from and the manifest read.
    """
    m = _manifest(manifest, study_dir, export, results)
    if study_dir is not None and not r1 and certificate is None:
        r1 = STUDY_R1
    shipped = manifest_benchmark(m)
    parser = task_parser(m.task, shipped)
    table, coverage = read_manifest(m, parser=parser, shipped=shipped)
    if ids is not None:
        table, coverage = restrict_items(table, coverage, read_ids(ids), source=str(ids))
    ceilings: list[Ceiling] = []
    cert = certificate if certificate is not None else (m.certificate if not r1 else None)
    if cert is None and not r1 and shipped is not None:
        cert = shipped.certificate
    scored = shipped is not None and cert is not None and shipped.answer_format in ("list", "command")
    # read once: the ceiling and, for a list or command export, the task scores (their typed certificate)
    got = receive(cert, allow_stale=allow_stale_certificate, streamed=True) if scored else None
    if cert is not None:
        id_map = None if shipped is None else {v: k for k, v in shipped.source_ids.items()}
        ceilings.append(ceiling_from_certificate(cert, coverage.universe, id_map=id_map, received=got,
                                                 allow_stale=allow_stale_certificate))
    values = list(r1) or ([m.r1] if (m.r1 is not None and cert is None) else [])
    source = STUDY_R1_SOURCE if (study_dir is not None and tuple(values) == STUDY_R1) else "number"
    ceilings += [ceiling_from_number(v, coverage.universe, source=source) for v in values]
    if not ceilings:
        raise InputError("no R1: pass --r1 VALUE or --certificate FILE (or set r1/certificate in the manifest)",
                         field="r1")
    ladder = build_ladder(table, coverage, ceilings, threshold=threshold, tie_rule=tie_rule, scoring=scoring,
                          bootstrap=bootstrap, labels=parser.labels,
                          chance=None if shipped is None else shipped.chance())
    ladder.harness_agreement = harness_agreement(ladder, table)
    if got is not None:
        targets = shipped.targets(parser)  # parsed once for the scores and the item scale
        if shipped.answer_format == "list":
            ladder.task_scores = list_scores(ladder, targets, cert, parsed=got.certificate)
            ladder.item_scale = list_scale(ladder, got.certificate, str(cert), targets)
        else:  # command answers: MiSI credit by the certificate's kind
            ladder.task_scores, ladder.item_scale = got.certificate.visit(
                _CommandScores(ladder, targets, cert, shipped.task))
    return ladder, table, m


@dataclass(frozen=True)
class _CommandScores(CertificateVisitor):
    """(task scores, item scale) of an export whose answers are commands: an interaction export's (a location or
    docking task) against its consistent-answer ceilings; any other certificate's as a transformation task's
    (``misi_scores`` refuses one that is not)."""

    ladder: Any
    targets: Mapping[str, str]
    cert: Any  # the certificate's path as given
    task_name: str  # the export's task (interaction-location, docking, ...)

    def interaction(self, c):
        return (interaction_command_scores(self.ladder, self.targets, self.cert, self.task_name, parsed=c),
                interaction_command_scale(self.ladder, c, self.task_name, str(self.cert)))

    def task(self, c):
        return (misi_scores(self.ladder, self.targets, self.cert, parsed=c),
                misi_scale(self.ladder, self.targets, c, str(self.cert)))

    def ceiling(self, c):
        return self.task(c)


def _manifest(manifest, study_dir, export, results) -> Manifest:
    """The manifest of exactly one of: an export (its results found, ``attribution.discover``), a study folder,
    a manifest file or value."""
    if sum(x is not None for x in (manifest, study_dir, export)) != 1:
        raise InputError("give exactly one of an export folder, a manifest or a study folder", field="manifest")
    if results and export is None:
        raise InputError("results are read against an export: give its folder", field="results")
    if export is not None:
        return manifest_from_export(export, results)
    if study_dir is not None:
        return manifest_from_study_dir(study_dir)
    return manifest if isinstance(manifest, Manifest) else load_manifest(manifest)


def run_extraction(
    *,
    emitted: str | Path,
    structures: str | Path,
    sidecar: str | Path | None = None,
    coordinates: str = "fractional",
    tolerances: Sequence[float] = DEFAULT_TOLERANCES,
    headline_tolerance: float = HEADLINE_TOLERANCE,
    metric: str = "fractional",
    null_draws: int = DEFAULT_NULL_DRAWS,
    bootstrap: st.BootstrapSettings = st.BootstrapSettings(),
    symprec: float = 0.01,
    angle_tolerance: float = 5.0,
) -> tuple[ExtractionAudit, list[dict]]:
    """Audit emitted atom lists against the conventional cells built from ``structures`` (the study's
    ``structures.json``); ``sidecar`` (labels_sidecar.json) cross-checks the cells' lattice lengths.

    Parameters
    ----------
    emitted : str or Path
        The model outputs with the emitted atom lists.
    structures : str or Path
        The study's ``structures.json``.
    sidecar : str or Path, optional
        ``labels_sidecar.json``, cross-checking the cells' lattice lengths (Å).
    coordinates : str
        Frame of the emitted positions: ``"fractional"`` or ``"cartesian"`` (Å).
    tolerances : sequence of float
        Matching tolerances reported (fractional units or Å by ``metric``).
    headline_tolerance : float
        The tolerance of the headline numbers.
    metric : str
        ``"fractional"`` or ``"cartesian"`` (Å) distances.
    null_draws : int
        Random-position null draws per item.
    bootstrap : stats.BootstrapSettings
        Seed, resamples, α and share cutoff of the bootstrap intervals, as one value.
    symprec : float
        τ (Å) of the conventional cells built.
    angle_tolerance : float
        spglib's angle tolerance (degrees).

    Returns
    -------
    tuple of (ExtractionAudit, list of dict)
        The audit and one input record per file read (path, SHA-256, role).
    """
    items = read_emitted(emitted, coordinates=coordinates)
    cells = true_cells_from_structures_json(structures, [e.item_id for e in items], symprec=symprec,
                                            angle_tolerance=angle_tolerance)
    inputs = [{"path": str(emitted), "sha256": sha256_file(emitted), "role": "emitted atoms"},
              {"path": str(structures), "sha256": sha256_file(structures), "role": "structures (CIF)",
               "conventional_cell": f"pymatgen SpacegroupAnalyzer(symprec={symprec}, "
                                    f"angle_tolerance={angle_tolerance}).get_conventional_standard_structure()"}]
    if sidecar is not None:
        bad = check_lattices(cells, sidecar)
        if bad:
            raise InputError(f"{len(bad)} conventional cell(s) disagree with the sidecar lattice, first "
                             f"{bad[0]!r}", source=str(sidecar), field="lattice")
        inputs.append({"path": str(sidecar), "sha256": sha256_file(sidecar), "role": "lattice cross-check",
                       "result": "all lattice lengths agree within 1e-3 Å"})
    audit = audit_extraction(items, cells, tolerances=tolerances, headline_tolerance=headline_tolerance,
                             metric=metric, null_draws=null_draws, seed=bootstrap.seed,
                             n_boot=bootstrap.n_boot)
    return audit, inputs


def study_paths(study_dir: str | Path) -> dict[str, Path]:
    root = Path(study_dir)
    return {
        "emitted": root / "results" / "perception_transplant" / "a3_raw_dev.json",
        "structures": root / "data" / "e3" / "structures.json",
        "sidecar": root / "data" / "e3" / "labels_sidecar.json",
    }


def ladder_diagnostics(ladder: Ladder, table: ResultTable, manifest: Manifest, *,
                       bootstrap: st.BootstrapSettings = st.BootstrapSettings()) -> Diagnostics:
    """Adherence, text ceiling, audits and shortcut tests for a manifest's ladder: prompts and constraints
    from the benchmark export's ``benchmark.jsonl`` when the manifest names one, else prompts from its item
    list when that carries a ``question`` per item, else none (adherence and shortcut tests still run)."""
    prompts, constraints = None, None
    bench = manifest.benchmark
    source = bench / "benchmark.jsonl" if bench is not None else manifest.items
    if source is not None and Path(source).is_file():
        try:
            prompts = read_prompts(source, ladder.universe)
        except InputError:
            prompts = None  # an item list without prompt texts: no text ceiling, said in the settings
        if bench is not None:
            constraints = read_item_constraints(source)
    return diagnose(ladder, table, prompts=prompts, item_constraints=constraints, bootstrap=bootstrap)


def study_diagnostics(study_dir: str | Path, ladder: Ladder, table: ResultTable, *,
                      bootstrap: st.BootstrapSettings = st.BootstrapSettings()) -> Diagnostics:
    """The study's diagnostics: prompts from ``data/e3/eval.jsonl`` when present (the image question, identical
    for all 210 items and the one the no-image arm used; a study folder holding the predictions alone is scored
    from them, with no prompt diagnostics), no explicit constraints."""
    items = Path(study_dir) / "data" / "e3" / "eval.jsonl"
    prompts = read_prompts(items, ladder.universe) if items.is_file() else None
    return diagnose(ladder, table, prompts=prompts, bootstrap=bootstrap)


def study_report(study_dir: str | Path, out_dir: str | Path, *,
                 bootstrap: st.BootstrapSettings = st.BootstrapSettings()) -> tuple[Report, Ladder, ExtractionAudit]:
    """The full report on the render-ceiling study: ladder with R1 = 1 and 200/210, its adherence and
    shortcut diagnostics, and the extraction audit at 0.15 fractional units.

    Parameters
    ----------
    study_dir : str or Path
        The study's folder (structures, predictions, results).
    out_dir : str or Path
        Report folder.
    bootstrap : stats.BootstrapSettings
        Seed, resamples, α and share cutoff of the bootstrap intervals, as one value.

    Returns
    -------
    tuple of (Report, Ladder, ExtractionAudit)
        The written report's paths, the ladder and the audit.
    """
    ladder, table, manifest = run_ladder(study_dir=study_dir, bootstrap=bootstrap)
    p = study_paths(study_dir)
    audit, ext_inputs = run_extraction(emitted=p["emitted"], structures=p["structures"], sidecar=p["sidecar"],
                                       bootstrap=bootstrap)
    diag = study_diagnostics(study_dir, ladder, table, bootstrap=bootstrap)
    evidence = item_evidence(ladder, table, giveaway=diag.giveaway, shortcut_tests=diag.shortcut_tests,
                             text_items=diag.text_items, bootstrap=bootstrap)
    report = write_report(out_dir, ladder=ladder, table=table, extraction=audit, extraction_inputs=ext_inputs,
                          diagnostics=diag, evidence=evidence,
                          title="render-ceiling study: attribution ladder and fabrication audit",
                          extra_provenance={"manifest": manifest.to_dict()})
    return report, ladder, audit


__all__ = ["STUDY_R1", "InputRecord", "ladder_diagnostics", "run_extraction", "run_ladder", "study_diagnostics",
           "study_paths", "study_report"]
