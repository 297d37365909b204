"""Design studies over one set of structures: every view subset of a protocol, δ sweeps, noise sweeps
(σ × seeds, tolerance from the oracle's noise module), conditioning κ per view pair. Tables are CSV; plots
show the ceiling against δ per protocol and the phantom rate per view subset.

Every configuration shares the standardization, so each structure is read and standardized once per
sweep and evaluated under every configuration in the same worker (``sweep_item``), over
``parallel.map_items`` (local processes or Dask, checkpointed, resumable).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from viewcert.cameras.conditioning import protocol_kappa
from viewcert.cameras.resolve import resolve
from viewcert.certify import plots as P
from viewcert.certify.config import CertifyConfig
from viewcert.certify.evaluate import evaluate, item_cameras, prepare
from viewcert.certify.inputs import Dataset, load_input
from viewcert.certify.run import fingerprint, resume_lines
from viewcert.errors import InputError, ViewcertError
from viewcert.formats.item_sections import OracleReport
from viewcert.formats.records import ItemOutcome
from viewcert.io.atomic import write_json_atomic, write_text_atomic
from viewcert.io.tables import dict_csv_text
from viewcert.numeric import sig
from viewcert.oracle.noise import delta_for_sigma, noise_sweep
from viewcert.parallel import map_items
from viewcert.stats import clopper_pearson_lower

STUDY_DELTAS = (0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.10, 0.125, 0.15, 0.20, 0.25, 0.30, 0.40, 0.50)


@dataclass(frozen=True)
class Tagged:
    study: str  # "subset" | "delta" | "noise" | "base"
    protocol: str
    views: tuple[str, ...]
    cfg: CertifyConfig

    def tag(self) -> dict:
        orc, see = self.cfg.oracle, self.cfg.observation
        return {"study": self.study, "protocol": self.protocol, "subset": "|".join(self.views),
                "n_views": len(self.views), "delta": orc.delta, "tau": self.cfg.symmetry.tau, "sigma": see.sigma,
                "sigma_unit": see.sigma_unit, "seed": see.seed, "pairs": orc.pairs,
                "tiling": "x".join(map(str, see.tiling))}


def noise_delta(sigma: float, kappa: float, base_delta: float, sigma_unit: str = "angstrom") -> float:
    """The oracle tolerance for noisy observations of std σ (Å in the image plane): δ = max(δ₀, 4·√2·κ·σ)
    (``oracle.noise.delta_for_sigma`` with the floor δ₀ = ``base_delta``), the rule behind the study's noise
    sweep: δ = 0.0155 Å at σ = 0.001 Å with κ = 2.7321. σ in px is refused: each structure is framed to its own
    image, so a pixel has no single length in Å and the rule would mix units."""
    if sigma_unit != "angstrom":
        raise InputError(f"the noise sweep's δ rule needs σ in Å (sigma_unit='angstrom'), got {sigma_unit!r}",
                         field="sigma_unit")
    return delta_for_sigma(sigma, kappa=kappa, floor=base_delta)


@dataclass(frozen=True)
class SweepPlan:
    """The studies of one sweep. protocols: names (None = the base configuration's protocol); subsets: every
    subset of at least ``min_views`` views of each protocol; deltas: δ values (Å) of a δ study, with τ = δ when
    ``tie_tau`` (else the base τ); sigmas: noise σ values of a noise study (``sigma_unit``; δ from
    :func:`noise_delta`), ``seeds`` draws per σ > 0."""

    protocols: tuple[str, ...] | None = None
    subsets: bool = False
    min_views: int = 2
    deltas: tuple[float, ...] = ()
    sigmas: tuple[float, ...] = ()
    sigma_unit: str = "angstrom"
    seeds: int = 3
    tie_tau: bool = False

    def __post_init__(self) -> None:
        for name in ("protocols", "deltas", "sigmas"):
            v = getattr(self, name)
            if v is not None:
                object.__setattr__(self, name, (v,) if isinstance(v, str | int | float) else tuple(v))
        if self.protocols == ():
            object.__setattr__(self, "protocols", None)


def build_configs(base: CertifyConfig, plan: SweepPlan) -> list[Tagged]:
    """Every configuration of ``plan`` over ``base``, tagged with its study (a base row per protocol first)."""
    out: list[Tagged] = []
    for given in plan.protocols or (base.protocol,):
        rp = resolve(given).select(None)  # resolved once per protocol (a file is not read per configuration)
        full, name = rp.protocol, rp.label
        names = full.view_names
        out.append(Tagged("base", name, names, base.with_(protocol=rp, views=None)))
        if plan.subsets:
            for k in range(plan.min_views, len(names) + 1):
                for sub in itertools.combinations(names, k):
                    views = None if len(sub) == len(names) else tuple(sub)
                    out.append(Tagged("subset", name, tuple(sub), base.with_(protocol=rp, views=views)))
        for d in plan.deltas:
            tau = d if plan.tie_tau else base.symmetry.tau
            out.append(Tagged("delta", name, names, base.with_(protocol=rp, views=None, delta=d, tau=tau)))
        if plan.sigmas:
            kappa = protocol_kappa(full)["max"]
            for s in plan.sigmas:
                d = noise_delta(s, kappa, base.oracle.delta, plan.sigma_unit)
                tau = d if plan.tie_tau else base.symmetry.tau
                for seed in range(plan.seeds if s > 0 else 1):
                    out.append(Tagged("noise", name, names, base.with_(protocol=rp, views=None, sigma=s,
                                                                     sigma_unit=plan.sigma_unit, seed=seed, delta=d,
                                                                     tau=tau)))
    return out


def _compact(o: ItemOutcome) -> dict:
    """The sweep's row of one item under one configuration (a table row, not a certificate record)."""
    orc = o.oracle or OracleReport()  # a field the outcome does not have is None in the row (or_none)
    return {"correct": bool(o.correct), "by_level": o.correct_by_level,
            "n_phantoms": orc.n_phantoms, "n_missing": orc.n_missing,
            "n_points": orc.n_points, "unique": o.unique, "exact": o.exact,
            "reasons": o.reasons, "outcome": o.outcome,
            "predicted": o.label("reconstructed").get("crystal_system"),
            "max_position_error": orc.max_position_error, "error": o.error}


def _noise_module_rates(cell, cfg: CertifyConfig) -> dict:
    """Reconstruction-level outcome of one noisy run from ``viewcert.oracle.noise.noise_sweep`` (same noise
    model, seed rule, δ and oracle options as the certification of the same configuration)."""
    orc, see = cfg.oracle, cfg.observation
    (pt,) = noise_sweep([cell], lambda s: item_cameras(s, cfg),  # certify's cameras (perspective files too)
                        [see.sigma], delta=orc.delta, seeds=[see.seed], sigma_unit=see.sigma_unit, pairs=orc.pairs,
                        merge=orc.merge, tiling=see.tiling, periodic=orc.periodic_merge)
    return {"recovered": pt.recovery_rate, "exact": pt.exact_rate, "phantom": pt.phantom_rate,
            "failed": pt.failure_rate}


def sweep_item(item, cfgs: tuple[CertifyConfig, ...]) -> list[dict]:
    """One structure under every configuration (read and standardized once). Noisy configurations also
    carry the oracle noise module's reconstruction-level outcome for the same draw."""
    prep = prepare(item, cfgs[0])
    out = []
    for c in cfgs:
        rec = _compact(evaluate(prep, c))
        if c.observation.sigma > 0 and prep.cell is not None:
            try:
                rec["noise_module"] = _noise_module_rates(prep.cell, c)
            except ViewcertError as exc:  # an input the noise module refuses is recorded; a bug is not hidden
                rec["noise_module"] = {"error": f"{type(exc).__name__}: {exc}"}
        out.append(rec)
    return out


@dataclass
class SweepResult:
    dataset: Dataset
    configs: list[Tagged]
    per_item: list[list[dict]]  # [item][config]
    kappa: list[dict] = field(default_factory=list)
    paths: dict[str, Path] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.per_item)

    def errors(self) -> list[dict]:
        """Items that could not be read or certified (under the base configuration), with the reason."""
        return [{"id": self.dataset.items[i].id, "error": row[0].get("error") or "unknown error"}
                for i, row in enumerate(self.per_item) if row and row[0]["outcome"] == "error"]

    def rows(self, study: str | None = None) -> list[dict]:
        """One aggregate row per configuration (optionally one study)."""
        out = []
        for j, t in enumerate(self.configs):
            if study is not None and t.study != study:
                continue
            col = [row[j] for row in self.per_item]
            scored = [c for c in col if c["outcome"] != "error"]  # unreadable items are not in R1's n
            k = sum(c["correct"] for c in scored)
            n = len(scored)
            ph = [c["n_phantoms"] or 0 for c in scored]

            def rate(x: float, n=n) -> float | None:
                return sig(x / n, 6) if n else None

            out.append({**t.tag(), "correct": k, "n": n, "R1": rate(k),
                        "lower_bound_95_one_sided": sig(clopper_pearson_lower(k, n, 0.95).lower, 6) if n else None,
                        "items_with_phantoms": sum(1 for x in ph if x), "phantom_rate": rate(sum(1 for x in ph if x)),
                        "mean_phantoms": rate(sum(ph)),
                        "items_with_missing": sum(1 for c in scored if c["n_missing"]),
                        "errors": len(col) - n,
                        "failures": ";".join(self.dataset.items[i].id for i, row in enumerate(self.per_item)
                                             if not row[j]["correct"] and row[j]["outcome"] != "error")
                        if k > n - 40 else f"{n - k} items"})
        return out

    def noise_rows(self) -> list[dict]:
        """Noise study aggregated over seeds: mean and sd of correct per (protocol, σ)."""
        groups: dict[tuple, list[int]] = {}
        for j, t in enumerate(self.configs):
            if t.study == "noise":
                see = t.cfg.observation
                key = (t.protocol, see.sigma, t.cfg.oracle.delta, t.cfg.symmetry.tau, see.sigma_unit)
                groups.setdefault(key, []).append(j)
        out = []
        for (p, s, d, tau, unit), cols in groups.items():
            ks = [sum(row[j]["correct"] for row in self.per_item) for j in cols]
            n = sum(1 for row in self.per_item if row[cols[0]]["outcome"] != "error")
            m = sum(ks) / len(ks)
            sd = math.sqrt(sum((k - m) ** 2 for k in ks) / (len(ks) - 1)) if len(ks) > 1 else 0.0
            runs = [row[j] for row in self.per_item for j in cols]
            mod = [r.get("noise_module") or {} for r in runs]
            ok = bool(mod) and all("recovered" in x for x in mod)

            def rate(key: str, mod=mod, ok=ok) -> float | None:
                return sig(sum(x[key] for x in mod) / len(mod), 6) if ok else None

            out.append({"protocol": p, "sigma": s, "sigma_unit": unit, "delta": d, "tau": tau, "seeds": len(ks),
                        "correct_per_seed": " ".join(map(str, ks)), "mean_correct": sig(m, 6), "sd_correct": sig(sd, 4),
                        "n": n, "mean_R1": sig(m / n, 6) if n else None,
                        "recovery_rate": rate("recovered"), "exact_rate": rate("exact"),
                        "phantom_rate": rate("phantom"), "failure_rate": rate("failed"),
                        "phantom_rate_certify": sig(sum(1 for r in runs if r["n_phantoms"]) / len(runs), 6)})
        return out

    def item_rows(self) -> list[dict]:
        out = []
        for i, row in enumerate(self.per_item):
            for j, t in enumerate(self.configs):
                c = row[j]
                out.append({"id": self.dataset.items[i].id, **t.tag(), "correct": int(c["correct"]),
                            "n_phantoms": c["n_phantoms"], "n_missing": c["n_missing"], "exact": c["exact"],
                            "predicted": c["predicted"], "reasons": ";".join(c["reasons"] or [])})
        return out

    def text(self) -> str:
        lines = [f"{self.n} items, {len(self.configs)} configurations"]
        for study in ("base", "subset", "delta"):
            rows = self.rows(study)
            if not rows:
                continue
            lines.append(f"-- {study}")
            width = max(len(r["subset"]) for r in rows) if study == "subset" else 0
            for r in rows:
                sub = f"{r['subset']:<{width}} " if study == "subset" else ""
                lines.append(f"  {r['protocol']:<26} {sub}δ={r['delta']:<6g} τ={r['tau']:<6g} "
                             f"{r['correct']}/{r['n']} phantom items {r['items_with_phantoms']}")
        nr = self.noise_rows()
        if nr:
            lines.append("-- noise")
            for r in nr:
                lines.append(f"  {r['protocol']:<26} σ={r['sigma']:g} {r['sigma_unit']} δ={r['delta']:.4g} "
                             f"correct per seed {r['correct_per_seed']} (mean {r['mean_correct']})")
        if self.kappa:
            lines.append("-- kappa: " + ", ".join(f"{r['protocol']}:{r['pair']}={r['kappa']}" for r in self.kappa
                                                  if r["pair"] == "max"))
        return "\n".join(lines)


