"""Certify a structure source (``viewcert certify``), recompute a certificate (``viewcert verify``) and run
design sweeps (``viewcert sweep``), each returning its report: the summary, the files written and the items that
could not be read or certified (reported apart, not counted in R1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from viewcert import defaults
from viewcert.api.arguments import LIMITS, OPTIONAL_CALLABLE, checked_types, validated
from viewcert.api.report import Line, Report, check_out, parse_tiling
from viewcert.api.vocabulary import CERTIFY_CONFIG, COMMANDS
from viewcert.certify import CertifyConfig
from viewcert.certify.ceilings import renders
from viewcert.certify.evaluate import check_placements
from viewcert.certify.inputs import database_format, label_hint
from viewcert.certify.molecule import MOLECULE_LEVELS
from viewcert.certify.published import certify_published
from viewcert.certify.published_outputs import (
    published_summary_text,
    verify_published,
    write_published_outputs,
)
from viewcert.certify.recovered import write_redraws
from viewcert.certify.run import (
    ceiling_lines_of,
    certify_dataset,
    certify_streamed,
    error_line,
    prepared,
    summary_text,
    use_item_table,
)
from viewcert.certify.sweep import SweepPlan, run_sweep
from viewcert.certify.trust import trusted_root
from viewcert.certify.verify import verify_certificate
from viewcert.certify.verify_table import verify_table
from viewcert.errors import InputError, ViewcertError, did_you_mean
from viewcert.formats.export import check_manifest
from viewcert.formats.reader import Received, receive
from viewcert.formats.records import CeilingCertificate, CertificateVisitor
from viewcert.formats.table import StreamedCertificate
from viewcert.io.outputs import claimed
from viewcert.limits import Limits, using_limits
from viewcert.symmetry.labels import LEVELS

NOT_IN_R1 = "(reported apart and not counted in R1)"


def levels(score: str) -> dict[str, Any]:
    """Levels R1 scores, comma-separated (``-`` or ``_``): crystal levels (the first is the crystals' headline)
    and molecule levels (default: all), as ``CertifyConfig`` settings; InputError for an unknown level."""
    names = [x.strip().lower().replace("-", "_") for x in str(score).split(",") if x.strip()]  # one vocabulary:
    # crystal-system and crystal_system are one level, shown as the levels are written (crystal_system)
    bad = [x for x in names if x not in LEVELS and x not in MOLECULE_LEVELS]
    if bad or not names:
        hint = did_you_mean(bad[0], LEVELS + MOLECULE_LEVELS) if bad else ""
        raise InputError(f"--score: unknown level(s) {', '.join(bad) or repr(score)}{hint}; {defaults.LEVEL_HELP}")
    crystal = [x for x in names if x in LEVELS]
    mol = [x for x in names if x in MOLECULE_LEVELS]
    out: dict[str, Any] = {"score": crystal[0] if crystal else "crystal_system"}
    if mol and (len(names) > 1 or not crystal):  # "--score point_group" alone keeps the crystal meaning
        out["molecule_levels"] = tuple(mol)
    return out


def floats(text: str | None, name: str) -> list[float] | None:
    """Comma-separated numbers (None when empty); InputError otherwise."""
    if text is None or text.strip() == "":
        return None
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"{name} must be comma-separated numbers, got {text!r}") from None


def views_of(text: str | None) -> tuple[str, ...] | None:
    """Comma-separated view names (None when empty)."""
    return None if not text else tuple(v.strip() for v in text.split(",") if v.strip())


def certify_config(protocol: Any = None, *, standardize: bool = True, cross_check: bool = True,
                   **options: Any) -> CertifyConfig:
    """The ``CertifyConfig`` of ``viewcert certify``'s options, by the options' parameter names; an option not
    given takes the command's default (``api.vocabulary``: δ = 0.01 Å, the tiling and τ of the protocol,
    ...), so the API and the command line certify alike.

    Parameters
    ----------
    protocol : str, Protocol, ProtocolSpec or ResolvedProtocol, optional
        The views: a name or a protocol file (default: the command's, ``render-ceiling-5``).
    standardize : bool
        Render the conventional standard cell (``--no-standardize``: False).
    cross_check : bool
        Cross-check spglib with moyopy (``--no-cross-check``: False).
    **options
        The command's options by parameter name: views (comma-separated names), symprec (τ, Å; default: a named
        study protocol's, else δ),
        angle_tolerance (degrees, spglib/moyopy and the standardisation), tiling and supercell (text, ``2,2,2``;
        tiling None: the protocol's, ``CertifyConfig.protocol_tiling``),
        score, merge, cartesian_merge, delta (δ, Å), pairs, truth, sigma, sigma_unit, seed, occlusion, observe,
        min_pixels, cross_check_angle, margin, molecule_scale.

    Returns
    -------
    CertifyConfig
        The configuration ``viewcert certify`` builds from the same options.

    Raises
    ------
    InputError
        A bad value, an unknown option or a value of the wrong type, naming it.
    """
    specs = COMMANDS["certify"].specs()
    unknown = [k for k in options if k not in CERTIFY_CONFIG]
    if unknown:
        raise InputError(f"unknown certify setting {unknown[0]!r}{did_you_mean(unknown[0], CERTIFY_CONFIG)}",
                         field=unknown[0])
    v = {k: specs[k].default for k in CERTIFY_CONFIG} | options
    checked_types({k: (v[k], specs[k].type) for k in options} | {"standardize": (standardize, bool),
                                                                 "cross_check": (cross_check, bool)})
    protocol = specs["protocol"].default if protocol is None else protocol
    tiling = v.pop("tiling")  # None: the protocol's (a named study's own, else the tiling an export draws)
    parsed = dict(views=views_of(v.pop("views")), tiling=None if tiling is None else parse_tiling(tiling),
                  supercell=parse_tiling(v.pop("supercell")), **levels(v.pop("score")))
    symprec, angle, cartesian = v.pop("symprec"), v.pop("angle_tolerance"), v.pop("cartesian_merge")
    try:
        return CertifyConfig(protocol=protocol, tau=symprec, angle_tolerance=angle, std_angle_tolerance=angle,
                             standardize=standardize, cross_check=cross_check, periodic_merge=not cartesian,
                             **parsed, **{**v, "merge": v.get("merge") or None})
    except ViewcertError as exc:
        raise InputError(str(exc)) from None


def default_config() -> CertifyConfig:
    """The configuration ``viewcert certify`` uses when no option is given: ``certify``'s default."""
    return certify_config()


def complex_spec(spec: str, ligand: str | None, pocket: float | None) -> str:
    """INPUT with a ligand name and a pocket radius (Å) folded into a ``complex:PATH#ligand=RES,pocket=Å`` spec (so
    the certificate records them and verify re-reads the same molecule)."""
    if ligand is None and pocket is None:
        return spec
    if not spec.startswith("complex:") or "#" in spec:
        raise InputError("--ligand/--pocket apply to a complex:PATH input without '#' options")
    opts = [f"ligand={ligand}"] if ligand is not None else []
    opts += [f"pocket={pocket:g}"] if pocket is not None else []
    return f"{spec}#{','.join(opts)}"


def label_spec(spec: str, columns: list[str] | None) -> str:
    """INPUT with each published-label column folded in as ``#label=COLUMN[:LEVEL]`` (so the certificate records
    it); only a database input has columns."""
    if not columns:
        return spec
    if database_format(spec) is None:
        raise InputError("--label-column applies to a database input (optimade:, gnome:, ase:, *.parquet, *.db)")
    opts = ",".join(f"label={c}" for c in columns)
    return f"{spec}{',' if '#' in spec else '#'}{opts}"


@validated("certify", aliases={"input_spec": "input"}, inputs=("input_spec",), config=(CertifyConfig, type(None)),
           limits=LIMITS)
def certify(input_spec: str | Path, config: CertifyConfig | None = None, out: str | Path = "out/certify", *,
            subset: str = "eval", workers: int | None = None, scheduler: str | None = None, plots: bool = True,
            resume: bool = True, item_table: bool | None = None, keep_going: bool = True, force: bool = False,
            limits: Limits | None = None) -> Report:
    """Certify the render ceiling R1 of ``input_spec`` (a folder of structure files, a file, the study layout, a
    database, ``builtin:prototypes``) under ``config`` (protocol, δ and τ in Å, observation model, levels;
    default: the command's, ``default_config()``) and write certificate.json, items.csv, summary.txt and plots into
    ``out``; a geometric run (observe ideal, orthographic views, a JSON certificate) also certifies the same views as
    rendered (observe visible, in memory) and states both ceilings in the summary with the items that differ.
    ``item_table``: a sharded Parquet item table beside a small certificate.json (default: above 50,000 items);
    ``keep_going=False`` reads every item first and stops at the first unreadable one. The report's value: the
    certificate (a typed ceiling certificate, or the streamed certificate's dict).

    Parameters
    ----------
    input_spec : str or Path
        INPUT (see ``certify.inputs``).
    config : CertifyConfig, optional
        The certification's settings (protocol, δ and τ in Å, angle tolerance in degrees, observation model,
        levels); default ``default_config()``, the command line's defaults (``viewcert certify``'s).
    out : str or Path
        Output folder (a symlink the caller names is resolved once; default ``out/certify``).
    subset : str
        The study layout's subset (``eval`` or ``all``).
    workers : int, optional
        Worker processes (default: every core).
    scheduler : str, optional
        A Dask scheduler address; None: local processes.
    plots : bool
        Write the PNG plots.
    resume : bool
        Resume from the checkpointed shards of an identical earlier run under ``out``.
    item_table : bool, optional
        Stream the items into a sharded Parquet table; None: above 50,000 items.
    keep_going : bool
        False: read every item first and stop at the first unreadable one (``--fail-fast``).
    force : bool
        Replace the output of another certify run in ``out`` (``io.outputs.claimed``); without it, refused.
    limits : Limits, optional
        Resource limits in force for the call, checked before any work (default: those in force).

    Returns
    -------
    Report
        The summary lines and failed items (first, for stderr: what was resumed); ``value``: the certificate.
    """
    with using_limits(limits):  # in force for the call and below
        cfg = config if config is not None else default_config()
        if str(input_spec).startswith("images:"):  # another tool's published images: certify.published
            return _certify_images(str(input_spec), cfg, out, force)

        def before(dataset: Any) -> None:  # after certify's one limits check, before any item is certified
            items = dataset.items  # atoms checked as read (observations: when certified)
            if not keep_going:
                for it in items:
                    it.read()
            check_placements(items, cfg)  # perspective positions: a camera inside a structure is exit 2, now

        identity = {"input": str(input_spec), "config": cfg.to_dict(), "subset": subset, "plots": plots,
                    "item_table": item_table}
        with claimed(check_out(out), "certify", identity=identity, force=force) as claim:  # locked; one run
            out = claim.shown  # the folder the run writes into, as the lines name it (a symlink: its real path)
            dataset = prepared(str(input_spec), cfg, subset=subset, before=before)
            hint = tuple(Line(x) for x in (label_hint(dataset),) if x)  # a database's label-like columns, unread
            said: list[str] = []  # what was resumed (said after the run: stderr lines of the report)
            ceilings: list[str] = []
            got: CeilingCertificate | StreamedCertificate
            if use_item_table(dataset, item_table):
                got = certify_streamed(dataset, cfg, out, n_workers=workers, scheduler=scheduler, report=said.append)
            else:  # the honest ceiling too: the same views as rendered, in the same pass (certify.ceilings)
                got, rendered = certify_dataset(dataset, cfg, out=out, n_workers=workers, scheduler=scheduler,
                                                plots=plots, resume=resume, report=said.append,
                                                as_rendered=renders(cfg))
                ceilings = ceiling_lines_of(got, rendered, cfg)
        resumed = tuple(Line(x, err=True) for x in said)
        return got.visit(_CertifyReport(out, plots, hint, tuple(ceilings), resumed))


@dataclass(frozen=True)
class _CertifyReport(CertificateVisitor[Report]):
    """What ``certify`` reports of the certificate it wrote into ``out`` (a JSON certificate: both ceilings,
    geometric and as rendered, where the views are rendered, ``certify.ceilings``)."""

    out: Path
    plots: bool
    hint: tuple[Any, ...]  # a database's label-like columns, unread (``certify.inputs.label_hint``)
    ceilings: tuple[str, ...]  # the summary's lines of both ceilings (``certify.run.ceiling_lines_of``)
    resumed: tuple[Line, ...]  # what was resumed (stderr lines, first)

    def ceiling(self, cert: CeilingCertificate) -> Report:
        out = self.out
        return Report((*self.resumed, Line(summary_text(cert, ceilings=self.ceilings), nl=False), *self.hint, Line(
            f"wrote {out / 'certificate.json'}, {out / 'items.csv'}, {out / 'summary.txt'}, {out / 'disagreements.csv'}"
            + (", plots" if self.plots and cert.summary.n else ""))),
            failures=tuple(error_line(e) for e in cert.summary.errors or []), note=NOT_IN_R1, value=cert)

    def streamed(self, cert: StreamedCertificate) -> Report:  # summary.txt, the first errors of the item table
        n = cert.summary.n_errors
        errors = list(islice((it for it in cert.items() if it.is_error), 30)) if n else []  # lazily, shard by shard
        return Report((*self.resumed, Line((self.out / "summary.txt").read_text(), nl=False), *self.hint), failures=tuple(
            error_line({"id": it.id, "error": it.error}) for it in errors),
            n_failures=n, note="(every one in the item table); they are reported apart and not counted in R1",
            value=cert)


def _certify_images(spec: str, cfg: CertifyConfig, out: str | Path, force: bool) -> Report:
    """``certify images:FOLDER/images.toml``: the as-published ceiling beside the geometric one (every input
    checked first: one line, exit 2), written to ``out`` (claimed: one run, ``force`` replaces another certify
    run's); the report's value: the certificate."""
    identity = {"input": spec, "config": cfg.to_dict()}
    with claimed(check_out(out), "certify", identity=identity, force=force) as claim:
        cert = certify_published(spec, cfg)
        paths = write_published_outputs(claim.shown, cert)
        paths.update(write_redraws(claim.shown, cert, cert.input_folder()))
    return Report((Line(published_summary_text(cert), nl=False),
                   Line("wrote " + ", ".join(str(p) for p in paths.values()))),
                  failures=tuple(error_line(e) for e in cert.summary.errors), note=NOT_IN_R1, value=cert)


@validated("verify", aliases={"input_spec": "input", "allow_stale": "allow_stale_certificate"}, limits=LIMITS)
def verify(cert: str | Path, *, input_spec: str | None = None, inputs: str | Path | None = None,
           workers: int | None = None, scheduler: str | None = None, limits: Limits | None = None,
           allow_stale: bool = False) -> Report:
    """Recompute a certificate (any kind: crystal/molecule, streamed, transformation task, interaction) from its
    recorded inputs and settings; ``input_spec``: where the inputs are now; ``inputs``: the trusted folder every
    path the certificate names must resolve inside (default: the current folder). The report lists every
    difference and exits 1 if there is any; its value: the verification report.

    Parameters
    ----------
    cert : str or Path
        A certificate.json (any kind) or the folder holding it.
    input_spec : str, optional
        Where the inputs are now (trusted); default: the paths the certificate records.
    inputs : str or Path, optional
        Trusted folder every recorded path must resolve inside (default: the current folder).
    workers : int, optional
        Worker processes (default: every core).
    scheduler : str, optional
        A Dask scheduler address; None: local processes.
    limits : Limits, optional
        Resource limits in force for the call, checked before any work (default: those in force).
    allow_stale : bool
        Recompute a certificate whose digest does not match its content (reported as a MISMATCH).

    Returns
    -------
    Report
        Every difference; exit status 1 if there is one; ``value``: the verification report.
    """
    with using_limits(limits):  # in force for the call and below
        root = Path(inputs) if inputs is not None else Path.cwd()
        cert = Path(cert)
        if cert.is_dir() and not cert.is_symlink() and (cert / "certificate.json").is_file():
            cert = cert / "certificate.json"  # a certify output folder
        if cert.name == "certificate.json" and (cert.parent / "manifest.json").is_file():
            check_manifest(cert.parent)  # an export's certificate: its manifest's format and shape, as explore
        got = receive(cert, allow_stale=allow_stale, streamed=True)  # read once, every kind
        rep = got.certificate.visit(_Verify(cert, got, input_spec, root, workers, scheduler))
        # one_line: a received certificate's ids and values cannot forge a report line
        return Report(tuple(Line(x, one_line=True) for x in rep.lines()), exit_code=0 if rep.ok else 1, value=rep)


@dataclass(frozen=True)
class _Verify(CertificateVisitor[Any]):
    """Each kind recomputed by its own verifier."""

    path: Path
    got: Received
    input_spec: str | None
    root: Path
    workers: int | None
    scheduler: str | None

    def ceiling(self, cert: Any) -> Any:
        return verify_certificate(self.path, input_spec=self.input_spec, n_workers=self.workers,
                                  scheduler=self.scheduler, inputs_root=self.root, received=self.got)

    def streamed(self, cert: Any) -> Any:  # recomputed shard by shard beside its item table
        return verify_table(self.path, self.got, input_spec=self.input_spec, n_workers=self.workers,
                            scheduler=self.scheduler, inputs_root=self.root)

    def task(self, cert: Any) -> Any:  # an export's certificate: recomputed by running the export again
        from viewcert.benchmark.verify_export import verify_export  # lazy: start-up (the exporters)

        return verify_export(self.got, self.path, input_spec=self.input_spec, root=trusted_root(self.root))

    def interaction(self, cert: Any) -> Any:
        return self.task(cert)

    def published(self, cert: Any) -> Any:  # an as-published certificate: its images certified again
        return verify_published(self.path, self.got, input_spec=self.input_spec, inputs_root=self.root)


def sweep_plan(protocols: str, *, subsets: bool = False, deltas: str | None = None, sigmas: str | None = None,
               sigma_unit: str = "angstrom", seeds: int = 3, tie_tau: bool = False) -> SweepPlan:
    """The ``SweepPlan`` of ``viewcert sweep``'s text options: comma-separated protocol names, δ values (Å, each
    finite and > 0) and noise σ values (each finite and ≥ 0), ``seeds`` ≥ 1 draws per σ. InputError otherwise."""
    names = tuple(p.strip() for p in protocols.split(",") if p.strip())
    if not names:
        raise InputError("give at least one protocol name", field="--protocol")
    sig = floats(sigmas, "sigmas") or []
    if not all(0 <= s < float("inf") for s in sig):
        raise InputError(f"sigmas must be finite numbers ≥ 0, got {sigmas!r}", field="--sigmas")
    dl = floats(deltas, "deltas") or []
    if not all(0 < d < float("inf") for d in dl):
        raise InputError(f"deltas must be finite numbers > 0 (Å), got {deltas!r}", field="--deltas")
    if seeds < 1:
        raise InputError(f"seeds must be ≥ 1, got {seeds}", field="--seeds")
    return SweepPlan(protocols=names, subsets=subsets, deltas=tuple(dl), sigmas=tuple(sig), sigma_unit=sigma_unit,
                     seeds=seeds, tie_tau=tie_tau)


@validated("sweep", aliases={"input_spec": "input"}, inputs=("input_spec",), config=CertifyConfig, plan=SweepPlan,
           progress=OPTIONAL_CALLABLE)
def sweep(input_spec: str, config: CertifyConfig, plan: Any, out: str | Path = "out/sweep", *, subset: str = "eval",
          workers: int | None = None, scheduler: str | None = None, force: bool = False,
          progress: Callable[[str], None] | None = None) -> Report:
    """Design studies (``certify.sweep.SweepPlan``: view subsets, δ sweeps in Å, noise sweeps, κ) of
    ``input_spec`` from the base ``config``: CSV tables and plots in ``out``. The report's value: the results.

    Parameters
    ----------
    input_spec : str
        INPUT (see ``certify.inputs``).
    config : CertifyConfig
        The base configuration each study varies.
    plan : SweepPlan
        The studies: view subsets, δ values (Å), noise σ (px or Å), κ.
    out : str or Path
        Output folder.
    subset : str
        The study layout's subset (``eval`` or ``all``).
    workers : int, optional
        Worker processes (default: every core).
    scheduler : str, optional
        A Dask scheduler address; None: local processes.
    force : bool
        Replace the output of another sweep in ``out``; without it, refused.
    progress : callable, optional
        Called with each progress line (text).

    Returns
    -------
    Report
        The studies' lines; ``value``: the ``certify.sweep.SweepResult``.
    """
    identity = {"input": str(input_spec), "config": config.to_dict(), "plan": repr(plan), "subset": subset}
    with claimed(check_out(out), "sweep", identity=identity, force=force) as claim:
        res = run_sweep(input_spec, config, plan, subset=subset, n_workers=workers, scheduler=scheduler,
                        out=claim.shown, report=progress)
    out = claim.shown
    return Report((Line(res.text()), Line(f"wrote tables and plots to {out}")),
                  failures=tuple(error_line(e) for e in res.errors()), note=NOT_IN_R1, value=res)
