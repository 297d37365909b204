"""``viewcert certify | verify | sweep``: options parsed into a ``CertifyConfig``, the report of ``viewcert.api.certification`` printed.

Mounted by ``viewcert.cli`` through ``register(app)``.
"""

from __future__ import annotations

import typer

from viewcert.api.vocabulary import CERTIFY_CONFIG as CONFIG  # the options that set the certify configuration
from viewcert.cli.options import show, usage
from viewcert.cli.vocabulary import mount


def certify_cmd(o) -> None:
    """Certify the render ceiling of INPUT: certificate.json, items.csv, summary.txt and plots in OUT.

    Exit codes: 0 all items certified; 1 outputs written but some items unreadable/uncertifiable; 2 bad
    input or option, or a resource limit (``viewcert --help`` lists the --max-* options)."""
    from viewcert.api.certification import certify, certify_config, complex_spec, label_spec, views_of
    from viewcert.cameras.protocol_files import is_protocol_file
    from viewcert.cameras.resolve import resolve
    from viewcert.certify.config import check_protocol_spec

    # a protocol file is read once, here (the config takes the resolved value); a bad one is one line, exit 2
    # (names are checked by the limits)
    given = resolve(o.protocol) if is_protocol_file(o.protocol) else o.protocol
    if is_protocol_file(o.protocol):
        check_protocol_spec(given.select(views_of(o.views)).spec)
    settings = {k: getattr(o, k) for k in CONFIG}
    cfg = usage(certify_config, given, standardize=not o.no_standardize, cross_check=not o.no_cross_check,
                **settings)
    spec = usage(label_spec, usage(complex_spec, o.input, o.ligand, o.pocket), o.label_column)
    show(certify(spec, cfg, o.out, subset=o.subset, workers=o.workers, scheduler=o.scheduler, plots=o.plots,
                 resume=o.resume, item_table=o.item_table, keep_going=o.keep_going, force=o.force))


def verify_cmd(o) -> None:
    """Recompute CERT (any kind: crystal/molecule, transformation task, interaction) from its recorded inputs
    and settings; report every difference (exit 1 if any); a stale digest is one line, exit 2.
    The resource limits (``viewcert --max-*``) apply to what the certificate asks to recompute."""
    from viewcert.api.certification import verify

    show(verify(o.cert, input_spec=o.input, inputs=o.inputs, workers=o.workers, scheduler=o.scheduler,
                allow_stale=o.allow_stale_certificate))


def sweep_cmd(o) -> None:
    """Design studies: view subsets, δ sweeps, noise sweeps, κ: CSV tables and plots in OUT."""
    from viewcert.api.certification import certify_config, complex_spec, sweep, sweep_plan
    from viewcert.cli.options import progress

    plan = usage(sweep_plan, o.protocol, subsets=o.subsets, deltas=o.deltas, sigmas=o.sigmas,
                 sigma_unit=o.sigma_unit, seeds=o.seeds, tie_tau=o.tie_tau)
    cfg = usage(certify_config, plan.protocols[0], symprec=o.symprec, tiling=o.tiling, supercell=o.supercell,
                score=o.score, merge=o.merge, cartesian_merge=o.cartesian_merge, delta=o.delta, pairs=o.pairs,
                sigma_unit=o.sigma_unit, molecule_scale=o.molecule_scale)
    for name in plan.protocols:
        cfg.with_(protocol=name).check_limits()
    show(sweep(usage(complex_spec, o.input, o.ligand, o.pocket), cfg, plan, o.out, subset=o.subset,
               workers=o.workers, scheduler=o.scheduler, force=o.force, progress=progress))


def register(app: typer.Typer) -> None:
    """Add ``certify``, ``verify`` and ``sweep`` to ``app``."""
    mount(app, {"certify": certify_cmd, "verify": verify_cmd, "sweep": sweep_cmd})