def _csv(rows: list[dict]) -> str:
    return dict_csv_text(rows)  # string cells neutralised against CSV injection


def kappa_rows(protocols: list[str]) -> list[dict]:
    out = []
    for name in protocols:
        rp = resolve(name).select(None)
        for pair, k in protocol_kappa(rp.protocol).items():
            out.append({"protocol": rp.label, "pair": pair, "kappa": sig(k, 6)})
    return out


def run_configs(dataset: Dataset, cfgs: list[CertifyConfig], *, n_workers: int | None = None,
                scheduler: Any = None, workdir: str | Path | None = None, progress: bool | None = None,
                report: Callable[[str], None] | None = None) -> list[list[dict]]:
    """Every item under every configuration (configurations must share the standardization settings):
    ``result[i][j]`` is item i under ``cfgs[j]`` (compact outcome: correct, by_level, n_phantoms, n_missing,
    unique, exact, reasons, outcome, predicted crystal system, max_position_error). ``report`` receives the
    console lines of a resumed run, as ``certify`` prints them (a warning per shard recomputed, then
    "resumed N of M items")."""
    cfgs = list(cfgs)
    if not cfgs:
        raise InputError("no configurations", field="cfgs")
    std = {(s.standardize, s.std_symprec, s.std_angle_tolerance, s.orientation, s.supercell)
           for s in (c.symmetry for c in cfgs)}
    if len(std) != 1:
        raise InputError("configurations of one sweep must share the standardization settings", field="cfgs")
    fp = fingerprint(dataset, cfgs[0], task="configs:" + "|".join(repr(sorted(c.to_dict().items())) for c in cfgs))
    wd = Path(workdir) / fp if workdir is not None else None
    run = map_items(functools.partial(sweep_item, cfgs=tuple(cfgs)), dataset.items,
                    keys=[it.id for it in dataset.items], workdir=wd, n_workers=n_workers, scheduler=scheduler,
                    fingerprint=fp, progress=progress,
                    description=f"sweep {len(dataset)} items x {len(cfgs)} configs")
    if report is not None:
        for line in resume_lines(run, Path(workdir) if workdir is not None else None):
            report(line)
    return run.results


def run_sweep(input_spec: str | Path | Dataset, base: CertifyConfig | None = None, plan: SweepPlan | None = None,
              *, subset: str = "eval", n_workers: int | None = None, scheduler: Any = None,
              out: str | Path | None = None, progress: bool | None = None, plots: bool = True,
              reference_frontier: dict | None = None, report: Callable[[str], None] | None = None) -> SweepResult:
    """Run the studies of ``plan`` (default: the base configuration alone) over INPUT; with ``out``, write
    ``subsets.csv``, ``deltas.csv``, ``noise.csv``, ``kappa.csv``, ``items.csv``, ``sweep.json`` and the plots.
    ``report`` receives the resumed run's console lines (``run_configs``).

    Parameters
    ----------
    input_spec : str, Path or Dataset
        INPUT (see ``certify.inputs``) or a loaded dataset.
    base : CertifyConfig, optional
        The configuration each study varies; default ``CertifyConfig()``.
    plan : SweepPlan, optional
        View subsets, δ values (Å), noise σ (px or Å), κ; default: the base configuration alone.
    subset : str
        The study layout's subset (``eval`` or ``all``).
    n_workers : int, optional
        Worker processes (None: every core).
    scheduler : optional
        A Dask scheduler (address or client); None: local processes.
    out : str or Path, optional
        Output folder; None: nothing written.
    progress : bool, optional
        Show a progress bar (None: when the console is a terminal).
    plots : bool
        Write the PNG plots.
    reference_frontier : dict, optional
        {label: (δ values in Å, correct counts, n)} drawn dashed in the ceiling-vs-δ plot (the study's
        frontier).
    report : callable, optional
        Called with console lines.

    Returns
    -------
    SweepResult
        The dataset, the configurations run and every item's outcome under each.
    """
    base = base or CertifyConfig()
    plan = plan or SweepPlan()
    protocols = list(plan.protocols or (base.protocol,))
    dataset = input_spec if isinstance(input_spec, Dataset) else load_input(input_spec, subset=subset)
    tagged = build_configs(base, plan)
    uniq: dict[str, int] = {}
    cfgs: list[CertifyConfig] = []
    index = []
    for t in tagged:
        key = repr(sorted(t.cfg.to_dict().items()))
        if key not in uniq:
            uniq[key] = len(cfgs)
            cfgs.append(t.cfg)
        index.append(uniq[key])
    results = run_configs(dataset, cfgs, n_workers=n_workers, scheduler=scheduler,
                          workdir=Path(out) / ".shards" if out is not None else None, progress=progress,
                          report=report)
    per_item = [[res[index[j]] for j in range(len(tagged))] for res in results]
    result = SweepResult(dataset, tagged, per_item, kappa_rows(protocols))
    if out is not None:
        result.paths = write_sweep(result, Path(out), plots=plots, reference_frontier=reference_frontier)
    return result


def write_sweep(res: SweepResult, out: Path, *, plots: bool = True, reference_frontier: dict | None = None
                ) -> dict[str, Path]:
    paths: dict[str, Path] = {}
    tables = {"base": res.rows("base"), "subsets": res.rows("subset"), "deltas": res.rows("delta"),
              "noise": res.noise_rows(), "noise_seeds": res.rows("noise"), "kappa": res.kappa}
    for name, rows in tables.items():
        if rows:
            paths[name] = write_text_atomic(out / f"{name}.csv", _csv(rows))
    paths["items"] = write_text_atomic(out / "items.csv", _csv(res.item_rows()))
    paths["json"] = write_json_atomic(out / "sweep.json", {
        "inputs": res.dataset.to_dict(), "configs": [t.tag() | {"config": t.cfg.to_dict()} for t in res.configs],
        "tables": tables})
    if plots:
        if tables["deltas"]:
            paths["plot_delta"] = P.plot_ceiling_vs_delta(tables["deltas"], out / "ceiling_vs_delta.png",
                                                          reference=reference_frontier)
        if tables["subsets"]:
            paths["plot_subsets"] = P.plot_phantom_rate_by_subset(tables["subsets"], out / "phantom_rate_by_subset.png")
    return paths
